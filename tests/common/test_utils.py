"""franz.common.utils: java_hash_set_order and java_hash_map_order against the orders a JVM (OpenJDK 17)
gives."""

from __future__ import annotations

import pytest

from franz.common.utils import java_hash_map_order, java_hash_set_order


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
