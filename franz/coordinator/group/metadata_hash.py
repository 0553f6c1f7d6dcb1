"""The metadata hash of a consumer group's subscribed topics (KIP-1101; Kafka's Utils.computeTopicHash,
computeGroupHash and ModernGroup.computeMetadataHash).

Since 4.1 a group's epoch record (ConsumerGroupMetadataValue) carries one 64-bit
hash of every subscribed topic that exists, in place of the subscription
metadata records of 4.0: when a topic is made, deleted, re-created or grows, the
hash changes and the group epoch goes up. The bytes hashed are Kafka's, so the
value in the log is the one a Kafka broker computes:

    topic hash := XXH3-64 of  0x00 (the hash version)
                              topic id: most, then least significant long
                              topic name: UTF-16 code units, then their count (int)
                              partition count (int)
                              each partition id (int), then its replicas' racks (none here: franz has no broker.rack)
    group hash := XXH3-64 of the topic hashes (longs) in topic name order; 0 with no topic

Numbers go in little-endian, as hash4j's HashStream writes them; hashes are read
as Java longs (signed).
"""

from __future__ import annotations

import functools
import struct
from collections.abc import Iterable, Mapping
from typing import Final

import xxhash

TOPIC_HASH_MAGIC_BYTE: Final = 0
_INT = struct.Struct("<i")
_LONG = struct.Struct("<q")


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


@functools.lru_cache(maxsize=4096)
def topic_hash(topic_id: bytes, name: str, partitions: int) -> int:
    """Utils.computeTopicHash of a topic that exists."""
    encoded = name.encode("utf-16-le")
    chunks = [bytes((TOPIC_HASH_MAGIC_BYTE,)), topic_id[:8][::-1], topic_id[8:][::-1], encoded,
              _INT.pack(len(encoded) // 2), _INT.pack(partitions)]
    chunks.extend(_INT.pack(partition) for partition in range(partitions))
    return _signed(xxhash.xxh3_64_intdigest(b"".join(chunks)))


def group_hash(topic_hashes: Mapping[str, int]) -> int:
    """Utils.computeGroupHash: the topic hashes in topic name order."""
    if not topic_hashes:
        return 0
    return _signed(xxhash.xxh3_64_intdigest(b"".join(_LONG.pack(topic_hashes[name]) for name in sorted(topic_hashes))))


def metadata_hash(subscribed: Iterable[str], topics: Mapping[str, tuple[bytes, int]]) -> int:
    """ModernGroup.computeMetadataHash: the group hash of the subscribed topic names that exist
    (topics: name -> (topic id, partitions))."""
    return group_hash({name: topic_hash(topics[name][0], name, topics[name][1])
                       for name in subscribed if name in topics})
