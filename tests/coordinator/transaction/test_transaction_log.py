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
    value = transaction_log.value_bytes(metadata, version=0)
    version, producer_id, epoch, timeout, status = struct.unpack_from(">hqhib", value, 0)
    assert (version, producer_id, epoch, timeout, status) == (0, 42, 3, 60_000, 1)
    assert transaction_log.read_value("tx", value) == metadata
    # Empty: the partitions are null (-1), as TransactionLog.valueToBytes leaves them.
    empty = transaction_log.value_bytes(TransactionMetadata("tx", 42, 3, 60_000), version=0)
    assert struct.unpack_from(">i", empty, 2 + 15)[0] == -1
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


def test_value_v1_is_flexible_with_its_tagged_producer_ids_and_client_version():
    """TransactionLogValue v1, what Kafka writes at transaction.version 2: compact arrays and
    strings, and PreviousProducerId (tag 0), NextProducerId (tag 1) and
    ClientTransactionVersion (tag 2) as tagged fields, written only when not their default."""
    metadata = TransactionMetadata("tx", 42, 3, 60_000, TransactionState.PREPARE_COMMIT, {("ab", 1), ("ab", 0)},
                                   1000, 2000, prev_producer_id=41, next_producer_id=43, client_transaction_version=2)
    expected = (struct.pack(">hqhib", 1, 42, 3, 60_000, 2)
                + bytes([2, 3]) + b"ab" + bytes([3]) + struct.pack(">ii", 0, 1) + bytes([0])
                + struct.pack(">qq", 2000, 1000)
                + bytes([3, 0, 8]) + struct.pack(">q", 41) + bytes([1, 8]) + struct.pack(">q", 43)
                + bytes([2, 2]) + struct.pack(">h", 2))
    assert transaction_log.value_bytes(metadata) == expected
    assert transaction_log.read_value("tx", expected) == metadata
    # Defaults are left out: an Empty id of a v1 client has null partitions and no tags.
    empty = TransactionMetadata("tx", 42, 0, 60_000)
    assert transaction_log.value_bytes(empty) == struct.pack(">hqhib", 1, 42, 0, 60_000, 0) + bytes([0]) + \
        struct.pack(">qq", -1, -1) + bytes([0])
    assert transaction_log.read_value("tx", transaction_log.value_bytes(empty)) == empty
