"""LogSegments: a log's segments ordered by base offset (Kafka's LogSegments).

Invariants: base offsets are unique and the map is sorted; the active segment
is the one with the highest base offset. Lookups (floor/higher/lower) are
binary searches over a sorted list of base offsets, kept beside a dict.
"""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterator
from pathlib import Path

from franz.storage.segment import LogSegment


class LogSegments:
    # The attributes the C append path reads and writes (SlotAttr in franz/storage/_fast_common.h).
    __slots__ = ("_last", "__dict__")

    def __init__(self, topic_partition: str = "") -> None:
        self.topic_partition = topic_partition
        self._by_base: dict[int, LogSegment] = {}
        self._bases: list[int] = []
        self._last: LogSegment | None = None  # the active segment, read on every append
        self._lock = threading.Lock()

    # -- mutation ------------------------------------------------------------------------
    def add(self, segment: LogSegment) -> LogSegment:
        """Add or replace the segment at its base offset; returns the segment."""
        with self._lock:
            base = segment.base_offset
            if base not in self._by_base:
                bisect.insort(self._bases, base)
            self._by_base[base] = segment
            self._last = self._by_base[self._bases[-1]]
        return segment

    def remove(self, base_offset: int) -> None:
        with self._lock:
            if self._by_base.pop(base_offset, None) is not None:
                index = bisect.bisect_left(self._bases, base_offset)
                del self._bases[index]
                self._last = self._by_base[self._bases[-1]] if self._bases else None

    def clear(self) -> None:
        with self._lock:
            self._by_base.clear()
            self._bases.clear()
            self._last = None

    # -- queries -------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._bases)

    def is_empty(self) -> bool:
        return not self._bases

    def non_empty(self) -> bool:
        return bool(self._bases)

    @property
    def number_of_segments(self) -> int:
        return len(self._bases)

    def contains(self, base_offset: int) -> bool:
        return base_offset in self._by_base

    def get(self, base_offset: int) -> LogSegment | None:
        return self._by_base.get(base_offset)

    def base_offsets(self) -> list[int]:
        return list(self._bases)

    def values(self, from_offset: int | None = None, to_offset: int | None = None) -> list[LogSegment]:
        """All segments, or those that may hold offsets in [from_offset, to_offset):
        the floor segment of from_offset up to (excluding) the one starting at to_offset.
        Taken under the lock: the scheduler's flush walks it while the append thread may roll."""
        if to_offset is not None and from_offset is not None and from_offset == to_offset:
            return []  # an empty range, even inside a segment (Kafka: "non-segment-aligned empty sets")
        if to_offset is not None and from_offset is not None and from_offset > to_offset:
            raise ValueError(f"Invalid log segment range: requested segments in {self.topic_partition} "
                             f"from offset {from_offset} which is greater than limit offset {to_offset}")
        with self._lock:
            bases = self._bases
            if from_offset is None:
                return [self._by_base[b] for b in bases]
            floor = self.floor_entry_base(from_offset)
            start = bisect.bisect_left(bases, floor) if floor is not None else bisect.bisect_left(bases, from_offset)
            end = len(bases) if to_offset is None else bisect.bisect_left(bases, to_offset)
            return [self._by_base[b] for b in bases[start:end]]

    def __iter__(self) -> Iterator[LogSegment]:
        return iter(self.values())

    def floor_entry_base(self, offset: int) -> int | None:
        index = bisect.bisect_right(self._bases, offset) - 1
        return self._bases[index] if index >= 0 else None

    def floor_segment(self, offset: int) -> LogSegment | None:
        base = self.floor_entry_base(offset)
        return None if base is None else self._by_base.get(base)

    def lower_segment(self, offset: int) -> LogSegment | None:
        index = bisect.bisect_left(self._bases, offset) - 1
        return self._by_base.get(self._bases[index]) if index >= 0 else None

    def higher_segment(self, offset: int) -> LogSegment | None:
        index = bisect.bisect_right(self._bases, offset)
        return self._by_base.get(self._bases[index]) if index < len(self._bases) else None

    def higher_segments(self, offset: int) -> list[LogSegment]:
        index = bisect.bisect_right(self._bases, offset)
        return [self._by_base[b] for b in self._bases[index:]]

    def first_segment(self) -> LogSegment | None:
        return self._by_base[self._bases[0]] if self._bases else None

    def first_segment_base_offset(self) -> int | None:
        return self._bases[0] if self._bases else None

    def last_segment(self) -> LogSegment | None:
        return self._last

    @property
    def active_segment(self) -> LogSegment:
        segment = self._last
        assert segment is not None, f"no segments in {self.topic_partition}"
        return segment

    def non_active_log_segments_from(self, offset: int) -> list[LogSegment]:
        active = self.active_segment
        if offset > active.base_offset:
            return []
        return self.values(offset, active.base_offset)

    def size_in_bytes(self) -> int:
        return sum(segment.size() for segment in self.values())

    def filter(self, predicate) -> list[LogSegment]:
        return [segment for segment in self.values() if predicate(segment)]

    # -- lifecycle -----------------------------------------------------------------------
    def close(self) -> None:
        for segment in self.values():
            segment.close()

    def close_handlers(self) -> None:
        for segment in self.values():
            segment.close_handlers()

    def update_parent_dir(self, directory: Path) -> None:
        for segment in self.values():
            segment.update_parent_dir(directory)
