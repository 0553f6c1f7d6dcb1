"""The streams rebalance protocol of KIP-1071: StreamsGroupHeartbeat and StreamsGroupDescribe
(the streams-group half of Kafka's GroupMetadataManager, with the request checks of its
GroupCoordinatorService).

A heartbeat does what Kafka's does, in Kafka's order:
1. create or update the member (a new member or new metadata bumps the group epoch);
2. take the topology the first member brings (a StreamsGroupTopology record); a member
   with an older topology epoch is told STALE_TOPOLOGY, a different one at the same epoch
   is refused ("Topology updates are not supported yet.");
3. configure the topology against the cluster's topics when it is new or a topic it needs
   changed (InternalTopicManager): the internal topics still missing go back to KafkaApis,
   which creates them, and the member hears MISSING_SOURCE_TOPICS,
   MISSING_INTERNAL_TOPICS or INCORRECTLY_PARTITIONED_TOPICS until the topology is ready;
4. bump the group epoch when any of that changed what the task assignor sees, and run the
   assignor (StickyTaskAssignor) for every member when the target is behind, except while
   a new group's initial rebalance delay runs (its first members get no tasks, and the
   delay's end assigns them all together);
5. move the member one step towards its target (CurrentAssignmentBuilder), and answer its
   epoch, its tasks when they changed, and the other members' endpoints when the member's
   view of them is out of date.

Timers run on the broker's event loop (loop.call_later), where every request of this
coordinator runs, so group state needs no lock: a member is fenced (removed, group epoch
bumped) when no heartbeat comes within group.streams.session.timeout.ms, or when it has
not revoked its tasks within its rebalance timeout.

Durability, as for consumer groups: every change is written to the group's partition of
`__consumer_offsets` as Kafka's streams group records (streams_group_records.py) before the
heartbeat is answered; a restarted broker loads the groups back, their configured
topologies computed again at the first heartbeat.

As in Kafka 4.2/4.3, static membership, task offsets, warm-up tasks and regex source
topics are refused as not supported yet.
"""

from __future__ import annotations

import copy
import dataclasses
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Final

from franz.coordinator.group.coordinator_timer import CoordinatorTimer
from franz.coordinator.group.group_metadata import GroupError
from franz.coordinator.group.group_record_writer import GroupRecordWriter, delete_group
from franz.coordinator.group.group_coordinator_metrics import GroupCoordinatorMetrics
from franz.coordinator.group.group_coordinator_record_serde import RecordFormatError
from franz.coordinator.group.streams import streams_group_records
from franz.coordinator.group.streams.assignor.sticky_task_assignor import StickyTaskAssignor
from franz.coordinator.group.streams.assignor.task_assignor import TaskAssignorException
from franz.coordinator.group.streams.current_assignment_builder import CurrentAssignmentBuilder
from franz.coordinator.group.streams.member_state import MemberState
from franz.coordinator.group.streams.streams_coordinator_record_helpers import (
    convert_to_streams_group_topology_record,
)
from franz.coordinator.group.streams.streams_group import StreamsGroup
from franz.coordinator.group.streams.streams_group_member import Endpoint, StreamsGroupMember
from franz.coordinator.group.streams.streams_topology import StreamsTopology
from franz.coordinator.group.streams.target_assignment_builder import TargetAssignmentBuilder
from franz.coordinator.group.streams.tasks_tuple import TasksTuple
from franz.coordinator.group.streams.topics.endpoint_to_partitions_manager import maybe_endpoint_to_partitions
from franz.coordinator.group.streams.topics.internal_topic_manager import configure_topics
from franz.coordinator.group.streams.topics.streams_invalid_topology_exception import StreamsInvalidTopologyException
from franz.coordinator.group.streams.topics.topic_configuration_exception import Status
from franz.protocol.api_keys import AUTHORIZED_OPERATIONS_OMITTED
from franz.protocol.errors import Errors
from franz.records.builder import now_ms

logger = logging.getLogger(__name__)

LEAVE_GROUP_MEMBER_EPOCH: Final = -1
LEAVE_GROUP_STATIC_MEMBER_EPOCH: Final = -2
# The one assignor Kafka's streams groups use (GroupMetadataManager.streamsGroupAssignor).
ASSIGNOR: Final = StickyTaskAssignor()


@dataclasses.dataclass(frozen=True)
class StreamsGroupConfig:
    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 5000
    max_size: int = 2**31 - 1
    num_standby_replicas: int = 0
    initial_rebalance_delay_ms: int = 3000
    assignment_interval_ms: int = 1000

    @classmethod
    def from_kafka_config(cls, config) -> StreamsGroupConfig:
        return cls(config["group.streams.session.timeout.ms"], config["group.streams.heartbeat.interval.ms"],
                   config["group.streams.max.size"], config["group.streams.num.standby.replicas"],
                   config["group.streams.initial.rebalance.delay.ms"], config["group.streams.assignment.interval.ms"])


# the cluster's topics: name -> (topic id, partitions)
TopicsView = Callable[[], dict[str, tuple[bytes, int]]]
# Called with a group id a member joins by StreamsGroupHeartbeat where no streams group is: a new
# group (an empty classic group of the id is retired: the callable to do so once the heartbeat has
# succeeded, and its tombstones to write first). Raises GroupError when another group keeps the id.
ClaimGroupId = Callable[[str], tuple[Callable[[], None], list[tuple[bytes, bytes | None]]]]
# appends records of the group (value None: a tombstone); raises GroupError with Kafka's code
WriteRecords = Callable[[str, list[tuple[bytes, bytes | None]]], Awaitable[Any]]


# what Java's String.trim() strips: every char up to ' ' (throwIfEmptyString trims so)
_JAVA_TRIMMED: Final = "".join(map(chr, range(33)))


def _invalid(message: str) -> GroupError:
    return GroupError(Errors.INVALID_REQUEST, message)


def validate_heartbeat(body: dict) -> None:
    """GroupCoordinatorService's throwIfStreamsGroupHeartbeatRequestIsUsingUnsupportedFeatures,
    then throwIfStreamsGroupHeartbeatRequestIsInvalid, in that order and with their messages."""
    if body["instance_id"] is not None:
        raise _invalid("Static membership is not yet supported.")
    if body["task_offsets"] is not None:
        raise _invalid("TaskOffsets are not supported yet.")
    if body["task_end_offsets"] is not None:
        raise _invalid("TaskEndOffsets are not supported yet.")
    if body["warmup_tasks"]:
        raise _invalid("WarmupTasks are not supported yet.")
    topology = body["topology"]
    if topology is not None:
        for subtopology in topology["subtopologies"]:
            if subtopology["source_topic_regex"]:
                raise _invalid("Regular expressions for source topics are not supported yet.")
    for field, name in (("member_id", "MemberId"), ("group_id", "GroupId"), ("instance_id", "InstanceId"),
                        ("rack_id", "RackId")):
        if body[field] is not None and not body[field].strip(_JAVA_TRIMMED):
            raise _invalid(f"{name} can't be empty.")
    epoch = body["member_epoch"]
    if epoch == 0:
        if body["rebalance_timeout_ms"] == -1:
            raise _invalid("RebalanceTimeoutMs must be provided in first request.")
        for field, name in (("active_tasks", "ActiveTasks"), ("standby_tasks", "StandbyTasks"),
                            ("warmup_tasks", "WarmupTasks")):
            if body[field]:
                raise _invalid(f"{name} must be empty when (re-)joining.")
        if topology is None:
            raise _invalid("Topology must be non-null when (re-)joining.")
        for subtopology in topology["subtopologies"]:
            for topic in subtopology["state_changelog_topics"]:
                if topic["partitions"] != 0:
                    raise GroupError(Errors.STREAMS_INVALID_TOPOLOGY, f"Changelog topic {topic['name']} must have "
                                     f"an undefined partition count, but it is set to {topic['partitions']}.")
    elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if body["instance_id"] is None:
            raise _invalid("InstanceId can't be null.")
    elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise _invalid(f"MemberEpoch is {epoch}, but must be greater than or equal to -2.")
    tasks = (body["active_tasks"], body["standby_tasks"], body["warmup_tasks"])
    if any(t is not None for t in tasks) and any(t is None for t in tasks):
        raise _invalid("If one task-type is non-null, all must be non-null.")
    if epoch != 0 and topology is not None:
        raise _invalid("Topology can only be provided when (re-)joining.")


def _snapshot(group: StreamsGroup) -> dict[str, Any]:
    """The group's state, to put back when a heartbeat fails. What a heartbeat changes in place
    are the group's maps (members, targets, task owners) and the owner sets in them; members,
    tasks and topologies are immutable and replaced, so the copy shares them (a deep copy would
    cost a large group milliseconds at every heartbeat)."""
    def copied(value: Any) -> Any:
        if isinstance(value, dict):
            return {key: set(item) if isinstance(item, set) else item for key, item in value.items()}
        if isinstance(value, (set, list)):
            return copy.copy(value)
        return value
    return {name: copied(value) for name, value in vars(group).items()}


def _restore(group: StreamsGroup, snapshot: dict[str, Any]) -> None:
    """Put the state back into the group object itself: timers and background writes hold it."""
    vars(group).clear()
    vars(group).update(snapshot)


def _task_map(task_ids: Iterable[dict] | None) -> dict[str, frozenset[int]]:
    return {t["subtopology_id"]: frozenset(t["partitions"]) for t in task_ids or ()}


def _contains(owned: list[dict] | None, assigned) -> bool:
    """areOwnedTasksContainedInAssignedTasks: every owned task is in `assigned` (subtopology ->
    partitions, or partitions -> epochs)."""
    if owned is None:
        return False
    return all(t["subtopology_id"] in assigned and all(p in assigned[t["subtopology_id"]] for p in t["partitions"])
               for t in owned)


def _answer_tasks(tasks) -> list[dict]:
    return [{"subtopology_id": subtopology, "partitions": sorted(partitions)}
            for subtopology, partitions in tasks.items()]


def error_answer(code: int, message: str | None) -> dict:
    """A StreamsGroupHeartbeat response with the generated class's defaults but for the error."""
    return {"throttle_time_ms": 0, "error_code": code, "error_message": message, "member_id": "",
            "member_epoch": 0, "heartbeat_interval_ms": 0, "acceptable_recovery_lag": 0,
            "task_offset_interval_ms": 0, "status": [], "active_tasks": None, "standby_tasks": None,
            "warmup_tasks": None, "endpoint_information_epoch": 0, "partitions_by_user_endpoint": None}


def described_group_error(group_id: str, code: int, message: str | None) -> dict:
    """A StreamsGroupDescribe DescribedGroup with the generated class's defaults but for the id and error."""
    return {"error_code": code, "error_message": message, "group_id": group_id, "group_state": "", "group_epoch": 0,
            "assignment_epoch": 0, "topology": None, "members": [],
            "authorized_operations": AUTHORIZED_OPERATIONS_OMITTED}


class StreamsGroupCoordinator:
    def __init__(self, config: StreamsGroupConfig, topics: TopicsView, claim_group_id: ClaimGroupId,
                 write: WriteRecords, group_configs=None, metrics: GroupCoordinatorMetrics | None = None,
                 clock_ms: Callable[[], int] = now_ms, other_group_exists: Callable[[str], bool] = lambda _id: False
                 ) -> None:
        self.config = config
        # whether a group of another kind holds an id: Kafka tells "not a streams group" then
        self._other_group_exists = other_group_exists
        self.metrics = metrics if metrics is not None else GroupCoordinatorMetrics()
        self._group_configs = group_configs  # a group's own streams.* configs (GroupConfigManager)
        self._topics = topics
        self._claim_group_id = claim_group_id
        self._clock_ms = clock_ms
        self.groups: dict[str, StreamsGroup] = {}
        self._timers = CoordinatorTimer()
        self._writer = GroupRecordWriter("streams", streams_group_records.records_of, streams_group_records.changes,
                                         write)

    def group(self, group_id: str) -> StreamsGroup | None:
        return self.groups.get(group_id)

    async def shutdown(self) -> None:
        self._timers.cancel_all()
        await self._writer.drain()  # writes of timer changes: let them land

    # -- group configs -------------------------------------------------------------------

    def _group_value(self, group_id: str, name: str, default: int) -> int:
        return default if self._group_configs is None else self._group_configs.value(group_id, name)

    def _session_timeout_ms(self, group_id: str) -> int:
        return self._group_value(group_id, "streams.session.timeout.ms", self.config.session_timeout_ms)

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self._group_value(group_id, "streams.heartbeat.interval.ms", self.config.heartbeat_interval_ms)

    def _initial_rebalance_delay_ms(self, group_id: str) -> int:
        return self._group_value(group_id, "streams.initial.rebalance.delay.ms",
                                 self.config.initial_rebalance_delay_ms)

    def _assignment_interval_ms(self, group_id: str) -> int:
        return self._group_value(group_id, "streams.assignment.interval.ms", self.config.assignment_interval_ms)

    def assignment_configs(self, group_id: str) -> dict[str, str]:
        """streamsGroupAssignmentConfigs: what the assignor is told, and what a change of rebalances."""
        standbys = self._group_value(group_id, "streams.num.standby.replicas", self.config.num_standby_replicas)
        return {"num.standby.replicas": str(standbys)}

    # -- records -------------------------------------------------------------------------

    async def persist(self, group: StreamsGroup, before: list[tuple[bytes, bytes | None]] = ()) -> None:
        """Write what changed in the group since its last write (after `before`, records of the
        same id that must land first: a retired classic group's tombstone)."""
        await self._writer.persist(group, before)

    def load(self, records_by_group: dict[str, dict[Any, bytes | None]]) -> int:
        """Rebuild the groups from the last record of every key read from `__consumer_offsets`
        (None: a tombstone) and restart their members' sessions; the number of groups."""
        for group_id, records in records_by_group.items():
            live = {key: value for key, value in records.items() if value is not None}
            try:
                group = streams_group_records.load(group_id, live)
            except (RecordFormatError, AssertionError, KeyError) as exc:
                logger.error("[GroupId %s] Skipping the streams group's records that do not load: %s", group_id, exc)
                continue
            if group is None:
                continue
            group.persisted = streams_group_records.records_of(group)
            self.groups[group_id] = group
            for member in group.members.values():
                self._schedule_session_timeout(group_id, member.member_id)
                if member.state is MemberState.UNREVOKED_TASKS:
                    self._schedule_rebalance_timeout(group_id, member.member_id, member.member_epoch,
                                                     member.rebalance_timeout_ms)
        return len(self.groups)

    async def delete_group(self, group_id: str, before: list[tuple[bytes, bytes | None]] = ()) -> None:
        """Forget an empty group (DeleteGroups) and tombstone its records, in one write after
        `before` (DeleteGroups' offset tombstones). Raises GroupError when the write fails."""
        # createGroupTombstoneRecordsAndCancelTimers: a later group of the id gets its own delay,
        # and the group's own records are tombstoned, written or not
        self._timers.cancel(_initial_rebalance_key(group_id))
        group = self.groups.get(group_id)
        if group is not None:
            for key in streams_group_records.group_keys(group_id):
                group.persisted.setdefault(key, b"")
        await delete_group(self.groups, group_id, lambda group: self._writer.persist(group, before))

    # -- StreamsGroupHeartbeat -------------------------------------------------------------

    async def heartbeat(self, client_id: str, client_host: str, body: dict) -> tuple[dict, dict[str, dict]]:
        """The answer once the change it made is written, and the internal topics KafkaApis is
        to create (name -> CreateTopics topic)."""
        try:
            validate_heartbeat(body)
            before: list[tuple[bytes, bytes | None]] = []
            if body["member_epoch"] in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                answer, to_create = self._leave(body), {}
                group = self.groups[body["group_id"]]
            else:
                answer, group, to_create, before = self._heartbeat(client_id, client_host, body)
            await self.persist(group, before)
            return answer, to_create
        except GroupError as exc:
            # CoordinatorOperationExceptionHelper: an unexpected error is logged, not told
            return error_answer(exc.code, None if exc.code == Errors.UNKNOWN_SERVER_ERROR else str(exc)), {}
        except Exception as exc:  # noqa: BLE001 - CoordinatorOperationExceptionHelper.handleOperationException
            # Kafka answers what it did not expect UNKNOWN_SERVER_ERROR without a message (a
            # negative topology epoch, two subtopologies of one id, a repartition topic's partition
            # count below 1, a not-ready topology's endpoints), having undone the heartbeat.
            logger.error("Operation streams-group-heartbeat with %s hit an unexpected exception: %s.", body, exc,
                         exc_info=True)
            return error_answer(Errors.UNKNOWN_SERVER_ERROR, None), {}

    def _streams_group(self, group_id: str, not_found: str = "Streams group {} not found.") -> StreamsGroup:
        """getStreamsGroupOrThrow (streamsGroup with `not_found` "Group {} not found.")."""
        group = self.groups.get(group_id)
        if group is None:
            message = "Group {} is not a streams group." if self._other_group_exists(group_id) else not_found
            raise GroupError(Errors.GROUP_ID_NOT_FOUND, message.format(group_id))
        return group

    def _heartbeat(self, client_id: str, client_host: str,
                   body: dict) -> tuple[dict, StreamsGroup, dict[str, dict], list[tuple[bytes, bytes | None]]]:
        group_id = body["group_id"]
        joining = body["member_epoch"] == 0
        retire_classic: Callable[[], None] | None = None
        before: list[tuple[bytes, bytes | None]] = []
        created = False
        if joining and group_id not in self.groups:
            retire_classic, before = self._claim_group_id(group_id)
            group, created = StreamsGroup(group_id), True
        else:
            group = self._streams_group(group_id)
        if joining and len(group.members) >= self.config.max_size:
            raise GroupError(Errors.GROUP_MAX_SIZE_REACHED, f"The streams group has reached its maximum capacity "
                             f"of {self.config.max_size} members.")
        if created:
            self.groups[group_id] = group
        undo = None if created else _snapshot(group)
        try:
            answer, to_create = self._heartbeat_in(group, client_id, client_host, body)
        except Exception:
            # Kafka's coordinator runtime reverts a failed operation's changes (its timeline
            # snapshot): what a heartbeat changed before it failed is neither kept nor written.
            if undo is None:
                del self.groups[group_id]
            else:
                _restore(group, undo)
            raise
        if created:
            # Kafka runs a new group's first heartbeat on a group object that the replay of its
            # records then replaces: what is kept outside the records (the configured topology, the
            # endpoint information epoch, a shutdown request) is lost, and the answer tells endpoint
            # information epoch 0 unless the id was an empty classic group's, still in its group map
            if not before:
                answer["endpoint_information_epoch"] = 0
            group.configured_topology = None
            group.endpoint_information_epoch = 0
            group.shutdown_request_member_id = None
        if retire_classic is not None:
            retire_classic()
        return answer, group, to_create, before

    def _member(self, group: StreamsGroup, member_id: str, epoch: int, body: dict) -> StreamsGroupMember:
        """getOrMaybeCreateDynamicStreamsGroupMember with throwIfStreamsGroupMemberEpochIsInvalid."""
        member = group.members.get(member_id)
        if member is None:
            if epoch != 0:
                raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group "
                                 f"{group.group_id}.")
            member = StreamsGroupMember(member_id)
        if epoch == 0:  # a (re-)join is never fenced, whatever epoch the member had
            logger.info("[GroupId %s][MemberId %s] Member joins the streams group.", group.group_id, member_id)
            return member
        if epoch > member.member_epoch:
            raise GroupError(Errors.FENCED_MEMBER_EPOCH, f"The streams group member has a greater member epoch "
                             f"({epoch}) than the one known by the group coordinator ({member.member_epoch}). The "
                             f"member must abandon all its partitions and rejoin.")
        if epoch < member.member_epoch:
            # The previous epoch with a subset of the current tasks is taken: the answer with the
            # bumped epoch may have been lost.
            assigned = member.assigned_tasks
            if (epoch != member.previous_member_epoch
                    or not _contains(body["active_tasks"], assigned.active_tasks_with_epochs)
                    or not _contains(body["standby_tasks"], assigned.standby_tasks)
                    or not _contains(body["warmup_tasks"], assigned.warmup_tasks)):
                raise GroupError(Errors.FENCED_MEMBER_EPOCH, f"The streams group member has a smaller member "
                                 f"epoch ({epoch}) than the one known by the group coordinator "
                                 f"({member.member_epoch}). The member must abandon all its partitions and rejoin.")
        return member

    def _heartbeat_in(self, group: StreamsGroup, client_id: str, client_host: str,
                      body: dict) -> tuple[dict, dict[str, dict]]:
        group_id, member_id, epoch = group.group_id, body["member_id"], body["member_epoch"]
        statuses: list[dict] = []
        member = self._member(group, member_id, epoch, body)

        # 1. the member, with what this heartbeat says of it
        topology_body = body["topology"]
        endpoint = body["user_endpoint"]
        updated = dataclasses.replace(
            member,
            rack_id=body["rack_id"] if body["rack_id"] is not None else member.rack_id,
            rebalance_timeout_ms=(body["rebalance_timeout_ms"] if body["rebalance_timeout_ms"] != -1
                                  else member.rebalance_timeout_ms),
            topology_epoch=topology_body["epoch"] if topology_body is not None else member.topology_epoch,
            client_id=client_id, client_host=client_host,
            process_id=body["process_id"] if body["process_id"] is not None else member.process_id,
            client_tags=({kv["key"]: kv["value"] for kv in body["client_tags"]} if body["client_tags"] is not None
                         else member.client_tags),
            user_endpoint=member.user_endpoint if endpoint is None else Endpoint(endpoint["host"], endpoint["port"]))
        bump = updated != member or member_id not in group.members
        if bump:
            logger.info("[GroupId %s] Member %s updated its member metadata to %s.", group_id, member_id, updated)

        # 2. the topology
        topology = self._maybe_update_topology(group, member_id, topology_body)
        if topology.topology_epoch > updated.topology_epoch:
            statuses.append({"status_code": Status.STALE_TOPOLOGY, "status_detail":
                             f"The member's topology epoch {updated.topology_epoch} is behind the group's topology "
                             f"epoch {topology.topology_epoch}."})

        # 3. the topics it needs. Kafka computes their hash again when one of them changed (its
        # onMetadataUpdate asks the groups that need the topic for a refresh) and every 10 s;
        # franz sees every topic change at once, so it computes the hash at every heartbeat, which
        # comes to the same: the group epoch moves with the first heartbeat after a change.
        topics = self._topics()
        reconfigure = group.topology is None or group.topology != topology
        group.topology = topology
        metadata_hash = group.compute_metadata_hash(topics, topology)
        if metadata_hash != group.metadata_hash:
            logger.info("[GroupId %s][MemberId %s] Computed new metadata hash: %d.", group_id, member_id,
                        metadata_hash)
            bump = reconfigure = True
        if reconfigure or group.configured_topology is None:
            logger.info("[GroupId %s][MemberId %s] Configuring the topology %d", group_id, member_id,
                        topology.topology_epoch)
            try:
                group.configured_topology = configure_topics(metadata_hash, topology, topics)
            except StreamsInvalidTopologyException as exc:
                raise GroupError(Errors.STREAMS_INVALID_TOPOLOGY, exc.message) from exc
        configured = group.configured_topology
        validated_topology_epoch = -1
        if configured.is_ready():
            validated_topology_epoch = topology.topology_epoch
            for field in ("active_tasks", "standby_tasks", "warmup_tasks"):
                _throw_if_invalid_tasks(configured.subtopologies, body[field])
        if validated_topology_epoch != group.validated_topology_epoch:
            bump = True
        assignment_configs = self.assignment_configs(group_id)
        if not bump and assignment_configs != group.last_assignment_configs:
            logger.info("[GroupId %s][MemberId %s] Assignment configurations changed to %s. Triggering rebalance.",
                        group_id, member_id, assignment_configs)
            bump = True

        was_empty = not group.members
        group.update_member(updated)
        if bump:
            group.group_epoch += 1
            group.metadata_hash = metadata_hash
            group.validated_topology_epoch = validated_topology_epoch
            group.last_assignment_configs = assignment_configs
            self.metrics.streams_group_rebalances += 1
            logger.info("[GroupId %s][MemberId %s] Bumped streams group epoch to %d with metadata hash %d and "
                        "validated topic epoch %d.", group_id, member_id, group.group_epoch, metadata_hash,
                        validated_topology_epoch)

        # 4. the target assignment, unless the first members of a group are still gathering (the
        # initial rebalance delay, started by a member joining an empty group) or the last one is
        # younger than the group's assignment interval (KIP-1263)
        if was_empty:
            delay = self._initial_rebalance_delay_ms(group_id)
            if delay > 0:
                self._timers.schedule_if_absent(_initial_rebalance_key(group_id), delay,
                                                lambda: self._compute_delayed_assignment(group_id))
        target_epoch, target = self._maybe_update_target_assignment(group, member_id, statuses, assignment_configs)

        # 5. one step towards it
        after = self._reconcile(group, member_id, target_epoch, target, body)
        self._schedule_session_timeout(group_id, member_id)
        if body["shutdown_application"] and group.shutdown_request_member_id is None:
            logger.info("[GroupId %s][MemberId %s] Shutdown requested for the streams application.", group_id,
                        member_id)
            group.shutdown_request_member_id = member_id

        answer = {**error_answer(Errors.NONE, None), "member_id": member_id, "member_epoch": after.member_epoch,
                  "heartbeat_interval_ms": self.heartbeat_interval_ms(group_id)}
        if epoch == 0 or after.assigned_tasks != member.assigned_tasks:
            assigned = after.assigned_tasks
            answer.update(active_tasks=_answer_tasks(assigned.active_tasks_with_epochs),
                          standby_tasks=_answer_tasks(assigned.standby_tasks),
                          warmup_tasks=_answer_tasks(assigned.warmup_tasks))
            if after.user_endpoint is not None:
                group.endpoint_information_epoch += 1
        if group.endpoint_information_epoch != body["endpoint_information_epoch"]:
            answer["partitions_by_user_endpoint"] = self._endpoints(group, after, topics)
        answer["endpoint_information_epoch"] = group.endpoint_information_epoch
        to_create: dict[str, dict] = {}
        if configured.topic_configuration_exception is not None:
            exception = configured.topic_configuration_exception
            to_create = configured.internal_topics_to_be_created
            statuses.append({"status_code": exception.status, "status_detail": exception.message})
        if group.shutdown_request_member_id is not None:
            statuses.append({"status_code": Status.SHUTDOWN_APPLICATION, "status_detail":
                             f"Streams group member {group.shutdown_request_member_id} encountered a fatal error and "
                             f"requested a shutdown for the entire application."})
        answer["status"] = statuses
        return answer, to_create

    def _maybe_update_topology(self, group: StreamsGroup, member_id: str, topology: dict | None) -> StreamsTopology:
        """maybeUpdateTopology: the first topology brought is the group's; an older epoch keeps
        the group's; another at the same epoch is refused."""
        if topology is None:
            if group.topology is None:
                raise GroupError(Errors.UNKNOWN_SERVER_ERROR, "The topology is null and the group topology is "
                                 "also null.")
            return group.topology
        from_request = StreamsTopology.from_heartbeat_request(topology)
        if group.topology is None:
            logger.info("[GroupId %s][MemberId %s] Member initialized the topology with epoch %d", group.group_id,
                        member_id, topology["epoch"])
            return from_request
        if group.topology.topology_epoch > topology["epoch"]:
            logger.info("[GroupId %s][MemberId %s] Member joined with stale topology epoch %d", group.group_id,
                        member_id, topology["epoch"])
            return group.topology
        if not _same_topology(group.topology, from_request):
            raise _invalid("Topology updates are not supported yet.")
        return group.topology

    def _maybe_update_target_assignment(self, group: StreamsGroup, member_id: str | None, statuses: list[dict] | None,
                                        configs: dict[str, str]) -> tuple[int, TasksTuple]:
        """maybeUpdateStreamsTargetAssignment: the target epoch, and the member's target, after
        running the sticky assignor over every member when the group epoch is ahead and nothing
        holds the assignment back (a status ASSIGNMENT_DELAYED says what does)."""
        group_id = group.group_id
        if self._timers.is_scheduled(_initial_rebalance_key(group_id)):
            if statuses is not None:
                statuses.append({"status_code": Status.ASSIGNMENT_DELAYED, "status_detail":
                                 "Assignment delayed due to the configured initial rebalance delay."})
            return group.assignment_epoch, TasksTuple.EMPTY
        last = (group.assignment_epoch,
                TasksTuple.EMPTY if member_id is None else group.target_assignment_of(member_id))
        if group.assignment_epoch >= group.group_epoch:
            return last
        interval_ms = self._assignment_interval_ms(group_id)
        now = self._clock_ms()
        last_at = group.assignment_timestamp_ms
        if last_at != 0 and interval_ms != 0 and now < last_at + interval_ms:  # canComputeNextTargetAssignment
            if statuses is not None:
                statuses.append({"status_code": Status.ASSIGNMENT_DELAYED, "status_detail":
                                 "Assignment delayed due to the configured assignment interval."})
            return last
        try:
            result = (TargetAssignmentBuilder(group_id, group.group_epoch, ASSIGNOR, configs)
                      .with_members({member.member_id: member for member in group.members_in_kafka_order()})
                      .with_topology(group.configured_topology)
                      .with_static_members({}).with_metadata_image(self._topics())
                      .with_target_assignment(group.target_assignment).build())
        except TaskAssignorException as exc:
            message = f"Failed to compute a new target assignment for epoch {group.group_epoch}: {exc}"
            logger.error("[GroupId %s] %s.", group_id, message)
            raise GroupError(Errors.UNKNOWN_SERVER_ERROR, message) from exc
        group.target_assignment = dict(result.target_assignment)
        group.assignment_epoch = group.group_epoch
        group.assignment_timestamp_ms = self._clock_ms()
        logger.info("[GroupId %s] Computed a new target assignment for epoch %d with '%s' assignor.", group_id,
                    group.group_epoch, ASSIGNOR.name())
        return group.assignment_epoch, (TasksTuple.EMPTY if member_id is None
                                        else group.target_assignment_of(member_id))

    def _compute_delayed_assignment(self, group_id: str) -> None:
        """computeDelayedTargetAssignment: the initial rebalance delay is over."""
        group = self.groups.get(group_id)
        if group is None or not group.members:
            logger.info("[GroupId %s] Skipping delayed target assignment: group is empty", group_id)
            return
        if group.configured_topology is None:
            logger.warning("[GroupId %s] Cannot compute delayed target assignment: configured topology is not "
                           "present", group_id)
            return
        try:
            self._maybe_update_target_assignment(group, None, None, group.last_assignment_configs)
        except GroupError as exc:
            logger.warning("[GroupId %s] %s", group_id, exc)
            return
        self._writer.persist_in_background(group)

    def _reconcile(self, group: StreamsGroup, member_id: str, target_epoch: int, target: TasksTuple,
                   body: dict) -> StreamsGroupMember:
        """maybeReconcile: one step of CurrentAssignmentBuilder; the member after."""
        member = group.members[member_id]
        if member.is_reconciled_to(target_epoch):
            return member
        owned = None
        if all(body[field] is not None for field in ("active_tasks", "standby_tasks", "warmup_tasks")):
            owned = TasksTuple(_task_map(body["active_tasks"]), _task_map(body["standby_tasks"]),
                               _task_map(body["warmup_tasks"]))
        after = (CurrentAssignmentBuilder(member).with_target_assignment(target_epoch, target)
                 .with_current_active_task_process_id(group.current_active_task_process_id_of)
                 .with_current_standby_task_process_ids(group.current_standby_task_process_ids_of)
                 .with_current_warmup_task_process_ids(group.current_warmup_task_process_ids_of)
                 .with_owned_assignment(owned).build())
        if after != member:
            group.update_member(after)
            logger.info("[GroupId %s][MemberId %s] Member's new assignment state: epoch=%d, previousEpoch=%d, "
                        "state=%s, assignedTasks=%s and tasksPendingRevocation=%s.", group.group_id, member_id,
                        after.member_epoch, after.previous_member_epoch, after.state, after.assigned_tasks,
                        after.tasks_pending_revocation)
            if after.state is MemberState.UNREVOKED_TASKS:
                self._schedule_rebalance_timeout(group.group_id, member_id, after.member_epoch,
                                                 after.rebalance_timeout_ms)
            else:
                self._timers.cancel((group.group_id, member_id, "rebalance"))
        return after

    def _endpoints(self, group: StreamsGroup, updated: StreamsGroupMember,
                   topics: dict[str, tuple[bytes, int]]) -> list[dict]:
        """maybeBuildEndpointToPartitions: every other member's endpoint, then the member's own."""
        answers = []
        others = (member for member in group.members_in_kafka_order() if member.member_id != updated.member_id)
        for member in [*others, updated]:
            endpoint = member.user_endpoint
            entry = maybe_endpoint_to_partitions(
                None if endpoint is None else {"host": endpoint.host, "port": endpoint.port},
                member.assigned_tasks.active_tasks_with_epochs, member.assigned_tasks.standby_tasks,
                group.configured_topology, topics)
            if entry is not None:
                answers.append(entry)
        return answers

    def _leave(self, body: dict) -> dict:
        """streamsGroupLeave: the member goes (static members are refused earlier)."""
        group_id, member_id = body["group_id"], body["member_id"]
        group = self._streams_group(group_id, "Group {} not found.")
        if body["shutdown_application"] and group.shutdown_request_member_id is None:
            group.shutdown_request_member_id = member_id
        group.member_or_raise(member_id)
        logger.info("[GroupId %s][MemberId %s] Member %s left the streams group.", group_id, member_id, member_id)
        self.fence_member(group, member_id)
        return {**error_answer(Errors.NONE, None), "member_id": member_id, "member_epoch": body["member_epoch"]}

    def fence_member(self, group: StreamsGroup, member_id: str) -> None:
        """streamsGroupFenceMember: the member and its target go, and the group epoch moves up."""
        group.remove_member(member_id)
        group.target_assignment.pop(member_id, None)
        for key in streams_group_records.member_keys(group.group_id, member_id):
            group.persisted.setdefault(key, b"")  # tombstoned, written or not
        group.group_epoch += 1
        self._cancel_all(group.group_id, member_id)

    # -- timers --------------------------------------------------------------------------

    def _cancel_all(self, group_id: str, member_id: str) -> None:
        for kind in ("session", "rebalance"):
            self._timers.cancel((group_id, member_id, kind))

    def _fence_on_timer(self, group_id: str, member_id: str, reason: str) -> None:
        group = self.groups.get(group_id)
        if group is not None and member_id in group.members:
            logger.info("[GroupId %s] Streams member %s fenced from the group because %s.", group_id, member_id,
                        reason)
            self.fence_member(group, member_id)
            self._writer.persist_in_background(group)

    def _schedule_session_timeout(self, group_id: str, member_id: str) -> None:
        self._timers.schedule((group_id, member_id, "session"), self._session_timeout_ms(group_id),
                              lambda: self._fence_on_timer(group_id, member_id, "the member session expired."))

    def _schedule_rebalance_timeout(self, group_id: str, member_id: str, epoch: int, timeout_ms: int) -> None:
        def expire() -> None:
            group = self.groups.get(group_id)
            member = None if group is None else group.members.get(member_id)
            if member is not None and member.member_epoch == epoch:
                self._fence_on_timer(group_id, member_id, f"it failed to transition from epoch {epoch} within "
                                     f"{timeout_ms}ms")
        self._timers.schedule((group_id, member_id, "rebalance"), timeout_ms, expire)

    # -- StreamsGroupDescribe ------------------------------------------------------------

    def describe(self, group_ids: list[str]) -> list[dict]:
        answers = []
        for group_id in group_ids:
            group = self.groups.get(group_id)
            if group is None:
                message = (f"Group {group_id} is not a streams group." if self._other_group_exists(group_id)
                           else f"Group {group_id} not found.")
                answers.append(described_group_error(group_id, Errors.GROUP_ID_NOT_FOUND, message))
                continue
            answers.append({**group.as_described_group(), "authorized_operations": AUTHORIZED_OPERATIONS_OMITTED})
        return answers


def _same_topology(one: StreamsTopology, other: StreamsTopology) -> bool:
    """Kafka's StreamsTopology equality: the same epoch and subtopologies by id, each the same
    record data, whose lists (topic configs too) are equal only in the same order."""
    def by_id(topology: StreamsTopology) -> dict[str, dict]:
        record = convert_to_streams_group_topology_record(topology)
        return {subtopology["subtopology_id"]: subtopology for subtopology in record["subtopologies"]}
    return one.topology_epoch == other.topology_epoch and by_id(one) == by_id(other)


def _initial_rebalance_key(group_id: str) -> str:
    return "initial-rebalance-timeout-" + group_id


def _throw_if_invalid_tasks(subtopologies, tasks: list[dict] | None) -> None:
    """throwIfRequestContainsInvalidTasks: every task a member says it owns exists."""
    for task in tasks or ():
        subtopology = subtopologies.get(task["subtopology_id"])
        if subtopology is None:
            raise _invalid(f"Subtopology {task['subtopology_id']} does not exist in the topology.")
        for partition in task["partitions"]:
            if not 0 <= partition < subtopology.number_of_tasks:
                raise _invalid(f"Task {partition} for subtopology {task['subtopology_id']} is invalid. Number of "
                               f"tasks for this subtopology: {subtopology.number_of_tasks}")
