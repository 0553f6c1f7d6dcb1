"""KIP-1071 streams groups on a real in-process KafkaServer: StreamsGroupHeartbeat joins with a
topology, the internal topics the broker creates for it, the sticky assignment of tasks over
members and processes, leaving and fencing, the request checks of GroupCoordinatorService and
KafkaApis, StreamsGroupDescribe, offsets of a streams group, and the records a restart loads.
(Kafka's GroupMetadataManagerTest streamsGroupHeartbeat cases, as far as one broker goes.)"""

from __future__ import annotations

from franz.coordinator.group import group_coordinator_record_serde as serde
from franz.coordinator.group.streams import streams_group_coordinator
from franz.coordinator.group.streams.assignor.task_assignor import TaskAssignorException
from franz.coordinator.group.streams.topics.topic_configuration_exception import Status
from franz.protocol.errors import Errors
from tests.coordinator.group.test_group_coordinator import (
    group_records, join_body, run, stable_single_member_group, wait_until,
)
from tests.coordinator.group.test_group_coordinator_metrics import GROUP, _values

# the first members are assigned at once (Kafka's default waits 3 s for more to join), and every
# change is assigned as it comes (4.3's default computes at most one target a second)
OVERRIDES = {"group_streams_initial_rebalance_delay_ms": "0", "group_streams_assignment_interval_ms": "0"}
APP = "app"
CHANGELOG = f"{APP}-store-changelog"
REPARTITION = f"{APP}-repartition"


class _Request:
    api_version = 0
    listener_name = "PLAINTEXT"
    client_address = ("127.0.0.1", 1)
    client_id = "c"


def _topic_info(name: str, partitions: int = 0, configs: dict[str, str] | None = None) -> dict:
    return {"name": name, "partitions": partitions, "replication_factor": 0,
            "topic_configs": [{"key": k, "value": v} for k, v in (configs or {}).items()]}


def topology(epoch: int = 1, source: str = "in", changelog: bool = True, repartition: bool = False) -> dict:
    """Subtopology 0 reads `source` (into a store with a changelog); with `repartition`, it writes
    a repartition topic that subtopology 1 reads."""
    first = {"subtopology_id": "0", "source_topics": [source], "source_topic_regex": [],
             "state_changelog_topics": [_topic_info(CHANGELOG, configs={"cleanup.policy": "compact"})]
             if changelog else [],
             "repartition_sink_topics": [REPARTITION] if repartition else [], "repartition_source_topics": [],
             "copartition_groups": []}
    subtopologies = [first]
    if repartition:
        subtopologies.append({"subtopology_id": "1", "source_topics": [], "source_topic_regex": [],
                              "state_changelog_topics": [], "repartition_sink_topics": [],
                              "repartition_source_topics": [_topic_info(REPARTITION)], "copartition_groups": []})
    return {"epoch": epoch, "subtopologies": subtopologies}


def beat_body(member_id: str, epoch: int, group_id: str = APP, process: str = "p1", **fields) -> dict:
    body = {"group_id": group_id, "member_id": member_id, "member_epoch": epoch, "endpoint_information_epoch": 0,
            "instance_id": None, "rack_id": None, "rebalance_timeout_ms": 30_000 if epoch == 0 else -1,
            "topology": topology() if epoch == 0 else None,
            "active_tasks": [] if epoch == 0 else None, "standby_tasks": [] if epoch == 0 else None,
            "warmup_tasks": [] if epoch == 0 else None, "process_id": process if epoch == 0 else None,
            "user_endpoint": None, "client_tags": [] if epoch == 0 else None, "task_offsets": None,
            "task_end_offsets": None, "shutdown_application": False}
    body.update(fields)
    return body


async def beat(server, member_id: str, epoch: int, **fields) -> dict:
    return await server.group_coordinator.handle_streams_group_heartbeat(_Request(), beat_body(member_id, epoch,
                                                                                               **fields))


def tasks(answer: dict, kind: str = "active_tasks") -> dict[str, list[int]] | None:
    if answer[kind] is None:
        return None
    return {t["subtopology_id"]: t["partitions"] for t in answer[kind]}


def owned(answer: dict) -> dict:
    """The heartbeat fields of a member that owns what the answer gave it."""
    return {"active_tasks": answer["active_tasks"], "standby_tasks": answer["standby_tasks"],
            "warmup_tasks": answer["warmup_tasks"]}


def record_writes(server) -> list[list[tuple[int, str | None, bool]]]:
    """Every later write of the streams groups, as (record type, member id, tombstone) per record."""
    writer = server.group_coordinator.streams_groups._writer
    write, writes = writer._write, []

    async def recording(group_id, entries):
        keys = [serde.read_key(key) for key, _ in entries]
        writes.append([(key.record_type, key.member_id, value is None) for key, (_, value) in zip(keys, entries)])
        return await write(group_id, entries)
    writer._write = recording
    return writes


async def _topic(server, name: str, partitions: int) -> None:
    await server.controller.create_topic(name, partitions, {})


async def _created(server, name: str) -> None:
    await wait_until(lambda: server.metadata.get(name) is not None, f"{name} created")


def test_a_member_hears_the_missing_changelog_which_the_broker_creates_then_gets_every_task(tmp_path):
    async def scenario(server):
        await _topic(server, "in", 3)
        first = await beat(server, "m1", 0)
        assert (first["error_code"], first["member_id"]) == (Errors.NONE, "m1")
        assert first["status"] == [{"status_code": Status.MISSING_INTERNAL_TOPICS,
                                    "status_detail": f"Internal topics are missing: {CHANGELOG}"}]
        assert tasks(first) == {}  # not ready: nothing to run
        await _created(server, CHANGELOG)
        changelog = server.metadata.get(CHANGELOG)
        second = await beat(server, "m1", first["member_epoch"], **owned(first))
        assert second["status"] == []
        return (changelog.num_partitions, changelog.configs.get("cleanup.policy"), tasks(second),
                second["member_epoch"] > first["member_epoch"])
    assert run(tmp_path, scenario, **OVERRIDES) == (3, "compact", {"0": [0, 1, 2]}, True)


async def _stable_member(server, member_id: str = "m1", process: str = "p1") -> dict:
    first = await beat(server, member_id, 0, process=process)
    await _created(server, CHANGELOG)
    return await beat(server, member_id, first["member_epoch"], **owned(first))


def test_two_processes_split_the_tasks_and_a_task_moves_only_once_revoked(tmp_path):
    async def scenario(server):
        await _topic(server, "in", 4)
        one = await _stable_member(server)
        assert tasks(one) == {"0": [0, 1, 2, 3]}
        two = await beat(server, "m2", 0, process="p2")
        assert tasks(two) == {}  # m1 still holds every task
        revoking = await beat(server, "m1", one["member_epoch"], **owned(one))
        kept = tasks(revoking)["0"]
        assert len(kept) == 2 and revoking["member_epoch"] == one["member_epoch"]  # not there until revoked
        waiting = await beat(server, "m2", two["member_epoch"], **owned(two))
        assert tasks(waiting) is None  # the other two are still m1's
        revoked = await beat(server, "m1", revoking["member_epoch"], **owned(revoking))
        two_again = await beat(server, "m2", waiting["member_epoch"], **owned(two))
        given = tasks(two_again)["0"]
        group = server.group_coordinator.streams_groups.group(APP)
        return sorted(kept + given), group.state.value, revoked["member_epoch"] == two_again["member_epoch"]
    assert run(tmp_path, scenario, **OVERRIDES) == ([0, 1, 2, 3], "Stable", True)


def test_a_missing_source_topic_keeps_the_group_not_ready(tmp_path):
    async def scenario(server):
        answer = await beat(server, "m1", 0, topology=topology(source="absent"))
        describe = await server.group_coordinator.handle_streams_group_describe(
            _Request(), {"group_ids": [APP], "include_authorized_operations": False})
        group = describe["groups"][0]
        return answer["status"], tasks(answer), group["group_state"], group["topology"]["epoch"]
    status, assigned, state, epoch = run(tmp_path, scenario, **OVERRIDES)
    assert status == [{"status_code": Status.MISSING_SOURCE_TOPICS,
                       "status_detail": "Source topics absent are missing."}]
    assert (assigned, state, epoch) == ({}, "NotReady", 1)


def test_the_request_checks_of_the_coordinator_and_of_kafka_apis(tmp_path):
    async def scenario(server):
        await _topic(server, "in", 1)
        answers = []
        for member_id, epoch, fields in (
                ("m1", 0, {"instance_id": "i"}),
                ("m1", 0, {"rebalance_timeout_ms": -1}),
                ("m1", 0, {"topology": None}),
                ("m1", 0, {"active_tasks": [{"subtopology_id": "0", "partitions": [0]}]}),
                ("m1", 0, {"topology": topology(source="__consumer_offsets")}),
                ("m1", 0, {"topology": topology(source="bad name")}),
                ("", 0, {}),
                ("m1", -3, {}),
                ("m1", 5, {}),
                ("m1", 1, {"topology": topology()})):
            answer = await beat(server, member_id, epoch, **fields)
            answers.append((answer["error_code"], answer["error_message"]))
        return answers
    assert run(tmp_path, scenario, **OVERRIDES) == [
        (Errors.INVALID_REQUEST, "Static membership is not yet supported."),
        (Errors.INVALID_REQUEST, "RebalanceTimeoutMs must be provided in first request."),
        (Errors.INVALID_REQUEST, "Topology must be non-null when (re-)joining."),
        (Errors.INVALID_REQUEST, "ActiveTasks must be empty when (re-)joining."),
        (Errors.STREAMS_INVALID_TOPOLOGY,
         "Use of Kafka internal topics __consumer_offsets in a Kafka Streams topology is prohibited."),
        (Errors.STREAMS_INVALID_TOPOLOGY, "Topic names bad name are not valid topic names."),
        (Errors.INVALID_REQUEST, "MemberId can't be empty."),
        (Errors.INVALID_REQUEST, "MemberEpoch is -3, but must be greater than or equal to -2."),
        (Errors.GROUP_ID_NOT_FOUND, f"Streams group {APP} not found."),
        (Errors.INVALID_REQUEST, "Topology can only be provided when (re-)joining."),
    ]


def test_what_kafka_does_not_expect_of_a_topology_is_an_unknown_server_error_that_leaves_no_group(tmp_path):
    """Kafka's StreamsTopology refuses a negative epoch, Collectors.toMap two subtopologies of one
    id or a topic config key listed twice, ConfiguredInternalTopic a repartition topic of fewer
    than 1 partition: each an exception that handleOperationException answers UNKNOWN_SERVER_ERROR
    without a message, the group the heartbeat made reverted with it."""
    async def scenario(server):
        await _topic(server, "in", 1)
        twice = topology()
        twice["subtopologies"].append(dict(twice["subtopologies"][0]))
        negative = topology(repartition=True)
        negative["subtopologies"][1]["repartition_source_topics"] = [_topic_info(REPARTITION, partitions=-1)]
        repeated_key = topology()
        repeated_key["subtopologies"][0]["state_changelog_topics"][0]["topic_configs"] = [
            {"key": "retention.ms", "value": "1"}, {"key": "retention.ms", "value": "2"}]
        answers = []
        for odd in (topology(epoch=-1), twice, negative, repeated_key):
            answer = await beat(server, "m1", 0, topology=odd)
            answers.append((answer["error_code"], answer["error_message"]))
        described = await server.group_coordinator.handle_streams_group_describe(
            _Request(), {"group_ids": [APP], "include_authorized_operations": False})
        return answers, described["groups"][0]["error_code"]
    assert run(tmp_path, scenario, **OVERRIDES) == ([(Errors.UNKNOWN_SERVER_ERROR, None)] * 4,
                                                    Errors.GROUP_ID_NOT_FOUND)


def test_a_heartbeat_that_fails_midway_leaves_the_group_as_it_was(tmp_path):
    """A member with a user endpoint joining a group whose topology is not ready: 4.3's
    EndpointToPartitionsManager reads the configured subtopologies, which a not-ready topology
    lacks, and the heartbeat fails (UNKNOWN_SERVER_ERROR) after it had added the member and
    bumped the group epoch; Kafka's coordinator reverts all of it, and so must franz, else the
    group in memory is one its records do not hold."""
    async def scenario(server):
        first = await beat(server, "m1", 0, topology=topology(source="absent"))
        group = server.group_coordinator.streams_groups.group(APP)
        before = (group.group_epoch, sorted(group.members), group.persisted)
        failed = await beat(server, "m2", 0, topology=topology(source="absent"),
                            user_endpoint={"host": "h", "port": 1})
        after = (group.group_epoch, sorted(group.members), group.persisted)
        again = await beat(server, "m1", first["member_epoch"], **owned(first))
        return (failed["error_code"], failed["error_message"]), before == after, before[:2], again["error_code"]
    failed, unchanged, (epoch, members), again = run(tmp_path, scenario, **OVERRIDES)
    assert (failed, unchanged, members, again) == ((Errors.UNKNOWN_SERVER_ERROR, None), True, ["m1"], Errors.NONE)


def test_a_different_topology_at_the_same_epoch_is_refused_and_an_older_one_is_stale(tmp_path):
    async def scenario(server):
        await _topic(server, "in", 1)
        await _topic(server, "other", 1)
        await beat(server, "m1", 0, topology=topology(epoch=2))
        different = await beat(server, "m2", 0, topology=topology(epoch=2, source="other"))
        stale = await beat(server, "m3", 0, topology=topology(epoch=1))
        return (different["error_code"], different["error_message"], stale["error_code"],
                [s["status_code"] for s in stale["status"]])
    assert run(tmp_path, scenario, **OVERRIDES) == (
        Errors.INVALID_REQUEST, "Topology updates are not supported yet.", Errors.NONE,
        [Status.STALE_TOPOLOGY, Status.MISSING_INTERNAL_TOPICS])


def test_a_leaving_member_gives_its_tasks_to_the_others(tmp_path):
    async def scenario(server):
        await _topic(server, "in", 2)
        one = await _stable_member(server)
        two = await beat(server, "m2", 0, process="p2")
        one = await beat(server, "m1", one["member_epoch"], **owned(one))
        two = await beat(server, "m2", two["member_epoch"], **owned(two))
        left = await beat(server, "m2", -1, **owned(two))
        assert (left["error_code"], left["member_epoch"]) == (Errors.NONE, -1)
        # m1 confirms task 1 revoked, which it held until then: the next heartbeat gets it back
        back = await beat(server, "m1", one["member_epoch"], **owned(one))
        again = await beat(server, "m1", back["member_epoch"], **owned(one))
        return tasks(again), sorted(server.group_coordinator.streams_groups.group(APP).members)
    assert run(tmp_path, scenario, **OVERRIDES) == ({"0": [0, 1]}, ["m1"])


def test_a_member_without_heartbeats_is_fenced_when_its_session_ends(tmp_path):
    async def scenario(server):
        await _topic(server, "in", 1)
        await _stable_member(server)
        group = server.group_coordinator.streams_groups.group(APP)
        await wait_until(lambda: not group.members, "m1 fenced")
        return group.state.value
    overrides = {**OVERRIDES, "group_streams_session_timeout_ms": "300", "group_streams_min_session_timeout_ms": "300",
                 "group_streams_heartbeat_interval_ms": "100", "group_streams_min_heartbeat_interval_ms": "100"}
    assert run(tmp_path, scenario, **overrides) == "Empty"


def test_the_group_and_its_members_come_back_after_a_restart(tmp_path):
    async def first(server):
        await _topic(server, "in", 2)
        stable = await _stable_member(server)
        return stable["member_epoch"]

    async def second(server):
        group = server.group_coordinator.streams_groups.group(APP)
        member = group.members["m1"]
        return (group.group_epoch, group.assignment_epoch, member.member_epoch, member.process_id,
                dict(member.assigned_tasks.active_tasks_with_epochs), group.topology.topology_epoch)
    epoch = run(tmp_path, first, **OVERRIDES)
    group_epoch, assignment_epoch, member_epoch, process, active, topology_epoch = run(tmp_path, second, **OVERRIDES)
    assert (member_epoch, group_epoch, assignment_epoch) == (epoch, epoch, epoch)
    assert (process, {k: dict(v) for k, v in active.items()}, topology_epoch) == ("p1", {"0": {0: epoch, 1: epoch}}, 1)


def test_describe_and_list_groups_show_the_streams_group(tmp_path):
    async def scenario(server):
        await _topic(server, "in", 1)
        await _stable_member(server)
        service = server.group_coordinator
        described = await service.handle_streams_group_describe(
            _Request(), {"group_ids": [APP, "nope", ""], "include_authorized_operations": False})
        listed = service._list_groups({"states_filter": [], "types_filter": ["streams"]})
        classic = await service.handle_consumer_group_describe(
            _Request(), {"group_ids": [APP], "include_authorized_operations": False})
        return described["groups"], listed["groups"], classic["groups"][0]["error_message"]
    groups, listed, classic = run(tmp_path, scenario, **OVERRIDES)
    by_id = {group["group_id"]: group for group in groups}
    ours = by_id[APP]
    member = ours["members"][0]
    assert (ours["group_state"], ours["error_code"], member["member_id"], member["process_id"]) == (
        "Stable", Errors.NONE, "m1", "p1")
    assert ours["topology"]["subtopologies"][0]["state_changelog_topics"][0]["partitions"] == 1
    assert [(by_id[g]["error_code"], by_id[g]["error_message"]) for g in ("nope", "")] == [
        (Errors.GROUP_ID_NOT_FOUND, "Group nope not found."), (Errors.INVALID_GROUP_ID, None)]
    assert listed == [{"group_id": APP, "protocol_type": "streams", "group_state": "Stable", "group_type": "streams"}]
    assert classic == f"Group {APP} is not a consumer group."


def test_offsets_are_committed_at_the_members_epoch_and_a_stale_one_is_refused(tmp_path):
    async def scenario(server):
        await _topic(server, "in", 1)
        stable = await _stable_member(server)
        service = server.group_coordinator

        class Commit(_Request):
            api_version = 9

        def body(epoch: int) -> dict:
            return {"group_id": APP, "generation_id_or_member_epoch": epoch, "member_id": "m1",
                    "group_instance_id": None, "retention_time_ms": -1,
                    "topics": [{"name": "in", "partitions": [{"partition_index": 0, "committed_offset": 5,
                                                              "committed_leader_epoch": -1,
                                                              "committed_metadata": ""}]}]}
        ok = await service.handle_offset_commit(Commit(), body(stable["member_epoch"]))
        stale = await service.handle_offset_commit(Commit(), body(stable["member_epoch"] + 1))
        deleted = await service.handle_delete_groups(_Request(), {"groups_names": [APP]})
        return (ok["topics"][0]["partitions"][0]["error_code"], stale["topics"][0]["partitions"][0]["error_code"],
                deleted["results"][0]["error_code"])
    assert run(tmp_path, scenario, **OVERRIDES) == (Errors.NONE, Errors.STALE_MEMBER_EPOCH, Errors.NON_EMPTY_GROUP)


def test_the_initial_rebalance_delay_gathers_the_first_members_before_assigning(tmp_path):
    async def scenario(server):
        await _topic(server, "in", 2)
        await server.controller.create_topic(CHANGELOG, 2, {})
        one = await beat(server, "m1", 0)
        two = await beat(server, "m2", 0, process="p2")
        # during the delay both move to the initial assignment epoch (1) with nothing, and hear why
        early = (one["member_epoch"], tasks(one), two["member_epoch"], tasks(two),
                 [s["status_detail"] for s in two["status"]])
        group = server.group_coordinator.streams_groups.group(APP)
        await wait_until(lambda: group.assignment_epoch == group.group_epoch, "the delayed assignment")
        one = await beat(server, "m1", one["member_epoch"], **owned(one))
        two = await beat(server, "m2", two["member_epoch"], **owned(two))
        return early, sorted(tasks(one)["0"] + tasks(two)["0"]), len(tasks(one)["0"])
    early, all_tasks, first_share = run(tmp_path, scenario, group_streams_initial_rebalance_delay_ms="200",
                                        group_streams_assignment_interval_ms="0")
    assert early == (1, {}, 1, {}, ["Assignment delayed due to the configured initial rebalance delay."])
    assert (all_tasks, first_share) == ([0, 1], 1)


def test_the_coordinator_metrics_count_streams_groups_by_state_and_their_rebalances(tmp_path):
    async def scenario(server):
        before = _values(server)
        await _topic(server, "in", 1)
        stable = await _stable_member(server)
        stable_values = _values(server)
        await beat(server, "m1", -1, **owned(stable))
        return before, stable_values, _values(server)
    before, stable, empty = run(tmp_path, scenario, **OVERRIDES)
    assert before[GROUP + 'group_count{protocol="streams"}'] == 0
    assert stable[GROUP + 'group_count{protocol="streams"}'] == 1
    assert stable[GROUP + 'streams_group_count{state="Stable"}'] == 1
    assert stable[GROUP + "streams_group_rebalance_count"] == 2  # the join, then the topology found ready
    assert (empty[GROUP + 'streams_group_count{state="Empty"}'], empty[GROUP + 'streams_group_count{state="Stable"}']) \
        == (1, 0)


def test_a_failed_internal_topic_creation_is_told_to_the_members(tmp_path):
    async def scenario(server):
        await _topic(server, "in", 1)
        bad = topology()
        bad["subtopologies"][0]["state_changelog_topics"] = [_topic_info(CHANGELOG, configs={"cleanup.policy": "no"})]
        first = await beat(server, "m1", 0, topology=bad)
        await wait_until(lambda: server.group_coordinator.topic_creation._inflight == set(), "the creation to end")
        second = await beat(server, "m1", first["member_epoch"], **owned(first))
        return [s["status_detail"] for s in second["status"]], server.metadata.get(CHANGELOG)
    details, created = run(tmp_path, scenario, **OVERRIDES)
    assert created is None
    assert len(details) == 1 and details[0].startswith(
        f"Internal topics are missing: {CHANGELOG}; Creation failed: {CHANGELOG} (Invalid value no for configuration "
        "cleanup.policy"), details


def test_a_member_rejoining_at_epoch_zero_keeps_its_tasks_and_epoch(tmp_path):
    """GroupMetadataManagerTest.testStreamsGroupMemberCanRejoinWithEpochZero: epoch 0 is a
    (re-)join, which no member epoch fences."""
    async def scenario(server):
        await _topic(server, "in", 3)
        stable = await _stable_member(server)
        group = server.group_coordinator.streams_groups.group(APP)
        group_epoch = group.group_epoch
        again = await beat(server, "m1", 0)
        return (again["error_code"], again["member_epoch"] == stable["member_epoch"], tasks(again),
                group.group_epoch == group_epoch)
    assert run(tmp_path, scenario, **OVERRIDES) == (Errors.NONE, True, {"0": [0, 1, 2]}, True)


def test_a_leaving_member_is_tombstoned_before_the_group_epoch_moves(tmp_path):
    """GroupMetadataManagerTest.testStreamsLeavingMemberRemovesMemberAndBumpsGroupEpoch: the
    member's current assignment, target and metadata tombstones, then the group's metadata."""
    async def scenario(server):
        await _topic(server, "in", 2)
        await _stable_member(server)
        await beat(server, "m2", 0, process="p2")
        writes = record_writes(server)
        await beat(server, "m2", -1)
        return writes
    assert run(tmp_path, scenario, **OVERRIDES) == [[
        (serde.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT, "m2", True),
        (serde.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER, "m2", True),
        (serde.STREAMS_GROUP_MEMBER_METADATA, "m2", True), (serde.STREAMS_GROUP_METADATA, None, False)]]


def test_a_heartbeat_or_leave_for_a_group_of_another_kind_or_none_names_it_as_kafka_does(tmp_path):
    """getStreamsGroupOrThrow for a heartbeat, streamsGroup (the group lookup of
    GroupMetadataManager.group) for a leave: another kind of group is "not a streams group"."""
    async def scenario(server):
        await stable_single_member_group(server, "classic")
        answers = [await beat(server, "m1", 3, group_id="classic"), await beat(server, "m1", -1, group_id="classic"),
                   await beat(server, "m1", 0, group_id="classic"), await beat(server, "m1", -1, group_id="nope")]
        return [(answer["error_code"], answer["error_message"]) for answer in answers]
    assert run(tmp_path, scenario, **OVERRIDES) == [
        (Errors.GROUP_ID_NOT_FOUND, "Group classic is not a streams group."),
        (Errors.GROUP_ID_NOT_FOUND, "Group classic is not a streams group."),
        (Errors.GROUP_ID_NOT_FOUND, "Group classic is not a streams group."),
        (Errors.GROUP_ID_NOT_FOUND, "Group nope not found.")]


def test_a_new_groups_first_member_hears_endpoint_information_epoch_zero(tmp_path):
    """GroupMetadataManagerTest.testStreamsGroupEndpointInformationOnlyWhenEpochGreater: the
    first heartbeat of a new group answers the endpoints with epoch 0, which the group keeps, so
    the next heartbeat at 0 hears none."""
    async def scenario(server):
        await _topic(server, "in", 2)
        await server.controller.create_topic(CHANGELOG, 2, {})
        endpoint = {"host": "localhost", "port": 9092}
        first = await beat(server, "m1", 0, user_endpoint=endpoint)
        second = await beat(server, "m1", first["member_epoch"], user_endpoint=endpoint, **owned(first))
        return (first["endpoint_information_epoch"], first["partitions_by_user_endpoint"],
                second["endpoint_information_epoch"], second["partitions_by_user_endpoint"])
    assert run(tmp_path, scenario, **OVERRIDES) == (
        0, [{"user_endpoint": {"host": "localhost", "port": 9092},
             "active_partitions": [{"topic": "in", "partitions": [0, 1]}], "standby_partitions": []}], 0, None)


def test_the_delayed_assignment_of_a_new_group_waits_for_a_heartbeat_to_configure_its_topology(tmp_path):
    """computeDelayedTargetAssignment finds no configured topology in a group that one member
    created (Kafka keeps it off the records): the member's next heartbeat assigns."""
    async def scenario(server):
        await _topic(server, "in", 1)
        await server.controller.create_topic(CHANGELOG, 1, {})
        first = await beat(server, "m1", 0)
        group = server.group_coordinator.streams_groups.group(APP)
        timers = server.group_coordinator.streams_groups._timers
        await wait_until(lambda: not timers.is_scheduled("initial-rebalance-timeout-" + APP), "the delay's end")
        after_delay = group.assignment_epoch
        second = await beat(server, "m1", first["member_epoch"], **owned(first))
        return after_delay, tasks(second), group.assignment_epoch == group.group_epoch
    assert run(tmp_path, scenario, group_streams_initial_rebalance_delay_ms="100",
               group_streams_assignment_interval_ms="0") == (1, {"0": [0]}, True)


def test_a_failing_assignor_is_an_unknown_server_error_without_its_message(tmp_path, monkeypatch):
    """maybeUpdateStreamsTargetAssignment turns a TaskAssignorException into an
    UnknownServerException, whose message handleOperationException does not pass on."""
    class FailingAssignor:
        def name(self) -> str:
            return "sticky"

        def assign(self, group_spec, topology_describer):
            raise TaskAssignorException("no")
    monkeypatch.setattr(streams_group_coordinator, "ASSIGNOR", FailingAssignor())

    async def scenario(server):
        await _topic(server, "in", 1)
        await server.controller.create_topic(CHANGELOG, 1, {})
        answer = await beat(server, "m1", 0)
        return answer["error_code"], answer["error_message"], server.group_coordinator.streams_groups.group(APP)
    assert run(tmp_path, scenario, **OVERRIDES) == (Errors.UNKNOWN_SERVER_ERROR, None, None)


def test_a_classic_join_into_a_streams_group_with_members_is_inconsistent_and_names_no_member(tmp_path):
    """GroupMetadataManager.classicGroupJoin: a non-empty streams group answers
    INCONSISTENT_GROUP_PROTOCOL with member id UNKNOWN_MEMBER_ID, whatever id the join gave."""
    async def scenario(server):
        await _topic(server, "in", 1)
        await _stable_member(server)
        answer = await server.group_coordinator.handle_join_group(_Request(), join_body(APP, member_id="x"))
        return answer["error_code"], answer["member_id"]
    assert run(tmp_path, scenario, **OVERRIDES) == (Errors.INCONSISTENT_GROUP_PROTOCOL, "")


def test_the_targets_of_one_assignment_are_written_in_kafkas_hash_map_order(tmp_path):
    """TargetAssignmentBuilder.build walks its HashMap of member specs: "a" before "b", whichever
    joined first."""
    async def scenario(server):
        await _topic(server, "in", 2)
        await server.controller.create_topic(CHANGELOG, 2, {})
        await beat(server, "b", 0)
        writes = record_writes(server)
        await beat(server, "a", 0, process="p2")
        group = server.group_coordinator.streams_groups.group(APP)
        await wait_until(lambda: group.assignment_epoch == group.group_epoch and len(writes) == 2, "the assignment")
        return writes[1]
    assert run(tmp_path, scenario, group_streams_initial_rebalance_delay_ms="200",
               group_streams_assignment_interval_ms="0") == [
        (serde.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER, "a", False),
        (serde.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER, "b", False),
        (serde.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA, None, False)]


def test_describe_answers_empty_ids_first_then_by_coordinator_partition_in_kafkas_hash_map_order(tmp_path):
    """GroupCoordinatorService.streamsGroupDescribe: the invalid ids at once, then one read per
    __consumer_offsets partition, combined in its HashMap's order (partitions 47, 0, 48, 19, 20,
    4, 1, 49 of 50 for these ids, as a JVM orders them)."""
    ids = ["a", "b", "c", "", "d", "e", "app", "nope", "x1", "x2"]

    async def scenario(server):
        described = await server.group_coordinator.handle_streams_group_describe(
            _Request(), {"group_ids": ids, "include_authorized_operations": False})
        return [group["group_id"] for group in described["groups"]]
    assert run(tmp_path, scenario, offsets_topic_num_partitions="50", **OVERRIDES) == [
        "", "a", "d", "b", "x1", "x2", "nope", "e", "app", "c"]


def test_a_commit_at_an_older_epoch_checks_only_the_partitions_it_would_write(tmp_path):
    """OffsetMetadataManager.commitOffset answers a partition whose metadata is too large so,
    before the streams group's per-partition validator sees it."""
    async def scenario(server):
        await _topic(server, "in", 1)
        stable = await _stable_member(server)

        class Commit(_Request):
            api_version = 9
        answer = await server.group_coordinator.handle_offset_commit(Commit(), {
            "group_id": APP, "generation_id_or_member_epoch": stable["member_epoch"] - 1, "member_id": "m1",
            "group_instance_id": None, "retention_time_ms": -1,
            "topics": [{"name": "in", "partitions": [{"partition_index": 0, "committed_offset": 5,
                                                      "committed_leader_epoch": -1,
                                                      "committed_metadata": "x" * 5000}]}]})
        return answer["topics"][0]["partitions"][0]["error_code"]
    assert run(tmp_path, scenario, **OVERRIDES) == Errors.OFFSET_METADATA_TOO_LARGE


def test_deleting_a_group_writes_its_offsets_tombstones_then_the_groups(tmp_path):
    """GroupCoordinatorShard.deleteGroups: deleteAllOffsets, then StreamsGroup.createGroupTombstoneRecords
    (the target assignment epoch, the group epoch, the topology), in one write."""
    async def scenario(server):
        await _topic(server, "in", 1)
        stable = await _stable_member(server)

        class Commit(_Request):
            api_version = 9
        await server.group_coordinator.handle_offset_commit(Commit(), {
            "group_id": APP, "generation_id_or_member_epoch": stable["member_epoch"], "member_id": "m1",
            "group_instance_id": None, "retention_time_ms": -1,
            "topics": [{"name": "in", "partitions": [{"partition_index": 0, "committed_offset": 5,
                                                      "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
        await beat(server, "m1", -1, **owned(stable))
        deleted = await server.group_coordinator.handle_delete_groups(_Request(), {"groups_names": [APP]})
        tail = group_records(server, APP)[-4:]
        return (deleted["results"][0]["error_code"],
                [(getattr(key, "record_type", "offset"), value is None) for key, value in tail])
    assert run(tmp_path, scenario, **OVERRIDES) == (Errors.NONE, [
        ("offset", True), (serde.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA, True), (serde.STREAMS_GROUP_METADATA, True),
        (serde.STREAMS_GROUP_TOPOLOGY, True)])


def test_a_consumer_heartbeat_or_leave_for_a_streams_groups_id_hears_it_is_not_a_consumer_group(tmp_path):
    """getOrMaybeCreateConsumerGroup (any epoch) and consumerGroup (a leave): a streams group's id,
    even an empty group's, is "not a consumer group"; an unknown id for a leave is "not found"."""
    from tests.coordinator.group import test_consumer_group_coordinator as consumer

    async def scenario(server):
        await _topic(server, "in", 1)
        stable = await _stable_member(server)
        answers = [await consumer.beat(server, "x", 3, group_id=APP)]
        await beat(server, "m1", -1, **owned(stable))  # the streams group is empty now
        answers += [await consumer.beat(server, "x", 0, group_id=APP),
                    await consumer.beat(server, "x", -1, group_id=APP),
                    await consumer.beat(server, "x", -1, group_id="nope")]
        return [(answer["error_code"], answer["error_message"]) for answer in answers]
    assert run(tmp_path, scenario, **OVERRIDES) == [
        (Errors.GROUP_ID_NOT_FOUND, f"Group {APP} is not a consumer group."),
        (Errors.GROUP_ID_NOT_FOUND, f"Group {APP} is not a consumer group."),
        (Errors.GROUP_ID_NOT_FOUND, f"Group {APP} is not a consumer group."),
        (Errors.GROUP_ID_NOT_FOUND, "Group nope not found.")]


def test_describe_and_the_endpoints_walk_the_members_in_the_order_of_kafkas_timeline_hash_map(tmp_path):
    """StreamsGroup.asDescribedGroup and buildEndpointToPartitions walk the members' TimelineHashMap:
    for m1, m2 and m3 joined in that order, m2, m1, m3 (as Kafka's BaseHashTable orders them on a JVM)."""
    async def scenario(server):
        await _topic(server, "in", 3)
        await server.controller.create_topic(CHANGELOG, 3, {})
        for number in (1, 2, 3):
            await beat(server, f"m{number}", 0, process=f"p{number}",
                       user_endpoint={"host": f"h{number}", "port": 9000 + number})
        described = await server.group_coordinator.handle_streams_group_describe(
            _Request(), {"group_ids": [APP], "include_authorized_operations": False})
        told = await beat(server, "m3", 0, process="p3", user_endpoint={"host": "h3", "port": 9003},
                          endpoint_information_epoch=-1)
        return ([member["member_id"] for member in described["groups"][0]["members"]],
                [entry["user_endpoint"]["host"] for entry in told["partitions_by_user_endpoint"]])
    assert run(tmp_path, scenario, **OVERRIDES) == (["m2", "m1", "m3"], ["h2", "h1", "h3"])


def test_deleting_a_group_cancels_its_initial_rebalance_delay(tmp_path):
    """GroupMetadataManagerTest.testStreamsGroupDeleteCancelsInitialRebalanceTimer: a group made
    again under the id starts a delay of its own."""
    async def scenario(server):
        await _topic(server, "in", 1)
        first = await beat(server, "m1", 0)
        timers = server.group_coordinator.streams_groups._timers
        scheduled = timers.is_scheduled("initial-rebalance-timeout-" + APP)
        await beat(server, "m1", -1, **owned(first))
        deleted = await server.group_coordinator.handle_delete_groups(_Request(), {"groups_names": [APP]})
        return scheduled, deleted["results"][0]["error_code"], timers.is_scheduled("initial-rebalance-timeout-" + APP)
    assert run(tmp_path, scenario, group_streams_initial_rebalance_delay_ms="60000") == (True, Errors.NONE, False)


def test_during_the_initial_delay_a_member_reconciles_to_the_initial_target_epoch_and_no_target_is_written(tmp_path):
    """GroupMetadataManagerTest.testStreamsInitialRebalanceDelayEmptyDuringDelayAssignsAfterTimer: the
    first member is at epoch 1 (TargetAssignmentMetadata.INITIAL) with nothing; the write holds its
    metadata, the topology, the group epoch and its current assignment, no target. Its leave
    tombstones its target all the same (removeStreamsMember), and deleting the group the target
    epoch, the group epoch and the topology (StreamsGroup.createGroupTombstoneRecords)."""
    async def scenario(server):
        await _topic(server, "in", 1)
        writes = record_writes(server)
        first = await beat(server, "m1", 0)
        await beat(server, "m1", -1, **owned(first))
        await server.group_coordinator.handle_delete_groups(_Request(), {"groups_names": [APP]})
        return first["member_epoch"], tasks(first), writes
    epoch, assigned, writes = run(tmp_path, scenario, group_streams_initial_rebalance_delay_ms="60000")
    assert (epoch, assigned) == (1, {})
    assert writes[0] == [(serde.STREAMS_GROUP_MEMBER_METADATA, "m1", False),
                         (serde.STREAMS_GROUP_TOPOLOGY, None, False),
                         (serde.STREAMS_GROUP_METADATA, None, False),
                         (serde.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT, "m1", False)]
    assert writes[1] == [(serde.STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT, "m1", True),
                         (serde.STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER, "m1", True),
                         (serde.STREAMS_GROUP_MEMBER_METADATA, "m1", True), (serde.STREAMS_GROUP_METADATA, None, False)]
    assert writes[2] == [(serde.STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA, None, True),
                         (serde.STREAMS_GROUP_METADATA, None, True), (serde.STREAMS_GROUP_TOPOLOGY, None, True)]


def test_a_topology_with_its_topic_configs_in_another_order_is_another_topology(tmp_path):
    """maybeUpdateTopology compares StreamsTopology records: their topic config lists are equal only
    in the same order, so the same configs listed otherwise at the same epoch are an update."""
    async def scenario(server):
        await _topic(server, "in", 1)

        def with_configs(*configs: tuple[str, str]) -> dict:
            topology_ = topology()
            topology_["subtopologies"][0]["state_changelog_topics"] = [_topic_info(CHANGELOG, configs=dict(configs))]
            return topology_
        first = await beat(server, "m1", 0, topology=with_configs(("cleanup.policy", "compact"), ("retention.ms", "1")))
        same = await beat(server, "m2", 0, topology=with_configs(("cleanup.policy", "compact"), ("retention.ms", "1")))
        reordered = await beat(server, "m3", 0,
                               topology=with_configs(("retention.ms", "1"), ("cleanup.policy", "compact")))
        return [(answer["error_code"], answer["error_message"]) for answer in (first, same, reordered)]
    assert run(tmp_path, scenario, **OVERRIDES) == [
        (Errors.NONE, None), (Errors.NONE, None), (Errors.INVALID_REQUEST, "Topology updates are not supported yet.")]


def test_an_id_is_empty_when_javas_trim_leaves_nothing_of_it(tmp_path):
    """GroupCoordinatorService.throwIfEmptyString trims as String.trim(): control characters go,
    an ideographic space stays (a member id of its own)."""
    async def scenario(server):
        await _topic(server, "in", 1)
        answers = [await beat(server, "\x01", 0), await beat(server, "\u3000", 0)]
        return [(answer["error_code"], answer["error_message"]) for answer in answers]
    assert run(tmp_path, scenario, **OVERRIDES) == [
        (Errors.INVALID_REQUEST, "MemberId can't be empty."), (Errors.NONE, None)]


def test_a_repartition_topic_is_created_with_its_upstream_partition_count_and_both_subtopologies_run(tmp_path):
    """InternalTopicManager: a repartition topic without a partition count takes the count of the
    subtopology that writes it (RepartitionTopics), so subtopology 1 has as many tasks as the source."""
    async def scenario(server):
        await _topic(server, "in", 3)
        first = await beat(server, "m1", 0, topology=topology(repartition=True))
        await _created(server, CHANGELOG)
        await _created(server, REPARTITION)
        second = await beat(server, "m1", first["member_epoch"], **owned(first))
        repartition = server.metadata.get(REPARTITION)
        return ([s["status_detail"] for s in first["status"]], repartition.num_partitions,
                server.metadata.get(CHANGELOG).num_partitions, tasks(second))
    missing, repartition_partitions, changelog_partitions, assigned = run(tmp_path, scenario, **OVERRIDES)
    assert len(missing) == 1 and missing[0].startswith("Internal topics are missing: "), missing
    assert {CHANGELOG, REPARTITION} == set(missing[0].removeprefix("Internal topics are missing: ").split(", "))
    assert (repartition_partitions, changelog_partitions) == (3, 3)
    assert assigned == {"0": [0, 1, 2], "1": [0, 1, 2]}
