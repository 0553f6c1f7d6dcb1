"""The metadata hash of KIP-1101: the bytes Kafka hashes (hash4j's HashStream: little-endian numbers,
a string as UTF-16 code units then their count), XXH3-64, read as a Java long."""

from __future__ import annotations

import struct
import uuid

import xxhash

from franz.coordinator.group.metadata_hash import group_hash, metadata_hash, topic_hash

TOPIC = uuid.UUID("5b1c3a4e-9f00-4d2b-8c11-0123456789ab")


def _java_long(value: int) -> int:
    return struct.unpack("<q", struct.pack("<Q", value))[0]


def test_a_topic_hash_is_xxh3_of_kafkas_layout():
    most, least = struct.unpack(">qq", TOPIC.bytes)
    name = "töpic"  # not ASCII: UTF-16 code units, as Java's String
    layout = (b"\x00" + struct.pack("<q", most) + struct.pack("<q", least) + name.encode("utf-16-le")
              + struct.pack("<i", len(name)) + struct.pack("<i", 3) + struct.pack("<iii", 0, 1, 2))
    assert topic_hash(TOPIC.bytes, name, 3) == _java_long(xxhash.xxh3_64_intdigest(layout))
    assert topic_hash(TOPIC.bytes, name, 3) != topic_hash(TOPIC.bytes, name, 4)  # it grew
    assert topic_hash(TOPIC.bytes, name, 3) != topic_hash(uuid.uuid4().bytes, name, 3)  # made again


def test_the_group_hash_takes_topics_in_name_order_and_only_those_that_exist():
    topics = {"b": (TOPIC.bytes, 1), "a": (uuid.UUID(int=7).bytes, 2)}
    a, b = topic_hash(topics["a"][0], "a", 2), topic_hash(TOPIC.bytes, "b", 1)
    expected = _java_long(xxhash.xxh3_64_intdigest(struct.pack("<qq", a, b)))
    assert metadata_hash(["b", "a", "gone"], topics) == group_hash({"b": b, "a": a}) == expected
    assert metadata_hash(["gone"], topics) == 0 == group_hash({})
