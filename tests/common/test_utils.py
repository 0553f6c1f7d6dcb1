"""franz.common.utils: java_hash_set_order against the orders a JVM (OpenJDK 17) gives."""

from __future__ import annotations

import pytest

from franz.common.utils import java_hash_set_order


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
