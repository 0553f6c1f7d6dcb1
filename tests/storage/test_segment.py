"""Behaviours of Kafka's LogSegmentTest, as franz's own tests."""

import os

import pytest

from franz.records import MemoryRecords, SimpleRecord, build_batch
from franz.storage.log_config import LogConfig
from franz.storage.producer_state import ProducerStateManager
from franz.storage.segment import LogSegment, LogSegmentOffsetOverflowError, RollParams


def records(base_offset, *values, timestamp=1000, producer_id=-1, epoch=-1, sequence=-1):
    return MemoryRecords(bytearray(build_batch(
        [SimpleRecord(v, timestamp=timestamp + i) for i, v in enumerate(values)],
        base_offset=base_offset, producer_id=producer_id, producer_epoch=epoch, base_sequence=sequence)))


def make_segment(tmp_path, base_offset=40, index_interval_bytes=10, **overrides):
    props = {"index.interval.bytes": index_interval_bytes, "segment.index.bytes": 1000}
    props.update(overrides)
    return LogSegment.open(tmp_path, base_offset, LogConfig.from_props(props))


def append(segment, base_offset, *values, timestamp=1000):
    recs = records(base_offset, *values, timestamp=timestamp)
    last = base_offset + len(values) - 1
    segment.append(last, timestamp + len(values) - 1, last, recs)
    return recs


def read_values(fetch):
    return [r.value for b in fetch.records.batches() for r in b.records()]


def test_read_on_an_empty_segment_returns_none(tmp_path):
    segment = make_segment(tmp_path)
    assert segment.read(40, 300) is None
    segment.close()


def test_read_before_the_first_offset_returns_the_first_batch(tmp_path):
    segment = make_segment(tmp_path)
    append(segment, 50, b"hello", b"there", b"little", b"bee")
    fetch = segment.read(41, 300)
    assert read_values(fetch) == [b"hello", b"there", b"little", b"bee"]
    segment.close()


def test_read_after_the_last_offset_returns_none(tmp_path):
    segment = make_segment(tmp_path)
    append(segment, 50, b"hello", b"there")
    assert segment.read(52, 200) is None
    segment.close()


def test_read_with_max_size_zero_is_empty_and_min_one_message_returns_a_whole_batch(tmp_path):
    segment = make_segment(tmp_path)
    recs = append(segment, 50, b"hello", b"there")
    assert segment.read(50, 0).records.size_in_bytes == 0
    fetch = segment.read(50, 1, min_one_message=True)
    assert fetch.records.size_in_bytes == recs.size_in_bytes
    fetch = segment.read(50, 1)
    assert fetch.first_entry_incomplete
    segment.close()


def test_read_is_bounded_by_max_position(tmp_path):
    segment = make_segment(tmp_path)
    first = append(segment, 50, b"a")
    append(segment, 51, b"b")
    fetch = segment.read(50, 10_000, max_position=first.size_in_bytes)
    assert read_values(fetch) == [b"a"]
    segment.close()


def test_index_entries_are_added_every_index_interval_bytes(tmp_path):
    segment = make_segment(tmp_path, index_interval_bytes=1)
    positions = []
    for i in range(10):
        positions.append(segment.size())
        append(segment, 40 + i, b"x" * 20)
    # The first append has no bytes since the last entry; every later one adds one.
    assert [e.offset for e in segment.offset_index.entries_list()] == list(range(41, 50))
    assert [e.position for e in segment.offset_index.entries_list()] == positions[1:]
    assert segment.translate_offset(45).position == positions[5]
    segment.close()


def test_truncate_to_removes_later_batches_and_allows_appends_again(tmp_path):
    segment = make_segment(tmp_path)
    for i in range(0, 30, 2):
        append(segment, 40 + i, b"hello", b"there")
    removed = segment.truncate_to(40 + 10)
    assert removed > 0
    assert segment.read_next_offset() == 50
    assert segment.read(50, 1000) is None
    append(segment, 50, b"again")
    assert read_values(segment.read(50, 1000)) == [b"again"]
    segment.close()


def test_truncate_to_the_base_offset_empties_the_segment_and_resets_roll_time(tmp_path):
    segment = make_segment(tmp_path)
    append(segment, 40, b"a", b"b")
    segment.truncate_to(40)
    assert segment.size() == 0 and segment.rolling_based_timestamp is None
    segment.close()


def test_read_next_offset(tmp_path):
    segment = make_segment(tmp_path)
    assert segment.read_next_offset() == 40
    append(segment, 40, b"a", b"b", b"c")
    append(segment, 43, b"d")
    assert segment.read_next_offset() == 44
    segment.close()


def test_find_offset_by_timestamp(tmp_path):
    segment = make_segment(tmp_path)
    append(segment, 40, b"a", b"b", timestamp=100)
    append(segment, 42, b"c", b"d", timestamp=200)
    assert segment.find_offset_by_timestamp(150, 40).offset == 42
    assert segment.find_offset_by_timestamp(101, 40).offset == 41
    assert segment.find_offset_by_timestamp(1000, 40) is None
    segment.close()


def test_should_roll_on_size_on_time_and_on_offset_overflow(tmp_path):
    segment = make_segment(tmp_path)
    append(segment, 40, b"a", timestamp=1000)
    base = dict(max_segment_ms=100, max_timestamp_in_messages=1050, max_offset_in_messages=41,
                messages_size=10, now=0)
    assert not segment.should_roll(RollParams(max_segment_bytes=10_000, **base))
    assert segment.should_roll(RollParams(max_segment_bytes=segment.size() + 5, **base))
    assert segment.should_roll(RollParams(max_segment_bytes=10_000, **{**base, "max_timestamp_in_messages": 1200}))
    assert segment.should_roll(RollParams(max_segment_bytes=10_000, **{**base, "max_offset_in_messages": 40 + 2**31}))
    segment.close()


def test_append_past_the_relative_offset_range_overflows(tmp_path):
    segment = make_segment(tmp_path)
    with pytest.raises(LogSegmentOffsetOverflowError):
        append(segment, 40 + 2**31, b"far")
    segment.close()


def test_recover_rebuilds_the_indexes_exactly(tmp_path):
    segment = make_segment(tmp_path, index_interval_bytes=1)
    for i in range(20):
        append(segment, 40 + i, b"v%d" % i, timestamp=1000 + i * 10)
    before = segment.offset_index.entries_list()
    time_before = segment.time_index.entries_list()
    segment.offset_index.truncate()
    segment.time_index.truncate()
    assert segment.recover(ProducerStateManager("t-0", tmp_path, 60_000)) == 0
    assert segment.offset_index.entries_list() == before
    assert segment.time_index.entries_list()[: len(time_before)] == time_before
    segment.close()


def test_a_torn_tail_is_cut_at_every_cut_point_inside_the_last_batch(tmp_path):
    segment = make_segment(tmp_path)
    append(segment, 40, b"first", b"batch")
    good_size = segment.size()
    append(segment, 42, b"second", b"batch", b"here")
    full = segment.size()
    path = segment.log_file
    segment.close()
    data = path.read_bytes()
    for size in range(good_size + 1, full):
        path.write_bytes(data[:size])
        reopened = LogSegment.open(tmp_path, 40, LogConfig.from_props({"index.interval.bytes": 10}),
                                   file_already_exists=True)
        truncated = reopened.recover(ProducerStateManager("t-0", tmp_path, 60_000))
        assert truncated == size - good_size
        assert reopened.size() == good_size
        assert reopened.read_next_offset() == 42
        reopened.close()


@pytest.mark.parametrize("where", [0, 8, 17, 30, 61, -1])
def test_a_flipped_byte_in_a_middle_batch_truncates_from_that_batch(tmp_path, where):
    segment = make_segment(tmp_path)
    append(segment, 40, b"one")
    start = segment.size()
    append(segment, 41, b"two-two-two")
    end = segment.size()
    append(segment, 42, b"three")
    path = segment.log_file
    segment.close()
    data = bytearray(path.read_bytes())
    position = start + where if where >= 0 else end - 1
    data[position] ^= 0xFF
    path.write_bytes(bytes(data))
    reopened = LogSegment.open(tmp_path, 40, LogConfig.from_props({}), file_already_exists=True)
    reopened.recover(ProducerStateManager("t-0", tmp_path, 60_000))
    assert reopened.size() == start
    assert reopened.read_next_offset() == 41
    reopened.close()


def test_a_zero_filled_tail_from_preallocation_is_cut(tmp_path):
    segment = make_segment(tmp_path)
    append(segment, 40, b"kept")
    size = segment.size()
    path = segment.log_file
    segment.close()
    with open(path, "ab") as handle:
        handle.write(b"\x00" * 4096)
    reopened = LogSegment.open(tmp_path, 40, LogConfig.from_props({}), file_already_exists=True)
    assert reopened.recover(ProducerStateManager("t-0", tmp_path, 60_000)) == 4096
    assert reopened.size() == size
    reopened.close()


def test_recover_replays_producer_state(tmp_path):
    segment = make_segment(tmp_path)
    recs = records(40, b"a", b"b", producer_id=7, epoch=0, sequence=0)
    segment.append(41, 1001, 41, recs)
    manager = ProducerStateManager("t-0", tmp_path, 60_000)
    segment.recover(manager)
    entry = manager.last_entry(7)
    assert entry is not None and entry.last_seq == 1
    assert manager.map_end_offset == 42
    segment.close()


def test_close_trims_indexes_and_writes_the_roll_time_entry(tmp_path):
    segment = make_segment(tmp_path, index_interval_bytes=1)
    append(segment, 40, b"a", timestamp=100)
    append(segment, 41, b"b", timestamp=500)
    segment.on_become_inactive_segment()
    assert segment.time_index.last_entry().timestamp == 500
    offset_file, time_file = segment.offset_index_file, segment.time_index_file
    segment.close()
    assert os.path.getsize(offset_file) % 8 == 0 and os.path.getsize(offset_file) <= 8
    assert os.path.getsize(time_file) == 12


def test_change_file_suffixes_and_delete(tmp_path):
    segment = make_segment(tmp_path)
    append(segment, 40, b"a")
    segment.change_file_suffixes("", ".deleted")
    assert segment.has_suffix(".deleted")
    assert segment.log_file.name == "00000000000000000040.log.deleted"
    segment.delete_if_exists()
    assert segment.deleted()


def test_recover_reads_batches_larger_than_its_chunk_and_small_chunks_change_nothing(tmp_path, monkeypatch):
    import franz.storage.segment as segment_module

    segment = make_segment(tmp_path, index_interval_bytes=50)
    for i in range(12):
        append(segment, 40 + i, b"v" * (30 * (i % 4 + 1)), timestamp=1000 + i)
    expected = segment.offset_index.entries_list()
    size = segment.size()
    monkeypatch.setattr(segment_module, "RECOVERY_CHUNK_BYTES", 64)
    assert segment.recover(ProducerStateManager("t-0", tmp_path, 60_000)) == 0
    assert segment.size() == size and segment.offset_index.entries_list() == expected
    assert segment.read_next_offset() == 52
    segment.close()
