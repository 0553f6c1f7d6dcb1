"""kafka-clients' generated message classes as an oracle (tests/support/message_oracle.py), one JVM per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.message_oracle import Oracle, start_oracle


@pytest.fixture(scope="module")
def oracle() -> Iterator[Oracle]:
    running = start_oracle()
    yield running
    running.close()
