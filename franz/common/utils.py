"""Small pieces of Kafka's org.apache.kafka.common.utils.Utils: the hashes placement depends on,
and loadProps, which reads the .properties files of the broker and of Kafka's tools; and the order
in which a java.util.HashSet or HashMap of strings gives them back, where Kafka's behaviour
depends on it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

import javaproperties

K = TypeVar("K")


def java_string_hash(text: str) -> int:
    """java.lang.String.hashCode over UTF-16 code units, as a signed int32."""
    value = 0
    encoded = text.encode("utf-16-be")
    for index in range(0, len(encoded), 2):
        value = (31 * value + ((encoded[index] << 8) | encoded[index + 1])) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def java_hash_set_order(items: Iterable[str]) -> list[str]:
    """`new ArrayList<>(new HashSet<>(items))`: the distinct items in the order of their HashMap
    buckets, the table sized by HashSet's copy constructor (room for them all at load factor 0.75,
    at least 16) so that adding them never grows it."""
    distinct = list(dict.fromkeys(items))
    return java_hash_map_order(distinct, max(int(len(distinct) / 0.75) + 1, 16))


def java_hash_map_order(keys: Iterable[K], initial_capacity: int | None = None,
                        hash_code: Callable[[K], int] = java_string_hash) -> list[K]:
    """The key order of a java.util.HashMap of keys (strings unless `hash_code` says how other keys
    hash) put in the order given, made by
    `new HashMap<>(initial_capacity)` (or `new HashMap<>()` when None): by bucket (String.hashCode
    with its high half folded in, modulo the table size), those of one bucket as first put. The
    table starts at the power of two at or above the initial capacity (16 by default) and doubles
    while the keys exceed three quarters of it. Exact while no bucket collects more than eight keys (which
    would grow a small table early, or make a large table's bucket a tree)."""
    distinct = list(dict.fromkeys(keys))
    buckets = 16 if initial_capacity is None else _table_size_for(initial_capacity)
    while len(distinct) > int(buckets * 0.75):
        buckets *= 2

    def bucket(key: K) -> int:
        hashed = hash_code(key) & 0xFFFFFFFF
        return (hashed ^ (hashed >> 16)) & (buckets - 1)
    return sorted(distinct, key=bucket)  # stable: a bucket's keys stay in the order put


def _table_size_for(capacity: int) -> int:
    """HashMap.tableSizeFor: the power of two at or above `capacity`, at least 1."""
    return 1 if capacity <= 1 else 1 << (capacity - 1).bit_length()


# Knuth's multiplicative constant of Kafka's BaseHashTable.findSlot, as a Java long
_FIBONACCI_MULTIPLIER = -7046029254386353131
TIMELINE_HASH_TABLE_MIN_CAPACITY = 2


def timeline_hash_map_capacity_after_add(size: int, capacity: int) -> int:
    """BaseHashTable.baseAddOrReplace: the table doubles before a new key would load it past
    three quarters (it never shrinks)."""
    return capacity * 2 if (size + 1) * 0.75 > capacity and capacity < 1 << 30 else capacity


def timeline_hash_map_order(keys: Iterable[str], capacity: int) -> list[str]:
    """The iteration order of a Kafka TimelineHashMap of string keys (BaseHashTable with
    `capacity` slots) holding `keys`, given in the order they were put since each was last
    removed: by slot (the top bits of the key's String.hashCode times Knuth's multiplicative
    constant), the keys of one slot last put first."""
    shift = 65 - capacity.bit_length()

    def slot(key: str) -> int:
        return ((java_string_hash(key) * _FIBONACCI_MULTIPLIER) & 0xFFFFFFFFFFFFFFFF) >> shift
    put = list(keys)
    return [key for _, key in sorted(enumerate(put), key=lambda entry: (slot(entry[1]), -entry[0]))]


def java_topic_partition_hash(topic_partition: tuple[str, int]) -> int:
    """TopicPartition.hashCode: 31 * (31 + partition) + topic.hashCode(), as a signed int32."""
    topic, partition = topic_partition
    value = (31 * (31 + partition) + java_string_hash(topic)) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def kafka_abs(value: int) -> int:
    """Utils.abs: Math.abs except that Integer.MIN_VALUE maps to 0, not to itself."""
    return 0 if value == -(1 << 31) else abs(value)


def partition_for_key(key: str, partitions: int) -> int:
    """The coordinator partition of a group or transactional id: abs(hashCode) % partitions."""
    return kafka_abs(java_string_hash(key)) % partitions


def load_props(path: str | Path) -> dict[str, str]:
    """Utils.loadProps: a Java .properties file as java.util.Properties.load reads it (ISO-8859-1,
    `#`/`!` comments, `key=value`, `key: value` or `key value`, escapes, continued lines); OSError
    when it cannot be read."""
    with open(path, "rb") as file:
        return dict(javaproperties.load(file))
