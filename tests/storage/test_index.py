"""Behaviours of Kafka's OffsetIndexTest, TimeIndexTest and LazyIndex, as franz's own tests,
plus brute-force properties across the warm/cold boundary and corruption cases."""

import bisect
import itertools
import os
import random
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from franz.storage.index import (
    NO_TIMESTAMP,
    CorruptIndexError,
    IndexOffsetOverflowError,
    InvalidOffsetError,
    LazyIndex,
    OffsetIndex,
    OffsetPosition,
    TimeIndex,
    TimestampOffset,
    round_down_to_exact_multiple,
)

BASE = 45


@pytest.fixture
def offset_index(tmp_path):
    index = OffsetIndex(tmp_path / "00000000000000000045.index", BASE, 30 * 8)
    yield index
    index.close_handler()


@pytest.fixture
def time_index(tmp_path):
    index = TimeIndex(tmp_path / "00000000000000000045.timeindex", BASE, 30 * 12)
    yield index
    index.close_handler()


def test_round_down_is_java_integer_division():
    assert round_down_to_exact_multiple(67, 8) == 64
    assert round_down_to_exact_multiple(-1, 8) == 0
    assert round_down_to_exact_multiple(-9, 8) == -8


# -- OffsetIndex ----------------------------------------------------------------------------

def test_a_new_index_is_preallocated_to_max_size_rounded_to_entries(tmp_path):
    index = OffsetIndex(tmp_path / "a.index", 0, 1001)
    assert (tmp_path / "a.index").stat().st_size == 1000
    assert index.max_entries == 125 and index.entries == 0 and index.length == 1000
    time_index = TimeIndex(tmp_path / "a.timeindex", 0, 1001)
    assert (tmp_path / "a.timeindex").stat().st_size == 996
    assert time_index.max_entries == 83
    index.close_handler()
    time_index.close_handler()


def test_a_new_index_smaller_than_one_entry_is_refused_and_leaves_no_file(tmp_path):
    with pytest.raises(ValueError, match="Invalid max index size"):
        OffsetIndex(tmp_path / "a.index", 0, 7)
    assert not (tmp_path / "a.index").exists()


def test_random_lookups_find_the_largest_entry_at_or_below(offset_index):
    assert offset_index.lookup(92) == OffsetPosition(BASE, 0)  # empty index
    rng = random.Random(7)
    offsets, positions, offset, position = [], [], BASE + 1, 0
    for _ in range(offset_index.max_entries):
        offset += rng.randint(1, 15)
        position += rng.randint(1, 15)
        offset_index.append(offset, position)
        offsets.append(offset)
        positions.append(position)
    for offset, position in zip(offsets, positions):
        assert offset_index.lookup(offset) == OffsetPosition(offset, position)
    for target in range(BASE, offsets[-1] + 5):
        slot = bisect.bisect_right(offsets, target) - 1
        expected = OffsetPosition(BASE, 0) if slot < 0 else OffsetPosition(offsets[slot], positions[slot])
        assert offset_index.lookup(target) == expected


def test_lookup_extreme_cases(offset_index):
    assert offset_index.lookup(BASE) == OffsetPosition(BASE, 0)
    for i in range(offset_index.max_entries):
        offset_index.append(BASE + i + 1, i)
    assert offset_index.lookup(BASE) == OffsetPosition(BASE, 0)
    last = BASE + offset_index.max_entries
    assert offset_index.lookup(last) == OffsetPosition(last, offset_index.max_entries - 1)
    assert offset_index.lookup(2**62) == OffsetPosition(last, offset_index.max_entries - 1)


def test_entry_returns_the_nth_entry_and_refuses_slots_outside(offset_index):
    with pytest.raises(IndexError):
        offset_index.entry(0)
    for i in range(offset_index.max_entries):
        offset_index.append(BASE + i, i)
    assert [offset_index.entry(i) for i in range(30)] == [OffsetPosition(BASE + i, i) for i in range(30)]
    assert list(offset_index.iter_entries()) == offset_index.entries_list() == [
        OffsetPosition(BASE + i, i) for i in range(30)]
    with pytest.raises(IndexError):
        offset_index.entry(30)
    with pytest.raises(IndexError):
        offset_index.entry(-1)


def test_append_to_a_full_index_is_refused(offset_index):
    for i in range(offset_index.max_entries):
        offset_index.append(BASE + i + 1, i)
    assert offset_index.is_full()
    with pytest.raises(ValueError, match="full index"):
        offset_index.append(BASE + offset_index.max_entries + 1, 1)


def test_append_of_a_non_increasing_offset_is_refused(offset_index):
    offset_index.append(51, 0)
    with pytest.raises(InvalidOffsetError):
        offset_index.append(50, 1)
    with pytest.raises(InvalidOffsetError):
        offset_index.append(51, 1)
    assert offset_index.entries == 1


def test_an_entry_at_the_base_offset_is_allowed_and_sane(tmp_path):
    index = OffsetIndex(tmp_path / "00000000000000000020.index", 20, 10 * 8)
    index.append(20, 0)
    index.sanity_check()
    index.close()


def test_relative_offset_overflow_raises_and_writes_nothing(offset_index):
    with pytest.raises(IndexOffsetOverflowError, match="Integer overflow for offset"):
        offset_index.append(BASE + 2**31, 0)
    with pytest.raises(IndexOffsetOverflowError):
        offset_index.append(BASE - 1, 0)
    assert offset_index.entries == 0
    assert offset_index.can_append_offset(BASE + 2**31 - 1)
    assert not offset_index.can_append_offset(BASE + 2**31)
    assert not offset_index.can_append_offset(BASE - 1)


def test_fetch_upper_bound_offset(offset_index):
    first, second, third, fourth = (OffsetPosition(BASE, 0), OffsetPosition(BASE + 1, 10),
                                    OffsetPosition(BASE + 2, 23), OffsetPosition(BASE + 3, 37))
    assert offset_index.fetch_upper_bound_offset(first, 5) is None
    for entry in (first, second, third, fourth):
        offset_index.append(*entry)
    assert offset_index.fetch_upper_bound_offset(first, 5) == second
    assert offset_index.fetch_upper_bound_offset(first, 10) == second
    assert offset_index.fetch_upper_bound_offset(first, 23) == third
    assert offset_index.fetch_upper_bound_offset(first, 22) == third
    assert offset_index.fetch_upper_bound_offset(second, 24) == fourth
    assert offset_index.fetch_upper_bound_offset(fourth, 1) is None
    assert offset_index.fetch_upper_bound_offset(first, 200) is None
    assert offset_index.fetch_upper_bound_offset(second, 200) is None


def test_fetch_upper_bound_passes_over_an_exact_match_in_slot_zero_as_kafka_does(offset_index):
    offset_index.append(BASE, 10)
    assert offset_index.fetch_upper_bound_offset(OffsetPosition(BASE, 0), 10) is None
    offset_index.append(BASE + 1, 20)
    assert offset_index.fetch_upper_bound_offset(OffsetPosition(BASE, 0), 10) == OffsetPosition(BASE + 1, 20)
    assert offset_index.fetch_upper_bound_offset(OffsetPosition(BASE, 0), 20) == OffsetPosition(BASE + 1, 20)


def test_reopen_finds_the_entries_and_a_trimmed_index_is_full(offset_index):
    offset_index.append(51, 0)
    offset_index.append(52, 1)
    offset_index.close()
    assert offset_index.file.stat().st_size == 16
    reopened = OffsetIndex(offset_index.file, BASE)
    assert reopened.lookup(51) == OffsetPosition(51, 0)
    assert reopened.lookup(52) == OffsetPosition(52, 1)
    assert reopened.last_offset == 52 and reopened.entries == 2
    with pytest.raises(ValueError, match="full index"):
        reopened.append(53, 1)
    reopened.resize(4096)  # as when the segment becomes active again
    reopened.append(53, 2)
    assert reopened.entries == 3 and reopened.max_entries == 512
    reopened.close_handler()


def test_truncate_to_removes_entries_at_and_above_the_offset(tmp_path):
    index = OffsetIndex(tmp_path / "00000000000000000000.index", 0, 10 * 8)
    index.truncate()
    for i in range(1, 10):
        index.append(i, i)
    index.truncate_to(12)
    assert index.lookup(10) == OffsetPosition(9, 9) and index.last_offset == 9  # past the end: unchanged
    index.append(10, 10)
    index.truncate_to(10)
    assert index.lookup(10) == OffsetPosition(9, 9) and index.last_offset == 9  # an exact entry goes
    index.append(10, 10)
    index.truncate_to(9)
    assert index.lookup(10) == OffsetPosition(8, 8) and index.last_offset == 8
    index.append(9, 9)
    index.truncate_to(5)
    assert index.lookup(10) == OffsetPosition(4, 4) and index.last_offset == 4
    index.append(5, 5)
    index.truncate()
    assert index.entries == 0 and index.last_offset == 0
    index.close()


def test_truncate_to_between_entries_keeps_the_lower_one(offset_index):
    for i in range(10):
        offset_index.append(BASE + 2 * i, i)
    offset_index.truncate_to(BASE + 3)
    assert offset_index.entries == 2 and offset_index.last_offset == BASE + 2
    offset_index.truncate_to(0)
    assert offset_index.entries == 0 and offset_index.last_offset == BASE


def test_a_closed_index_refuses_lookups(tmp_path):
    index = OffsetIndex(tmp_path / "00000000000000000000.index", 0, 10 * 8)
    index.append(1, 1)
    index.close_handler()
    with pytest.raises(ValueError, match="closed"):
        index.lookup(1)
    index.close()  # closing twice is harmless


def test_entries_are_big_endian_relative_offset_then_position(tmp_path):
    path = tmp_path / "00000000000000000100.index"
    index = OffsetIndex(path, 100, 64)
    index.append(107, 4242)
    index.append(100 + 2**31 - 1, 2**31 - 1)
    index.close()
    assert path.read_bytes() == struct.pack(">ii", 7, 4242) + struct.pack(">ii", 2**31 - 1, 2**31 - 1)


def test_resize_reports_whether_the_size_changed_and_keeps_entries(offset_index):
    offset_index.append(BASE + 1, 1)
    assert not offset_index.resize(30 * 8)
    assert offset_index.resize(15 * 8)
    assert offset_index.resize(61 * 8 + 3)
    assert offset_index.length == 61 * 8 and offset_index.file.stat().st_size == 61 * 8
    assert offset_index.max_entries == 61 and offset_index.lookup(BASE + 1) == OffsetPosition(BASE + 1, 1)
    with pytest.raises(AssertionError, match="drop"):
        offset_index.resize(0)


def test_a_lookup_holding_the_old_map_survives_a_concurrent_resize(offset_index):
    for i in range(20):
        offset_index.append(BASE + i, i * 10)
    old_map = offset_index.buffer
    offset_index.trim_to_valid_size()
    offset_index.resize(4096)
    assert struct.unpack_from(">ii", old_map, 19 * 8) == (19, 190)
    assert offset_index.lookup(BASE + 19) == OffsetPosition(BASE + 19, 190)


def test_reset_drops_entries_and_grows_back_to_max_size(offset_index):
    offset_index.append(BASE + 1, 1)
    offset_index.trim_to_valid_size()
    assert offset_index.max_entries == 1
    offset_index.reset()
    assert offset_index.entries == 0 and offset_index.max_entries == 30 and offset_index.last_offset == BASE


def test_reset_of_an_index_opened_without_a_max_size_shrinks_to_nothing(tmp_path):
    path = tmp_path / "00000000000000000000.index"
    path.write_bytes(struct.pack(">ii", 1, 10))
    index = OffsetIndex(path, 0)  # max_index_size -1, as read tools open it
    index.reset()  # Java rounds -1 down to 0 bytes
    assert index.entries == 0 and path.stat().st_size == 0
    index.close()


def test_read_only_index_never_creates_writes_or_trims_the_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        OffsetIndex(tmp_path / "missing.index", 0, 80, writable=False)
    assert not (tmp_path / "missing.index").exists()
    path = tmp_path / "00000000000000000000.index"
    path.write_bytes(struct.pack(">ii", 1, 10) + bytes(8 * 3))
    index = OffsetIndex(path, 0, -1, writable=False)
    assert index.entries == 4 and index.entry(0) == OffsetPosition(1, 10)
    with pytest.raises(ValueError, match="full"):
        index.append(5, 5)
    index.close()
    assert path.stat().st_size == 32


def test_context_manager_closes_and_trims(tmp_path):
    path = tmp_path / "00000000000000000000.index"
    with OffsetIndex(path, 0, 800) as index:
        index.append(3, 30)
    assert path.stat().st_size == 8


def test_flush_and_rename_and_delete(tmp_path, offset_index):
    offset_index.append(BASE + 1, 7)
    offset_index.flush()
    renamed = tmp_path / "00000000000000000045.index.deleted"
    offset_index.rename_to(renamed)
    assert offset_index.file == renamed and renamed.exists()
    assert offset_index.lookup(BASE + 1) == OffsetPosition(BASE + 1, 7)  # the map is still good
    offset_index.update_parent_dir(tmp_path / "elsewhere")
    assert offset_index.file == tmp_path / "elsewhere" / renamed.name
    offset_index.update_parent_dir(tmp_path)
    assert offset_index.delete_if_exists() and not renamed.exists()
    assert not offset_index.delete_if_exists()


# -- corruption --------------------------------------------------------------------------------

def test_a_file_cut_mid_entry_opens_with_its_whole_entries_and_fails_sanity(tmp_path):
    path = tmp_path / "00000000000000000000.index"
    path.write_bytes(struct.pack(">ii", 1, 0) + struct.pack(">ii", 2, 5)[:3])
    index = OffsetIndex(path, 0, 4096)
    assert index.entries == 1 and index.lookup(5) == OffsetPosition(1, 0)
    with pytest.raises(CorruptIndexError, match="multiple of 8"):
        index.sanity_check()
    index.close_handler()


def test_sanity_check_catches_a_last_offset_below_the_base(tmp_path):
    path = tmp_path / "00000000000000000010.index"
    path.write_bytes(struct.pack(">ii", -3, 0))
    index = OffsetIndex(path, 10, 4096)
    with pytest.raises(CorruptIndexError, match="less than the base offset"):
        index.sanity_check()
    index.close_handler()


def test_an_empty_file_is_a_sane_empty_index(tmp_path):
    path = tmp_path / "00000000000000000010.index"
    path.write_bytes(b"")
    index = OffsetIndex(path, 10, 4096)
    index.sanity_check()
    assert index.entries == 0 and index.lookup(100) == OffsetPosition(10, 0) and index.is_full()
    index.close()


def test_a_preallocated_index_left_by_a_crash_opens_full_of_zero_entries(tmp_path):
    """Kafka's position-from-length rule: the zero tail counts as entries. The offset
    index still passes sanity (zeros are base offset), the time index does not;
    segment recovery rebuilds both for the active segment."""
    offset_path = tmp_path / "00000000000000000100.index"
    time_path = tmp_path / "00000000000000000100.timeindex"
    offsets, times = OffsetIndex(offset_path, 100, 80), TimeIndex(time_path, 100, 120)
    offsets.append(101, 50)
    times.maybe_append(1000, 101)
    offsets.flush()
    times.flush()
    offsets.close_handler()  # a crash: no trim
    times.close_handler()
    offsets, times = OffsetIndex(offset_path, 100, 80), TimeIndex(time_path, 100, 120)
    assert offsets.entries == 10 and offsets.last_offset == 100
    offsets.sanity_check()
    assert times.entries == 10 and times.last_entry() == TimestampOffset(0, 100)
    with pytest.raises(CorruptIndexError, match="less than the first timestamp"):
        times.sanity_check()
    offsets.close_handler()
    times.close_handler()


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_open_and_either_pass_or_fail_sanity_cleanly(tmp_path_factory, data):
    directory = tmp_path_factory.mktemp("garbage")
    for cls, name in ((OffsetIndex, "00000000000000000009.index"), (TimeIndex, "00000000000000000009.timeindex")):
        path = directory / name
        path.write_bytes(data)
        index = cls(path, 9, 4096)
        assert index.entries == len(data) // cls.entry_size
        try:
            index.sanity_check()
        except CorruptIndexError:
            pass
        index.lookup(2**40)
        list(index.iter_entries())
        index.close_handler()


# -- properties ------------------------------------------------------------------------------

# 3000 entries is about three times the warm section of the offset index (1024
# entries) and four times that of the time index (682), so targets fall in both.
@st.composite
def _gaps(draw, low=1):
    """Up to 3000 gaps, often more than a warm section's worth, drawn cheaply from a seeded RNG."""
    count = draw(st.one_of(st.integers(0, 40), st.integers(1000, 3000)))
    largest = draw(st.sampled_from([1, 3, 40]))
    rng = draw(st.randoms(use_true_random=False))
    return [rng.randint(low, largest) for _ in range(count)]


_targets = st.lists(st.integers(-5, 130_000), max_size=40)


def _offset_index_of(tmp_path_factory, offsets, positions) -> OffsetIndex:
    index = OffsetIndex(tmp_path_factory.mktemp("idx") / "00000000000000000000.index", 0, 8 * 3001)
    for offset, position in zip(offsets, positions):
        index.append(offset, position)
    return index


@settings(max_examples=60, deadline=None)
@given(_gaps(), _targets)
def test_offset_lookup_equals_brute_force_across_the_warm_and_cold_sections(tmp_path_factory, gaps, targets):
    offsets = list(itertools.accumulate(gaps))
    index = _offset_index_of(tmp_path_factory, offsets, range(len(offsets)))
    for target in targets + offsets[::97] + [o - 1 for o in offsets[::89]] + offsets[-1026:][:3] + offsets[-3:]:
        slot = bisect.bisect_right(offsets, target) - 1
        expected = OffsetPosition(0, 0) if slot < 0 else OffsetPosition(offsets[slot], slot)
        assert index.lookup(target) == expected
    index.close_handler()


@settings(max_examples=60, deadline=None)
@given(_gaps(), st.lists(st.integers(0, 130_000), max_size=20), st.integers(0, 5000))
def test_fetch_upper_bound_equals_the_smallest_position_at_or_past_the_end(tmp_path_factory, gaps, starts, size):
    positions = list(itertools.accumulate(gaps))
    index = _offset_index_of(tmp_path_factory, range(len(positions)), positions)
    for start in starts:
        end = start + size
        found = index.fetch_upper_bound_offset(OffsetPosition(0, start), size)
        # Kafka's search: the smallest entry at or past the end, except that an entry exactly
        # at the end in slot 0 is passed over for the next one (its loop never probes slot 0).
        slot = bisect.bisect_left(positions, end)
        if slot == 0 and positions and positions[0] == end:
            slot = 1
        assert found == (None if slot == len(positions) else OffsetPosition(slot, positions[slot]))
    index.close_handler()


@settings(max_examples=60, deadline=None)
@given(_gaps(), st.integers(-5, 130_000))
def test_truncate_to_keeps_exactly_the_entries_below_the_offset(tmp_path_factory, gaps, cut):
    directory = tmp_path_factory.mktemp("idx")
    offset_index = OffsetIndex(directory / "00000000000000000000.index", 0, 8 * 3001)
    time_index = TimeIndex(directory / "00000000000000000000.timeindex", 0, 12 * 3002)
    offsets, offset = [], 0
    for gap in gaps:
        offset += gap
        offset_index.append(offset, 0)
        time_index.maybe_append(offset * 2, offset)
        offsets.append(offset)
    offset_index.truncate_to(cut)
    time_index.truncate_to(cut)
    kept = [o for o in offsets if o < cut]
    assert [e.offset for e in offset_index.iter_entries()] == kept
    assert [e.offset for e in time_index.iter_entries()] == kept
    assert offset_index.last_offset == (kept[-1] if kept else 0)
    assert time_index.last_entry() == (TimestampOffset(kept[-1] * 2, kept[-1]) if kept else TimestampOffset(-1, 0))
    offset_index.close_handler()
    time_index.close_handler()


@settings(max_examples=60, deadline=None)
@given(_gaps(low=0), _gaps(low=0), _targets)
def test_time_lookup_equals_brute_force_over_appended_timestamps(tmp_path_factory, timestamp_gaps, offset_gaps,
                                                                  targets):
    steps = list(zip(timestamp_gaps, offset_gaps))
    index = TimeIndex(tmp_path_factory.mktemp("tidx") / "00000000000000000000.timeindex", 0, 12 * 3002)
    kept, timestamp, offset = [], 0, 0
    for timestamp_step, offset_step in steps:
        timestamp += timestamp_step
        offset += offset_step
        index.maybe_append(timestamp, offset)
        if not kept or timestamp > kept[-1].timestamp:  # only a larger timestamp makes an entry
            kept.append(TimestampOffset(timestamp, offset))
    assert index.entries_list() == kept
    timestamps = [entry.timestamp for entry in kept]
    for target in targets + timestamps[::97] + [t - 1 for t in timestamps[::89]] + timestamps[-684:][:3]:
        slot = bisect.bisect_right(timestamps, target) - 1
        assert index.lookup(target) == (TimestampOffset(NO_TIMESTAMP, 0) if slot < 0 else kept[slot])
    index.close_handler()


# -- TimeIndex ------------------------------------------------------------------------------

def _append_time_entries(index, count):
    for i in range(1, count + 1):
        index.maybe_append(i * 10, i * 10 + BASE)


def test_time_lookup_finds_the_largest_timestamp_at_or_below(time_index):
    assert time_index.lookup(100) == TimestampOffset(-1, BASE)
    _append_time_entries(time_index, 29)
    assert time_index.lookup(9) == TimestampOffset(-1, BASE)
    assert time_index.lookup(25) == TimestampOffset(20, 65)
    assert time_index.lookup(30) == TimestampOffset(30, 75)
    assert time_index.lookup(10_000) == TimestampOffset(290, 335)


def test_time_entry_returns_the_nth_entry(time_index):
    with pytest.raises(IndexError):
        time_index.entry(0)
    _append_time_entries(time_index, 29)
    assert [time_index.entry(i) for i in range(4)] == [
        TimestampOffset(10, 55), TimestampOffset(20, 65), TimestampOffset(30, 75), TimestampOffset(40, 85)]
    assert time_index.entries_list()[-1] == TimestampOffset(290, 335)


def test_time_truncate_and_truncate_to(time_index):
    _append_time_entries(time_index, 29)
    time_index.truncate()
    assert time_index.entries == 0 and time_index.last_entry() == TimestampOffset(-1, BASE)
    _append_time_entries(time_index, 29)
    time_index.truncate_to(10 + BASE)
    assert time_index.entries == 0


def test_time_index_keeps_the_last_slot_for_the_roll_entry(time_index):
    assert not time_index.is_full()
    _append_time_entries(time_index, 29)
    assert time_index.is_full()
    with pytest.raises(ValueError, match="full time index"):
        time_index.maybe_append(10000, 1000)
    with pytest.raises(InvalidOffsetError):
        time_index.maybe_append(10000, 28 * 10, skip_full_check=True)
    time_index.maybe_append(10000, 1000, skip_full_check=True)
    assert time_index.entries == time_index.max_entries == 30
    with pytest.raises(ValueError, match="full time index"):
        time_index.maybe_append(20000, 2000, skip_full_check=True)
    time_index.maybe_append(10000, 1000, skip_full_check=True)  # the roll entry again: ignored


def test_an_equal_timestamp_adds_no_entry_and_a_smaller_one_is_refused(time_index):
    time_index.maybe_append(100, BASE + 1)
    time_index.maybe_append(100, BASE + 2)
    assert time_index.entries == 1 and time_index.last_entry() == TimestampOffset(100, BASE + 1)
    with pytest.raises(ValueError, match="no larger than the last timestamp"):
        time_index.maybe_append(99, BASE + 3)
    with pytest.raises(InvalidOffsetError):
        time_index.maybe_append(200, BASE)


def test_time_index_overflow_writes_nothing(time_index):
    with pytest.raises(IndexOffsetOverflowError):
        time_index.maybe_append(5, BASE + 2**31)
    assert time_index.entries == 0 and time_index.last_entry() == TimestampOffset(-1, BASE)
    time_index.maybe_append(5, BASE + 1)
    assert time_index.entries_list() == [TimestampOffset(5, BASE + 1)]


def test_time_last_entry(time_index):
    assert time_index.last_entry() == TimestampOffset(NO_TIMESTAMP, BASE)
    time_index.maybe_append(1, 1 + BASE)
    assert time_index.last_entry() == TimestampOffset(1, BASE + 1)


def test_time_resize(time_index):
    assert not time_index.resize(30 * 12)
    assert time_index.resize(15 * 12)
    assert time_index.resize(60 * 12)
    assert time_index.entry_size == 12


def test_time_entries_are_big_endian_timestamp_then_relative_offset(tmp_path):
    path = tmp_path / "00000000000000000100.timeindex"
    index = TimeIndex(path, 100, 120)
    index.maybe_append(1_700_000_000_000, 103)
    index.close()
    assert path.read_bytes() == struct.pack(">qi", 1_700_000_000_000, 3)


def test_time_sanity_check(tmp_path, time_index):
    time_index.sanity_check()
    _append_time_entries(time_index, 5)
    time_index.sanity_check()
    time_index.close()
    assert time_index.file.stat().st_size == 60
    good = time_index.file.read_bytes()

    def sanity_of(data: bytes):
        path = tmp_path / "00000000000000000045.copy.timeindex"
        path.write_bytes(data)
        index = TimeIndex(path, BASE, 30 * 12)
        try:
            index.sanity_check()
        finally:
            index.close_handler()

    sanity_of(good)
    with pytest.raises(CorruptIndexError, match="less than the first offset"):
        sanity_of(good[:-4] + struct.pack(">i", -1))
    with pytest.raises(CorruptIndexError, match="less than the first timestamp"):
        sanity_of(good[:-12] + struct.pack(">qi", 9, 50))
    with pytest.raises(CorruptIndexError, match="multiple of 12"):
        sanity_of(good[:-1])


# -- mapping ----------------------------------------------------------------------------------

def _vm_flags_of_mapping(path) -> list[list[str]]:
    """The VmFlags of each mapping of `path` in this process (Linux /proc/self/smaps)."""
    found, current = [], None
    with open("/proc/self/smaps") as smaps:
        for line in smaps:
            if line[:1].isdigit() or line[:1] in "abcdef":  # a mapping's header: "start-end perms ... path"
                current = line.rstrip("\n").endswith(str(path))
            elif current and line.startswith("VmFlags:"):
                found.append(line.split()[1:])
    return found


def _all_advised_random(path) -> bool:
    """True when `path` is mapped here and every mapping of it has VM_RAND_READ ("rr")."""
    flags = _vm_flags_of_mapping(path)
    return bool(flags) and all("rr" in each for each in flags)


@pytest.mark.skipif(not os.path.exists("/proc/self/smaps"), reason="reads Linux's /proc/self/smaps")
def test_index_maps_are_advised_random_access_so_a_fault_reads_no_pages_around_it(tmp_path):
    # "rr" is VM_RAND_READ (madvise MADV_RANDOM): without it, the first entry appended to a
    # new sparse index made the kernel read around the fault (8 MiB on a disk with
    # read_ahead_kb = 8192) while the appending thread held the GIL.
    path = tmp_path / "00000000000000000000.index"
    index = OffsetIndex(path, 0, 1 << 20)
    index.append(1, 10)
    assert _all_advised_random(path)
    index.resize(2 << 20)  # a new map of the new length
    assert _all_advised_random(path)
    index.close()
    reader = TimeIndex(tmp_path / "00000000000000000000.timeindex", 0, 1200)
    reader.maybe_append(5, 1)
    reader.close()
    read_only = TimeIndex(tmp_path / "00000000000000000000.timeindex", 0, 1200, writable=False)
    assert read_only.lookup(5).offset == 1
    assert _all_advised_random(tmp_path / "00000000000000000000.timeindex")
    read_only.close()


# -- LazyIndex ------------------------------------------------------------------------------

def test_lazy_index_maps_nothing_until_used_and_renames_the_bare_file(tmp_path):
    path = tmp_path / "00000000000000000000.index"
    real = OffsetIndex(path, 0, 800)
    real.append(3, 30)
    real.close()
    lazy = LazyIndex.for_offset(path, 0, 800)
    assert not lazy.is_loaded()
    renamed = tmp_path / "00000000000000000000.index.deleted"
    lazy.rename_to(renamed)
    assert renamed.exists() and not path.exists() and not lazy.is_loaded()
    index = lazy.get()
    assert lazy.get() is index and isinstance(index, OffsetIndex)
    assert index.lookup(3) == OffsetPosition(3, 30)
    assert lazy.is_loaded() and lazy.file == renamed
    lazy.rename_to(path)  # loaded: the index renames its own file
    assert index.file == path and lazy.file == path
    assert lazy.delete_if_exists()
    assert not path.exists()


def test_lazy_index_acts_on_the_path_before_loading(tmp_path):
    lazy = LazyIndex.for_time(tmp_path / "00000000000000000000.timeindex", 0, 120)
    assert not lazy.delete_if_exists()
    lazy.rename_to(tmp_path / "x.timeindex")  # nothing to rename yet: fine
    lazy.close()
    lazy.close_handler()
    assert not lazy.is_loaded()
    (tmp_path / "sub").mkdir()
    lazy.update_parent_dir(tmp_path / "sub")
    assert lazy.file == tmp_path / "sub" / "x.timeindex"
    index = lazy.get()  # creates the file where it now lives
    assert isinstance(index, TimeIndex) and index.file.exists() and index.max_entries == 10
    lazy.close()
    assert index.file.stat().st_size == 0
