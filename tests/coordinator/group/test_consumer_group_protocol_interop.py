"""KIP-848 consumer groups (group.protocol=consumer) of librdkafka against a real broker process:
server-side assignment, rebalances when a member leaves or goes silent, and a live consumer that
rides through a SIGKILL of the broker without skipping a record.

Every wait is bounded by a deadline; clients are closed in `finally`.
"""

from __future__ import annotations

import time
import uuid

import pytest
from confluent_kafka import Consumer

from tests.coordinator.group.test_consumer_groups_interop import _create, _poll_until, _produce, split_and_take_over
from tests.support.raw_client import RawClient

pytestmark = pytest.mark.interop

DEADLINE_S = 30.0
CONSUMER_GROUP_HEARTBEAT = 68
OVERRIDES = {"group.consumer.heartbeat.interval.ms": "300", "group.consumer.session.timeout.ms": "3000",
             "group.consumer.min.heartbeat.interval.ms": "300", "group.consumer.min.session.timeout.ms": "3000",
             "offsets.topic.num.partitions": "5"}


@pytest.fixture
def cg_broker(broker_factory):
    return broker_factory(OVERRIDES)


def _consumer(bootstrap: str, group: str, **config) -> Consumer:
    # No session.timeout.ms / heartbeat.interval.ms: the broker owns them in this protocol.
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": "consumer",
                     "auto.offset.reset": "earliest", "enable.auto.commit": False, **config})


def _owned(consumers: list[Consumer]) -> list[int]:
    return sorted(tp.partition for c in consumers for tp in c.assignment())


def test_three_consumers_split_eight_partitions_and_take_over_when_one_leaves(cg_broker):
    bootstrap = cg_broker.bootstrap
    split_and_take_over(bootstrap, "split848", [_consumer(bootstrap, "three848") for _ in range(3)])


def _heartbeat(client: RawClient, member_id: str, epoch: int, topic_ids=None) -> dict:
    return client.request(CONSUMER_GROUP_HEARTBEAT, 1, {
        "group_id": "silent848", "member_id": member_id, "member_epoch": epoch, "instance_id": None,
        "rack_id": None, "rebalance_timeout_ms": 30_000, "subscribed_topic_names": ["quiet848"],
        "subscribed_topic_regex": None, "server_assignor": None,
        "topic_partitions": [] if topic_ids is None else topic_ids})


def test_a_member_that_stops_heartbeating_is_fenced_and_its_partitions_go_to_the_others(cg_broker):
    bootstrap = cg_broker.bootstrap
    _create(bootstrap, "quiet848", 2)
    values = [b"q%d" % i for i in range(20)]
    _produce(bootstrap, "quiet848", values, 2)
    with RawClient(bootstrap) as client:
        silent = _heartbeat(client, str(uuid.uuid4()), 0)  # joins alone: both partitions, then silence
        assert silent["error_code"] == 0 and len(silent["assignment"]["topic_partitions"][0]["partitions"]) == 2
        consumer = _consumer(bootstrap, "silent848")
        try:
            consumer.subscribe(["quiet848"])
            received: list = []
            started = time.monotonic()
            # The live consumer gets the partitions only once the silent member's session
            # (3 s here) has expired: before that they are not released to it.
            _poll_until([consumer], lambda: _owned([consumer]) == [0, 1] and set(received) == set(values), received)
            assert time.monotonic() - started >= 2.0
        finally:
            consumer.close()


def test_a_live_consumer_survives_a_broker_sigkill_and_resumes_from_its_commits(cg_broker):
    bootstrap = cg_broker.bootstrap
    _create(bootstrap, "durable848", 2)
    first = [b"a%d" % i for i in range(20)]
    _produce(bootstrap, "durable848", first, 2)
    consumer = _consumer(bootstrap, "survivor848")
    try:
        consumer.subscribe(["durable848"])
        consumed: list = []
        _poll_until([consumer], lambda: len(consumed) >= 20, consumed)
        consumer.commit(asynchronous=False)
        cg_broker.kill()  # the group's records and offsets are in __consumer_offsets
        cg_broker.start()
        # After the restart the group is loaded back and the member heartbeats on at its epoch:
        # it reads on from its position, nothing skipped, nothing of `first` again.
        second = [b"b%d" % i for i in range(10)]
        _produce(bootstrap, "durable848", second, 2)
        resumed: list = []
        _poll_until([consumer], lambda: len(resumed) >= len(second), resumed)
        assert sorted(resumed) == sorted(second)
    finally:
        consumer.close()
