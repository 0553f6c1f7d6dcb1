"""SkimpyOffsetMap: the cleaner's key -> latest offset map (Kafka's OffsetMap).

Keys longer than 16 bytes are stored as their MD5 digests, as Kafka's
SkimpyOffsetMap stores every key: two such keys with one digest count as one
key (with 16-byte digests, a chance Kafka accepts too). Keys of up to 16 bytes
are stored as they are, exact and no larger than a digest, which saves the
hashing (most keys are short). Its capacity in slots is Kafka's, memory divided
by 24 bytes (a 16-byte digest and an 8-byte offset), so a dedupe buffer holds
as many keys here as in Kafka; CPython spends more memory per entry than that.

`latest_offset` is the last offset the map has seen, keyed or not, so that the
cleaner knows how far the map covers the log.
"""

from __future__ import annotations

import hashlib

DIGEST_SIZE = 16  # MD5
BYTES_PER_ENTRY = DIGEST_SIZE + 8  # digest + offset
_md5 = hashlib.md5


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
        digest = key if len(key) <= DIGEST_SIZE else _md5(key).digest()
        offsets = self._offsets
        if digest not in offsets and len(offsets) >= self.slots:
            raise ValueError(f"Attempt to add a new entry to a full offset map of {self.slots} slots.")
        offsets[digest] = offset
        self.latest_offset = offset

    def get(self, key: bytes) -> int:
        """The latest offset put for `key`, or -1."""
        return self._offsets.get(key if len(key) <= DIGEST_SIZE else _md5(key).digest(), -1)

    def update_latest_offset(self, offset: int) -> None:
        self.latest_offset = offset

    def clear(self) -> None:
        self._offsets.clear()
        self.latest_offset = -1
