"""KIP-848 consumer groups on a real in-process KafkaServer: ConsumerGroupHeartbeat joins,
epochs, revocation before reassignment, fencing by session and rebalance timeouts, static
members, regex subscriptions, and the group's offsets (OffsetCommit v9 at the member epoch).

Requests go through the group coordinator's handlers on the server's own loop."""

from __future__ import annotations

import asyncio

import pytest

from franz.protocol.codec import decode_response, encode_response
from franz.protocol.errors import Errors
from franz.storage.unified_log import FetchIsolation
from tests.coordinator.group.test_group_coordinator import group_records, run, wait_until


class _Request:
    def __init__(self, api_version: int = 1) -> None:
        self.api_version = api_version
    listener_name = "PLAINTEXT"
    client_address = ("127.0.0.1", 1)
    client_id = "c"


async def _topic(server, name: str, partitions: int) -> bytes:
    await server.group_coordinator.controller.create_topic(name, partitions, {})
    return server.group_coordinator.metadata.get(name).topic_id.bytes


async def beat(server, member_id: str, epoch: int, group_id: str = "g", topics=("t",), owned=(), regex=None,
               instance_id=None, assignor=None, rebalance_timeout_ms: int = 10_000, version: int = 1) -> dict:
    """A heartbeat; `owned` is [(topic id, [partitions])], or None for 'unchanged' (not sent)."""
    body = {"group_id": group_id, "member_id": member_id, "member_epoch": epoch, "instance_id": instance_id,
            "rack_id": None, "rebalance_timeout_ms": rebalance_timeout_ms,
            "subscribed_topic_names": None if topics is None else list(topics), "subscribed_topic_regex": regex,
            "server_assignor": assignor,
            "topic_partitions": None if owned is None else [{"topic_id": t, "partitions": list(ps)} for t, ps in owned]}
    return await server.group_coordinator.handle_consumer_group_heartbeat(_Request(version), body)


def _partitions(answer: dict) -> dict[bytes, list[int]]:
    assert answer["assignment"] is not None
    return {tp["topic_id"]: tp["partitions"] for tp in answer["assignment"]["topic_partitions"]}


def test_a_member_joins_gets_every_partition_and_stays_stable(tmp_path):
    async def scenario(server):
        topic = await _topic(server, "t", 4)
        first = await beat(server, "m1", 0)  # a new group is at epoch 1: the first join makes it 2
        assert first["error_code"] == Errors.NONE and first["member_epoch"] == 2
        assert _partitions(first) == {topic: [0, 1, 2, 3]} and first["heartbeat_interval_ms"] == 5000
        again = await beat(server, "m1", 2, topics=None, owned=None, rebalance_timeout_ms=-1)
        assert (again["error_code"], again["member_epoch"], again["assignment"]) == (Errors.NONE, 2, None)
        return server.group_coordinator.consumer_groups.group("g").state.value
    assert run(tmp_path, scenario) == "Stable"


def test_a_new_group_is_at_epoch_1_and_a_first_join_takes_it_to_2(tmp_path):
    """KAFKA-20268 (4.3; ConsumerGroupHeartbeatRequestTest answers a first join epoch 2): a member
    subscribing to nothing bumps nothing, now that a group at epoch 0 is no more: it reconciles
    to the initial target at epoch 1, the group writes no epoch record, and a restart loads it at
    epochs 1/1."""
    async def before(server):
        await _topic(server, "t", 1)
        joined = await beat(server, "m", 0)
        quiet = await beat(server, "q", 0, group_id="quiet", topics=())
        described = (await server.group_coordinator.handle_consumer_group_describe(
            _Request(1), {"group_ids": ["quiet"], "include_authorized_operations": False}))["groups"][0]
        return (joined["member_epoch"], quiet["member_epoch"], described["group_epoch"],
                described["assignment_epoch"], {key.record_type for key, _ in group_records(server, "quiet")})
    assert run(tmp_path, before) == (2, 1, 1, 1, {5, 8})

    async def after(server):
        group = server.group_coordinator.consumer_groups.group("quiet")
        again = await beat(server, "q", 1, group_id="quiet", topics=None, owned=None, rebalance_timeout_ms=-1)
        return group.group_epoch, group.assignment_epoch, group.state.value, again["error_code"], again["member_epoch"]
    assert run(tmp_path, after) == (1, 1, "Stable", Errors.NONE, 1)


def test_a_member_changing_its_server_assignor_is_written_and_bumps_no_epoch(tmp_path):
    """4.3's hasMemberSubscriptionChanged: the member's record is written anew, but only a change
    of its subscribed topic names bumps the group epoch; the assignor it asks for counts at the
    next target the group computes for another reason."""
    async def scenario(server):
        await _topic(server, "t", 4)
        joined = await beat(server, "m1", 0, assignor="uniform")
        changed = await beat(server, "m1", 2, topics=None, owned=None, assignor="range")
        group = server.group_coordinator.consumer_groups.group("g")
        member_records = [value for key, value in group_records(server, "g") if key.record_type == 5]
        return (joined["member_epoch"], changed["member_epoch"], group.group_epoch, group.assignment_epoch,
                group.members["m1"].server_assignor, b"range" in member_records[-1])
    assert run(tmp_path, scenario) == (2, 2, 2, 2, "range", True)


def test_a_member_leaving_a_topic_revokes_its_partitions_before_any_new_target(tmp_path):
    """4.3's hasSubscriptionChanged (CurrentAssignmentBuilder.updateCurrentAssignment): with the
    next target held back by the assignment interval (KIP-1263), a member that unsubscribes from
    a topic is asked to revoke that topic's partitions in the same heartbeat, at its epoch."""
    async def scenario(server):
        t = await _topic(server, "t", 1)
        u = await _topic(server, "u", 1)
        joined = await beat(server, "m", 0, topics=("t", "u"))
        left = await beat(server, "m", joined["member_epoch"], topics=("t",), owned=[(t, [0]), (u, [0])])
        group = server.group_coordinator.consumer_groups.group("g")
        member = group.members["m"]
        return (joined["member_epoch"], _partitions(joined) == {t: [0], u: [0]}, left["member_epoch"],
                _partitions(left) == {t: [0]}, (group.group_epoch, group.assignment_epoch), member.state.value,
                member.pending_revocation == {u: frozenset({0})})
    assert run(tmp_path, scenario, group_consumer_assignment_interval_ms="60000",
               group_consumer_max_assignment_interval_ms="60000") == (2, True, 2, True, (3, 2), "unrevoked_partitions",
                                                                      True)


def test_a_second_member_gets_partitions_only_after_the_first_revokes_them(tmp_path):
    async def scenario(server):
        topic = await _topic(server, "t", 4)
        await beat(server, "m1", 0)
        joined = await beat(server, "m2", 0)
        assert joined["member_epoch"] == 3 and _partitions(joined) == {}  # all still held by m1
        revoke = await beat(server, "m1", 2, owned=[(topic, [0, 1, 2, 3])])
        kept = _partitions(revoke)[topic]
        assert revoke["member_epoch"] == 2 and len(kept) == 2  # revoke two, epoch unchanged
        assert server.group_coordinator.consumer_groups.group("g").state.value == "Reconciling"
        done = await beat(server, "m1", 2, owned=[(topic, kept)])
        assert done["member_epoch"] == 3
        taken = await beat(server, "m2", 3, owned=[])
        assert sorted(_partitions(taken)[topic] + kept) == [0, 1, 2, 3]
        return server.group_coordinator.consumer_groups.group("g").state.value
    assert run(tmp_path, scenario) == "Stable"


def test_stale_epochs_unknown_members_and_bad_requests_get_kafkas_error_codes(tmp_path):
    async def scenario(server):
        await _topic(server, "t", 2)
        await beat(server, "m1", 0)
        return [
            (await beat(server, "m1", 7))["error_code"],  # ahead of the coordinator
            (await beat(server, "nobody", 1))["error_code"],
            (await beat(server, "", 0))["error_code"],  # v1: the client makes its member id
            (await beat(server, "m2", 0, rebalance_timeout_ms=-1))["error_code"],
            (await beat(server, "m2", 0, topics=None))["error_code"],  # an empty list is a join to nothing
            (await beat(server, "m2", 0, owned=None))["error_code"],
            (await beat(server, "m2", -3))["error_code"],
            (await beat(server, "m2", 0, assignor="sticky"))["error_code"],
            (await beat(server, "m2", 0, topics=(), regex="(unclosed"))["error_code"],
            (await beat(server, "m1", 1, group_id=""))["error_code"],
            (await beat(server, "m1", -1, group_id="other"))["error_code"],
        ]
    assert run(tmp_path, scenario) == [Errors.FENCED_MEMBER_EPOCH, Errors.UNKNOWN_MEMBER_ID, Errors.INVALID_REQUEST,
                                       Errors.INVALID_REQUEST, Errors.INVALID_REQUEST, Errors.INVALID_REQUEST,
                                       Errors.INVALID_REQUEST, Errors.UNSUPPORTED_ASSIGNOR,
                                       Errors.INVALID_REGULAR_EXPRESSION, Errors.INVALID_REQUEST,
                                       Errors.GROUP_ID_NOT_FOUND]


def test_v0_gives_a_member_id_and_the_previous_epoch_is_accepted_with_a_subset_of_partitions(tmp_path):
    async def scenario(server):
        topic = await _topic(server, "t", 2)
        first = await beat(server, "", 0, version=0)
        member_id = first["member_id"]
        assert member_id and first["member_epoch"] == 2
        await beat(server, "other", 0)  # epoch 3; member_id must give up a partition
        step = await beat(server, member_id, 2, owned=[(topic, [0, 1])], version=0)
        kept = _partitions(step)[topic]
        moved = await beat(server, member_id, 2, owned=[(topic, kept)], version=0)
        assert moved["member_epoch"] == 3
        # The answer with epoch 3 was lost: epoch 2 with a subset of the assignment is accepted.
        lost = await beat(server, member_id, 2, owned=[(topic, kept)], version=0)
        wrong = await beat(server, member_id, 2, owned=[(topic, [0, 1])], version=0)
        return lost["error_code"], lost["member_epoch"], wrong["error_code"]
    assert run(tmp_path, scenario) == (Errors.NONE, 3, Errors.FENCED_MEMBER_EPOCH)


def test_a_member_that_stops_heartbeating_is_fenced_and_its_partitions_move(tmp_path):
    async def scenario(server):
        topic = await _topic(server, "t", 2)
        await beat(server, "m1", 0)
        await beat(server, "m2", 0)
        group = server.group_coordinator.consumer_groups.group("g")
        # m2 keeps heartbeating; m1 goes silent and its session (300 ms here) expires.
        deadline = asyncio.get_running_loop().time() + 10
        epoch = 3
        while "m1" in group.members:
            assert asyncio.get_running_loop().time() < deadline, "m1 was never fenced"
            answer = await beat(server, "m2", epoch, owned=None, topics=None, rebalance_timeout_ms=-1)
            epoch = answer["member_epoch"]
            await asyncio.sleep(0.05)
        answer = await beat(server, "m2", epoch, owned=[(topic, [])])
        return _partitions(answer), answer["member_epoch"]
    # A session that short needs the broker's bounds lowered, as Kafka's GroupCoordinatorConfig requires.
    partitions, epoch = run(tmp_path, scenario, group_consumer_session_timeout_ms="300",
                            group_consumer_min_session_timeout_ms="300", group_consumer_heartbeat_interval_ms="100",
                            group_consumer_min_heartbeat_interval_ms="100")
    assert sorted(next(iter(partitions.values()))) == [0, 1] and epoch == 4


def test_a_member_that_does_not_revoke_within_its_rebalance_timeout_is_fenced(tmp_path):
    async def scenario(server):
        topic = await _topic(server, "t", 2)
        await beat(server, "m1", 0, rebalance_timeout_ms=200)
        await beat(server, "m2", 0)
        revoke = await beat(server, "m1", 2, owned=[(topic, [0, 1])])
        assert len(_partitions(revoke)[topic]) == 1
        group = server.group_coordinator.consumer_groups.group("g")
        await wait_until(lambda: "m1" not in group.members, "the rebalance timeout")
        late = await beat(server, "m1", 2, owned=[(topic, [0, 1])])
        return late["error_code"]
    assert run(tmp_path, scenario) == Errors.UNKNOWN_MEMBER_ID


def test_a_static_member_that_leaves_temporarily_comes_back_to_its_partitions(tmp_path):
    async def scenario(server):
        topic = await _topic(server, "t", 2)
        first = await beat(server, "a1", 0, instance_id="i-a")
        await beat(server, "b", 0)
        step = await beat(server, "a1", 2, owned=[(topic, [0, 1])], instance_id="i-a")
        mine = _partitions(step)[topic]
        await beat(server, "a1", 2, owned=[(topic, mine)], instance_id="i-a")
        left = await beat(server, "a1", -2, instance_id="i-a")
        assert (left["error_code"], left["member_epoch"]) == (Errors.NONE, -2)
        taken = await beat(server, "x", 0, instance_id="i-b")
        unreleased = await beat(server, "a2", 0, instance_id="i-b")  # i-b is held by x
        back = await beat(server, "a2", 0, instance_id="i-a")  # a new member id for instance i-a
        fenced = await beat(server, "a1", 3, instance_id="i-a", owned=None)
        return first["error_code"], taken["error_code"], unreleased["error_code"], _partitions(back)[topic] == mine, \
            fenced["error_code"]
    assert run(tmp_path, scenario) == (Errors.NONE, Errors.NONE, Errors.UNRELEASED_INSTANCE_ID, True,
                                       Errors.FENCED_INSTANCE_ID)


class _Clock:
    """The consumer group coordinator's clock, moved by hand: regex resolutions wait on it."""
    def __init__(self, server) -> None:
        self.now = 1_000_000
        server.group_coordinator.consumer_groups._clock_ms = lambda: self.now


def _resolved(server, regex: str, group_id: str = "g") -> frozenset[str] | None:
    resolution = server.group_coordinator.consumer_groups.group(group_id).resolved_regexes.get(regex)
    return None if resolution is None else resolution.topics


def test_a_regex_subscription_picks_up_a_topic_created_later(tmp_path):
    """ConsumerGroupHeartbeatRequestTest.testConsumerGroupHeartbeatWithRegularExpression, with
    GroupMetadataManager's refresh conditions: the regex is resolved after the join is
    answered; a topic created later is picked up by a resolution no sooner than 10s after the
    last one."""
    async def scenario(server):
        clock = _Clock(server)
        first_topic = await _topic(server, "orders-eu", 1)
        await _topic(server, "payments", 1)
        joined = await beat(server, "m", 0, topics=(), regex="orders-.*")
        assert (joined["member_epoch"], _partitions(joined)) == (1, {})  # not resolved yet: no bump
        await wait_until(lambda: _resolved(server, "orders-.*") == {"orders-eu"}, "the regex resolved")
        resolved = await beat(server, "m", 1, topics=None, owned=[])
        assert (resolved["member_epoch"], _partitions(resolved)) == (2, {first_topic: [0]})
        second_topic = await _topic(server, "orders-us", 1)
        clock.now += 10_000  # not more than 10s since the last resolution: none now
        await beat(server, "m", 2, topics=None, owned=[(first_topic, [0])])
        await asyncio.sleep(0)
        assert _resolved(server, "orders-.*") == {"orders-eu"}
        clock.now += 1  # the new topic calls for one now
        await beat(server, "m", 2, topics=None, owned=[(first_topic, [0])])
        await wait_until(lambda: _resolved(server, "orders-.*") == {"orders-eu", "orders-us"}, "orders-us")
        grown = await beat(server, "m", 2, topics=None, owned=[(first_topic, [0])])
        return _partitions(grown), grown["member_epoch"], {first_topic: [0], second_topic: [0]}
    partitions, epoch, expected = run(tmp_path, scenario)
    assert partitions == expected and epoch == 3


def test_a_member_taking_up_a_resolved_regex_is_assigned_at_once(tmp_path):
    """REGEX_UPDATED_AND_RESOLVED: the group epoch goes up with the heartbeat itself; the regex's
    resolution is dropped (its record tombstoned) when its last subscriber leaves."""
    async def scenario(server):
        _Clock(server)
        await _topic(server, "orders-eu", 2)
        await beat(server, "m1", 0, topics=(), regex="orders-.*")
        await wait_until(lambda: _resolved(server, "orders-.*") == {"orders-eu"}, "the regex resolved")
        joined = await beat(server, "m2", 0, topics=(), regex="orders-.*")
        assert joined["member_epoch"] == 3  # 1: new (m1's regex unresolved: no bump), 2: resolved, 3: m2 joined
        group = server.group_coordinator.consumer_groups.group("g")
        assert [len(partitions) for partitions in group.target_assignment["m2"].values()] == [1]
        await beat(server, "m1", -1)
        await beat(server, "m2", -1)
        return _resolved(server, "orders-.*"), [(key.regular_expression, value is None) for key, value in
                                                 group_records(server, "g") if key.record_type == 16]
    remaining, regex_records = run(tmp_path, scenario)
    assert remaining is None
    assert regex_records[0] == ("orders-.*", False) and regex_records[-1] == ("orders-.*", True)


def test_a_regex_resolves_to_the_topics_the_heartbeats_principal_may_describe(tmp_path):
    """KAFKA-18813: what a regex matches is cut down to what the principal of the heartbeat that
    set off the resolution may DESCRIBE; a grant shows at the resolution the refresh interval
    (group.consumer.regex.refresh.interval.ms) calls for, not before."""
    async def scenario(server):
        clock = _Clock(server)
        coordinator = server.group_coordinator.consumer_groups
        allowed = {"orders-eu"}
        public = await _topic(server, "orders-eu", 1)
        secret = await _topic(server, "orders-secret", 1)

        def describable(names: list[str]) -> set[str]:
            return {name for name in names if name in allowed}

        async def heartbeat(epoch: int, owned, **changes) -> dict:
            body = {"group_id": "g", "member_id": "m", "member_epoch": epoch, "instance_id": None, "rack_id": None,
                    "rebalance_timeout_ms": 10_000, "subscribed_topic_names": None, "subscribed_topic_regex": None,
                    "server_assignor": None, "topic_partitions": owned, **changes}
            return await coordinator.heartbeat(1, "c", "/127.0.0.1", body, describable)

        await heartbeat(0, [], subscribed_topic_regex="orders-.*")
        await wait_until(lambda: _resolved(server, "orders-.*") is not None, "the regex resolved")
        assert _resolved(server, "orders-.*") == {"orders-eu"}
        first = await heartbeat(1, [])
        assert _partitions(first) == {public: [0]}
        allowed.add("orders-secret")
        clock.now += 60_000  # past the 10s between resolutions, within the refresh interval
        owned = [{"topic_id": public, "partitions": [0]}]
        await heartbeat(2, owned)
        await asyncio.sleep(0)
        assert _resolved(server, "orders-.*") == {"orders-eu"}
        clock.now += 600_000  # the refresh interval has passed
        await heartbeat(2, owned)
        await wait_until(lambda: _resolved(server, "orders-.*") == {"orders-eu", "orders-secret"}, "the grant")
        grown = await heartbeat(2, owned)
        return _partitions(grown), {public: [0], secret: [0]}
    partitions, expected = run(tmp_path, scenario)
    assert partitions == expected


def test_offset_commit_and_fetch_are_checked_against_the_member_epoch(tmp_path):
    async def scenario(server):
        await _topic(server, "t", 1)
        await beat(server, "m", 0)
        service = server.group_coordinator

        async def commit(member_id: str, epoch: int, version: int = 9) -> int:
            body = {"group_id": "g", "generation_id_or_member_epoch": epoch, "member_id": member_id,
                    "group_instance_id": None, "topics": [{"name": "t", "partitions": [
                        {"partition_index": 0, "committed_offset": 42, "committed_leader_epoch": -1,
                         "committed_metadata": ""}]}]}
            return (await service.handle_offset_commit(_Request(version), body))["topics"][0]["partitions"][0][
                "error_code"]

        async def fetch(member_id, epoch: int) -> tuple[int, list]:
            answer = await service.handle_offset_fetch(_Request(9), {"require_stable": False, "groups": [
                {"group_id": "g", "member_id": member_id, "member_epoch": epoch,
                 "topics": [{"name": "t", "partition_indexes": [0]}]}]})
            group = answer["groups"][0]
            return group["error_code"], [p["committed_offset"] for t in group["topics"] for p in t["partitions"]]

        return [await commit("m", 0), await commit("x", 2), await commit("m", 2, version=8), await commit("m", -1),
                await commit("m", 2), await fetch("m", 0), await fetch("x", 2), await fetch("m", 2),
                await fetch(None, -1)]
    # No epoch (-1) is taken only while the group is empty: a member's commit without it is stale.
    assert run(tmp_path, scenario) == [Errors.STALE_MEMBER_EPOCH, Errors.UNKNOWN_MEMBER_ID, Errors.UNSUPPORTED_VERSION,
                                       Errors.STALE_MEMBER_EPOCH, Errors.NONE, (Errors.STALE_MEMBER_EPOCH, []),
                                       (Errors.UNKNOWN_MEMBER_ID, []), (Errors.NONE, [42]), (Errors.NONE, [42])]


def test_list_describe_and_delete_see_consumer_groups(tmp_path):
    async def scenario(server):
        topic = await _topic(server, "t", 1)
        service = server.group_coordinator
        await beat(server, "m", 0)
        listed = (await service.handle_list_groups(_Request(5), {"states_filter": [], "types_filter": ["consumer"]}))
        described = await service.handle_consumer_group_describe(_Request(1), {"group_ids": ["g", "none"],
                                                                              "include_authorized_operations": False})
        # v1 (KIP-1099) says which protocol each member speaks, on the wire too.
        frame = b"".join(bytes(chunk) for chunk in encode_response(69, 1, 7, described))
        wire = decode_response(69, 1, frame)[1]
        assert wire["groups"][0]["members"][0]["member_type"] == 1
        busy = await service.handle_delete_groups(_Request(2), {"groups_names": ["g"]})
        await beat(server, "m", -1)
        deleted = await service.handle_delete_groups(_Request(2), {"groups_names": ["g"]})
        member = described["groups"][0]["members"][0]
        return (listed["groups"], described["groups"][0]["group_state"], member["member_epoch"],
                member["assignment"]["topic_partitions"] == [{"topic_id": topic, "topic_name": "t", "partitions": [0]}],
                described["groups"][1]["error_code"], busy["results"][0]["error_code"],
                deleted["results"][0]["error_code"], service.consumer_groups.group("g"))
    assert run(tmp_path, scenario) == (
        [{"group_id": "g", "protocol_type": "consumer", "group_state": "Stable", "group_type": "consumer"}],
        "Stable", 2, True, Errors.GROUP_ID_NOT_FOUND, Errors.NON_EMPTY_GROUP, Errors.NONE, None)


def test_with_migration_disabled_classic_and_consumer_groups_do_not_share_a_group_id_with_members(tmp_path):
    from tests.coordinator.group.test_group_coordinator import join, join_body

    async def scenario(server):
        await _topic(server, "t", 1)
        await beat(server, "m", 0, group_id="modern")
        classic_into_modern = await server.group_coordinator.handle_join_group(_Request(9), join_body("modern"))
        joined = await join(server, "classic")
        modern_into_classic = await beat(server, "m2", 0, group_id="classic")
        return classic_into_modern["error_code"], joined["error_code"], modern_into_classic["error_code"]
    assert run(tmp_path, scenario, **{"group.consumer.migration.policy": "Disabled"}) == (
        Errors.INCONSISTENT_GROUP_PROTOCOL, Errors.NONE, Errors.GROUP_ID_NOT_FOUND)


def test_a_restarted_broker_loads_the_group_and_its_members_carry_on_at_their_epochs(tmp_path):
    async def before(server):
        topic = await _topic(server, "t", 4)
        await beat(server, "m1", 0, instance_id="i-1", assignor="range")
        await beat(server, "m2", 0)
        revoke = await beat(server, "m1", 2, owned=[(topic, [0, 1, 2, 3])], instance_id="i-1")
        kept = _partitions(revoke)[topic]
        await beat(server, "m1", 2, owned=[(topic, kept)], instance_id="i-1")
        await beat(server, "m2", 3, owned=[])
        group = server.group_coordinator.consumer_groups.group("g")
        return topic, {m.member_id: (m.member_epoch, dict(m.assigned), m.instance_id, m.server_assignor)
                       for m in group.members.values()}, group.group_epoch, group.assignment_epoch

    async def after(server):
        group = server.group_coordinator.consumer_groups.group("g")
        loaded = {m.member_id: (m.member_epoch, dict(m.assigned), m.instance_id, m.server_assignor)
                  for m in group.members.values()}
        answer = await beat(server, "m2", 3, topics=None, owned=None, rebalance_timeout_ms=-1)
        return loaded, group.group_epoch, group.assignment_epoch, group.state.value, answer["error_code"]

    topic, members, group_epoch, assignment_epoch = run(tmp_path, before)
    assert members["m1"][0] == members["m2"][0] == 3 and members["m1"][2:] == ("i-1", "range")
    assert run(tmp_path, after) == (members, group_epoch, assignment_epoch, "Stable", Errors.NONE)


def test_a_deleted_group_stays_deleted_after_a_restart_and_a_fenced_member_stays_fenced(tmp_path):
    async def before(server):
        await _topic(server, "t", 1)
        await beat(server, "m", 0, group_id="gone")
        await beat(server, "m", -1, group_id="gone")
        deleted = await server.group_coordinator.handle_delete_groups(_Request(2), {"groups_names": ["gone"]})
        await beat(server, "a", 0, group_id="kept")
        await beat(server, "b", 0, group_id="kept")
        await beat(server, "a", -1, group_id="kept")
        return deleted["results"][0]["error_code"]

    async def after(server):
        groups = server.group_coordinator.consumer_groups.groups
        return "gone" in groups, sorted(groups["kept"].members), (await beat(server, "a", 2, group_id="kept"))[
            "error_code"]

    assert run(tmp_path, before) == Errors.NONE
    assert run(tmp_path, after) == (False, ["b"], Errors.UNKNOWN_MEMBER_ID)


def test_deleting_a_group_writes_its_offsets_tombstones_then_the_groups_in_one_write(tmp_path):
    """GroupCoordinatorShard.deleteGroups: deleteAllOffsets, then ConsumerGroup.createGroupTombstoneRecords,
    as one batch of __consumer_offsets."""
    async def scenario(server):
        await _topic(server, "t", 1)
        joined = await beat(server, "m", 0)
        service = server.group_coordinator
        await service.handle_offset_commit(_Request(9), {
            "group_id": "g", "generation_id_or_member_epoch": joined["member_epoch"], "member_id": "m",
            "group_instance_id": None, "retention_time_ms": -1,
            "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 5,
                                                     "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
        await beat(server, "m", -1)
        log = server.replica_manager.log_of(("__consumer_offsets", service.partition_for("g")))
        end_before, records_before = log.log_end_offset, len(group_records(server, "g"))
        deleted = await service.handle_delete_groups(_Request(2), {"groups_names": ["g"]})
        batches = list(log.read(end_before, 1 << 20, FetchIsolation.LOG_END, True).records.batches())
        written = group_records(server, "g")[records_before:]
        return (deleted["results"][0]["error_code"], len(batches),
                [(getattr(key, "record_type", "offset"), value is None) for key, value in written])
    code, batches, written = run(tmp_path, scenario)
    assert (code, batches) == (Errors.NONE, 1)
    assert written[0] == ("offset", True) and len(written) > 1, written
    assert all(kind != "offset" and tombstone for kind, tombstone in written[1:]), written


def test_offset_delete_keeps_the_offsets_of_topics_the_members_subscribe_to(tmp_path):
    async def scenario(server):
        await _topic(server, "t", 1)
        await _topic(server, "old", 1)
        service = server.group_coordinator
        for topic in ("t", "old"):  # committed while the group is empty: no member epoch
            await service.handle_offset_commit(_Request(9), {
                "group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
                "topics": [{"name": topic, "partitions": [{"partition_index": 0, "committed_offset": 5,
                                                           "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
        await beat(server, "m", 0)
        answer = await service.handle_offset_delete(_Request(0), {"group_id": "g", "topics": [
            {"name": "t", "partitions": [{"partition_index": 0}]},
            {"name": "old", "partitions": [{"partition_index": 0}]}]})
        return ([p["error_code"] for t in answer["topics"] for p in t["partitions"]],
                sorted(service.offsets.group_offsets("g")))
    assert run(tmp_path, scenario) == ([Errors.GROUP_SUBSCRIBED_TO_TOPIC, Errors.NONE], [("t", 0)])


def test_an_unknown_or_missing_server_assignor_in_the_config_is_refused_naming_the_key(tmp_path):
    from franz.common.config_def import ConfigError
    from franz.coordinator.group.consumer_group_coordinator import ConsumerGroupConfig
    from tests.coordinator.group.test_group_coordinator import _config

    for value in ("uniform,sticky", ""):
        with pytest.raises(ConfigError, match="group.consumer.assignors"):
            _config(tmp_path, group_consumer_assignors=value)
    assert ConsumerGroupConfig.from_kafka_config(_config(tmp_path, group_consumer_assignors="range")).assignors == (
        "range",)


def test_an_empty_subscription_joins_and_a_static_member_replaces_itself_in_a_full_group(tmp_path):
    """GroupMetadataManager.consumerGroupHeartbeat: an empty list of names joins subscribed to
    nothing (the Java client's subscribe(Pattern) before its pattern matches); only null is
    refused. A static member back under a new member id takes its own place in a full group
    (KAFKA-20601)."""
    async def scenario(server):
        await _topic(server, "t", 2)
        empty = await beat(server, "quiet", 0, topics=())
        assert empty["error_code"] == Errors.NONE and empty["assignment"]["topic_partitions"] == []
        first = await beat(server, "s1", 0, group_id="full", instance_id="i1")
        assert first["error_code"] == Errors.NONE
        assert (await beat(server, "s1", -2, group_id="full", instance_id="i1"))["error_code"] == Errors.NONE
        again = await beat(server, "s1-new", 0, group_id="full", instance_id="i1")
        assert again["error_code"] == Errors.NONE and again["member_epoch"] >= first["member_epoch"]
        assert (await beat(server, "other", 0, group_id="full"))["error_code"] == Errors.GROUP_MAX_SIZE_REACHED
    run(tmp_path, scenario, group_consumer_max_size="1")


def test_a_commit_from_an_older_member_epoch_counts_for_partitions_held_since_then(tmp_path):
    """KIP-1251 (4.3): a commit sent before the member's last epoch bump (an async or auto commit
    racing a rebalance) is taken for partitions the member was given at or before that epoch
    and still holds; one it no longer holds, or got later, fails the whole commit
    STALE_MEMBER_EPOCH, as does an epoch newer than the member's."""
    async def scenario(server):
        topic = await _topic(server, "t", 4)
        service = server.group_coordinator

        async def commit(member_id: str, epoch: int, partitions) -> set[int]:
            body = {"group_id": "g", "generation_id_or_member_epoch": epoch, "member_id": member_id,
                    "group_instance_id": None, "topics": [{"name": "t", "partitions": [
                        {"partition_index": p, "committed_offset": 7, "committed_leader_epoch": -1,
                         "committed_metadata": ""} for p in partitions]}]}
            answer = await service.handle_offset_commit(_Request(9), body)
            return {p["error_code"] for t in answer["topics"] for p in t["partitions"]}

        await beat(server, "m1", 0)  # all four partitions, at epoch 2
        await beat(server, "m2", 0)  # group epoch 3
        kept = _partitions(await beat(server, "m1", 2, owned=[(topic, [0, 1, 2, 3])]))[topic]
        revoked = sorted(set(range(4)) - set(kept))
        assert (await beat(server, "m1", 2, owned=[(topic, kept)]))["member_epoch"] == 3
        assert sorted(_partitions(await beat(server, "m2", 3, owned=[]))[topic]) == revoked  # at epoch 3
        return [await commit("m1", 2, kept), await commit("m1", 2, revoked[:1]), await commit("m1", 2, kept + revoked),
                await commit("m2", 2, revoked), await commit("m1", 4, kept), await commit("m1", 3, kept),
                await commit("m2", 3, revoked)]
    stale = {Errors.STALE_MEMBER_EPOCH}
    assert run(tmp_path, scenario) == [{Errors.NONE}, stale, stale, stale, stale, {Errors.NONE}, {Errors.NONE}]


def test_describe_shows_the_partitions_a_member_is_still_revoking(tmp_path):
    """ConsumerGroupMember.asConsumerGroupDescribeMember (KAFKA-20431, 4.3): a member's described
    assignment includes the partitions pending revocation, which it still consumes."""
    async def scenario(server):
        topic = await _topic(server, "t", 4)
        await beat(server, "m1", 0)
        await beat(server, "m2", 0)
        kept = _partitions(await beat(server, "m1", 2, owned=[(topic, [0, 1, 2, 3])]))[topic]
        described = await server.group_coordinator.handle_consumer_group_describe(
            _Request(1), {"group_ids": ["g"], "include_authorized_operations": False})
        member = next(m for m in described["groups"][0]["members"] if m["member_id"] == "m1")
        return (kept, [tp["partitions"] for tp in member["assignment"]["topic_partitions"]],
                [tp["partitions"] for tp in member["target_assignment"]["topic_partitions"]])
    kept, assignment, target = run(tmp_path, scenario)
    assert assignment == [[0, 1, 2, 3]] and target == [sorted(kept)] and len(kept) == 2


def test_a_member_rejoining_under_its_own_id_is_taken_back_as_it_is(tmp_path):
    """KAFKA-19233 (4.3): a heartbeat at epoch 0 from a member the group still has (its client
    gave up its epoch, KIP-1082 keeps the id) is not fenced: the member keeps its assignment,
    epoch and assignment epochs, and is answered in full. A static member doing the same
    without having left is UNRELEASED_INSTANCE_ID, even under its own id."""
    async def scenario(server):
        topic = await _topic(server, "t", 2)
        first = await beat(server, "m1", 0)
        back = await beat(server, "m1", 0, owned=[])
        static = await beat(server, "s1", 0, group_id="h", instance_id="i")
        again = await beat(server, "s1", 0, group_id="h", instance_id="i")
        member = server.group_coordinator.consumer_groups.group("g").members["m1"]
        return (first["member_epoch"], back["error_code"], back["member_epoch"], _partitions(back),
                member.assignment_epochs == {(topic, 0): 2, (topic, 1): 2}, static["error_code"],
                again["error_code"], topic)
    first, error, epoch, partitions, epochs_kept, static, again, topic = run(tmp_path, scenario)
    assert (first, error, epoch, partitions, epochs_kept) == (2, Errors.NONE, 2, {topic: [0, 1]}, True)
    assert (static, again) == (Errors.NONE, Errors.UNRELEASED_INSTANCE_ID)


def test_txn_offset_commits_of_a_member_are_checked_as_kafka_checks_them(tmp_path):
    """OffsetMetadataManager.validateTransactionalOffsetCommit: a stale member epoch is told
    ILLEGAL_GENERATION (the producer recovers from it, not from STALE_MEMBER_EPOCH); the member
    checks are skipped only for a commit naming no member at all (ConsumerGroup:663)."""
    async def scenario(server):
        await _topic(server, "t", 2)
        await beat(server, "m1", 0)
        producer_id, epoch, _ = await server.transaction_coordinator.init_producer_id("tx", 60_000, -1, -1)

        async def txn_commit(member_id: str, generation: int) -> int:
            body = {"transactional_id": "tx", "group_id": "g", "producer_id": producer_id, "producer_epoch": epoch,
                    "generation_id": generation, "member_id": member_id, "group_instance_id": None,
                    "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 5,
                                                             "committed_leader_epoch": -1,
                                                             "committed_metadata": ""}]}]}
            answer = await server.group_coordinator.handle_txn_offset_commit(_Request(5), body)
            return answer["topics"][0]["partitions"][0]["error_code"]

        return [await txn_commit("m1", 3), await txn_commit("m1", -1), await txn_commit("stranger", -1),
                await txn_commit("", -1), await txn_commit("m1", 2)]
    assert run(tmp_path, scenario) == [Errors.ILLEGAL_GENERATION, Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID,
                                       Errors.NONE, Errors.NONE]


def test_a_partition_whose_metadata_is_too_large_is_not_checked_against_the_member(tmp_path):
    """OffsetMetadataManager.commitOffset checks only the partitions it would write: at an older
    member epoch, a partition the member gave up but whose metadata is too large is answered
    OFFSET_METADATA_TOO_LARGE, and the member's own partition is committed."""
    async def scenario(server):
        topic = await _topic(server, "t", 2)
        await beat(server, "m1", 0)
        await beat(server, "m2", 0)
        kept = _partitions(await beat(server, "m1", 2, owned=[(topic, [0, 1])]))[topic]
        await beat(server, "m1", 2, owned=[(topic, kept)])  # now at epoch 3
        gone = 1 - kept[0]
        body = {"group_id": "g", "generation_id_or_member_epoch": 2, "member_id": "m1", "group_instance_id": None,
                "topics": [{"name": "t", "partitions": [
                    {"partition_index": kept[0], "committed_offset": 3, "committed_leader_epoch": -1,
                     "committed_metadata": ""},
                    {"partition_index": gone, "committed_offset": 3, "committed_leader_epoch": -1,
                     "committed_metadata": "x" * 5000}]}]}
        answer = await server.group_coordinator.handle_offset_commit(_Request(9), body)
        return {p["partition_index"]: p["error_code"] for p in answer["topics"][0]["partitions"]}, kept[0], gone
    codes, kept, gone = run(tmp_path, scenario)
    assert codes == {kept: Errors.NONE, gone: Errors.OFFSET_METADATA_TOO_LARGE}


def test_an_offset_of_a_topic_since_made_again_is_no_offset_for_the_new_topic_by_id(tmp_path):
    """Offsets are written with their topic's id (OffsetCommitValue v4). If a deleted topic's
    offsets outlive it (here its tombstones are never written: the hook is taken away) and the
    topic is made again under the name, OffsetFetch v10, which asks by the new id, finds none
    (OffsetMetadataManager.isMismatchedTopicId); v9, by name, still sees the old one, as in Kafka."""
    async def scenario(server):
        await _topic(server, "t", 1)
        service = server.group_coordinator
        body = {"group_id": "simple", "generation_id_or_member_epoch": -1, "member_id": "", "group_instance_id": None,
                "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 9,
                                                         "committed_leader_epoch": -1, "committed_metadata": ""}]}]}
        assert (await service.handle_offset_commit(_Request(9), body))["topics"][0]["partitions"][0][
            "error_code"] == Errors.NONE
        server.controller.topic_deletion_listeners.remove(service.on_topic_deleted)
        await server.controller.delete_topic("t")
        new_id = await _topic(server, "t", 1)

        async def fetch(version: int, topic: dict) -> int:
            answer = await service.handle_offset_fetch(_Request(version), {"require_stable": False, "groups": [
                {"group_id": "simple", "member_id": None, "member_epoch": -1,
                 "topics": [{**topic, "partition_indexes": [0]}]}]})
            return answer["groups"][0]["topics"][0]["partitions"][0]["committed_offset"]

        return await fetch(10, {"topic_id": new_id}), await fetch(9, {"name": "t"})
    assert run(tmp_path, scenario) == (-1, 9)


def test_a_subscribed_topic_growing_bumps_the_group_epoch_and_a_restart_does_not(tmp_path):
    """The group epoch record keeps the metadata hash of the subscribed topics (KIP-1101): a new
    partition changes it, so the group epoch goes up and the partition is assigned; loaded back
    after a restart with the topics unchanged, the hash matches and nothing moves."""
    async def before(server):
        topic = await _topic(server, "t", 1)
        joined = await beat(server, "m", 0)
        await server.controller.create_partitions("t", 2, None, False)
        grown = await beat(server, "m", joined["member_epoch"], topics=None, owned=[(topic, [0])])
        group = server.group_coordinator.consumer_groups.group("g")
        return topic, grown["member_epoch"], _partitions(grown), group.metadata_hash

    topic, epoch, partitions, metadata_hash = run(tmp_path, before)
    assert epoch == 3 and partitions == {topic: [0, 1]} and metadata_hash != 0

    async def after(server):
        again = await beat(server, "m", 3, topics=None, owned=[(topic, [0, 1])])
        group = server.group_coordinator.consumer_groups.group("g")
        return again["member_epoch"], group.group_epoch, group.metadata_hash
    assert run(tmp_path, after) == (3, 3, metadata_hash)


def test_a_consumer_groups_commits_make_no_classic_group_of_its_id(tmp_path):
    """The offsets of a consumer group are its own: listing classic groups does not show a
    second, empty group of the same id (OffsetMetadataManager.replay makes a simple group only
    where no group is)."""
    async def scenario(server):
        await _topic(server, "t", 1)
        await beat(server, "m", 0)
        service = server.group_coordinator
        committed = await service.handle_offset_commit(_Request(9), {
            "group_id": "g", "generation_id_or_member_epoch": 2, "member_id": "m", "group_instance_id": None,
            "topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 7,
                                                      "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
        listed = await service.handle_list_groups(_Request(5), {"states_filter": [], "types_filter": []})
        return committed["topics"][0]["partitions"][0]["error_code"], [
            (g["group_id"], g["group_type"]) for g in listed["groups"]]
    assert run(tmp_path, scenario) == (Errors.NONE, [("g", "consumer")])
