"""Property tests (hypothesis): build -> parse round-trips for every codec and
attribute combination, and in-place stamping equal to a fresh build."""

import os
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from franz.records import (
    CompressionType,
    ControlRecordType,
    EndTransactionMarker,
    FileRecords,
    MemoryRecords,
    RecordBatch,
    SimpleRecord,
    TimestampType,
    build_batch,
    build_control_batch,
)
from franz.records.byte_utils import (
    read_varint,
    read_varlong,
    size_of_varint,
    size_of_varlong,
    write_varint,
    write_varlong,
)
from franz.records.record import (
    increment_sequence,
    read_record,
    record_size_in_bytes,
    write_record,
)

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

nullable_bytes = st.none() | st.binary(max_size=64)
headers = st.lists(st.tuples(st.text(max_size=8), nullable_bytes), max_size=3).map(tuple)
timestamps = st.integers(min_value=0, max_value=2**45)
simple_records = st.builds(SimpleRecord, value=nullable_bytes, key=nullable_bytes,
                           timestamp=timestamps, headers=headers)
codecs = st.sampled_from(list(CompressionType))
timestamp_types = st.sampled_from([TimestampType.CREATE_TIME, TimestampType.LOG_APPEND_TIME])
epochs = st.integers(min_value=-1, max_value=2**31 - 1)


@st.composite
def batch_specs(draw):
    producer = draw(st.sampled_from(["none", "idempotent", "transactional"]))
    spec = {
        "records": draw(st.lists(simple_records, min_size=1, max_size=20)),
        "base_offset": draw(st.integers(min_value=0, max_value=2**62)),
        "compression_type": draw(codecs),
        "timestamp_type": draw(timestamp_types),
        "partition_leader_epoch": draw(epochs),
        "delete_horizon_ms": draw(st.sampled_from([-1]) | timestamps),
    }
    if spec["timestamp_type"] == TimestampType.LOG_APPEND_TIME:
        spec["log_append_time"] = draw(timestamps)
    if producer != "none":
        spec.update(producer_id=draw(st.integers(min_value=0, max_value=2**63 - 1)),
                    producer_epoch=draw(st.integers(min_value=0, max_value=2**15 - 1)),
                    # near the int32 edge too, where sequences wrap
                    base_sequence=draw(st.integers(min_value=0, max_value=2**31 - 1)),
                    is_transactional=producer == "transactional")
    return spec


def build(spec):
    spec = dict(spec)
    records = spec.pop("records")
    return build_batch(records, **spec)


@SETTINGS
@given(batch_specs())
def test_build_then_parse_round_trips(spec):
    data = build(spec)
    (batch,) = list(MemoryRecords(data).batches())
    records = spec["records"]
    assert batch.is_valid() and batch.size_in_bytes == len(data)
    assert batch.compression_type == spec["compression_type"]
    assert batch.timestamp_type == spec["timestamp_type"]
    assert batch.base_offset == spec["base_offset"]
    assert batch.last_offset == spec["base_offset"] + len(records) - 1
    assert batch.record_count == len(records)
    assert batch.partition_leader_epoch == spec["partition_leader_epoch"]
    assert batch.is_transactional == spec.get("is_transactional", False)
    assert not batch.is_control_batch
    assert batch.producer_id == spec.get("producer_id", -1)
    assert batch.producer_epoch == spec.get("producer_epoch", -1)
    assert batch.base_sequence == spec.get("base_sequence", -1)
    horizon = spec["delete_horizon_ms"]
    assert batch.has_delete_horizon == (horizon >= 0)
    assert batch.base_timestamp == (horizon if horizon >= 0 else records[0].timestamp)
    lat = spec["timestamp_type"] == TimestampType.LOG_APPEND_TIME
    assert batch.max_timestamp == (spec["log_append_time"] if lat else max(r.timestamp for r in records))
    decoded = list(batch.records())
    for i, (got, want) in enumerate(zip(decoded, records, strict=True)):
        assert got.offset == spec["base_offset"] + i
        assert got.timestamp == (spec["log_append_time"] if lat else want.timestamp)
        assert (got.key, got.value, got.headers) == (want.key, want.value, want.headers)
        base_sequence = spec.get("base_sequence", -1)
        assert got.sequence == (increment_sequence(base_sequence, i) if base_sequence >= 0 else -1)
        assert not got.is_control


@SETTINGS
@given(batch_specs(), st.integers(min_value=0, max_value=2**62), epochs, timestamps)
def test_stamped_batch_equals_fresh_build(spec, new_base_offset, new_epoch, log_append_time):
    stamped = bytearray(build(spec))
    batch = RecordBatch(stamped)
    batch.stamp(base_offset=new_base_offset, partition_leader_epoch=new_epoch,
                max_timestamp=log_append_time, timestamp_type=TimestampType.LOG_APPEND_TIME)
    assert batch.is_valid()
    fresh = build(dict(spec, base_offset=new_base_offset, partition_leader_epoch=new_epoch,
                       timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=log_append_time))
    assert bytes(stamped) == fresh


@SETTINGS
@given(batch_specs(), st.integers(min_value=0, max_value=2**62), epochs)
def test_stamping_only_offsets_and_epoch_keeps_crc(spec, new_base_offset, new_epoch):
    stamped = bytearray(build(spec))
    crc_before = RecordBatch(stamped).checksum
    RecordBatch(stamped).stamp(base_offset=new_base_offset, partition_leader_epoch=new_epoch)
    assert RecordBatch(stamped).checksum == crc_before and RecordBatch(stamped).is_valid()
    assert bytes(stamped) == build(dict(spec, base_offset=new_base_offset,
                                        partition_leader_epoch=new_epoch))


@SETTINGS
@given(st.lists(batch_specs(), min_size=1, max_size=4))
def test_file_records_hold_what_was_appended(specs):
    blobs = [build(s) for s in specs]
    with tempfile.TemporaryDirectory() as d:
        fr = FileRecords.open(os.path.join(d, "0.log"))
        try:
            for blob in blobs:
                fr.append(blob)
            batches = list(fr.batches())
            assert [b.to_bytes() for b in batches] == blobs
            assert [b.header() for b in batches] == [RecordBatch(b).header() for b in blobs]
        finally:
            fr.close()


@SETTINGS
@given(st.sampled_from([ControlRecordType.COMMIT, ControlRecordType.ABORT]),
       st.integers(min_value=0, max_value=2**63 - 1), st.integers(min_value=0, max_value=2**15 - 1),
       st.integers(min_value=-(2**31), max_value=2**31 - 1), timestamps)
def test_control_batch_round_trips(control_type, producer_id, producer_epoch, coordinator_epoch, ts):
    data = build_control_batch(control_type, producer_id=producer_id, producer_epoch=producer_epoch,
                               coordinator_epoch=coordinator_epoch, timestamp=ts)
    batch = RecordBatch(data)
    assert batch.is_valid() and batch.is_control_batch and batch.is_transactional
    (record,) = list(batch.records())
    assert record.is_control and record.timestamp == ts
    assert EndTransactionMarker.deserialize(record) == EndTransactionMarker(control_type, coordinator_epoch)


@SETTINGS
@given(st.integers(min_value=-(2**31), max_value=2**31 - 1), st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_varints_round_trip(i32, i64):
    out = bytearray()
    write_varint(out, i32)
    assert len(out) == size_of_varint(i32)
    write_varlong(out, i64)
    assert len(out) == size_of_varint(i32) + size_of_varlong(i64)
    v, pos = read_varint(out, 0, len(out))
    w, end = read_varlong(out, pos, len(out))
    assert (v, w, end) == (i32, i64, len(out))


@SETTINGS
@given(st.integers(min_value=0, max_value=2**31 - 1), st.integers(min_value=-(2**40), max_value=2**40),
       nullable_bytes, nullable_bytes, headers)
def test_record_size_matches_encoding(offset_delta, timestamp_delta, key, value, hdrs):
    out = bytearray()
    n = write_record(out, offset_delta, timestamp_delta, key, value, hdrs)
    assert n == len(out) == record_size_in_bytes(
        offset_delta, timestamp_delta, -1 if key is None else len(key),
        -1 if value is None else len(value), hdrs)
    record, end = read_record(out, 0, len(out), 0, 0, -1, None)
    assert end == len(out) and record.size_in_bytes == n
    assert (record.offset, record.timestamp, record.key, record.value, record.headers) == (
        offset_delta, timestamp_delta, key, value, hdrs)
