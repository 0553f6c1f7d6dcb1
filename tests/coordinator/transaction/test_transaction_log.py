"""`__transaction_state` records and placement, as Kafka writes and finds them."""

from __future__ import annotations

import struct

import pytest

from franz.common.utils import java_string_hash, partition_for_key
from franz.coordinator.transaction import transaction_log
from franz.coordinator.transaction.transaction_metadata import TransactionMetadata, TransactionState


def test_java_string_hash_matches_java():
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("") == 0
    assert java_string_hash("polygenelubricants") == -(1 << 31)  # Integer.MIN_VALUE
    assert partition_for_key("polygenelubricants", 50) == 0  # Utils.abs(MIN_VALUE) is 0
    assert partition_for_key("hello", 50) == 99162322 % 50


def test_value_v0_layout_and_round_trip():
    metadata = TransactionMetadata("tx", 42, 3, 60_000, TransactionState.ONGOING,
                                   {("b", 1), ("a", 0), ("a", 2)}, 1000, 2000)
    value = transaction_log.value_bytes(metadata)
    version, producer_id, epoch, timeout, status = struct.unpack_from(">hqhib", value, 0)
    assert (version, producer_id, epoch, timeout, status) == (0, 42, 3, 60_000, 1)
    assert transaction_log.read_value("tx", value) == metadata
    assert transaction_log.read_key(transaction_log.key_bytes("tx")) == "tx"
    assert transaction_log.key_bytes("tx") == b"\x00\x00\x00\x02tx"


def test_a_truncated_value_is_refused():
    value = transaction_log.value_bytes(TransactionMetadata("tx", 1, 0, 1000, partitions={("a", 0)}))
    with pytest.raises((ValueError, struct.error)):
        transaction_log.read_value("tx", value[:20])


def test_state_transitions_follow_kafkas_table():
    empty = TransactionMetadata("tx", 1, 0, 1000)
    ongoing = empty.transition_to(TransactionState.ONGOING, 5)
    with pytest.raises(ValueError):
        empty.transition_to(TransactionState.PREPARE_COMMIT, 5)
    ongoing.partitions.add(("a", 0))
    complete = ongoing.transition_to(TransactionState.PREPARE_ABORT, 6).transition_to(
        TransactionState.COMPLETE_ABORT, 7)
    assert complete.partitions == set() and complete.txn_last_update_timestamp_ms == 7
