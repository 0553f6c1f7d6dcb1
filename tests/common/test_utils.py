"""franz.common.utils: java_hash_set_order, java_hash_map_order and timeline_hash_map_order against the
orders a JVM (OpenJDK 17) gives."""

from __future__ import annotations

import pytest

from franz.common.utils import (
    TIMELINE_HASH_TABLE_MIN_CAPACITY,
    java_hash_map_order,
    java_hash_set_order,
    java_topic_partition_hash,
    timeline_hash_map_capacity_after_add,
    timeline_hash_map_order,
)


@pytest.mark.parametrize("items, jvm_order", [
    # new ArrayList<>(new HashSet<>(Arrays.asList(items))), printed by the JVM
    ("PLAIN,SCRAM-SHA-256", "PLAIN,SCRAM-SHA-256"),
    ("GSSAPI,PLAIN", "PLAIN,GSSAPI"),
    ("PLAIN,GSSAPI", "PLAIN,GSSAPI"),
    ("GSSAPI,SCRAM-SHA-512,PLAIN", "SCRAM-SHA-512,PLAIN,GSSAPI"),
    ("OAUTHBEARER,GSSAPI", "GSSAPI,OAUTHBEARER"),
    ("SCRAM-SHA-256,SCRAM-SHA-512", "SCRAM-SHA-512,SCRAM-SHA-256"),
    ("PLAIN,SCRAM-SHA-256,SCRAM-SHA-512", "PLAIN,SCRAM-SHA-512,SCRAM-SHA-256"),
    ("GSSAPI,PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER", "PLAIN,SCRAM-SHA-512,GSSAPI,SCRAM-SHA-256,OAUTHBEARER"),
])
def test_a_hash_sets_order_is_the_jvms(items, jvm_order):
    assert java_hash_set_order(items.split(",")) == jvm_order.split(",")


def test_a_hash_set_keeps_each_item_once():
    assert java_hash_set_order(["GSSAPI", "PLAIN", "GSSAPI", "PLAIN"]) == ["PLAIN", "GSSAPI"]


@pytest.mark.parametrize("initial_capacity, keys, jvm_order", [
    # new HashMap<>(initial_capacity), keys put in order, keySet() printed by the JVM
    (3, "process4,process2,process3", "process2,process3,process4"),
    (3, "process1,process2,process3,process0", "process3,process1,process2,process0"),  # grows to 8
    (0, "b,a", "a,b"),
    (0, "member-a,member-b,member-c,member-d,member-e", "member-e,member-c,member-d,member-a,member-b"),
    (None, "member-a,member-b,member-c,member-d,member-e", "member-a,member-b,member-e,member-c,member-d"),
    (16, "process7,process1", "process1,process7"),
])
def test_a_hash_maps_order_is_the_jvms(initial_capacity, keys, jvm_order):
    assert java_hash_map_order(keys.split(","), initial_capacity) == jvm_order.split(",")


def test_a_topic_partitions_hash_map_order_is_the_jvms():
    """HashMap<TopicPartition, ...> filled by computeIfAbsent (a new key at the head of its bucket):
    reversed put order in, the JVM's order out."""
    partitions = [47, 48, 49, 0, 1, 4, 19, 20]
    keys = [("__consumer_offsets", partition) for partition in reversed(partitions)]
    assert [p for _, p in java_hash_map_order(keys, hash_code=java_topic_partition_hash)] == [
        47, 0, 48, 19, 20, 4, 1, 49]


def test_a_timeline_hash_maps_order_is_the_jvms():
    """Kafka 4.3's TimelineHashMap (server-common, compiled from the 4.3 sources) after these puts
    (+) and removals (-), keySet() printed by the JVM."""
    operations = ("+m1,+m2,+m3,+a,+b,+c,+d,-m2,+e,+f,+m2,+x,-a,+3f2a1c9e-0000-4000-8000-000000000001,"
                  "+K4s9bV1wQ1ee2Q").split(",")
    keys: dict[str, None] = {}
    capacity = TIMELINE_HASH_TABLE_MIN_CAPACITY
    for operation in operations:
        key = operation[1:]
        if operation[0] == "-":
            del keys[key]
        else:
            capacity = timeline_hash_map_capacity_after_add(len(keys), capacity)
            keys[key] = None
    assert capacity == 16
    assert timeline_hash_map_order(keys, capacity) == (
        "f,x,c,m2,e,b,m1,K4s9bV1wQ1ee2Q,3f2a1c9e-0000-4000-8000-000000000001,d,m3").split(",")
