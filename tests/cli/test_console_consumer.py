"""`franz console-consumer` against a real broker."""

from __future__ import annotations

import pytest

from tests.support.cli import franz

pytestmark = pytest.mark.interop


def test_console_consumer_from_an_offset_and_a_timeout(broker):
    b = broker.bootstrap
    franz("topics", "--bootstrap-server", b, "--create", "--topic", "off")
    franz("console-producer", "--bootstrap-server", b, "--topic", "off", stdin="a\nb\nc\nd\n")
    consumed = franz("console-consumer", "--bootstrap-server", b, "--topic", "off", "--partition", "0",
                     "--offset", "2", "--timeout-ms", "1500")
    assert consumed.stdout.splitlines() == ["c", "d"]
    assert "Processed a total of 2 messages" in consumed.stderr
