"""Online migration of a live group between the classic and the consumer protocol (KIP-848), with
librdkafka consumers of both protocols in one group against a real broker process: a rolling
upgrade (classic members, then a consumer-protocol member joins and the classic ones leave) and
a rolling downgrade back, with every partition owned by exactly one member at each stable point
and every record read.

Every wait is bounded by a deadline; consumers are closed in `finally`.
"""

from __future__ import annotations

import pytest
from confluent_kafka import Consumer

from tests.coordinator.group.test_consumer_groups_interop import _create, _poll_until, _produce
from tests.support.raw_client import RawClient

pytestmark = pytest.mark.interop

LIST_GROUPS, DESCRIBE_GROUPS, CONSUMER_GROUP_DESCRIBE = 16, 15, 69
OVERRIDES = {"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "1000",
             "group.consumer.heartbeat.interval.ms": "300", "group.consumer.session.timeout.ms": "6000",
             "group.consumer.min.heartbeat.interval.ms": "300", "group.consumer.min.session.timeout.ms": "6000",
             "offsets.topic.num.partitions": "3"}
PARTITIONS = 6


def _classic(bootstrap: str, group: str) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                     "session.timeout.ms": 6000, "heartbeat.interval.ms": 300, "enable.auto.commit": False,
                     "partition.assignment.strategy": "range,roundrobin"})


def _modern(bootstrap: str, group: str) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
                     "auto.offset.reset": "earliest", "enable.auto.commit": False})


def _owned(consumer: Consumer) -> set[int]:
    return {tp.partition for tp in consumer.assignment()}


def _split(consumers: list[Consumer]) -> bool:
    """Every partition owned, by exactly one consumer, and each consumer owns some."""
    owned = [_owned(c) for c in consumers]
    return all(owned) and sum(len(o) for o in owned) == PARTITIONS and set().union(*owned) == set(range(PARTITIONS))


def _group_type(bootstrap: str, group: str) -> str:
    with RawClient(bootstrap) as client:
        listed = client.request(LIST_GROUPS, 5, {"states_filter": [], "types_filter": []})
    return next(g["group_type"] for g in listed["groups"] if g["group_id"] == group)


def _member_types(bootstrap: str, group: str) -> list[int]:
    with RawClient(bootstrap) as client:
        described = client.request(CONSUMER_GROUP_DESCRIBE, 1, {"group_ids": [group],
                                                                "include_authorized_operations": False})
    return sorted(m["member_type"] for m in described["groups"][0]["members"])


def test_a_rolling_upgrade_to_the_consumer_protocol_and_back_keeps_the_group_consuming(broker_factory):
    bootstrap = broker_factory(OVERRIDES).bootstrap
    _create(bootstrap, "migrate", PARTITIONS)
    first = [b"a%d" % i for i in range(60)]
    _produce(bootstrap, "migrate", first, PARTITIONS)
    live: list[Consumer] = []
    try:
        old = [_classic(bootstrap, "rolling"), _classic(bootstrap, "rolling")]
        live.extend(old)
        for consumer in old:
            consumer.subscribe(["migrate"])
        received: list = []
        _poll_until(live, lambda: _split(live) and set(received) == set(first), received)
        assert _group_type(bootstrap, "rolling") == "classic"

        # Upgrade: a consumer-protocol member joins the classic group, which becomes a consumer
        # group holding the classic members; the assignor gives the newcomer its share.
        new = _modern(bootstrap, "rolling")
        live.append(new)
        new.subscribe(["migrate"])
        _poll_until(live, lambda: _split(live), [])
        assert _group_type(bootstrap, "rolling") == "consumer"
        assert _member_types(bootstrap, "rolling") == [0, 0, 1]  # two classic members, one consumer member

        # The classic members leave one by one (LeaveGroup into the consumer group).
        for consumer in old:
            consumer.close()
            live.remove(consumer)
            _poll_until(live, lambda: _split(live), [])
        assert _owned(new) == set(range(PARTITIONS)) and _member_types(bootstrap, "rolling") == [1]

        # Downgrade: a classic member joins the consumer group, then the last consumer-protocol
        # member leaves; the group turns classic and the classic member gets everything.
        back = _classic(bootstrap, "rolling")
        live.append(back)
        back.subscribe(["migrate"])
        _poll_until(live, lambda: _split(live), [])
        assert _member_types(bootstrap, "rolling") == [0, 1]
        new.close()
        live.remove(new)
        _poll_until(live, lambda: _owned(back) == set(range(PARTITIONS)), [])
        assert _group_type(bootstrap, "rolling") == "classic"
        later = [b"b%d" % i for i in range(30)]
        _produce(bootstrap, "migrate", later, PARTITIONS)
        tail: list = []
        _poll_until(live, lambda: set(later) <= set(tail), tail)
        with RawClient(bootstrap) as client:
            described = client.request(DESCRIBE_GROUPS, 5, {"groups": ["rolling"],
                                                            "include_authorized_operations": False})
        group = described["groups"][0]
        assert (group["group_state"], group["protocol_type"], len(group["members"])) == ("Stable", "consumer", 1)
    finally:
        for consumer in live:
            consumer.close()
