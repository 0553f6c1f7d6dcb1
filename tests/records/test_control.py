"""franz/records/control.py: control record keys and end transaction markers."""

import pytest

from franz.records import (
    ControlRecordType,
    EndTransactionMarker,
    InvalidRecordError,
    RecordBatch,
    build_control_batch,
)
from franz.records.control import CURRENT_END_TXN_SCHEMA_RECORD_SIZE


def test_control_key_is_version_zero_and_type():
    assert ControlRecordType.COMMIT.record_key() == b"\x00\x00\x00\x01"
    assert ControlRecordType.ABORT.record_key() == b"\x00\x00\x00\x00"
    with pytest.raises(ValueError):
        ControlRecordType.UNKNOWN.record_key()


def test_unknown_type_ids_parse_as_unknown():
    assert ControlRecordType.parse(b"\x00\x00\x00\x63") is ControlRecordType.UNKNOWN
    assert ControlRecordType.parse(b"\x00\x01\x00\x01\xff") is ControlRecordType.COMMIT  # later key version


def test_short_or_negative_version_key_is_invalid():
    with pytest.raises(InvalidRecordError):
        ControlRecordType.parse(b"\x00\x00\x01")
    with pytest.raises(InvalidRecordError):
        ControlRecordType.parse(b"\xff\xff\x00\x01")


def test_end_txn_marker_value_is_version_and_coordinator_epoch():
    m = EndTransactionMarker(ControlRecordType.COMMIT, 258)
    assert m.serialize_value() == b"\x00\x00\x00\x00\x01\x02"
    assert EndTransactionMarker.deserialize_value(ControlRecordType.COMMIT, m.serialize_value()) == m


def test_end_txn_marker_refuses_other_types_and_short_values():
    with pytest.raises(ValueError):
        EndTransactionMarker(ControlRecordType.LEADER_CHANGE, 1)
    with pytest.raises(InvalidRecordError):
        EndTransactionMarker.deserialize_value(ControlRecordType.ABORT, b"\x00\x00\x00")
    with pytest.raises(InvalidRecordError):
        EndTransactionMarker.deserialize_value(ControlRecordType.ABORT, b"\xff\xff\x00\x00\x00\x01")


def test_control_batch_holds_one_marker_record():
    data = build_control_batch(ControlRecordType.ABORT, producer_id=9, producer_epoch=2,
                               coordinator_epoch=5, base_offset=100, timestamp=1234,
                               partition_leader_epoch=3)
    b = RecordBatch(data)
    assert b.is_valid() and b.is_control_batch and b.is_transactional
    assert (b.producer_id, b.producer_epoch, b.base_sequence) == (9, 2, -1)
    assert (b.base_offset, b.record_count, b.max_timestamp, b.partition_leader_epoch) == (100, 1, 1234, 3)
    (r,) = list(b.records())
    assert r.is_control and r.size_in_bytes == CURRENT_END_TXN_SCHEMA_RECORD_SIZE
    assert EndTransactionMarker.deserialize(r) == EndTransactionMarker(ControlRecordType.ABORT, 5)


def test_kraft_control_batch_is_not_transactional():
    data = build_control_batch(ControlRecordType.LEADER_CHANGE, producer_id=-1, producer_epoch=-1,
                               timestamp=1, value=b"\x00\x00", partition_leader_epoch=1)
    b = RecordBatch(data)
    assert b.is_control_batch and not b.is_transactional
    assert ControlRecordType.parse(next(b.records()).key) is ControlRecordType.LEADER_CHANGE
