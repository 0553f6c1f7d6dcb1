"""Online migration between classic and consumer groups (KIP-848) on a real in-process KafkaServer:
the upgrade of a classic group by a ConsumerGroupHeartbeat, classic members inside a consumer
group (JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit), the downgrade when the last
consumer-protocol member leaves, the records each conversion writes, and what a restart loads.

Requests go through the group coordinator service's handlers, as KafkaApis calls them."""

from __future__ import annotations

import pytest

from franz.common.config_def import ConfigError
from franz.coordinator.group import consumer_protocol
from franz.coordinator.group import group_coordinator_record_serde as serde
from franz.coordinator.group.group_metadata import GroupState
from franz.protocol.errors import Errors
from tests.coordinator.group.test_consumer_group_coordinator import _partitions, _topic, beat
from tests.coordinator.group.test_group_coordinator import _config, group_records, run, wait_until


class _Request:
    def __init__(self, api_version: int) -> None:
        self.api_version = api_version
    listener_name = "PLAINTEXT"
    client_address = ("127.0.0.1", 1)
    client_id = "classic-client"


def _subscription(topics=("t",), owned=None, version: int = 3, user_data=None) -> bytes:
    return consumer_protocol.serialize_subscription(topics, version, owned, user_data=user_data)


def _join_body(member_id: str = "", protocols=None, session_timeout_ms: int = 10_000, instance_id=None,
               protocol_type: str = "consumer") -> dict:
    protocols = protocols if protocols is not None else [("range", _subscription())]
    return {"group_id": "g", "session_timeout_ms": session_timeout_ms, "rebalance_timeout_ms": 10_000,
            "member_id": member_id, "group_instance_id": instance_id, "protocol_type": protocol_type,
            "protocols": [{"name": n, "metadata": m} for n, m in protocols], "reason": None}


async def classic_join(server, **kwargs) -> dict:
    """A KIP-394 join: the member id round trip, then the join."""
    service = server.group_coordinator
    first = await service.handle_join_group(_Request(9), _join_body(**kwargs))
    if first["error_code"] != Errors.MEMBER_ID_REQUIRED:
        return first
    return await service.handle_join_group(_Request(9), _join_body(**{**kwargs, "member_id": first["member_id"]}))


async def classic_sync(server, member_id: str, generation: int, assignments=(), protocol_name="range",
                       protocol_type: str = "consumer") -> dict:
    return await server.group_coordinator.handle_sync_group(_Request(5), {
        "group_id": "g", "generation_id": generation, "member_id": member_id, "group_instance_id": None,
        "protocol_type": protocol_type, "protocol_name": protocol_name,
        "assignments": [{"member_id": m, "assignment": a} for m, a in assignments]})


async def classic_heartbeat(server, member_id: str, generation: int) -> int:
    answer = await server.group_coordinator.handle_heartbeat(_Request(4), {
        "group_id": "g", "generation_id": generation, "member_id": member_id, "group_instance_id": None})
    return answer["error_code"]


async def classic_leave(server, *member_ids: str) -> dict:
    return await server.group_coordinator.handle_leave_group(_Request(5), {
        "group_id": "g", "members": [{"member_id": m, "group_instance_id": None, "reason": None} for m in member_ids]})


async def stable_classic_pair(server) -> tuple[str, str, int]:
    """A classic group of two members, the leader given partitions 0-1 and the follower 2-3 of t."""
    service = server.group_coordinator
    first = await classic_join(server)
    leader = first["member_id"]
    await classic_sync(server, leader, first["generation_id"], [(leader, b"")])
    # The second member's join parks until the leader joins again (its heartbeat says to).
    import asyncio
    pending = asyncio.ensure_future(classic_join(server))
    await wait_until(lambda: service.coordinator.group("g").is_in_state(GroupState.PREPARING_REBALANCE), "rebalance")
    assert await classic_heartbeat(server, leader, first["generation_id"]) == Errors.REBALANCE_IN_PROGRESS
    again = await service.handle_join_group(_Request(9), _join_body(member_id=leader))
    follower = (await pending)["member_id"]
    generation = again["generation_id"]
    assignments = [(leader, consumer_protocol.serialize_assignment({"t": [0, 1]}, 3)),
                   (follower, consumer_protocol.serialize_assignment({"t": [2, 3]}, 3))]
    synced = await asyncio.gather(classic_sync(server, leader, generation, assignments),
                                  classic_sync(server, follower, generation))
    assert [s["error_code"] for s in synced] == [Errors.NONE, Errors.NONE]
    return leader, follower, generation


def test_a_consumer_heartbeat_upgrades_a_classic_group_whose_members_keep_their_partitions(tmp_path):
    async def scenario(server):
        topic = await _topic(server, "t", 4)
        leader, follower, generation = await stable_classic_pair(server)
        joined = await beat(server, "modern", 0)
        group = server.group_coordinator.consumer_groups.group("g")
        members = {m.member_id: (m.member_epoch, m.state.value, sorted(m.assigned.get(topic, ())),
                                 m.uses_classic_protocol) for m in group.members.values()}
        # The classic members hear of the new target at their next heartbeat.
        told = await classic_heartbeat(server, leader, generation)
        records = [(key.record_type if isinstance(key, serde.ConsumerGroupRecordKey) else type(key).__name__,
                    value is None) for key, value in group_records(server, "g")]
        return (joined["error_code"], joined["member_epoch"], _partitions(joined), generation, members, told,
                server.group_coordinator.coordinator.group("g"), records)

    (error, epoch, assigned, generation, members, told, classic, records) = run(tmp_path, scenario)
    assert (error, epoch, assigned) == (Errors.NONE, generation + 1, {})  # every partition still held
    leader_state, follower_state = sorted(v for k, v in members.items() if k != "modern")
    assert (leader_state, follower_state) == ((generation, "stable", [0, 1], True), (generation, "stable", [2, 3], True))
    assert members["modern"][3] is False
    assert told == Errors.REBALANCE_IN_PROGRESS and classic is None
    # The classic group's tombstone, then (in the same batch) the consumer group's records, none a tombstone.
    tombstone = records.index(("GroupMetadataKey", True))
    assert all(kind != "GroupMetadataKey" for kind, _ in records[tombstone + 1:])
    assert {kind for kind, _ in records[tombstone + 1:]} == {3, 5, 6, 7, 8}  # 4.1+: no subscription metadata
    assert not any(deleted for _, deleted in records[tombstone + 1:])

    async def after(server):
        """Restarted: the classic members are loaded as classic members, with what they joined with."""
        group = server.group_coordinator.consumer_groups.group("g")
        classic = [m for m in group.members.values() if m.uses_classic_protocol]
        told = [await classic_heartbeat(server, m.member_id, generation) for m in classic]
        return ([(m.classic.session_timeout_ms, [name for name, _ in m.classic.supported_protocols]) for m in classic],
                told, server.group_coordinator.coordinator.group("g"))
    assert run(tmp_path, after) == ([(10_000, ["range"])] * 2, [Errors.REBALANCE_IN_PROGRESS] * 2, None)


def test_classic_members_rejoin_the_consumer_group_and_are_answered_by_the_broker(tmp_path):
    async def scenario(server):
        topic = await _topic(server, "t", 4)
        leader, follower, generation = await stable_classic_pair(server)
        await beat(server, "modern", 0)
        # The leader rejoins having revoked everything (eager): it moves to the new epoch.
        rejoined = await server.group_coordinator.handle_join_group(_Request(9), _join_body(member_id=leader))
        synced = await classic_sync(server, leader, rejoined["generation_id"])
        wrong = await classic_sync(server, leader, rejoined["generation_id"] - 1)
        other_name = await classic_sync(server, leader, rejoined["generation_id"], protocol_name="roundrobin")
        modern_as_classic = await classic_heartbeat(server, "modern", rejoined["generation_id"])
        return (rejoined, consumer_protocol.deserialize_assignment(synced["assignment"]).partitions,
                consumer_protocol.deserialize_version(synced["assignment"]), wrong["error_code"],
                other_name["error_code"], modern_as_classic, topic)

    rejoined, partitions, version, wrong, other_name, modern_as_classic, _ = run(tmp_path, scenario)
    assert (rejoined["error_code"], rejoined["protocol_type"], rejoined["protocol_name"], rejoined["leader"],
            rejoined["members"]) == (Errors.NONE, "consumer", "range", "", [])
    # Its target under the uniform assignor among three members; it gives nothing up it does not own.
    assert len(partitions) <= 1 and version == 3
    assert (wrong, other_name, modern_as_classic) == (Errors.ILLEGAL_GENERATION, Errors.INCONSISTENT_GROUP_PROTOCOL,
                                                      Errors.UNKNOWN_MEMBER_ID)


def test_a_classic_member_joins_a_consumer_group_and_commits_at_its_generation(tmp_path):
    async def scenario(server):
        topic = await _topic(server, "t", 2)
        await beat(server, "modern", 0)
        service = server.group_coordinator
        first = await service.handle_join_group(_Request(9), _join_body(protocols=[
            ("range", _subscription(version=1)), ("roundrobin", _subscription(version=1))]))
        joined = await classic_join(server, member_id=first["member_id"], protocols=[
            ("range", _subscription(version=1)), ("roundrobin", _subscription(version=1))])
        member_id, generation = joined["member_id"], joined["generation_id"]
        # modern gives one partition up; the classic member gets it once it joins again.
        revoke = await beat(server, "modern", 2, owned=[(topic, [0, 1])])
        kept = _partitions(revoke)[topic]
        await beat(server, "modern", 2, owned=[(topic, kept)])
        behind = await classic_heartbeat(server, member_id, generation)
        again = await classic_join(server, member_id=member_id, protocols=[
            ("range", _subscription(version=1)), ("roundrobin", _subscription(version=1))])
        synced = await classic_sync(server, member_id, again["generation_id"])

        def commit(generation_id: int, version: int = 8) -> int:
            return service.handle_offset_commit(_Request(version), {
                "group_id": "g", "generation_id_or_member_epoch": generation_id, "member_id": member_id,
                "group_instance_id": None, "retention_time_ms": -1, "topics": [{"name": "t", "partitions": [
                    {"partition_index": p, "committed_offset": 3, "committed_leader_epoch": -1,
                     "committed_metadata": ""} for p in range(2) if p not in kept]}]})
        committed = (await commit(again["generation_id"]))["topics"][0]["partitions"][0]["error_code"]
        ahead = (await commit(again["generation_id"] + 1))["topics"][0]["partitions"][0]["error_code"]
        unsupported = await service.handle_join_group(_Request(9), _join_body(protocols=[
            ("cooperative-sticky", _subscription())]))
        return (first["error_code"], joined["error_code"], generation, behind, again["generation_id"],
                consumer_protocol.deserialize_assignment(synced["assignment"]).partitions,
                consumer_protocol.deserialize_version(synced["assignment"]), kept, committed, ahead,
                unsupported["error_code"])

    (first, joined, generation, behind, epoch, partitions, version, kept, committed, ahead,
     unsupported) = run(tmp_path, scenario)
    # It joins at the new epoch, waiting for a partition modern still holds; once modern has
    # released it, its heartbeat says to join again to collect it.
    assert (first, joined, generation, behind) == (Errors.MEMBER_ID_REQUIRED, Errors.NONE, 3,
                                                   Errors.REBALANCE_IN_PROGRESS)
    assert epoch == 3 and partitions == (("t", tuple(p for p in range(2) if p not in kept)),) and version == 1
    assert (committed, ahead) == (Errors.NONE, Errors.ILLEGAL_GENERATION)
    assert unsupported == Errors.INCONSISTENT_GROUP_PROTOCOL  # no protocol every classic member has


def test_the_last_consumer_member_leaving_downgrades_the_group_and_a_restart_loads_it_classic(tmp_path):
    async def scenario(server):
        topic = await _topic(server, "t", 2)
        await beat(server, "modern", 0)
        joined = await classic_join(server)
        member_id = joined["member_id"]
        await beat(server, "modern", 2, owned=[(topic, [0, 1])])
        left = await beat(server, "modern", -1)
        classic = server.group_coordinator.coordinator.group("g")
        assignment = consumer_protocol.deserialize_assignment(classic.members[member_id].assignment)
        records = group_records(server, "g")
        return (left["error_code"], server.group_coordinator.consumer_groups.group("g"), classic.state,
                classic.generation_id, classic.protocol_name, assignment.partitions, member_id, records)

    left, consumer_group, state, generation, protocol, partitions, member_id, records = run(tmp_path, scenario)
    assert (left, consumer_group, state, protocol) == (Errors.NONE, None, GroupState.PREPARING_REBALANCE, "range")
    # The generation is the group epoch (modern joined: 2, the classic member: 3), and the member
    # holds its target of that epoch, half; the rebalance the downgrade starts gives it the rest.
    assert generation == 3 and len(partitions) == 1 and len(partitions[0][1]) == 1
    # The last batch: a tombstone for every record of the consumer group (3 of the group, 3 per
    # member), then the classic group's record.
    *rest, (last_key, last_value) = records
    assert isinstance(last_key, serde.GroupMetadataKey) and last_value is not None
    tombstones = rest[-9:]
    assert all(isinstance(key, serde.ConsumerGroupRecordKey) and value is None for key, value in tombstones)
    assert {key.record_type for key, _ in tombstones} == {3, 4, 5, 6, 7, 8}
    assert {key.member_id for key, _ in tombstones} == {None, "modern", member_id}

    async def after(server):
        classic = server.group_coordinator.coordinator.group("g")
        return classic.state, classic.generation_id, list(classic.members), server.group_coordinator.consumer_groups.group(
            "g")
    assert run(tmp_path, after) == (GroupState.STABLE, 3, [member_id], None)


def test_a_classic_member_leaving_a_mixed_group_keeps_it_a_consumer_group(tmp_path):
    async def scenario(server):
        await _topic(server, "t", 2)
        await beat(server, "modern", 0)
        joined = await classic_join(server)
        left = await classic_leave(server, joined["member_id"], "nobody")
        group = server.group_coordinator.consumer_groups.group("g")
        return [m["error_code"] for m in left["members"]], sorted(group.members), group.group_epoch
    assert run(tmp_path, scenario) == ([Errors.NONE, Errors.UNKNOWN_MEMBER_ID], ["modern"], 4)


def test_a_classic_member_that_goes_silent_is_fenced_after_its_own_session_timeout(tmp_path):
    async def scenario(server):
        await _topic(server, "t", 2)
        await beat(server, "modern", 0)
        joined = await classic_join(server, session_timeout_ms=200)
        group = server.group_coordinator.consumer_groups.group("g")
        await wait_until(lambda: joined["member_id"] not in group.members, "the classic member's session to expire")
        return sorted(group.members)
    # The group's own session timeout is 45 s: only the member's 200 ms could fence it in time.
    assert run(tmp_path, scenario) == ["modern"]


@pytest.mark.parametrize("policy", ["disabled", "downgrade"])
def test_a_policy_without_upgrade_leaves_a_classic_group_classic(tmp_path, policy):
    async def scenario(server):
        await _topic(server, "t", 4)
        await stable_classic_pair(server)
        refused = await beat(server, "modern", 0)
        return refused["error_code"], server.group_coordinator.coordinator.group("g").state
    assert run(tmp_path, scenario, **{"group.consumer.migration.policy": policy}) == (Errors.GROUP_ID_NOT_FOUND,
                                                                                    GroupState.STABLE)


@pytest.mark.parametrize("assignment, protocol_type", [
    (consumer_protocol.serialize_assignment({"t": [0]}, 3, user_data=b"custom"), "consumer"),  # lost in conversion
    (b"\x00", "consumer"),  # not an assignment
    (b"", "connect"),  # not the consumer embedded protocol
])
def test_a_classic_group_that_cannot_be_converted_stays_classic(tmp_path, assignment, protocol_type):
    async def scenario(server):
        await _topic(server, "t", 1)
        service = server.group_coordinator
        first = await classic_join(server, protocol_type=protocol_type)
        synced = await classic_sync(server, first["member_id"], first["generation_id"],
                                    [(first["member_id"], assignment)], protocol_type=protocol_type)
        assert synced["error_code"] == Errors.NONE
        refused = await beat(server, "modern", 0)
        return refused["error_code"], service.coordinator.group("g").state, service.consumer_groups.group("g")
    assert run(tmp_path, scenario) == (Errors.GROUP_ID_NOT_FOUND, GroupState.STABLE, None)


def test_the_policy_is_case_insensitive_and_a_bad_one_is_refused_naming_the_key(tmp_path):
    from franz.coordinator.group.consumer_group_coordinator import ConsumerGroupConfig
    from franz.coordinator.group.group_migration import ConsumerGroupMigrationPolicy

    config = ConsumerGroupConfig.from_kafka_config(_config(tmp_path, **{"group.consumer.migration.policy": "UPGRADE"}))
    assert config.migration_policy is ConsumerGroupMigrationPolicy.UPGRADE
    assert not config.migration_policy.downgrade_enabled
    with pytest.raises(ConfigError, match="group.consumer.migration.policy"):
        _config(tmp_path, **{"group.consumer.migration.policy": "sideways"})


def test_a_static_classic_member_replacing_the_last_consumer_member_downgrades_the_group_at_once(tmp_path):
    async def scenario(server):
        topic = await _topic(server, "t", 2)
        await beat(server, "modern", 0, instance_id="i-1")
        joined = await classic_join(server)
        await beat(server, "modern", 2, owned=[(topic, [0, 1])], instance_id="i-1")
        await beat(server, "modern", -2, instance_id="i-1")  # a restart: it comes back as a classic consumer
        back = await classic_join(server, instance_id="i-1")
        classic = server.group_coordinator.coordinator.group("g")
        synced = await classic_sync(server, back["member_id"], back["generation_id"])
        return (back["error_code"], back["generation_id"], classic.generation_id, classic.state,
                server.group_coordinator.consumer_groups.group("g"), sorted(classic.members),
                sorted([joined["member_id"], back["member_id"]]),
                consumer_protocol.deserialize_assignment(synced["assignment"]).partitions)

    error, answered, generation, state, consumer_group, members, expected, partitions = run(tmp_path, scenario)
    # The target was current: the member takes its predecessor's partition in a Stable classic group
    # whose generation is the one it was answered.
    assert (error, consumer_group, state, members) == (Errors.NONE, None, GroupState.STABLE, expected)
    assert answered == generation and len(partitions) == 1 and len(partitions[0][1]) == 1


def test_a_bad_subscription_from_a_static_classic_member_leaves_the_member_it_names_alone(tmp_path):
    async def scenario(server):
        await _topic(server, "t", 2)
        await beat(server, "modern", 0, instance_id="i-1")
        await classic_join(server)
        refused = await classic_join(server, instance_id="i-1", protocols=[("range", b"\x00\x03\xff")])
        group = server.group_coordinator.consumer_groups.group("g")
        still = await beat(server, "modern", 2, topics=None, owned=None, rebalance_timeout_ms=-1, instance_id="i-1")
        return refused["error_code"], refused["member_id"], group.static_member("i-1").member_id, still["error_code"]
    assert run(tmp_path, scenario) == (Errors.INCONSISTENT_GROUP_PROTOCOL, "", "modern", Errors.NONE)


def test_a_consumer_group_left_with_classic_members_only_downgrades_at_the_next_leave(tmp_path):
    """With downgrades off, the last consumer-protocol member's leave leaves a consumer group of
    classic members; once they are allowed, the next member to leave turns it classic."""
    async def before(server):
        await _topic(server, "t", 2)
        await beat(server, "modern", 0)
        first = await classic_join(server)
        second = await classic_join(server)
        await beat(server, "modern", -1)
        group = server.group_coordinator.consumer_groups.group("g")
        return first["member_id"], second["member_id"], sorted(m.uses_classic_protocol for m in group.members.values())

    first, second, kinds = run(tmp_path, before, **{"group.consumer.migration.policy": "upgrade"})
    assert kinds == [True, True]

    async def after(server):
        left = await classic_leave(server, first)
        classic = server.group_coordinator.coordinator.group("g")
        return left["error_code"], server.group_coordinator.consumer_groups.group("g"), list(classic.members)
    assert run(tmp_path, after) == (Errors.NONE, None, [second])


def test_a_downgrade_that_cannot_be_made_refuses_the_leave_and_fences_nobody(tmp_path):
    """The classic group would select roundrobin, whose metadata from one member is no
    ConsumerProtocol subscription: Kafka answers GROUP_ID_NOT_FOUND and keeps the group."""
    async def scenario(server):
        await _topic(server, "t", 2)
        await beat(server, "modern", 0)
        await classic_join(server, protocols=[("range", _subscription()), ("roundrobin", b"\xff\xff")])
        for _ in range(2):
            await classic_join(server, protocols=[("roundrobin", _subscription()), ("range", _subscription())])
        left = await beat(server, "modern", -1)
        group = server.group_coordinator.consumer_groups.group("g")
        return left["error_code"], len(group.members), server.group_coordinator.coordinator.group("g")
    assert run(tmp_path, scenario) == (Errors.GROUP_ID_NOT_FOUND, 4, None)


def test_a_join_group_v0_member_gets_its_session_timeout_as_rebalance_timeout(tmp_path):
    async def scenario(server):
        await _topic(server, "t", 2)
        await beat(server, "modern", 0)
        body = _join_body(session_timeout_ms=6000)
        del body["rebalance_timeout_ms"], body["reason"]
        body["rebalance_timeout_ms"] = -1  # what a v0 request decodes to
        joined = await server.group_coordinator.handle_join_group(_Request(0), body)
        member = server.group_coordinator.consumer_groups.group("g").members[joined["member_id"]]
        import asyncio
        await asyncio.sleep(0.3)  # a sync timer of max(-1, 0) ms would have fenced it by now
        return joined["error_code"], member.rebalance_timeout_ms, joined["member_id"] in (
            server.group_coordinator.consumer_groups.group("g").members)
    assert run(tmp_path, scenario) == (Errors.NONE, 6000, True)


@pytest.mark.parametrize("last", ["classic", "consumer"])
def test_a_log_with_live_records_of_both_kinds_loads_the_kind_written_last(tmp_path, last):
    """What a conversion whose write failed may leave behind."""
    async def before(server):
        await _topic(server, "t", 1)
        await beat(server, "modern", 0)
        service = server.group_coordinator
        metadata = {"protocol_type": "consumer", "generation": 4, "protocol": "range", "leader": None,
                    "current_state_timestamp": -1, "members": []}
        classic_record = (serde.group_metadata_key("g"), serde.group_metadata_value(metadata))
        if last == "classic":
            await service._append("g", [classic_record])
        else:
            await service._append("g", [classic_record])
            await beat(server, "modern", 2, topics=("t", "u"), owned=None)  # a later consumer group record

    run(tmp_path, before)

    async def after(server):
        service = server.group_coordinator
        classic = service.coordinator.group("g")
        return (None if classic is None else classic.generation_id,
                service.consumer_groups.group("g") is not None)
    assert run(tmp_path, after) == ((4, False) if last == "classic" else (None, True))


def test_a_classic_member_whose_join_could_not_be_written_still_has_a_session_to_expire(tmp_path):
    from franz.coordinator.group.group_metadata import GroupError

    async def scenario(server):
        await _topic(server, "t", 2)
        await beat(server, "modern", 0)
        coordinator = server.group_coordinator.consumer_groups
        write = coordinator._write

        async def failing(group_id, entries):
            raise GroupError(Errors.NOT_COORDINATOR, "the partition moved")
        coordinator._write = failing
        try:
            joined = await classic_join(server, session_timeout_ms=200)
        finally:
            coordinator._write = write
        group = coordinator.group("g")
        stranded = [m.member_id for m in group.members.values() if m.uses_classic_protocol]
        await wait_until(lambda: not any(m.uses_classic_protocol for m in group.members.values()),
                         "the unanswered member's session to expire")
        return joined["error_code"], len(stranded)
    assert run(tmp_path, scenario) == (Errors.NOT_COORDINATOR, 1)


def test_a_refused_upgrade_still_tells_parked_classic_joins_to_join_again(tmp_path):
    """convertToConsumerGroup answers parked joins REBALANCE_IN_PROGRESS before it converts;
    the heartbeat refused afterwards (the group is full) leaves the classic group, whose member
    joins it again."""
    import asyncio

    async def scenario(server):
        await _topic(server, "t", 2)
        service = server.group_coordinator
        first = await classic_join(server)
        await classic_sync(server, first["member_id"], first["generation_id"], [(first["member_id"], b"")])
        parked = asyncio.ensure_future(classic_join(server))  # parks: the leader has not joined again
        await wait_until(lambda: service.coordinator.group("g").is_in_state(GroupState.PREPARING_REBALANCE),
                         "the rebalance")
        refused = await beat(server, "modern", 0)
        answered = await asyncio.wait_for(parked, 5)
        return refused["error_code"], answered["error_code"], service.coordinator.group("g") is not None
    assert run(tmp_path, scenario, group_consumer_max_size="2") == (
        Errors.GROUP_MAX_SIZE_REACHED, Errors.REBALANCE_IN_PROGRESS, True)


def test_after_a_restart_classic_members_get_the_groups_session_until_they_heartbeat(tmp_path):
    """GroupMetadataManager.onLoaded arms every loaded member's session at the group's timeout;
    a classic member's own (10 s here) comes back with its next heartbeat."""
    import asyncio

    async def before(server):
        await _topic(server, "t", 4)
        leader, _follower, generation = await stable_classic_pair(server)
        await beat(server, "modern", 0)
        return leader, generation

    leader, generation = run(tmp_path, before)

    async def after(server):
        coordinator = server.group_coordinator.consumer_groups
        loop = asyncio.get_running_loop()

        def remaining_s() -> float:
            return coordinator._timers.deadline(("g", leader, "session")) - loop.time()
        loaded = remaining_s()
        await classic_heartbeat(server, leader, generation)
        return loaded, remaining_s()
    loaded, heartbeaten = run(tmp_path, after)
    assert 30 < loaded <= 45 and heartbeaten <= 10
