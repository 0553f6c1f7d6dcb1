"""franz/records/builder.py: MemoryRecordsBuilder, build_batch."""

import pytest

from franz.records import (
    CompressionType,
    MemoryRecordsBuilder,
    RecordBatch,
    SimpleRecord,
    TimestampType,
    build_batch,
)


def test_empty_builder_builds_nothing():
    assert build_batch([]) == b""
    assert MemoryRecordsBuilder().build().size_in_bytes == 0


def test_base_timestamp_is_first_record_and_max_is_largest():
    b = RecordBatch(build_batch([SimpleRecord(b"a", timestamp=50), SimpleRecord(b"b", timestamp=70),
                                 SimpleRecord(b"c", timestamp=60)]))
    assert (b.base_timestamp, b.max_timestamp) == (50, 70)
    assert [r.timestamp for r in b.records()] == [50, 70, 60]


def test_missing_timestamp_becomes_now():
    b = RecordBatch(build_batch([SimpleRecord(b"a")]))
    assert b.base_timestamp > 1_600_000_000_000


def test_log_append_time_sets_max_timestamp_and_type():
    b = RecordBatch(build_batch([SimpleRecord(b"a", timestamp=5)], timestamp_type=TimestampType.LOG_APPEND_TIME,
                                log_append_time=99))
    assert b.timestamp_type is TimestampType.LOG_APPEND_TIME and b.max_timestamp == 99
    assert b.base_timestamp == 5 and next(b.records()).timestamp == 99


def test_delete_horizon_is_the_base_timestamp():
    b = RecordBatch(build_batch([SimpleRecord(b"a", timestamp=500)], delete_horizon_ms=100))
    assert b.has_delete_horizon and b.base_timestamp == 100 and next(b.records()).timestamp == 500


def test_offsets_must_increase():
    builder = MemoryRecordsBuilder(base_offset=10)
    builder.append_with_offset(12, 1, None, b"x")
    with pytest.raises(ValueError, match="monotonically"):
        builder.append_with_offset(12, 1, None, b"y")
    builder.append_with_offset(15, 1, None, b"y")
    b = RecordBatch(builder.build_bytes())
    assert b.base_offset == 10 and b.last_offset == 15 and [r.offset for r in b.records()] == [12, 15]


def test_negative_timestamp_is_refused():
    with pytest.raises(ValueError):
        MemoryRecordsBuilder().append_with_offset(0, -5, None, b"x")


def test_producer_state_rules():
    with pytest.raises(ValueError, match="transactional"):
        build_batch([SimpleRecord(b"a", timestamp=1)], is_transactional=True)
    with pytest.raises(ValueError, match="epoch"):
        build_batch([SimpleRecord(b"a", timestamp=1)], producer_id=1, base_sequence=0)
    with pytest.raises(ValueError, match="sequence"):
        build_batch([SimpleRecord(b"a", timestamp=1)], producer_id=1, producer_epoch=0)


def test_control_records_only_in_control_batches():
    with pytest.raises(ValueError):
        MemoryRecordsBuilder().append_with_offset(0, 1, b"k", b"v", is_control_record=True)


def test_build_is_idempotent_and_closes_for_appends():
    builder = MemoryRecordsBuilder()
    builder.append(SimpleRecord(b"a", timestamp=1))
    assert builder.build_bytes() == builder.build_bytes()
    with pytest.raises(RuntimeError):
        builder.append(SimpleRecord(b"b", timestamp=1))


@pytest.mark.parametrize("codec", list(CompressionType))
def test_compressed_batch_round_trips(codec):
    recs = [SimpleRecord(b"value-%d" % i * 10, b"key-%d" % i, 1000 + i, (("h", b"%d" % i),))
            for i in range(200)]
    b = RecordBatch(build_batch(recs, compression_type=codec, base_offset=7))
    assert b.is_valid() and b.compression_type is codec and b.record_count == 200
    out = list(b.records())
    assert [(r.offset, r.timestamp, r.key, r.value, r.headers) for r in out] == [
        (7 + i, s.timestamp, s.key, s.value, s.headers) for i, s in enumerate(recs)]
