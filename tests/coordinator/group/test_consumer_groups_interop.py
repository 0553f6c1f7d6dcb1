"""Consumer groups of real clients (confluent-kafka, kafka-python, aiokafka) against a real broker process.

Every wait is bounded by a deadline; consumers are closed in `finally`.
"""

from __future__ import annotations

import asyncio
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from franz.protocol.codec import decode_response, encode_request
from franz.protocol.errors import Errors
from tests.support.raw_client import RawClient

pytestmark = pytest.mark.interop

DEADLINE_S = 30.0
GROUP_OVERRIDES = {"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "1000",
                   "offsets.topic.num.partitions": "5"}
JOIN_GROUP, HEARTBEAT, LEAVE_GROUP, SYNC_GROUP = 11, 12, 13, 14


@pytest.fixture
def group_broker(broker_factory):
    return broker_factory(GROUP_OVERRIDES)


def _create(bootstrap: str, name: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(DEADLINE_S)


def _produce(bootstrap: str, topic: str, values: list[bytes], partitions: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    for index, value in enumerate(values):
        producer.produce(topic, value=value, partition=index % partitions)
    assert producer.flush(DEADLINE_S) == 0


def _consumer(bootstrap: str, group: str, **config) -> Consumer:
    return Consumer({"bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
                     "session.timeout.ms": 6000, "heartbeat.interval.ms": 300, "enable.auto.commit": False,
                     **config})


def _poll_until(consumers: list[Consumer], done, received: list) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not done():
        assert time.monotonic() < deadline, "gave up waiting"
        for consumer in consumers:
            message = consumer.poll(0.05)
            if message is not None and not message.error():
                received.append(message.value())


# librdkafka's default (range, then roundrobin), each eager assignor alone, and cooperative-sticky,
# whose incremental rebalances (KIP-429) revoke only what moves and rejoin at once.
@pytest.mark.parametrize("strategy", ["range,roundrobin", "roundrobin", "cooperative-sticky"])
def test_three_confluent_consumers_split_eight_partitions_and_rebalance_when_one_leaves(group_broker, strategy):
    bootstrap = group_broker.bootstrap
    consumers = [_consumer(bootstrap, "three", **{"partition.assignment.strategy": strategy}) for _ in range(3)]
    split_and_take_over(bootstrap, "split", consumers)


def test_a_static_leader_back_within_its_session_timeout_gets_its_partitions_without_a_rebalance(group_broker):
    """KIP-345: a member with group.instance.id sends no LeaveGroup when it closes, and when it
    returns under a new member id it takes its old assignment. That holds for the group's
    leader too: the other member is never revoked."""
    bootstrap = group_broker.bootstrap
    _create(bootstrap, "static", 4)
    _produce(bootstrap, "static", [b"s%d" % i for i in range(40)], 4)
    revoked: list = []

    def static_member(name: str, **callbacks) -> Consumer:
        member = _consumer(bootstrap, "static", **{"group.instance.id": name, "partition.assignment.strategy": "range"})
        member.subscribe(["static"], **callbacks)
        return member

    def owned(member: Consumer) -> list[int]:
        return sorted(tp.partition for tp in member.assignment())

    leader = static_member("leader")
    members = [leader]
    try:
        _poll_until(members, lambda: owned(leader) == [0, 1, 2, 3], [])  # alone: it leads the group
        follower = static_member("follower", on_revoke=lambda _consumer, partitions: revoked.append(partitions))
        members.append(follower)
        received: list = []
        _poll_until(members, lambda: len(owned(leader)) == 2 and len(owned(follower)) == 2 and len(received) >= 40,
                    received)
        before = owned(leader), owned(follower)
        assert revoked == []
        leader.close()
        members.remove(leader)
        leader = static_member("leader")
        members.append(leader)
        _poll_until(members, lambda: owned(leader) == before[0], [])
        assert owned(follower) == before[1]
        assert revoked == []
    finally:
        for member in members:
            member.close()


def split_and_take_over(bootstrap: str, topic: str, consumers: list[Consumer]) -> None:
    """Three consumers of one group split eight partitions, one each; when the first closes,
    the other two take all eight, four each. Closes the consumers."""
    _create(bootstrap, topic, 8)
    values = [b"v%d" % i for i in range(80)]
    _produce(bootstrap, topic, values, 8)
    try:
        for consumer in consumers:
            consumer.subscribe([topic])
        received: list = []

        def spread() -> bool:
            sizes = [len(c.assignment()) for c in consumers]
            return sum(sizes) == 8 and min(sizes) >= 2 and set(received) == set(values)
        # Records read before a rebalance are read again by their next owner (nothing is
        # committed here): at least once, so compare sets.
        _poll_until(consumers, spread, received)
        owned = [tp.partition for c in consumers for tp in c.assignment()]
        assert sorted(owned) == list(range(8))
        consumers[0].close()
        rest = consumers[1:]
        _poll_until(rest, lambda: sorted(tp.partition for c in rest for tp in c.assignment()) == list(range(8)), [])
        assert all(len(c.assignment()) == 4 for c in rest)
    finally:
        for consumer in consumers[1:]:
            consumer.close()


def test_committed_offsets_survive_a_broker_sigkill_and_consumption_resumes_without_a_gap(group_broker):
    bootstrap = group_broker.bootstrap
    _create(bootstrap, "durable", 2)
    first = [b"a%d" % i for i in range(20)]
    _produce(bootstrap, "durable", first, 2)
    consumed: list = []
    consumer = _consumer(bootstrap, "survivor")
    try:
        consumer.subscribe(["durable"])
        _poll_until([consumer], lambda: len(consumed) >= 12, consumed)
        consumer.commit(asynchronous=False)
        committed = consumer.committed([TopicPartition("durable", p) for p in range(2)], timeout=10)
        assert sum(tp.offset for tp in committed) == len(consumed)
    finally:
        consumer.close()
    group_broker.kill()
    group_broker.start()
    second = [b"b%d" % i for i in range(10)]
    _produce(bootstrap, "durable", second, 2)
    resumed: list = []
    # auto.offset.reset=latest: without the committed offsets the first records would be skipped.
    consumer = _consumer(bootstrap, "survivor", **{"auto.offset.reset": "latest"})
    expected = set(first + second) - set(consumed)
    try:
        consumer.subscribe(["durable"])
        _poll_until([consumer], lambda: len(resumed) >= len(expected), resumed)
    finally:
        consumer.close()
    assert sorted(resumed) == sorted(expected)


def test_kafka_python_group_commits_and_aiokafka_resumes_from_its_offsets(group_broker):
    from kafka import KafkaConsumer
    from kafka import TopicPartition as KafkaTopicPartition

    bootstrap = group_broker.bootstrap
    _create(bootstrap, "pylibs", 3)
    values = [b"p%d" % i for i in range(30)]
    _produce(bootstrap, "pylibs", values, 3)
    members = [KafkaConsumer("pylibs", bootstrap_servers=bootstrap, group_id="pygroup", auto_offset_reset="earliest",
                             enable_auto_commit=False, session_timeout_ms=6000, heartbeat_interval_ms=300,
                             consumer_timeout_ms=200) for _ in range(2)]
    received: set = set()
    try:
        for member in members:
            # Metadata first: a leader that joins without it assigns nothing (kafka-python's
            # "No partition metadata for topic") until its next metadata refresh, minutes later.
            assert member.partitions_for_topic("pylibs") == {0, 1, 2}
        deadline = time.monotonic() + DEADLINE_S
        def caught_up() -> bool:
            return all(m.assignment() and all(m.position(tp) == 10 for tp in m.assignment()) for m in members)
        while received != set(values) or not caught_up():
            assert time.monotonic() < deadline, "kafka-python group did not consume"
            for member in members:
                for records in member.poll(timeout_ms=100).values():
                    received.update(r.value for r in records)
        assert sorted(tp.partition for m in members for tp in m.assignment()) == [0, 1, 2]
        for member in members:
            member.commit()
        assert [members[0].committed(KafkaTopicPartition("pylibs", p)) for p in range(3)] == [10, 10, 10]
    finally:
        for member in members:
            member.close()
    later = [b"q%d" % i for i in range(15)]
    _produce(bootstrap, "pylibs", later, 3)

    async def resume() -> list:
        from aiokafka import AIOKafkaConsumer
        consumer = AIOKafkaConsumer("pylibs", bootstrap_servers=bootstrap, group_id="pygroup",
                                    auto_offset_reset="latest", enable_auto_commit=False,
                                    session_timeout_ms=6000, heartbeat_interval_ms=300)
        await consumer.start()
        got: list = []
        try:
            deadline = time.monotonic() + DEADLINE_S
            while len(got) < len(later):
                assert time.monotonic() < deadline, "aiokafka did not resume"
                for records in (await consumer.getmany(timeout_ms=200)).values():
                    got.extend(r.value for r in records)
            await consumer.commit()
        finally:
            await consumer.stop()
        return got

    resumed = asyncio.run(resume())
    # auto.offset.reset=latest: only the committed offsets lead it to the records produced before it came.
    assert sorted(resumed) == sorted(later)


def _join_body(member_id: str = "", session_timeout_ms: int = 6000) -> dict:
    return {"group_id": "raw", "session_timeout_ms": session_timeout_ms, "rebalance_timeout_ms": 6000,
            "member_id": member_id, "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}], "reason": None}


def test_wire_errors_for_session_timeout_unknown_member_and_illegal_generation(group_broker):
    with RawClient(group_broker.bootstrap) as client:
        assert client.request(JOIN_GROUP, 9, _join_body(session_timeout_ms=10))["error_code"] \
            == Errors.INVALID_SESSION_TIMEOUT
        first = client.request(JOIN_GROUP, 9, _join_body())
        assert first["error_code"] == Errors.MEMBER_ID_REQUIRED
        joined = client.request(JOIN_GROUP, 9, _join_body(first["member_id"]))
        assert joined["error_code"] == Errors.NONE and joined["generation_id"] == 1

        def beat(generation: int, member_id: str) -> int:
            return client.request(HEARTBEAT, 4, {"group_id": "raw", "generation_id": generation,
                                                 "member_id": member_id, "group_instance_id": None})["error_code"]
        assert beat(1, "stranger") == Errors.UNKNOWN_MEMBER_ID
        assert beat(7, joined["member_id"]) == Errors.ILLEGAL_GENERATION
        assert beat(1, joined["member_id"]) == Errors.NONE
        assert client.request(JOIN_GROUP, 3, _join_body("made-up"))["error_code"] == Errors.UNKNOWN_MEMBER_ID


def test_a_parked_join_before_v7_cut_short_by_an_admin_removal_gets_unknown_member_id(group_broker):
    """The answer to a join parked at v5 is made where its version is not known; before v7 its
    protocol name must still go out as "" (it cannot be null there), not close the connection."""
    with RawClient(group_broker.bootstrap) as leader, RawClient(group_broker.bootstrap) as parked, \
            RawClient(group_broker.bootstrap) as admin:
        first = leader.request(JOIN_GROUP, 5, _join_body())
        joined = leader.request(JOIN_GROUP, 5, _join_body(first["member_id"]))
        generation, leader_id = joined["generation_id"], joined["member_id"]
        assert leader.request(SYNC_GROUP, 3, {"group_id": "raw", "generation_id": generation, "member_id": leader_id,
                                              "group_instance_id": None, "assignments": []})["error_code"] == Errors.NONE
        parked.correlation_id += 1  # a static member: no member-id round trip; it waits for the leader
        parked.send_frame(encode_request(JOIN_GROUP, 5, parked.correlation_id, "raw-client",
                                         {**_join_body(), "group_instance_id": "parked"}))
        deadline = time.monotonic() + DEADLINE_S
        while client_beat(leader, generation, leader_id) != Errors.REBALANCE_IN_PROGRESS:
            assert time.monotonic() < deadline, "the static member's join never started a rebalance"
            time.sleep(0.02)
        removed = admin.request(LEAVE_GROUP, 3, {"group_id": "raw", "members": [
            {"member_id": "", "group_instance_id": "parked", "reason": None}]})
        assert removed["error_code"] == Errors.NONE and removed["members"][0]["error_code"] == Errors.NONE
        frame = parked.receive_frame()
        assert frame is not None, "the broker closed the parked member's connection"
        answer = decode_response(JOIN_GROUP, 5, frame)[1]
        assert answer["error_code"] == Errors.UNKNOWN_MEMBER_ID and answer["member_id"] == ""
        assert answer["protocol_name"] == ""


def client_beat(client: RawClient, generation: int, member_id: str) -> int:
    return client.request(HEARTBEAT, 4, {"group_id": "raw", "generation_id": generation, "member_id": member_id,
                                         "group_instance_id": None})["error_code"]


def test_group_requests_are_refused_as_kafka_refuses_them(group_broker):
    with RawClient(group_broker.bootstrap) as client:
        # SyncGroup from v5 must name its protocol type and name.
        sync = {"group_id": "raw", "generation_id": 1, "member_id": "m", "group_instance_id": None,
                "protocol_type": None, "protocol_name": "range", "assignments": []}
        assert client.request(SYNC_GROUP, 5, sync)["error_code"] == Errors.INCONSISTENT_GROUP_PROTOCOL
        # An empty group id is invalid, not an unknown member.
        assert client.request(SYNC_GROUP, 5, {**sync, "group_id": "", "protocol_type": "consumer"})["error_code"] \
            == Errors.INVALID_GROUP_ID
        assert client.request(HEARTBEAT, 4, {"group_id": "", "generation_id": 1, "member_id": "m",
                                             "group_instance_id": None})["error_code"] == Errors.INVALID_GROUP_ID
        assert client.request(LEAVE_GROUP, 5, {"group_id": "", "members": []})["error_code"] == Errors.INVALID_GROUP_ID
        # Leaving a group that does not exist: each member is unknown, the request is fine (v3+).
        gone = client.request(LEAVE_GROUP, 5, {"group_id": "no-such-group", "members": [
            {"member_id": "a", "group_instance_id": None, "reason": None},
            {"member_id": "", "group_instance_id": "b", "reason": None}]})
        assert gone["error_code"] == Errors.NONE
        assert [(m["member_id"], m["group_instance_id"], m["error_code"]) for m in gone["members"]] == [
            ("a", None, Errors.UNKNOWN_MEMBER_ID), ("", "b", Errors.UNKNOWN_MEMBER_ID)]
        assert client.request(LEAVE_GROUP, 2, {"group_id": "no-such-group", "member_id": "a"})["error_code"] \
            == Errors.UNKNOWN_MEMBER_ID


def test_a_mixed_group_shares_partitions_and_a_member_that_stops_heartbeating_is_replaced(group_broker):
    from aiokafka import AIOKafkaConsumer

    bootstrap = group_broker.bootstrap
    _create(bootstrap, "mixed", 4)
    async def start() -> AIOKafkaConsumer:
        member = AIOKafkaConsumer("mixed", bootstrap_servers=bootstrap, group_id="mixed", session_timeout_ms=1500,
                                  heartbeat_interval_ms=200, enable_auto_commit=False)
        await member.start()
        return member

    loop = asyncio.new_event_loop()
    survivor = _consumer(bootstrap, "mixed")
    silent = None
    try:
        silent = loop.run_until_complete(start())
        survivor.subscribe(["mixed"])
        deadline = time.monotonic() + DEADLINE_S
        while not (survivor.assignment() and silent.assignment()
                   and len(survivor.assignment()) + len(silent.assignment()) == 4):
            assert time.monotonic() < deadline, "the mixed group did not share the partitions"
            loop.run_until_complete(silent.getmany(timeout_ms=50))
            survivor.poll(0.05)
        # Stop driving aiokafka's loop: its heartbeats stop, its connection stays open.
        _poll_until([survivor], lambda: len(survivor.assignment()) == 4, [])
    finally:
        survivor.close()
        try:
            if silent is not None:
                loop.run_until_complete(asyncio.wait_for(silent.stop(), DEADLINE_S))
        finally:
            loop.close()


def test_admin_lists_describes_and_deletes_groups(group_broker):
    from confluent_kafka import ConsumerGroupState

    bootstrap = group_broker.bootstrap
    _create(bootstrap, "admin-groups", 2)
    consumer = _consumer(bootstrap, "described")
    try:
        consumer.subscribe(["admin-groups"])
        _poll_until([consumer], lambda: len(consumer.assignment()) == 2, [])
        consumer.commit(offsets=[TopicPartition("admin-groups", 0, 3)], asynchronous=False)
        admin = AdminClient({"bootstrap.servers": bootstrap})
        listed = admin.list_consumer_groups().result(DEADLINE_S)
        assert [(g.group_id, g.state) for g in listed.valid] == [("described", ConsumerGroupState.STABLE)]
        description = admin.describe_consumer_groups(["described"])["described"].result(DEADLINE_S)
        assert description.state == ConsumerGroupState.STABLE
        assert sorted(tp.partition for tp in description.members[0].assignment.topic_partitions) == [0, 1]
        refused = admin.delete_consumer_groups(["described"])["described"]
        with pytest.raises(Exception, match="NON_EMPTY_GROUP|not empty"):
            refused.result(DEADLINE_S)
    finally:
        consumer.close()
    admin.delete_consumer_groups(["described"])["described"].result(DEADLINE_S)
    assert admin.list_consumer_groups().result(DEADLINE_S).valid == []
