"""The `__consumer_offsets` record formats, byte for byte as Kafka writes them, and group placement."""

from __future__ import annotations

import struct

import pytest

from franz.coordinator.group import group_coordinator_record_serde as serde


def _string(text: str) -> bytes:
    encoded = text.encode("utf-8")
    return struct.pack(">h", len(encoded)) + encoded


def test_offset_commit_key_is_version_1_group_topic_partition():
    assert serde.offset_commit_key("g", "topic", 7) == b"\x00\x01" + _string("g") + _string("topic") + b"\x00\x00\x00\x07"


def test_offset_commit_value_is_written_as_version_4_with_its_topic_id():
    """GroupCoordinatorRecordHelpers.newOffsetCommitRecord (4.x): version 4, flexible, the topic
    id as tagged field 0, left out when unknown (zeros, the default)."""
    topic_id = bytes(range(16))
    value = serde.offset_commit_value(serde.OffsetAndMetadata(42, 5, "meta", 1_700_000_000_000, None, topic_id))
    assert value == (b"\x00\x04" + struct.pack(">qi", 42, 5) + b"\x05meta" + struct.pack(">q", 1_700_000_000_000)
                     + b"\x01\x00\x10" + topic_id)
    assert serde.read_offset_commit_value(value) == serde.OffsetAndMetadata(42, 5, "meta", 1_700_000_000_000, None,
                                                                            topic_id)
    unknown = serde.offset_commit_value(serde.OffsetAndMetadata(42, 5, "meta", 1_700_000_000_000))
    assert unknown.endswith(struct.pack(">q", 1_700_000_000_000) + b"\x00")


def test_offset_commit_value_with_expire_timestamp_is_version_1():
    value = serde.offset_commit_value(serde.OffsetAndMetadata(42, 5, "", 1000, 9000))
    assert value == b"\x00\x01" + struct.pack(">q", 42) + _string("") + struct.pack(">qq", 1000, 9000)
    assert serde.read_offset_commit_value(value) == serde.OffsetAndMetadata(42, -1, "", 1000, 9000)


def test_offset_commit_value_version_0_and_flexible_4_are_read():
    v0 = b"\x00\x00" + struct.pack(">q", 3) + _string("m") + struct.pack(">q", 77)
    assert serde.read_offset_commit_value(v0) == serde.OffsetAndMetadata(3, -1, "m", 77)
    # v4: compact string (length + 1 as a uvarint) and an empty tagged-field section.
    v4 = b"\x00\x04" + struct.pack(">qi", 3, 2) + b"\x02m" + struct.pack(">q", 77) + b"\x00"
    assert serde.read_offset_commit_value(v4) == serde.OffsetAndMetadata(3, 2, "m", 77)


def test_group_metadata_key_and_value_v3_layout():
    assert serde.group_metadata_key("grp") == b"\x00\x02" + _string("grp")
    value = {"protocol_type": "consumer", "generation": 4, "protocol": "range", "leader": "m1",
             "current_state_timestamp": 123, "members": [{
                 "member_id": "m1", "group_instance_id": None, "client_id": "c", "client_host": "/h",
                 "rebalance_timeout": 300, "session_timeout": 100, "subscription": b"S", "assignment": b"A"}]}
    encoded = serde.group_metadata_value(value)
    expected = (b"\x00\x03" + _string("consumer") + struct.pack(">i", 4) + _string("range") + _string("m1")
                + struct.pack(">q", 123) + struct.pack(">i", 1) + _string("m1") + b"\xff\xff" + _string("c")
                + _string("/h") + struct.pack(">ii", 300, 100) + struct.pack(">i", 1) + b"S"
                + struct.pack(">i", 1) + b"A")
    assert encoded == expected
    assert serde.read_group_metadata_value(encoded) == value


def test_read_key_knows_offset_group_and_consumer_group_keys_and_skips_other_types():
    assert serde.read_key(serde.offset_commit_key("g", "t", 1)) == serde.OffsetCommitKey("g", "t", 1)
    assert serde.read_key(serde.group_metadata_key("g")) == serde.GroupMetadataKey("g")
    assert serde.read_key(b"\x00\x03" + _string("g")) == serde.ConsumerGroupRecordKey(3, "g")
    assert serde.read_key(b"\x00\x08" + _string("g") + _string("m")) == serde.ConsumerGroupRecordKey(8, "g", "m")
    assert serde.read_key(b"\x00\x09" + _string("g")) is None  # a share group record type


def test_read_key_knows_the_streams_group_keys_and_skips_the_dropped_partition_metadata():
    """Record types 17 and 19-23 of Kafka 4.3 (CoordinatorRecordType); type 18, the partition
    metadata of 4.0, is gone from 4.3 and reads as unknown."""
    assert serde.read_key(b"\x00\x11" + _string("g")) == serde.ConsumerGroupRecordKey(17, "g")
    for record_type in (19, 21, 22):
        assert serde.read_key(struct.pack(">h", record_type) + _string("g") + _string("m")) == \
            serde.ConsumerGroupRecordKey(record_type, "g", "m")
    for record_type in (20, 23):
        assert serde.read_key(struct.pack(">h", record_type) + _string("g")) == \
            serde.ConsumerGroupRecordKey(record_type, "g")
    assert serde.STREAMS_GROUP_RECORD_TYPES == {17, 19, 20, 21, 22, 23}
    assert serde.read_key(b"\x00\x12" + _string("g")) is None


def test_consumer_group_member_records_are_kafkas_flexible_bytes():
    """ConsumerGroupMemberMetadataValue v0 and ConsumerGroupCurrentMemberAssignmentValue v0:
    compact strings and arrays (length + 1), null as 0, a uuid as 16 bytes, then an empty
    tagged-field section (the null ClassicMemberMetadata tag is not written)."""
    member = serde.consumer_group_value(serde.CONSUMER_GROUP_MEMBER_METADATA, {
        "instance_id": None, "rack_id": None, "client_id": "c", "client_host": "/h",
        "subscribed_topic_names": ["t"], "subscribed_topic_regex": None, "rebalance_timeout_ms": 300_000,
        "server_assignor": None, "classic_member_metadata": None})
    assert member == (b"\x00\x00" + b"\x00\x00" + b"\x02c" + b"\x03/h" + b"\x02\x02t" + b"\x00"
                      + struct.pack(">i", 300_000) + b"\x00" + b"\x00")
    topic_id = bytes(range(16))
    current = serde.consumer_group_value(serde.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, {
        "member_epoch": 5, "previous_member_epoch": 4, "state": 1,
        "assigned_partitions": [{"topic_id": topic_id, "partitions": [0, 2]}], "partitions_pending_revocation": []})
    assert current == (b"\x00\x00" + struct.pack(">iib", 5, 4, 1) + b"\x02" + topic_id + b"\x03"
                       + struct.pack(">ii", 0, 2) + b"\x00" + b"\x01" + b"\x00")
    assert serde.read_consumer_group_value(serde.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, current)["state"] == 1
    assert serde.consumer_group_key(serde.CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT, "g", "m") == (
        b"\x00\x08" + _string("g") + _string("m"))


def test_consumer_group_regular_expression_records_are_kafkas_bytes():
    """ConsumerGroupRegularExpressionKey (type 16: group and regex, non-flexible strings) and
    ConsumerGroupRegularExpressionValue v0 (flexible: the topics, the version, the timestamp)."""
    key = serde.consumer_group_key(serde.CONSUMER_GROUP_REGULAR_EXPRESSION, "g", regular_expression="o.*")
    assert key == b"\x00\x10" + _string("g") + _string("o.*")
    assert serde.read_key(key) == serde.ConsumerGroupRecordKey(16, "g", None, "o.*")
    value = serde.consumer_group_value(serde.CONSUMER_GROUP_REGULAR_EXPRESSION,
                                       {"topics": ["ab", "c"], "version": 7, "timestamp": 1_700_000_000_000})
    assert value == b"\x00\x00" + b"\x03\x03ab\x02c" + struct.pack(">qq", 7, 1_700_000_000_000) + b"\x00"
    assert serde.read_consumer_group_value(serde.CONSUMER_GROUP_REGULAR_EXPRESSION, value) == {
        "topics": ["ab", "c"], "version": 7, "timestamp": 1_700_000_000_000}


@pytest.mark.parametrize("bad", [b"", b"\x00", b"\x00\x01\x00", b"\x00\x09\x00\x00"])
def test_truncated_or_unknown_values_raise_record_format_error(bad):
    with pytest.raises(serde.RecordFormatError):
        serde.read_offset_commit_value(bad)


@pytest.mark.parametrize("text, expected", [("", 0), ("hello", 99162322), ("a", 97),
                                            ("my-group", -1906497762), ("é€😀", None)])
def test_java_string_hash_matches_java(text, expected):
    if expected is None:  # surrogate pairs count as two UTF-16 units, as in Java
        expected = 0
        for unit in struct.unpack(f">{len(text.encode('utf-16-be')) // 2}H", text.encode("utf-16-be")):
            expected = (31 * expected + unit) & 0xFFFFFFFF
        expected = expected - (1 << 32) if expected & 0x80000000 else expected
    assert serde.java_string_hash(text) == expected


def test_partition_for_uses_abs_of_hash_modulo_partitions():
    # Kafka: Utils.abs("my-group".hashCode()) % 50 = 1906497762 % 50 = 12 (the
    # sign-bit mask of the default partitioner would give 36).
    assert serde.partition_for("my-group", 50) == 12
    assert all(0 <= serde.partition_for(f"g{i}", 7) < 7 for i in range(100))


def test_consumer_subscription_topics_are_parsed():
    subscription = b"\x00\x01" + struct.pack(">i", 2) + _string("a") + _string("bb") + b"\xff\xff\xff\xff"
    assert serde.parse_consumer_subscription_topics(subscription) == ["a", "bb"]
    assert serde.parse_consumer_subscription_topics(b"\x00") is None
