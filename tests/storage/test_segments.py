"""Behaviours of Kafka's LogSegmentsTest, as franz's own tests."""

import pytest

from franz.storage.log_config import LogConfig
from franz.storage.segment import LogSegment
from franz.storage.segments import LogSegments


@pytest.fixture
def segments(tmp_path):
    config = LogConfig.from_props({})
    result = LogSegments("t-0")
    for base in (10, 20, 30):
        result.add(LogSegment.open(tmp_path, base, config))
    yield result
    result.close()


def test_segments_are_ordered_and_the_last_is_active(segments):
    assert segments.base_offsets() == [10, 20, 30]
    assert segments.active_segment.base_offset == 30
    assert segments.first_segment().base_offset == 10


def test_floor_higher_and_lower(segments):
    assert segments.floor_segment(9) is None
    assert segments.floor_segment(10).base_offset == 10
    assert segments.floor_segment(25).base_offset == 20
    assert segments.higher_segment(20).base_offset == 30
    assert segments.higher_segment(30) is None
    assert segments.lower_segment(20).base_offset == 10
    assert [s.base_offset for s in segments.higher_segments(10)] == [20, 30]


def test_values_in_a_range_include_the_floor_segment(segments):
    assert [s.base_offset for s in segments.values(15, 30)] == [10, 20]
    assert [s.base_offset for s in segments.values(20, 31)] == [20, 30]
    assert [s.base_offset for s in segments.values(5, 10)] == []
    assert segments.values(15, 15) == [] and segments.values(20, 20) == []  # empty ranges, aligned or not
    assert [s.base_offset for s in segments.non_active_log_segments_from(0)] == [10, 20]
    with pytest.raises(ValueError):
        segments.values(30, 10)


def test_add_replaces_a_segment_at_the_same_base_and_remove_drops_it(tmp_path, segments):
    replacement = LogSegment.open(tmp_path, 20, LogConfig.from_props({}), file_suffix=".cleaned")
    segments.add(replacement)
    assert segments.get(20) is replacement and len(segments) == 3
    segments.remove(20)
    assert segments.base_offsets() == [10, 30]
    replacement.close()


def test_the_active_segment_follows_every_add_remove_and_clear(tmp_path, segments):
    config = LogConfig.from_props({})
    originals = segments.values()
    replacement = LogSegment.open(tmp_path, 30, config, file_suffix=".swap")
    segments.add(replacement)  # replacing the last segment makes the replacement active
    assert segments.active_segment is replacement
    earlier = LogSegment.open(tmp_path, 5, config)
    segments.add(earlier)  # a segment below the last leaves the active one as it was
    assert segments.active_segment is replacement
    segments.remove(30)
    assert segments.active_segment.base_offset == 20 and segments.last_segment() is segments.get(20)
    for base in (20, 10, 5):
        segments.remove(base)
    assert segments.last_segment() is None
    segments.add(earlier)
    assert segments.active_segment is earlier
    segments.clear()
    assert segments.last_segment() is None
    for segment in (*originals, replacement, earlier):
        segment.close()
