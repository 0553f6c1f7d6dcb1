"""Helpers for tests that build logs directly (Kafka's LogTestUtils).

Tests that set up transactions by appending transactional batches straight to a log, with no
coordinator to verify them, make the log without KIP-890 verification, as Kafka's
LogTestUtils.createLog does by default; the verification itself is tested with it on."""

from __future__ import annotations

from franz.storage.producer_state import ProducerStateManagerConfig

WITHOUT_VERIFICATION = ProducerStateManagerConfig(transaction_verification_enabled=False)
