"""KIP-932 share groups on a real in-process KafkaServer: ShareGroupHeartbeat joins, the
initialization of share-partition state before assignment, shared partitions, leaving,
fencing by session timeout, errors, ShareGroupDescribe, and the records a restart loads."""

from __future__ import annotations

import asyncio

from franz.coordinator.share.share_coordinator_record_serde import SharePartitionKey
from franz.protocol.errors import Errors
from tests.coordinator.group.test_consumer_group_coordinator import beat as consumer_beat
from tests.coordinator.group.test_group_coordinator import _commit_body, group_records, join_body, run, wait_until

OVERRIDES = {"group_share_assignment_interval_ms": "0"}


class _Request:
    api_version = 1
    listener_name = "PLAINTEXT"
    client_address = ("127.0.0.1", 1)
    client_id = "c"


async def _topic(server, name: str, partitions: int) -> bytes:
    await server.controller.create_topic(name, partitions, {})
    return server.metadata.get(name).topic_id.bytes


async def beat(server, member_id: str, epoch: int, group_id: str = "g", topics=("t",), rack=None) -> dict:
    body = {"group_id": group_id, "member_id": member_id, "member_epoch": epoch, "rack_id": rack,
            "subscribed_topic_names": None if topics is None else list(topics)}
    return await server.group_coordinator.handle_share_group_heartbeat(_Request(), body)


def _partitions(answer: dict) -> dict[bytes, list[int]]:
    assert answer["assignment"] is not None
    return {tp["topic_id"]: tp["partitions"] for tp in answer["assignment"]["topic_partitions"]}


async def _initialized(server, group_id: str = "g") -> None:
    """The share state initialized and its record 15 written: the partitions leave initializing
    before the background task's write of the group's records lands."""
    groups = server.group_coordinator.share_groups
    await wait_until(lambda: not groups.groups[group_id].initializing and groups._writer.idle,
                     "the share state initialized")


def test_a_member_is_assigned_partitions_once_their_share_state_is_initialized(tmp_path):
    async def scenario(server):
        topic = await _topic(server, "t", 3)
        first = await beat(server, "m1", 0)
        # 4.3 starts a group at epoch 1: the join takes it to 2. Nothing is initialized yet.
        assert (first["error_code"], first["member_id"], first["member_epoch"]) == (Errors.NONE, "m1", 2)
        assert _partitions(first) == {} and first["heartbeat_interval_ms"] == 5000
        await _initialized(server)
        second = await beat(server, "m1", 2, topics=None)
        assert second["member_epoch"] == 3 and _partitions(second) == {topic: [0, 1, 2]}
        state = server.share_coordinator.read_summary
        return [state(SharePartitionKey("g", topic, p)).state_epoch for p in range(3)]
    assert run(tmp_path, scenario, **OVERRIDES) == [2, 2, 2]


def test_members_share_a_partition_and_a_leaving_member_bumps_the_epoch(tmp_path):
    async def scenario(server):
        topic = await _topic(server, "t", 1)
        await beat(server, "m1", 0)
        await _initialized(server)
        one = await beat(server, "m1", 2, topics=None)
        two = await beat(server, "m2", 0)
        assert _partitions(two) == {topic: [0]}
        assert two["member_epoch"] == 4
        again = await beat(server, "m1", one["member_epoch"], topics=None)
        assert again["member_epoch"] == 4 and again["assignment"] is None  # still partition 0: unchanged
        left = await beat(server, "m2", -1, topics=None)
        assert (left["error_code"], left["member_epoch"]) == (Errors.NONE, -1)
        group = server.group_coordinator.share_groups.groups["g"]
        return group.group_epoch, sorted(group.members)
    assert run(tmp_path, scenario, **OVERRIDES) == (5, ["m1"])


def test_heartbeats_are_refused_as_kafka_refuses_them(tmp_path):
    async def scenario(server):
        await _topic(server, "t", 1)
        codes = {
            "no member id": (await beat(server, "", 0))["error_code"],
            "member id too long": (await beat(server, "x" * 37, 0))["error_code"],
            "no topics at join": (await beat(server, "m1", 0, topics=()))["error_code"],
            "epoch below -1": (await beat(server, "m1", -2))["error_code"],
            "unknown group": (await beat(server, "m1", 3, group_id="nobody"))["error_code"],
            "unknown group leaving": (await beat(server, "m1", -1, group_id="nobody"))["error_code"],
        }
        await beat(server, "m1", 0)
        codes["unknown member"] = (await beat(server, "m9", 2))["error_code"]
        codes["epoch ahead"] = (await beat(server, "m1", 7, topics=None))["error_code"]
        await consumer_beat(server, "c1", 0, group_id="consumers")
        codes["a consumer group's id"] = (await beat(server, "m1", 0, group_id="consumers"))["error_code"]
        return codes
    assert run(tmp_path, scenario, **OVERRIDES) == {
        "no member id": Errors.INVALID_REQUEST, "member id too long": Errors.INVALID_REQUEST,
        "no topics at join": Errors.INVALID_REQUEST, "epoch below -1": Errors.INVALID_REQUEST,
        "unknown group": Errors.GROUP_ID_NOT_FOUND, "unknown group leaving": Errors.GROUP_ID_NOT_FOUND,
        "unknown member": Errors.UNKNOWN_MEMBER_ID, "epoch ahead": Errors.FENCED_MEMBER_EPOCH,
        "a consumer group's id": Errors.GROUP_ID_NOT_FOUND}


def test_a_full_group_refuses_a_new_member(tmp_path):
    async def scenario(server):
        await _topic(server, "t", 1)
        await beat(server, "m1", 0)
        refused = await beat(server, "m2", 0)
        kept = await beat(server, "m1", 0)
        return refused["error_code"], kept["error_code"]
    assert run(tmp_path, scenario, group_share_max_size="1", **OVERRIDES) == (Errors.GROUP_MAX_SIZE_REACHED,
                                                                               Errors.NONE)


def test_a_silent_member_is_fenced_when_its_session_ends(tmp_path):
    async def scenario(server):
        await _topic(server, "t", 1)
        await beat(server, "m1", 0)
        groups = server.group_coordinator.share_groups
        await wait_until(lambda: not groups.groups["g"].members, "the member fenced")
        return groups.groups["g"].state, (await beat(server, "m1", 2, topics=None))["error_code"]
    assert run(tmp_path, scenario, group_share_session_timeout_ms="300", group_share_min_session_timeout_ms="100",
               group_share_heartbeat_interval_ms="100", group_share_min_heartbeat_interval_ms="100",
               **OVERRIDES) == ("Empty", Errors.UNKNOWN_MEMBER_ID)


def test_describe_names_members_and_their_partitions(tmp_path):
    async def scenario(server):
        await _topic(server, "t", 2)
        await beat(server, "m1", 0, rack="r1")
        await _initialized(server)
        await beat(server, "m1", 2, topics=None)
        answer = await server.group_coordinator.handle_share_group_describe(
            _Request(), {"group_ids": ["g", "nobody", ""], "include_authorized_operations": False})
        return answer["groups"]
    described, missing, empty = run(tmp_path, scenario, **OVERRIDES)
    assert (described["group_state"], described["group_epoch"], described["assignor_name"]) == ("Stable", 3, "simple")
    member = described["members"][0]
    assert (member["member_id"], member["rack_id"], member["client_id"], member["member_epoch"]) == ("m1", "r1", "c", 3)
    assert [(tp["topic_name"], tp["partitions"]) for tp in member["assignment"]["topic_partitions"]] == [("t", [0, 1])]
    assert missing["error_code"] == Errors.GROUP_ID_NOT_FOUND and empty["error_code"] == Errors.INVALID_GROUP_ID


def test_a_restarted_broker_loads_the_group_and_its_member_carries_on(tmp_path):
    async def first(server):
        topic = await _topic(server, "t", 2)
        await beat(server, "m1", 0)
        await _initialized(server)
        answer = await beat(server, "m1", 2, topics=None)
        await asyncio.sleep(0)
        return topic, answer["member_epoch"]
    topic, epoch = run(tmp_path, first, **OVERRIDES)

    async def second(server):
        group = server.group_coordinator.share_groups.groups["g"]
        loaded = (group.group_epoch, group.assignment_epoch, sorted(group.members), dict(group.initialized))
        again = await beat(server, "m1", epoch, topics=None)
        listed = await server.group_coordinator.handle_list_groups(_Request(), {"states_filter": [],
                                                                                "types_filter": ["share"]})
        return loaded, again["error_code"], again["member_epoch"], listed["groups"]
    loaded, code, again_epoch, listed = run(tmp_path, second, **OVERRIDES)
    assert loaded == (3, 3, ["m1"], {topic: ("t", frozenset({0, 1}))})
    assert (code, again_epoch) == (Errors.NONE, 3)
    assert listed == [{"group_id": "g", "protocol_type": "share", "group_state": "Stable", "group_type": "share"}]


def test_offsets_of_a_group_with_members_cannot_be_altered_or_deleted(tmp_path):
    async def scenario(server):
        await _topic(server, "t", 1)
        await beat(server, "m1", 0)
        groups = server.group_coordinator.share_groups
        altered = await groups.alter_offsets("g", [{"topic_name": "t", "partitions": [
            {"partition_index": 0, "start_offset": 0}]}])
        deleted = await groups.delete_offsets("g", [{"topic_name": "t"}])
        unknown = await groups.delete_offsets("nobody", [{"topic_name": "t"}])
        await consumer_beat(server, "c1", 0, group_id="consumers")
        other = await groups.alter_offsets("consumers", [])
        return [answer["error_code"] for answer in (altered, deleted, unknown, other)]
    assert run(tmp_path, scenario, **OVERRIDES) == [Errors.NON_EMPTY_GROUP, Errors.NON_EMPTY_GROUP,
                                                    Errors.GROUP_ID_NOT_FOUND, Errors.GROUP_ID_NOT_FOUND]


def test_a_deleted_topic_leaves_no_share_state_behind(tmp_path):
    async def scenario(server):
        topic = await _topic(server, "t", 2)
        await _topic(server, "kept", 1)
        await beat(server, "m1", 0, topics=("t", "kept"))
        await _initialized(server)
        await server.controller.delete_topic("t")
        group = server.group_coordinator.share_groups.groups["g"]
        await wait_until(lambda: not group.persisted or all(
            topic not in entries for entries in (group.initialized, group.initializing)), "the group forgot t")
        states = server.share_coordinator.states
        return topic in group.initialized, sorted(server.metadata.name_of(k.topic_id) for k in states)
    assert run(tmp_path, scenario, **OVERRIDES) == (False, ["kept"])


def test_a_share_groups_id_is_refused_to_the_other_protocols(tmp_path):
    """GROUP_ID_NOT_FOUND to a consumer group heartbeat, commits and fetches of offsets;
    INCONSISTENT_GROUP_PROTOCOL to a classic join; and no classic group is made of the id."""
    async def scenario(server):
        await _topic(server, "t", 1)
        await beat(server, "m1", 0)
        service = server.group_coordinator

        class Version:
            def __init__(self, version: int) -> None:
                self.api_version, self.listener_name = version, "PLAINTEXT"
                self.client_address, self.client_id = ("127.0.0.1", 1), "c"
        codes = {"consumer heartbeat": (await consumer_beat(server, "c1", 0))["error_code"]}
        joined = await service.handle_join_group(Version(9), join_body("g"))
        codes["join"] = joined["error_code"]
        committed = await service.handle_offset_commit(Version(9), _commit_body("g", -1, "", 5))
        codes["commit"] = committed["topics"][0]["partitions"][0]["error_code"]
        fetched = await service.handle_offset_fetch(Version(8), {"groups": [
            {"group_id": "g", "topics": None}], "require_stable": False})
        codes["fetch"] = fetched["groups"][0]["error_code"]
        listed = await service.handle_list_groups(Version(5), {"states_filter": [], "types_filter": []})
        return codes, [(g["group_id"], g["group_type"]) for g in listed["groups"]]
    codes, listed = run(tmp_path, scenario, **OVERRIDES)
    assert codes == {"consumer heartbeat": Errors.GROUP_ID_NOT_FOUND, "join": Errors.INCONSISTENT_GROUP_PROTOCOL,
                     "commit": Errors.GROUP_ID_NOT_FOUND, "fetch": Errors.GROUP_ID_NOT_FOUND}
    assert listed == [("g", "share")]


def test_altering_offsets_makes_a_group_only_when_a_partitions_state_is_set(tmp_path):
    async def scenario(server):
        topic = await _topic(server, "t", 1)
        groups = server.group_coordinator.share_groups
        nothing = await groups.alter_offsets("phantom", [{"topic_name": "missing", "partitions": [
            {"partition_index": 0, "start_offset": 3}]}])
        made = await groups.alter_offsets("made", [{"topic_name": "t", "partitions": [
            {"partition_index": 0, "start_offset": 3}]}])
        state = server.share_coordinator.read_summary(SharePartitionKey("made", topic, 0))
        return (nothing["responses"][0]["partitions"][0]["error_code"], sorted(groups.groups),
                made["error_code"], state.start_offset, sorted(groups.groups["made"].persisted))
    missing, names, made, start, records = run(tmp_path, scenario, **OVERRIDES)
    assert (missing, names, made, start) == (Errors.UNKNOWN_TOPIC_OR_PARTITION, ["made"], Errors.NONE, 3)
    assert [int.from_bytes(key[:2], "big") for key in records] == [15]  # ShareGroupStatePartitionMetadata alone


def test_records_come_in_kafkas_order_and_record_15_stays_once_written(tmp_path):
    async def scenario(server):
        await _topic(server, "t", 1)
        await beat(server, "m1", 0)
        await _initialized(server)
        joined = [(key.record_type, value is None) for key, value in group_records(server, "g")]
        await beat(server, "m1", -1, topics=None)
        groups = server.group_coordinator.share_groups
        deleted = await groups.delete_offsets("g", [{"topic_name": "t"}, {"topic_name": "nope"}])
        again = await groups.delete_offsets("g", [{"topic_name": "t"}])
        records = [(key.record_type, value is None) for key, value in group_records(server, "g")]
        return joined, records[len(joined):], deleted["responses"], again["responses"]
    joined, after, deleted, again = run(tmp_path, scenario, **OVERRIDES)
    # the join: subscription, epoch, target, target epoch, current assignment, then record 15;
    # the initialization's record 15 after it
    assert joined == [(10, False), (11, False), (13, False), (12, False), (14, False), (15, False), (15, False)]
    # leaving: the member's tombstones, then the epoch; deleting the offsets: record 15 with empty lists
    assert after == [(14, True), (13, True), (10, True), (11, False), (15, False)]
    assert [(d["topic_name"], d["topic_id"] == bytes(16), d["error_code"]) for d in deleted] == [
        ("t", False, Errors.NONE), ("nope", True, Errors.UNKNOWN_TOPIC_OR_PARTITION)]
    assert [(d["topic_name"], d["error_code"]) for d in again] == [("t", Errors.UNKNOWN_TOPIC_OR_PARTITION)]


def test_a_record_15_with_empty_lists_is_still_the_groups_after_a_restart(tmp_path):
    async def first(server):
        await _topic(server, "t", 1)
        await beat(server, "m1", 0)
        await _initialized(server)
        await beat(server, "m1", -1, topics=None)
        await server.group_coordinator.share_groups.delete_offsets("g", [{"topic_name": "t"}])
    run(tmp_path, first, **OVERRIDES)

    async def second(server):
        before = len(group_records(server, "g"))
        answer = await server.group_coordinator.share_groups.delete_offsets("g", [{"topic_name": "t"}])
        written = len(group_records(server, "g")) - before
        return [(d["topic_name"], d["error_code"]) for d in answer["responses"]], written
    # answered per topic, as for a group whose record 15 is there; and nothing written again
    assert run(tmp_path, second, **OVERRIDES) == ([("t", Errors.UNKNOWN_TOPIC_OR_PARTITION)], 0)
