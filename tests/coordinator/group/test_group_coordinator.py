"""The classic group state machine on a real in-process KafkaServer (its log, purgatories and loop).

Each test runs a scenario on the server's own event loop and drives the
GroupCoordinator the way the request handlers do; the records it writes are
read back from the real `__consumer_offsets` log.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from franz.common.utils import partition_for_key
from franz.coordinator.group import group_coordinator_record_serde as serde
from franz.coordinator.group.coordinator_loader import OFFSETS_TOPIC, load_partition
from franz.coordinator.group.group_metadata import GroupError, GroupState
from franz.protocol.codec import decode_response, encode_request
from franz.protocol.errors import Errors, default_message
from franz.records import CompressionType
from franz.server.kafka_config import KafkaConfig
from franz.server.kafka_server import KafkaServer
from franz.storage.unified_log import FetchIsolation
from tests.support.broker_on_thread import BrokerOnThread
from tests.support.raw_client import RawClient, create_topic

DEADLINE_S = 15.0


def _config(data_dir: Path, **overrides: str) -> KafkaConfig:
    props = {"node.id": "1", "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": str(data_dir),
             "group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "100",
             "offsets.topic.num.partitions": "3", "log.initial.task.delay.ms": "60000",
             # Targets computed at every change, not batched per second (KIP-1263's default): the
             # scenarios step through each change; test_consumer_group_coordinator.py tests the batching.
             "group.consumer.assignment.interval.ms": "0"}
    props.update({k.replace("_", "."): v for k, v in overrides.items()})
    return KafkaConfig(props)


def run(data_dir: Path, scenario, **overrides: str):
    """Start a server, run `scenario(server)` on its loop, stop the server; the scenario's result."""
    async def main():
        server = KafkaServer(_config(data_dir, **overrides))
        await server.startup()
        try:
            return await asyncio.wait_for(scenario(server), DEADLINE_S * 2)
        finally:
            await server.shutdown()
    return asyncio.run(main())


def join_body(group_id: str, member_id: str = "", session_timeout_ms: int = 10_000, instance_id=None,
              protocols=(("range", b"meta"),), protocol_type: str = "consumer", rebalance_timeout_ms: int = 10_000):
    return {"group_id": group_id, "session_timeout_ms": session_timeout_ms, "rebalance_timeout_ms": rebalance_timeout_ms,
            "member_id": member_id, "group_instance_id": instance_id, "protocol_type": protocol_type,
            "protocols": [{"name": n, "metadata": m} for n, m in protocols], "reason": None}


async def join(server, group_id: str, **kwargs) -> dict:
    """A full KIP-394 join: the member-id round trip, then the parked join."""
    coordinator = server.group_coordinator.coordinator
    first = await coordinator.join_group(9, "client", "/127.0.0.1", join_body(group_id, **kwargs))
    if first["error_code"] != Errors.MEMBER_ID_REQUIRED:
        return first
    kwargs["member_id"] = first["member_id"]
    return await coordinator.join_group(9, "client", "/127.0.0.1", join_body(group_id, **kwargs))


async def sync(server, group_id: str, generation: int, member_id: str, assignments=()) -> dict:
    return await server.group_coordinator.coordinator.sync_group({
        "group_id": group_id, "generation_id": generation, "member_id": member_id, "group_instance_id": None,
        "protocol_type": "consumer", "protocol_name": "range",
        "assignments": [{"member_id": m, "assignment": a} for m, a in assignments]})


def heartbeat(server, group_id: str, generation: int, member_id: str, instance_id=None) -> Errors:
    return server.group_coordinator.coordinator.heartbeat({"group_id": group_id, "generation_id": generation,
                                                           "member_id": member_id, "group_instance_id": instance_id})


async def wait_until(condition, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        await asyncio.sleep(0.02)


def group_records(server, group_id: str) -> list[tuple[object, bytes | None]]:
    service = server.group_coordinator
    log = server.replica_manager.log_of((OFFSETS_TOPIC, service.partition_for(group_id)))
    found: list = []
    load_partition(log, lambda key, value, _offset: found.append((serde.read_key(key), value)))
    return [(key, value) for key, value in found if key.group == group_id]


async def stable_single_member_group(server, group_id: str) -> tuple[str, int]:
    joined = await join(server, group_id)
    assert joined["error_code"] == Errors.NONE
    member_id, generation = joined["member_id"], joined["generation_id"]
    synced = await sync(server, group_id, generation, member_id, [(member_id, b"assignment")])
    assert synced["error_code"] == Errors.NONE and synced["assignment"] == b"assignment"
    return member_id, generation


def test_new_member_gets_member_id_required_then_leads_generation_one(tmp_path):
    async def scenario(server):
        coordinator = server.group_coordinator.coordinator
        first = await coordinator.join_group(9, "client", "/h", join_body("g"))
        assert first["error_code"] == Errors.MEMBER_ID_REQUIRED and first["member_id"].startswith("client-")
        joined = await coordinator.join_group(9, "client", "/h", join_body("g", member_id=first["member_id"]))
        assert joined["error_code"] == Errors.NONE and joined["generation_id"] == 1
        assert joined["leader"] == joined["member_id"] == first["member_id"]
        assert [m["metadata"] for m in joined["members"]] == [b"meta"]
        assert coordinator.group("g").state == GroupState.COMPLETING_REBALANCE
        synced = await sync(server, "g", 1, joined["member_id"], [(joined["member_id"], b"A")])
        assert synced["assignment"] == b"A"
        assert coordinator.group("g").state == GroupState.STABLE
        assert heartbeat(server, "g", 1, joined["member_id"]) == Errors.NONE
        records = group_records(server, "g")
        value = serde.read_group_metadata_value(records[-1][1])
        assert value["generation"] == 1 and value["members"][0]["assignment"] == b"A"
    run(tmp_path, scenario)


def test_bad_requests_get_kafka_error_codes_and_leave_the_group_stable(tmp_path):
    async def scenario(server):
        coordinator = server.group_coordinator.coordinator
        member_id, generation = await stable_single_member_group(server, "g")
        assert heartbeat(server, "g", generation, "nobody") == Errors.UNKNOWN_MEMBER_ID
        assert heartbeat(server, "g", generation + 5, member_id) == Errors.ILLEGAL_GENERATION
        assert heartbeat(server, "unknown-group", 1, member_id) == Errors.UNKNOWN_MEMBER_ID
        too_short = await coordinator.join_group(9, "c", "/h", join_body("g", session_timeout_ms=1))
        assert too_short["error_code"] == Errors.INVALID_SESSION_TIMEOUT
        too_long = await coordinator.join_group(9, "c", "/h", join_body("g", session_timeout_ms=10**9))
        assert too_long["error_code"] == Errors.INVALID_SESSION_TIMEOUT
        other_type = await join(server, "g", protocol_type="connect")
        assert other_type["error_code"] == Errors.INCONSISTENT_GROUP_PROTOCOL
        other_protocol = await join(server, "g", protocols=(("roundrobin", b""),))
        assert other_protocol["error_code"] == Errors.INCONSISTENT_GROUP_PROTOCOL
        assert (await sync(server, "g", generation + 1, member_id))["error_code"] == Errors.ILLEGAL_GENERATION
        assert (await sync(server, "g", generation, "nobody"))["error_code"] == Errors.UNKNOWN_MEMBER_ID
        unknown = await coordinator.join_group(9, "c", "/h", join_body("g", member_id="made-up"))
        assert unknown["error_code"] == Errors.UNKNOWN_MEMBER_ID
        assert coordinator.group("g").state == GroupState.STABLE and coordinator.group("g").size == 1
        assert heartbeat(server, "g", generation, member_id) == Errors.NONE
    run(tmp_path, scenario)


def test_a_second_member_triggers_a_rebalance_both_rejoin(tmp_path):
    async def scenario(server):
        coordinator = server.group_coordinator.coordinator
        first_id, generation = await stable_single_member_group(server, "g")
        second = asyncio.ensure_future(join(server, "g"))
        await wait_until(lambda: coordinator.group("g").state == GroupState.PREPARING_REBALANCE, "rebalance")
        assert heartbeat(server, "g", generation, first_id) == Errors.REBALANCE_IN_PROGRESS
        first = await join(server, "g", member_id=first_id)
        second_answer = await second
        assert first["generation_id"] == second_answer["generation_id"] == generation + 1
        assert first["leader"] == first_id and len(first["members"]) == 2 and second_answer["members"] == []
    run(tmp_path, scenario)


def test_a_silent_member_is_removed_after_its_session_timeout(tmp_path):
    async def scenario(server):
        coordinator = server.group_coordinator.coordinator
        joined = await join(server, "g", session_timeout_ms=200)
        await sync(server, "g", joined["generation_id"], joined["member_id"])
        await wait_until(lambda: coordinator.group("g").state == GroupState.EMPTY, "the group to empty")
        assert coordinator.group("g").generation_id == 2
        assert heartbeat(server, "g", 1, joined["member_id"]) == Errors.UNKNOWN_MEMBER_ID
    run(tmp_path, scenario)


def test_a_static_member_rejoining_fences_its_old_member_id(tmp_path):
    async def scenario(server):
        coordinator = server.group_coordinator.coordinator
        leader_id, _ = await stable_single_member_group(server, "g")
        second = asyncio.ensure_future(join(server, "g", instance_id="instance-1"))
        await wait_until(lambda: coordinator.group("g").state == GroupState.PREPARING_REBALANCE, "rebalance")
        await join(server, "g", member_id=leader_id)
        static = await second
        await sync(server, "g", static["generation_id"], leader_id)
        await sync(server, "g", static["generation_id"], static["member_id"])
        again = await join(server, "g", instance_id="instance-1")  # restarted: no member id
        assert again["error_code"] == Errors.NONE and again["member_id"] != static["member_id"]
        assert again["generation_id"] == static["generation_id"]  # no rebalance for a returning follower
        assert heartbeat(server, "g", again["generation_id"], static["member_id"], "instance-1") \
            == Errors.FENCED_INSTANCE_ID
        assert heartbeat(server, "g", again["generation_id"], again["member_id"], "instance-1") == Errors.NONE
    run(tmp_path, scenario)


async def stable_static_pair(server, group_id: str) -> tuple[str, str, int]:
    """A Stable group of two static members, "instance-0" leading: (leader id, follower id, generation)."""
    coordinator = server.group_coordinator.coordinator
    leader_id, _ = await stable_single_member_group_of(server, group_id, "instance-0")
    second = asyncio.ensure_future(join(server, group_id, instance_id="instance-1"))
    await wait_until(lambda: coordinator.group(group_id).state == GroupState.PREPARING_REBALANCE, "rebalance")
    await join(server, group_id, member_id=leader_id, instance_id="instance-0")
    follower = await second
    generation = follower["generation_id"]
    assignments = [(leader_id, b"leader's"), (follower["member_id"], b"follower's")]
    await sync(server, group_id, generation, leader_id, assignments)
    assert (await sync(server, group_id, generation, follower["member_id"]))["assignment"] == b"follower's"
    return leader_id, follower["member_id"], generation


async def stable_single_member_group_of(server, group_id: str, instance_id: str) -> tuple[str, int]:
    joined = await join(server, group_id, instance_id=instance_id)
    assert joined["error_code"] == Errors.NONE
    await sync(server, group_id, joined["generation_id"], joined["member_id"], [(joined["member_id"], b"alone")])
    return joined["member_id"], joined["generation_id"]


@pytest.mark.parametrize("version", [5, 9])
def test_a_static_leader_rejoining_keeps_the_generation_and_its_assignment(tmp_path, version):
    """From JoinGroup v9 the returning leader is told it leads, with the members, and to skip
    the assignment (KIP-814); before v9 the answer names its old id as the leader, so it syncs
    as a follower. Either way it gets the assignment it made, and the follower stays."""
    async def scenario(server):
        coordinator = server.group_coordinator.coordinator
        leader_id, follower_id, generation = await stable_static_pair(server, "g")
        # restarted: no member id
        again = await coordinator.join_group(version, "client", "/127.0.0.1", join_body("g", instance_id="instance-0"))
        assert again["error_code"] == Errors.NONE and again["member_id"] != leader_id
        assert again["generation_id"] == generation and coordinator.group("g").state == GroupState.STABLE
        if version >= 9:
            assert again["leader"] == again["member_id"] and again["skip_assignment"] is True
            assert sorted(m["member_id"] for m in again["members"]) == sorted([again["member_id"], follower_id])
        else:
            assert again["leader"] == leader_id and again["members"] == [] and again["skip_assignment"] is False
        assert (await sync(server, "g", generation, again["member_id"]))["assignment"] == b"leader's"
        assert heartbeat(server, "g", generation, follower_id, "instance-1") == Errors.NONE
        assert heartbeat(server, "g", generation, leader_id, "instance-0") == Errors.FENCED_INSTANCE_ID
    run(tmp_path, scenario)


def test_a_static_member_whose_new_id_cannot_be_written_keeps_its_old_one(tmp_path):
    async def scenario(server):
        coordinator = server.group_coordinator.coordinator
        leader_id, follower_id, generation = await stable_static_pair(server, "g")
        write = coordinator._write_metadata

        async def failing_once(group, value):  # the __consumer_offsets append fails, once
            coordinator._write_metadata = write
            raise GroupError(Errors.NOT_COORDINATOR, "the append failed")
        coordinator._write_metadata = failing_once
        again = await join(server, "g", instance_id="instance-1")
        assert again["error_code"] == Errors.NOT_COORDINATOR and again["member_id"] == ""
        group = coordinator.group("g")
        assert group.static_member_id("instance-1") == follower_id and set(group.members) == {leader_id, follower_id}
        assert group.state == GroupState.STABLE and group.num_members_awaiting_join == 0
        assert heartbeat(server, "g", generation, follower_id, "instance-1") == Errors.NONE
        retried = await join(server, "g", instance_id="instance-1")
        assert retried["error_code"] == Errors.NONE and retried["generation_id"] == generation
    run(tmp_path, scenario)


def test_leave_rebalances_and_an_empty_group_writes_its_generation(tmp_path):
    async def scenario(server):
        coordinator = server.group_coordinator.coordinator
        member_id, _ = await stable_single_member_group(server, "g")
        error, answers = coordinator.leave_group("g", [{"member_id": member_id, "group_instance_id": None}])
        assert error == Errors.NONE and answers[0]["error_code"] == Errors.NONE
        assert coordinator.group("g").state == GroupState.EMPTY
        await wait_until(lambda: serde.read_group_metadata_value(group_records(server, "g")[-1][1])["generation"] == 2,
                         "the empty generation record")
        error, answers = coordinator.leave_group("g", [{"member_id": member_id, "group_instance_id": None}])
        assert answers[0]["error_code"] == Errors.UNKNOWN_MEMBER_ID
    run(tmp_path, scenario)


class _Request:
    api_version = 8
    listener_name = "PLAINTEXT"
    client_address = ("127.0.0.1", 1)
    client_id = "c"


def _commit_body(group_id: str, generation: int, member_id: str, offset: int, metadata: str = "") -> dict:
    return {"group_id": group_id, "generation_id_or_member_epoch": generation, "member_id": member_id,
            "group_instance_id": None, "topics": [{"name": "t", "partitions": [
                {"partition_index": 0, "committed_offset": offset, "committed_leader_epoch": 3,
                 "committed_metadata": metadata}]}]}


def _commit_error(answer: dict) -> int:
    return answer["topics"][0]["partitions"][0]["error_code"]


def test_commits_are_validated_against_membership_and_generation(tmp_path):
    async def scenario(server):
        service = server.group_coordinator
        await server.controller.create_topic("t", 2, {})  # offsets of partitions the broker has
        member_id, generation = await stable_single_member_group(server, "g")
        request = _Request()
        assert _commit_error(await service.handle_offset_commit(request, _commit_body("g", generation, "x", 1))) \
            == Errors.UNKNOWN_MEMBER_ID
        assert _commit_error(await service.handle_offset_commit(request, _commit_body("g", 9, member_id, 1))) \
            == Errors.ILLEGAL_GENERATION
        assert _commit_error(await service.handle_offset_commit(request, _commit_body("g", -1, "", 1))) \
            == Errors.UNKNOWN_MEMBER_ID
        assert _commit_error(await service.handle_offset_commit(request, _commit_body("none", 3, "m", 1))) \
            == Errors.ILLEGAL_GENERATION
        assert _commit_error(await service.handle_offset_commit(
            request, _commit_body("g", generation, member_id, 1, "x" * 5000))) == Errors.OFFSET_METADATA_TOO_LARGE
        assert _commit_error(await service.handle_offset_commit(
            request, _commit_body("g", generation, member_id, 17, "meta"))) == Errors.NONE
        fetched = await service.handle_offset_fetch(request, {"groups": [
            {"group_id": "g", "topics": [{"name": "t", "partition_indexes": [0, 1]}]}], "require_stable": True})
        partitions = fetched["groups"][0]["topics"][0]["partitions"]
        assert [(p["committed_offset"], p["committed_leader_epoch"], p["metadata"]) for p in partitions] \
            == [(17, 3, "meta"), (-1, -1, "")]
        key, value = group_records(server, "g")[-1]
        assert key == serde.OffsetCommitKey("g", "t", 0)
        assert serde.read_offset_commit_value(value).committed_offset == 17
    run(tmp_path, scenario)


def test_groups_and_offsets_are_loaded_back_and_deleted_with_tombstones(tmp_path):
    async def first_life(server):
        await server.controller.create_topic("t", 1, {})
        member_id, generation = await stable_single_member_group(server, "g")
        await server.group_coordinator.handle_offset_commit(_Request(), _commit_body("g", generation, member_id, 5))
        await server.group_coordinator.handle_offset_commit(_Request(), _commit_body("simple", -1, "", 9))
        return member_id

    async def second_life(server):
        service = server.group_coordinator
        group = service.coordinator.group("g")
        assert group.state == GroupState.STABLE and list(group.members) == [member_id]
        assert service.offsets.group_offsets("g")[("t", 0)].committed_offset == 5
        assert service.offsets.group_offsets("simple")[("t", 0)].committed_offset == 9
        deleted = await service.handle_delete_groups(_Request(), {"groups_names": ["g", "simple", "nope"]})
        assert [r["error_code"] for r in deleted["results"]] == \
            [Errors.NON_EMPTY_GROUP, Errors.NONE, Errors.GROUP_ID_NOT_FOUND]
        assert group_records(server, "simple")[-2:] == [(serde.OffsetCommitKey("simple", "t", 0), None),
                                                         (serde.GroupMetadataKey("simple"), None)]

    async def third_life(server):
        service = server.group_coordinator
        assert service.coordinator.group("simple") is None and not service.offsets.has_offsets("simple")
        assert service.offsets.group_offsets("g")[("t", 0)].committed_offset == 5

    member_id = run(tmp_path, first_life)
    run(tmp_path, second_life)
    run(tmp_path, third_life)


def test_offsets_of_an_empty_group_expire_after_retention(tmp_path):
    async def scenario(server):
        service = server.group_coordinator
        await server.controller.create_topic("t", 1, {})
        await service.handle_offset_commit(_Request(), _commit_body("simple", -1, "", 9))
        now = service._clock_ms()
        assert await service.cleanup_group_metadata(now) == 0
        assert await service.cleanup_group_metadata(now + service.config.offsets_retention_ms + 1000) == 1
        assert service.coordinator.group("simple") is None
        assert group_records(server, "simple")[-1] == (serde.GroupMetadataKey("simple"), None)
    run(tmp_path, scenario)


@pytest.mark.parametrize("version", [0, 3, 4])
def test_find_coordinator_creates_the_compacted_offsets_topic(tmp_path, version):
    """As Kafka's getCoordinator: the first ask starts the creation and is told
    COORDINATOR_NOT_AVAILABLE at once; asked again once the topic exists, this node."""
    async def scenario(server):
        request = _Request()
        request.api_version = version
        body = {"key": "g", "key_type": 0, "coordinator_keys": ["g", "h"]}
        first = await server.group_coordinator.handle_find_coordinator(request, body)
        codes = [c["error_code"] for c in first["coordinators"]] if version >= 4 else [first["error_code"]]
        assert set(codes) == {Errors.COORDINATOR_NOT_AVAILABLE}
        if version >= 4:  # each key its code, no message
            assert [c["error_message"] for c in first["coordinators"]] == [None, None]
        else:  # the request's error response: Errors.message(), no node
            assert (first["error_message"], first["node_id"], first["host"], first["port"]) == (
                "The coordinator is not available.", -1, "", -1)
        assert server.metadata.get(OFFSETS_TOPIC) is None
        assert (await server.controller.wait_for_creation(OFFSETS_TOPIC)).name == OFFSETS_TOPIC
        answer = await server.group_coordinator.handle_find_coordinator(request, body)
        if version >= 4:
            assert [(c["error_code"], c["error_message"]) for c in answer["coordinators"]] == [(0, None), (0, None)]
        else:  # Errors.NONE.message() is its name
            assert (answer["error_code"], answer["error_message"], answer["node_id"]) == (0, "NONE", 1)
        topic = server.metadata.get(OFFSETS_TOPIC)
        assert topic.num_partitions == 3 and topic.configs["cleanup.policy"] == "compact"
    run(tmp_path, scenario)


@pytest.mark.parametrize("version", [3, 4])
def test_find_coordinator_of_an_unknown_key_type_fails_the_whole_request(tmp_path, version):
    """CoordinatorType.forId throws: every key gets INVALID_REQUEST with Errors' text, no node."""
    async def scenario(server):
        request = _Request()
        request.api_version = version
        answer = await server.group_coordinator.handle_find_coordinator(
            request, {"key": "g", "key_type": 7, "coordinator_keys": ["g", "h"]})
        answers = answer["coordinators"] if version >= 4 else [answer]
        assert [(a["error_code"], a["error_message"], a["node_id"]) for a in answers] == [
            (Errors.INVALID_REQUEST, default_message(Errors.INVALID_REQUEST), -1)] * len(answers)
        assert server.metadata.get(OFFSETS_TOPIC) is None
    run(tmp_path, scenario)


def test_the_initial_rebalance_delay_gathers_members_into_one_first_generation(tmp_path):
    async def scenario(server):
        first = asyncio.ensure_future(join(server, "g"))
        await wait_until(lambda: server.group_coordinator.coordinator.group("g") is not None
                         and server.group_coordinator.coordinator.group("g").size == 1, "the first member")
        second = await join(server, "g")
        assert (await first)["generation_id"] == second["generation_id"] == 1
    run(tmp_path, scenario, group_initial_rebalance_delay_ms="300")


def test_a_member_turned_away_by_the_group_size_is_no_longer_pending(tmp_path):
    async def scenario(server):
        coordinator = server.group_coordinator.coordinator
        first = await coordinator.join_group(9, "client", "/h", join_body("g"))
        second = await coordinator.join_group(9, "client", "/h", join_body("g"))  # both pending, the group Empty
        joined = await coordinator.join_group(9, "client", "/h", join_body("g", member_id=first["member_id"]))
        await sync(server, "g", joined["generation_id"], joined["member_id"])
        refused = await coordinator.join_group(9, "client", "/h", join_body("g", member_id=second["member_id"]))
        assert refused["error_code"] == Errors.GROUP_MAX_SIZE_REACHED and refused["member_id"] == ""
        group = coordinator.group("g")
        assert second["member_id"] not in group.pending_members and list(group.members) == [joined["member_id"]]
        assert group.state == GroupState.STABLE
    run(tmp_path, scenario, group_max_size="1")


def test_a_batch_leave_removes_every_member_before_the_group_moves_on(tmp_path):
    async def scenario(server):
        coordinator = server.group_coordinator.coordinator
        leader_id, follower_id, generation = await stable_static_pair(server, "g")
        # The leader rejoins (a rebalance) and waits for the follower, which never comes.
        rejoin = asyncio.ensure_future(join(server, "g", member_id=leader_id, instance_id="instance-0"))
        await wait_until(lambda: coordinator.group("g").state == GroupState.PREPARING_REBALANCE, "rebalance")
        error, answers = coordinator.leave_group("g", [{"member_id": follower_id, "group_instance_id": None},
                                                       {"member_id": leader_id, "group_instance_id": None}])
        assert error == Errors.NONE and [a["error_code"] for a in answers] == [Errors.NONE, Errors.NONE]
        assert (await rejoin)["error_code"] == Errors.UNKNOWN_MEMBER_ID  # not a generation of its own first
        group = coordinator.group("g")
        assert group.state == GroupState.EMPTY and group.generation_id == generation + 1
    run(tmp_path, scenario)


def test_a_pending_member_timing_out_ends_the_initial_rebalance_delay(tmp_path):
    async def scenario(server):
        coordinator = server.group_coordinator.coordinator
        first = await coordinator.join_group(9, "client", "/h", join_body("g", rebalance_timeout_ms=60_000))
        parked = asyncio.ensure_future(coordinator.join_group(
            9, "client", "/h", join_body("g", member_id=first["member_id"], rebalance_timeout_ms=60_000)))
        await wait_until(lambda: coordinator.group("g").state == GroupState.PREPARING_REBALANCE, "rebalance")
        silent = await coordinator.join_group(9, "client", "/h", join_body("g", session_timeout_ms=200))
        assert silent["error_code"] == Errors.MEMBER_ID_REQUIRED  # pending, and never back
        # Kafka answers the joined member once the pending one's session ends, not after the delay.
        joined = await asyncio.wait_for(parked, DEADLINE_S)
        assert joined["error_code"] == Errors.NONE and joined["generation_id"] == 1
        assert silent["member_id"] not in coordinator.group("g").pending_members
    run(tmp_path, scenario, group_initial_rebalance_delay_ms="40000")


def test_a_sync_ended_by_a_failed_write_restarts_the_followers_session(tmp_path):
    async def scenario(server):
        coordinator = server.group_coordinator.coordinator
        leader_id, _ = await stable_single_member_group(server, "g")
        second = asyncio.ensure_future(join(server, "g", session_timeout_ms=300, rebalance_timeout_ms=60_000))
        await wait_until(lambda: coordinator.group("g").state == GroupState.PREPARING_REBALANCE, "rebalance")
        await join(server, "g", member_id=leader_id, rebalance_timeout_ms=60_000)
        follower = await second
        generation = follower["generation_id"]
        follower_sync = asyncio.ensure_future(sync(server, "g", generation, follower["member_id"]))
        await wait_until(lambda: coordinator.group("g").members[follower["member_id"]].is_awaiting_sync, "sync")
        # It heartbeats while it waits (the Java client does): the wait satisfies that session.
        assert heartbeat(server, "g", generation, follower["member_id"]) == Errors.NONE
        write = coordinator._write_metadata

        async def failing_once(group, value):  # the assignment's append fails, once
            coordinator._write_metadata = write
            raise GroupError(Errors.NOT_COORDINATOR, "the append failed")
        coordinator._write_metadata = failing_once
        assert (await sync(server, "g", generation, leader_id, [(leader_id, b"a")]))["error_code"] \
            == Errors.NOT_COORDINATOR
        assert (await follower_sync)["error_code"] == Errors.NOT_COORDINATOR
        # The follower goes silent: its session (300 ms), not the 60 s rebalance timeout,
        # removes it, and the leader's rejoin makes a generation of one.
        rejoined = await asyncio.wait_for(join(server, "g", member_id=leader_id, rebalance_timeout_ms=60_000),
                                          DEADLINE_S)
        assert rejoined["error_code"] == Errors.NONE and list(coordinator.group("g").members) == [leader_id]
    run(tmp_path, scenario)


def test_a_group_left_empty_during_its_initial_rebalance_keeps_its_protocol_type(tmp_path):
    async def scenario(server):
        coordinator = server.group_coordinator.coordinator
        first = await coordinator.join_group(9, "client", "/h", join_body("g"))
        parked = asyncio.ensure_future(coordinator.join_group(9, "client", "/h",
                                                              join_body("g", member_id=first["member_id"])))
        await wait_until(lambda: coordinator.group("g").state == GroupState.PREPARING_REBALANCE, "rebalance")
        coordinator.leave_group("g", [{"member_id": first["member_id"], "group_instance_id": None}])
        assert (await parked)["error_code"] == Errors.UNKNOWN_MEMBER_ID
        group = coordinator.group("g")
        assert group.state == GroupState.PREPARING_REBALANCE and not group.members
        other = await coordinator.join_group(9, "client", "/h", join_body("g", protocol_type="connect"))
        assert other["error_code"] == Errors.INCONSISTENT_GROUP_PROTOCOL
    run(tmp_path, scenario, group_initial_rebalance_delay_ms="40000")


class _RequestV5(_Request):
    api_version = 5


class _RequestV6(_Request):
    api_version = 6


def _offset_of(fetched: dict) -> int:
    return fetched["groups"][0]["topics"][0]["partitions"][0]["committed_offset"]


def test_the_offsets_of_a_deleted_topic_are_tombstoned(tmp_path):
    """OffsetMetadataManager.onTopicsDeleted: a topic made again under the name starts with no
    committed offset in any group (a consumer would otherwise resume the new topic at the old
    one's position)."""
    async def scenario(server):
        service = server.group_coordinator
        await server.controller.create_topic("t", 1, {})
        assert _commit_error(await service.handle_offset_commit(_Request(), _commit_body("simple", -1, "", 42))) \
            == Errors.NONE
        await server.controller.delete_topic("t")
        await server.controller.create_topic("t", 1, {})
        fetch = {"groups": [{"group_id": "simple", "topics": [{"name": "t", "partition_indexes": [0]}]}],
                 "require_stable": False}
        assert _offset_of(await service.handle_offset_fetch(_Request(), fetch)) == -1
        assert group_records(server, "simple")[-1] == (serde.OffsetCommitKey("simple", "t", 0), None)
    run(tmp_path, scenario)


def test_offsets_of_partitions_the_broker_does_not_have_are_refused_and_make_no_group(tmp_path):
    """KafkaApis answers them UNKNOWN_TOPIC_OR_PARTITION before the coordinator sees the
    request: a commit naming only such partitions neither checks nor makes a group."""
    async def scenario(server):
        service = server.group_coordinator
        await server.controller.create_topic("t", 1, {})
        body = _commit_body("g1", -1, "", 5)
        body["topics"] = [{"name": "nope", "partitions": body["topics"][0]["partitions"]}]
        assert _commit_error(await service.handle_offset_commit(_Request(), body)) == Errors.UNKNOWN_TOPIC_OR_PARTITION
        body["generation_id_or_member_epoch"] = 5  # not even the generation is looked at
        assert _commit_error(await service.handle_offset_commit(_Request(), body)) == Errors.UNKNOWN_TOPIC_OR_PARTITION
        assert service.coordinator.group("g1") is None
        mixed = _commit_body("g1", -1, "", 5)
        mixed["topics"][0]["partitions"].append({"partition_index": 7, "committed_offset": 5,
                                                 "committed_leader_epoch": -1, "committed_metadata": ""})
        answer = await service.handle_offset_commit(_Request(), mixed)
        assert [(p["partition_index"], p["error_code"]) for p in answer["topics"][0]["partitions"]] == \
            [(0, Errors.NONE), (7, Errors.UNKNOWN_TOPIC_OR_PARTITION)]
        deleted = await service.handle_offset_delete(_Request(), {"group_id": "g1", "topics": [
            {"name": "nope", "partitions": [{"partition_index": 0}]}]})
        assert (deleted["error_code"], deleted["topics"][0]["partitions"][0]["error_code"]) == \
            (Errors.NONE, Errors.UNKNOWN_TOPIC_OR_PARTITION)
        assert (await service.handle_offset_delete(_Request(), {"group_id": "", "topics": []}))["error_code"] == \
            Errors.INVALID_GROUP_ID
        # Offset metadata is measured in Java chars (UTF-16 units), not UTF-8 bytes.
        accented = _commit_body("g1", -1, "", 6, "\u00e9" * 3000)
        assert _commit_error(await service.handle_offset_commit(_Request(), accented)) == Errors.NONE
    run(tmp_path, scenario)


def test_describe_groups_v6_says_group_id_not_found_and_shows_assignments_while_rebalancing(tmp_path):
    """KIP-1043: from DescribeGroups v6 a group that is not (classic) is GROUP_ID_NOT_FOUND with
    a message; before v6 it is Dead with no error. A member's current assignment is described
    in every state (ClassicGroupMember.describeNoMetadata)."""
    async def scenario(server):
        service = server.group_coordinator
        body = {"groups": ["nosuch"], "include_authorized_operations": False}
        old = (await service.handle_describe_groups(_RequestV5(), body))["groups"][0]
        assert (old["error_code"], old["group_state"]) == (Errors.NONE, "Dead")
        new = (await service.handle_describe_groups(_RequestV6(), body))["groups"][0]
        assert (new["error_code"], new["error_message"], new["group_state"]) == \
            (Errors.GROUP_ID_NOT_FOUND, "Group nosuch not found.", "Dead")
        member_id, _ = await stable_single_member_group(server, "g")
        joining = asyncio.ensure_future(join(server, "g"))  # a second member: PreparingRebalance
        await wait_until(lambda: server.group_coordinator.coordinator.group("g").is_in_state(
            GroupState.PREPARING_REBALANCE), "the rebalance")
        described = (await service.handle_describe_groups(_RequestV6(), {"groups": ["g"],
                                                                        "include_authorized_operations": False}))
        group = described["groups"][0]
        assert group["group_state"] == "PreparingRebalance"
        assert {m["member_id"]: m["member_assignment"] for m in group["members"]}[member_id] == b"assignment"
        joining.cancel()
    run(tmp_path, scenario)


def test_offset_commits_keep_a_classic_members_session(tmp_path):
    """OffsetMetadataManager.commitOffset: in a Stable or PreparingRebalance group, a member's
    commit restarts its session timer as a heartbeat does."""
    async def scenario(server):
        service = server.group_coordinator
        await server.controller.create_topic("t", 1, {})
        joined = await join(server, "g", session_timeout_ms=600)
        member_id, generation = joined["member_id"], joined["generation_id"]
        await sync(server, "g", generation, member_id, [(member_id, b"a")])
        for offset in range(8):  # 1.6 s of commits, no heartbeat, with a 0.6 s session
            await asyncio.sleep(0.2)
            assert _commit_error(await service.handle_offset_commit(
                _Request(), _commit_body("g", generation, member_id, offset))) == Errors.NONE
        assert heartbeat(server, "g", generation, member_id) == Errors.NONE
    run(tmp_path, scenario)


def test_sync_group_v5_without_its_protocol_fields_is_inconsistent_before_its_group_id_is_looked_at(tmp_path):
    """KafkaApis refuses a SyncGroup v5+ missing the protocol type or name before the group
    coordinator sees the request, and so before the empty group id."""
    async def scenario(server):
        body = {"group_id": "", "generation_id": 1, "member_id": "m", "group_instance_id": None,
                "protocol_type": None, "protocol_name": "range", "assignments": []}
        missing = await server.group_coordinator.handle_sync_group(_RequestV5(), body)
        no_group = await server.group_coordinator.handle_sync_group(_RequestV5(), {**body, "protocol_type": "consumer"})
        return missing["error_code"], no_group["error_code"]
    assert run(tmp_path, scenario) == (Errors.INCONSISTENT_GROUP_PROTOCOL, Errors.INVALID_GROUP_ID)


def test_the_internal_topics_keep_their_partition_count_when_the_config_changes(tmp_path):
    """offsets.topic.num.partitions and transaction.state.log.num.partitions raised after the
    topics were made: the coordinators hash over the partitions the topics have (Kafka's
    metadataCache.numPartitions), so a group or transactional id the new count would send to a
    partition that does not exist is served, and its writes read back after a restart."""
    group = next(g for g in (f"g{i}" for i in range(100)) if partition_for_key(g, 3) == 2)
    transactional_id = next(t for t in (f"t{i}" for i in range(100)) if partition_for_key(t, 3) == 2)

    def commit(client: RawClient, offset: int) -> int:
        answer = client.request(8, 8, {"group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
                                       "group_instance_id": None, "topics": [{"name": "t", "partitions": [
                                           {"partition_index": 0, "committed_offset": offset,
                                            "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
        return answer["topics"][0]["partitions"][0]["error_code"]

    def committed(client: RawClient) -> int:
        answer = client.request(9, 8, {"groups": [{"group_id": group, "topics": None}], "require_stable": False})
        return answer["groups"][0]["topics"][0]["partitions"][0]["committed_offset"]

    def found(client: RawClient) -> None:
        for _ in range(100):  # the first ask makes the topics
            answer = client.request(10, 4, {"key_type": 0, "coordinator_keys": [group]})
            other = client.request(10, 4, {"key_type": 1, "coordinator_keys": [transactional_id]})
            if answer["coordinators"][0]["error_code"] == other["coordinators"][0]["error_code"] == 0:
                return
            time.sleep(0.05)
        raise AssertionError("no coordinator")

    def init_producer_id(client: RawClient) -> int:
        return client.request(22, 4, {"transactional_id": transactional_id, "transaction_timeout_ms": 60_000,
                                      "producer_id": -1, "producer_epoch": -1})["error_code"]

    counts = ({"offsets.topic.num.partitions": "2", "transaction.state.log.num.partitions": "2"},
              {"offsets.topic.num.partitions": "3", "transaction.state.log.num.partitions": "3"})
    for run_index, offset in enumerate((5, 7, None)):
        broker = BrokerOnThread(tmp_path / "data", counts[min(run_index, 1)])
        try:
            with RawClient(broker.bootstrap) as client:
                if run_index == 0:
                    create_topic(client, "t")
                found(client)
                if run_index > 0:
                    assert committed(client) == (5 if run_index == 1 else 7)
                if offset is not None:
                    assert (commit(client, offset), init_producer_id(client)) == (0, 0)
                assert broker.server.metadata.get("__consumer_offsets").num_partitions == 2
        finally:
            broker.stop()


def test_an_offset_fetch_pipelined_behind_commits_reads_the_last_of_them(tmp_path):
    """A client may fetch its committed offsets without waiting for its commits' answers (Java's
    commitAsync then committed()). Kafka reads a connection's requests one at a time, so the fetch
    reads them; franz ran it beside the commit still being written, and it read no offset."""
    commits = [{"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
                "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": offset,
                                                         "committed_leader_epoch": -1, "committed_metadata": ""}]}]}
               for offset in (5, 7)]
    fetches = [{"require_stable": stable, "groups": [{"group_id": "g", "topics": [
        {"name": "t", "partition_indexes": [0]}]}]} for stable in (False, True)]
    requests = [(8, 8, body) for body in commits] + [(9, 8, body) for body in fetches]
    broker = BrokerOnThread(tmp_path / "data")
    try:
        with RawClient(broker.bootstrap) as client:
            create_topic(client, "t")
            client.send_frames([encode_request(key, version, 100 + index, "pipelined", body)
                                for index, (key, version, body) in enumerate(requests)])
            answers = [decode_response(key, version, client.receive_frame())[1] for key, version, _ in requests]
    finally:
        broker.stop()
    assert [answer["topics"][0]["partitions"][0]["error_code"] for answer in answers[:2]] == [0, 0]
    assert [answer["groups"][0]["topics"][0]["partitions"][0]["committed_offset"] for answer in answers[2:]] == [7, 7]


@pytest.mark.parametrize("codec", [0, 1, 4])
def test_the_offsets_topic_is_written_with_offsets_topic_compression_codec(tmp_path, codec):
    """GroupCoordinatorConfig.offsetsTopicCompressionType: every batch the coordinator writes to
    __consumer_offsets carries the codec of offsets.topic.compression.codec (none, gzip, zstd)."""
    async def scenario(server):
        await server.controller.create_topic("t", 1, {})
        body = _commit_body("g", -1, "", 42)
        assert _commit_error(await server.group_coordinator.handle_offset_commit(_Request(), body)) == Errors.NONE
        codecs = set()
        for partition in range(3):
            log = server.replica_manager.log_of(("__consumer_offsets", partition))
            if log is not None and log.log_end_offset > 0:
                fetched = log.read(0, 1 << 20, FetchIsolation.LOG_END, True)
                codecs |= {batch.compression_type for batch in fetched.records.batches()}
        return codecs
    assert run(tmp_path, scenario, offsets_topic_compression_codec=str(codec)) == {CompressionType(codec)}
