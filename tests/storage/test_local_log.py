"""Behaviours of Kafka's LocalLogTest, as franz's own tests."""

import time

import pytest

from franz.records import MemoryRecords, SimpleRecord, build_batch
from franz.storage.local_log import LocalLog, OffsetOutOfRangeError
from franz.storage.log_config import LogConfig
from franz.storage.segment import LogOffsetMetadata, LogSegment
from franz.storage.segments import LogSegments


def make_log(tmp_path, **props):
    config = LogConfig.from_props({"file.delete.delay.ms": 0, **props})
    directory = tmp_path / "t-0"
    directory.mkdir()
    segments = LogSegments("t-0")
    segments.add(LogSegment.open(directory, 0, config))
    return LocalLog(directory, config, segments, 0, LogOffsetMetadata(0, 0, 0), "t-0")


def append(local_log, *values, timestamp=1000):
    base = local_log.log_end_offset
    recs = MemoryRecords(bytearray(build_batch([SimpleRecord(v, timestamp=timestamp) for v in values],
                                               base_offset=base)))
    last = base + len(values) - 1
    local_log.append(last, timestamp, last, recs)


def values_read(local_log, start, max_length=100_000):
    fetch = local_log.read(start, max_length, False, local_log.log_end_offset_metadata, False)
    return [r.value for b in fetch.records.batches() for r in b.records()]


def test_append_advances_the_log_end_offset_and_read_returns_the_records(tmp_path):
    local_log = make_log(tmp_path)
    append(local_log, b"a", b"b")
    append(local_log, b"c")
    assert local_log.log_end_offset == 3
    assert values_read(local_log, 0) == [b"a", b"b", b"c"]
    assert values_read(local_log, 2) == [b"c"]
    local_log.close()


def test_read_past_the_end_is_out_of_range_and_at_the_end_is_empty(tmp_path):
    local_log = make_log(tmp_path)
    append(local_log, b"a")
    assert values_read(local_log, 1) == []
    with pytest.raises(OffsetOutOfRangeError):
        values_read(local_log, 2)
    local_log.close()


def test_roll_starts_a_segment_at_the_log_end_and_reads_span_segments(tmp_path):
    local_log = make_log(tmp_path)
    append(local_log, b"a", b"b")
    local_log.roll()
    append(local_log, b"c")
    assert local_log.segments.base_offsets() == [0, 2]
    assert (local_log.dir / "00000000000000000002.log").exists()
    assert values_read(local_log, 0) == [b"a", b"b"]  # one segment per read, as Kafka
    assert values_read(local_log, 2) == [b"c"]
    local_log.close()


def test_rolling_an_empty_active_segment_at_the_same_offset_replaces_it(tmp_path):
    local_log = make_log(tmp_path)
    old = local_log.segments.active_segment
    new = local_log.roll()
    assert new is not old and local_log.segments.base_offsets() == [0]
    local_log.close()


def test_read_is_bounded_by_max_offset_metadata(tmp_path):
    local_log = make_log(tmp_path)
    append(local_log, b"a")
    bound = local_log.log_end_offset_metadata
    append(local_log, b"b")
    fetch = local_log.read(0, 100_000, False, bound, False)
    assert [r.value for b in fetch.records.batches() for r in b.records()] == [b"a"]
    local_log.close()


def test_truncate_to_deletes_later_segments_and_cuts_the_active_one(tmp_path):
    local_log = make_log(tmp_path)
    for i in range(3):
        append(local_log, b"x%d" % i, b"y%d" % i)
        local_log.roll()
    append(local_log, b"z")
    deleted = local_log.truncate_to(4)
    assert [s.base_offset for s in deleted] == [6]
    assert local_log.log_end_offset == 4
    assert local_log.segments.base_offsets() == [0, 2, 4]
    assert local_log.segments.active_segment.size() == 0
    assert values_read(local_log, 2) == [b"x1", b"y1"]
    local_log.close()


def test_truncate_fully_and_start_at_leaves_one_empty_segment(tmp_path):
    local_log = make_log(tmp_path)
    append(local_log, b"a")
    local_log.roll()
    append(local_log, b"b")
    local_log.truncate_fully_and_start_at(100)
    assert local_log.segments.base_offsets() == [100]
    assert local_log.log_end_offset == 100
    deadline = time.monotonic() + 5
    while list(local_log.dir.glob("*.deleted")) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not list(local_log.dir.glob("*.deleted"))
    assert sorted(p.name for p in local_log.dir.glob("*.log")) == ["00000000000000000100.log"]
    local_log.close()


def test_flush_marks_the_recovery_point(tmp_path):
    local_log = make_log(tmp_path)
    append(local_log, b"a", b"b")
    assert local_log.unflushed_messages == 2
    local_log.flush(local_log.log_end_offset)
    local_log.mark_flushed(local_log.log_end_offset)
    assert local_log.recovery_point == 2 and local_log.unflushed_messages == 0
    local_log.close()


def test_recovery_point_never_exceeds_the_log_end(tmp_path):
    local_log = make_log(tmp_path)
    append(local_log, b"a", b"b", b"c")
    local_log.mark_flushed(3)
    local_log.truncate_to(1)
    assert local_log.recovery_point == 1
    local_log.close()


def test_replace_segments_swaps_cleaned_segments_in_and_deletes_the_old(tmp_path):
    from franz.storage.local_log import replace_segments
    local_log = make_log(tmp_path)
    append(local_log, b"a", b"b")
    local_log.roll()
    append(local_log, b"c")
    local_log.roll()
    append(local_log, b"d")
    old = local_log.segments.values()[:2]
    cleaned = LogSegment.open(local_log.dir, 0, local_log.config, file_suffix=".cleaned")
    for value, offset in ((b"b", 1), (b"c", 2)):
        batch = MemoryRecords(bytearray(build_batch([SimpleRecord(value, timestamp=1000)], base_offset=offset)))
        cleaned.append(offset, 1000, offset, batch)
    deleted = replace_segments(local_log.segments, [cleaned], old, local_log.dir, "t-0", local_log.config)
    assert [s.base_offset for s in deleted] == [2]
    assert local_log.segments.base_offsets() == [0, 3]
    names = sorted(p.name for p in local_log.dir.iterdir())
    assert not [n for n in names if n.endswith((".cleaned", ".swap", ".deleted"))]
    # A read returns data from one segment, as Kafka's does.
    assert values_read(local_log, 0) == [b"b", b"c"]
    assert values_read(local_log, 3) == [b"d"]
    local_log.close()
