"""SkimpyOffsetMap: the cleaner's key -> latest offset map (Kafka's OffsetMap).

Keys are stored as their MD5 digests, as Kafka's SkimpyOffsetMap stores
them: two keys with one digest count as one key (with 16-byte digests, a
chance Kafka accepts too). Its capacity in slots is Kafka's, memory divided by
24 bytes (a 16-byte digest and an 8-byte offset), so a dedupe buffer holds as
many keys here as in Kafka; CPython spends more memory per entry than that.

`latest_offset` is the last offset the map has seen, keyed or not, so that the
cleaner knows how far the map covers the log.
"""

from __future__ import annotations

import hashlib

BYTES_PER_ENTRY = 16 + 8  # MD5 digest + offset


class SkimpyOffsetMap:
    def __init__(self, memory: int) -> None:
        self.slots = memory // BYTES_PER_ENTRY
        self._offsets: dict[bytes, int] = {}
        self.latest_offset = -1

    @property
    def size(self) -> int:
        return len(self._offsets)

    @property
    def utilization(self) -> float:
        return len(self._offsets) / self.slots

    def put(self, key: bytes, offset: int) -> None:
        digest = hashlib.md5(key).digest()
        offsets = self._offsets
        if digest not in offsets and len(offsets) >= self.slots:
            raise ValueError(f"Attempt to add a new entry to a full offset map of {self.slots} slots.")
        offsets[digest] = offset
        self.latest_offset = offset

    def get(self, key: bytes) -> int:
        """The latest offset put for `key`, or -1."""
        return self._offsets.get(hashlib.md5(key).digest(), -1)

    def update_latest_offset(self, offset: int) -> None:
        self.latest_offset = offset

    def clear(self) -> None:
        self._offsets.clear()
        self.latest_offset = -1
