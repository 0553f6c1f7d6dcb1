"""Small pieces of Kafka's org.apache.kafka.common.utils.Utils: the hashes placement depends on,
and loadProps, which reads the .properties files of the broker and of Kafka's tools; and the order
in which a java.util.HashSet of strings gives them back, where Kafka shows one."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import javaproperties


def java_string_hash(text: str) -> int:
    """java.lang.String.hashCode over UTF-16 code units, as a signed int32."""
    value = 0
    encoded = text.encode("utf-16-be")
    for index in range(0, len(encoded), 2):
        value = (31 * value + ((encoded[index] << 8) | encoded[index + 1])) & 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def java_hash_set_order(items: Iterable[str]) -> list[str]:
    """`new ArrayList<>(new HashSet<>(items))`: the distinct items in the order of their HashMap
    buckets (String.hashCode with its high half folded in, modulo the table size, a power of two
    room for them all at load factor 0.75, at least 16), those of one bucket as first added.
    Exact for fewer than 8 items, which can never fill a bucket far enough to change the table."""
    distinct = list(dict.fromkeys(items))
    buckets = 1 << (max(int(len(distinct) / 0.75) + 1, 16) - 1).bit_length()  # HashMap.tableSizeFor

    def bucket(item: str) -> int:
        hash_code = java_string_hash(item) & 0xFFFFFFFF
        return (hash_code ^ (hash_code >> 16)) & (buckets - 1)
    return sorted(distinct, key=bucket)  # stable: a bucket's items stay in insertion order


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
