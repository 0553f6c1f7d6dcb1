"""Behaviours of Kafka's OffsetIndexTest, TimeIndexTest and LazyIndex, as franz's own tests."""

import bisect
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from franz.storage.index import (
    CorruptIndexError,
    IndexOffsetOverflowError,
    InvalidOffsetError,
    LazyIndex,
    OffsetIndex,
    OffsetPosition,
    TimeIndex,
    TimestampOffset,
)

BASE = 45


@pytest.fixture
def offset_index(tmp_path):
    index = OffsetIndex(tmp_path / "00000000000000000045.index", BASE, 30 * 8)
    yield index
    index.close_handler()


def test_a_new_index_is_preallocated_to_max_size_rounded_to_entries(tmp_path):
    index = OffsetIndex(tmp_path / "a.index", 0, 1001)
    assert (tmp_path / "a.index").stat().st_size == 1000
    assert index.max_entries == 125 and index.entries == 0
    time_index = TimeIndex(tmp_path / "a.timeindex", 0, 1001)
    assert (tmp_path / "a.timeindex").stat().st_size == 996
    index.close_handler()
    time_index.close_handler()


def test_random_lookups_find_the_largest_entry_at_or_below(offset_index):
    offsets = [BASE + 3 * i + 1 for i in range(30)]
    for i, offset in enumerate(offsets):
        offset_index.append(offset, i * 100)
    assert offset_index.lookup(BASE) == OffsetPosition(BASE, 0)
    for i, offset in enumerate(offsets):
        assert offset_index.lookup(offset) == OffsetPosition(offset, i * 100)
        assert offset_index.lookup(offset + 1) == OffsetPosition(offset, i * 100)


def test_lookup_below_the_first_entry_gives_the_base_offset(offset_index):
    offset_index.append(BASE + 10, 500)
    assert offset_index.lookup(BASE + 5) == OffsetPosition(BASE, 0)


def test_append_of_a_non_increasing_offset_is_refused(offset_index):
    offset_index.append(BASE + 5, 0)
    with pytest.raises(InvalidOffsetError):
        offset_index.append(BASE + 5, 10)
    with pytest.raises(InvalidOffsetError):
        offset_index.append(BASE + 4, 10)


def test_append_to_a_full_index_is_refused(offset_index):
    for i in range(offset_index.max_entries):
        offset_index.append(BASE + i + 1, i)
    assert offset_index.is_full()
    with pytest.raises(ValueError, match="full index"):
        offset_index.append(BASE + 1000, 1000)


def test_relative_offset_overflow_raises(offset_index):
    with pytest.raises(IndexOffsetOverflowError):
        offset_index.append(BASE + 2**31, 0)
    assert not offset_index.can_append_offset(BASE - 1)


def test_truncate_to_removes_entries_at_and_above_the_offset(offset_index):
    for i in range(10):
        offset_index.append(BASE + 2 * i, i)
    offset_index.truncate_to(BASE + 6)  # an exact entry: it goes too
    assert offset_index.entries == 3 and offset_index.last_offset == BASE + 4
    offset_index.truncate_to(BASE + 3)  # between entries
    assert offset_index.entries == 2
    offset_index.truncate_to(BASE + 100)  # above everything: nothing happens
    assert offset_index.entries == 2
    offset_index.truncate_to(0)
    assert offset_index.entries == 0 and offset_index.last_offset == BASE


def test_fetch_upper_bound_offset(offset_index):
    for i in range(5):
        offset_index.append(BASE + i * 10, i * 100)
    assert offset_index.fetch_upper_bound_offset(OffsetPosition(BASE, 0), 150) == OffsetPosition(BASE + 20, 200)
    assert offset_index.fetch_upper_bound_offset(OffsetPosition(BASE, 0), 1000) is None


def test_close_trims_and_reopen_restores_the_entries(tmp_path):
    path = tmp_path / "00000000000000000000.index"
    index = OffsetIndex(path, 0, 4096)
    for i in range(1, 6):
        index.append(i, i * 10)
    index.close()
    assert path.stat().st_size == 5 * 8
    reopened = OffsetIndex(path, 0, 4096)
    assert reopened.entries == 5 and reopened.last_offset == 5
    assert reopened.lookup(3) == OffsetPosition(3, 30)
    reopened.resize(4096)  # as when the segment becomes active again
    reopened.append(6, 60)
    assert reopened.entries == 6
    reopened.close_handler()


def test_entries_are_big_endian_relative_offset_then_position(tmp_path):
    path = tmp_path / "00000000000000000100.index"
    index = OffsetIndex(path, 100, 64)
    index.append(107, 4242)
    index.close()
    assert path.read_bytes() == struct.pack(">ii", 7, 4242)


def test_sanity_check_catches_a_size_that_is_not_whole_entries(tmp_path):
    path = tmp_path / "00000000000000000000.index"
    path.write_bytes(struct.pack(">ii", 1, 0) + b"\x00\x00\x00")
    index = OffsetIndex(path, 0, 4096)
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


def test_reset_drops_entries_and_grows_back_to_max_size(offset_index):
    offset_index.append(BASE + 1, 1)
    offset_index.trim_to_valid_size()
    offset_index.reset()
    assert offset_index.entries == 0 and offset_index.max_entries == 30


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(1, 50), min_size=0, max_size=3000), st.lists(st.integers(-5, 60_000), max_size=40))
def test_lookup_equals_brute_force_across_the_warm_and_cold_sections(tmp_path_factory, gaps, targets):
    path = tmp_path_factory.mktemp("idx") / "00000000000000000000.index"
    index = OffsetIndex(path, 0, 8 * 4000)
    offsets, offset = [], 0
    for i, gap in enumerate(gaps):
        offset += gap
        index.append(offset, i)
        offsets.append(offset)
    for target in targets + offsets[:5] + offsets[-5:]:
        slot = bisect.bisect_right(offsets, target) - 1
        expected = OffsetPosition(0, 0) if slot < 0 else OffsetPosition(offsets[slot], slot)
        assert index.lookup(target) == expected
    index.close_handler()


# -- TimeIndex ------------------------------------------------------------------------------

@pytest.fixture
def time_index(tmp_path):
    index = TimeIndex(tmp_path / "00000000000000000045.timeindex", BASE, 30 * 12)
    yield index
    index.close_handler()


def test_time_lookup_finds_the_largest_timestamp_at_or_below(time_index):
    for i in range(1, 10):
        time_index.maybe_append(i * 10, BASE + i * 10)
    assert time_index.lookup(5) == TimestampOffset(-1, BASE)
    assert time_index.lookup(10) == TimestampOffset(10, BASE + 10)
    assert time_index.lookup(25) == TimestampOffset(20, BASE + 20)
    assert time_index.lookup(10_000) == TimestampOffset(90, BASE + 90)


def test_time_index_keeps_the_last_slot_for_the_roll_entry(time_index):
    for i in range(time_index.max_entries - 1):
        time_index.maybe_append(i + 1, BASE + i + 1)
    assert time_index.is_full()
    with pytest.raises(ValueError, match="full time index"):
        time_index.maybe_append(1000, BASE + 1000)
    time_index.maybe_append(1000, BASE + 1000, skip_full_check=True)
    assert time_index.entries == time_index.max_entries


def test_an_equal_or_smaller_timestamp_adds_no_entry_and_a_smaller_one_is_refused(time_index):
    time_index.maybe_append(100, BASE + 1)
    time_index.maybe_append(100, BASE + 2)
    assert time_index.entries == 1
    with pytest.raises(ValueError):
        time_index.maybe_append(99, BASE + 3)
    with pytest.raises(InvalidOffsetError):
        time_index.maybe_append(200, BASE)


def test_time_index_truncate_to_uses_offsets(time_index):
    for i in range(1, 6):
        time_index.maybe_append(i * 100, BASE + i)
    time_index.truncate_to(BASE + 3)
    assert time_index.entries == 2 and time_index.last_entry() == TimestampOffset(200, BASE + 2)


def test_time_entries_are_big_endian_timestamp_then_relative_offset(tmp_path):
    path = tmp_path / "00000000000000000100.timeindex"
    index = TimeIndex(path, 100, 120)
    index.maybe_append(1_700_000_000_000, 103)
    index.close()
    assert path.read_bytes() == struct.pack(">qi", 1_700_000_000_000, 3)


def test_time_sanity_check_catches_decreasing_timestamps(tmp_path):
    path = tmp_path / "00000000000000000000.timeindex"
    path.write_bytes(struct.pack(">qi", 500, 1) + struct.pack(">qi", 100, 2))
    index = TimeIndex(path, 0, 4096)
    with pytest.raises(CorruptIndexError, match="less than the first timestamp"):
        index.sanity_check()
    index.close_handler()


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
    assert lazy.get().lookup(3) == OffsetPosition(3, 30)
    assert lazy.is_loaded() and lazy.file == renamed
    assert lazy.delete_if_exists()
    assert not renamed.exists()


def test_lazy_index_delete_of_a_missing_file_is_false(tmp_path):
    assert not LazyIndex.for_time(tmp_path / "nope.timeindex", 0, 120).delete_if_exists()
