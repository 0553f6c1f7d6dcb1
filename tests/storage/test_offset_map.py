"""SkimpyOffsetMap: the cleaner's key -> latest offset map."""

import pytest

from franz.storage.offset_map import SkimpyOffsetMap


def test_the_offset_map_refuses_a_new_key_when_full_and_updates_a_known_one():
    offset_map = SkimpyOffsetMap(2 * 24)
    offset_map.put(b"a", 1)
    offset_map.put(b"b", 2)
    offset_map.put(b"a", 3)
    assert (offset_map.get(b"a"), offset_map.get(b"b"), offset_map.get(b"c")) == (3, 2, -1)
    with pytest.raises(ValueError, match="full offset map"):
        offset_map.put(b"c", 4)
    assert offset_map.latest_offset == 3 and offset_map.utilization == 1.0
    long_keys = SkimpyOffsetMap(10 * 24)  # keys past 16 bytes are held by their MD5 digests
    long_keys.put(b"x" * 40, 5)
    long_keys.put(b"x" * 39 + b"y", 6)
    long_keys.put(b"x" * 16, 7)
    assert (long_keys.get(b"x" * 40), long_keys.get(b"x" * 39 + b"y"), long_keys.get(b"x" * 16)) == (5, 6, 7)
    assert long_keys.get(b"x" * 41) == -1 and long_keys.size == 3
