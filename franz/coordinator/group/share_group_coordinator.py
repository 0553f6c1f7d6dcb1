"""KIP-932 share groups: ShareGroupHeartbeat and ShareGroupDescribe (the share-group half of
Kafka's GroupMetadataManager).

A heartbeat, as Kafka 4.3's:
1. creates or updates the member (its id is the client's own); a new member, another
   subscription, a change of the subscribed topics' metadata hash, or initialized
   partitions the target does not cover yet bump the group epoch;
2. when the group epoch is ahead of the target assignment (and the assignment
   interval allows), runs the simple assignor (simple_assignor.py) over the
   partitions whose share state is initialized;
3. moves the member to the target at once (share members own nothing exclusively:
   there is no revocation) and answers its epoch and, when it changed or the request
   was a full one, its assignment;
4. asks the share coordinator to initialize the state of subscribed partitions that
   have none (ShareGroupStatePartitionMetadata: initializing, then initialized), in
   the background after the heartbeat's records are written; a later heartbeat then
   sees initialized partitions the target lacks and assigns them.

A member leaves with epoch -1, or is fenced when no heartbeat comes within
share.session.timeout.ms; both bump the group epoch. Timers run on the broker's
event loop, where every request of this coordinator runs, so no lock is needed.

Durability: every change is written as Kafka's share group records
(share_group_records.py) to the group's partition of `__consumer_offsets` before
the heartbeat is answered; a restarted broker loads the groups back. A change made
by a timer or an initialization is written in the background.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Final

from franz.coordinator.group import group_config, share_group_records, simple_assignor
from franz.coordinator.group import group_coordinator_record_serde as serde
from franz.coordinator.group.coordinator_timer import CoordinatorTimer
from franz.coordinator.group.group_coordinator_metrics import GroupCoordinatorMetrics
from franz.coordinator.group.group_coordinator_record_serde import ConsumerGroupRecordKey
from franz.coordinator.group.group_metadata import GroupError
from franz.coordinator.group.group_record_writer import GroupRecordWriter
from franz.coordinator.group.metadata_hash import metadata_hash
from franz.coordinator.group.share_group import (
    JOIN_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_MEMBER_EPOCH,
    Assignment,
    InitializingPartitions,
    ShareGroup,
    ShareGroupMember,
    member_id_valid,
)
from franz.coordinator.share.share_coordinator import UNINITIALIZED_START_OFFSET, ShareCoordinator, ShareStateError
from franz.coordinator.share.share_coordinator_record_serde import SharePartitionKey
from franz.protocol.errors import Errors

logger = logging.getLogger(__name__)

# group.share.initialize.retry.interval.ms (internal): partitions still initializing after it
# are asked for again.
INITIALIZE_RETRY_INTERVAL_MS: Final = 30_000

TopicsView = Callable[[], dict[str, tuple[bytes, int]]]  # name -> (topic id, partition count)
WriteRecords = Callable[[str, list[tuple[bytes, bytes | None]]], Awaitable[None]]


@dataclasses.dataclass(frozen=True)
class ShareGroupConfig:
    max_size: int
    session_timeout_ms: int
    heartbeat_interval_ms: int
    assignment_interval_ms: int

    @classmethod
    def from_kafka_config(cls, config) -> ShareGroupConfig:
        return cls(config["group.share.max.size"], config["group.share.session.timeout.ms"],
                   config["group.share.heartbeat.interval.ms"], config["group.share.assignment.interval.ms"])


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


class ShareGroupCoordinator:
    def __init__(self, config: ShareGroupConfig, topics: TopicsView, write: WriteRecords,
                 share_coordinator: ShareCoordinator, is_other_group: Callable[[str], bool],
                 group_configs=None, clock_ms: Callable[[], int] = _now_ms,
                 metrics: GroupCoordinatorMetrics | None = None) -> None:
        self.config = config
        self.metrics = metrics if metrics is not None else GroupCoordinatorMetrics()
        self._topics = topics
        self._writer = GroupRecordWriter("share", share_group_records.records_of, share_group_records.changes, write)
        self._share_coordinator = share_coordinator
        self._is_other_group = is_other_group  # a group of another kind holds this id
        self._group_configs = group_configs
        self._clock_ms = clock_ms
        self.groups: dict[str, ShareGroup] = {}
        self._timers = CoordinatorTimer()  # keyed (group id, member id): the member's session

    async def shutdown(self) -> None:
        self._timers.cancel_all()
        await self._writer.drain()

    def _group_value(self, group_id: str, name: str) -> int:
        if self._group_configs is None:
            return {group_config.SHARE_SESSION_TIMEOUT_MS: self.config.session_timeout_ms,
                    group_config.SHARE_HEARTBEAT_INTERVAL_MS: self.config.heartbeat_interval_ms,
                    group_config.SHARE_ASSIGNMENT_INTERVAL_MS: self.config.assignment_interval_ms}[name]
        return self._group_configs.value(group_id, name)

    # -- records -------------------------------------------------------------------------

    async def persist(self, group: ShareGroup) -> None:
        await self._writer.persist(group)

    def load(self, records_by_group: dict[str, dict[ConsumerGroupRecordKey, bytes | None]]) -> int:
        """Rebuild the groups from the last record of every key; their members' sessions start
        again, as Kafka re-arms them when it loads a partition."""
        loaded = 0
        now = self._clock_ms()
        for group_id, records in records_by_group.items():
            live = {key: value for key, value in records.items() if value is not None}
            group = share_group_records.load(group_id, live, now)
            if group is None:
                self.groups.pop(group_id, None)
                continue
            self.groups[group_id] = group
            loaded += 1
        return loaded

    def start_sessions(self) -> None:
        """After a load, on the running loop: every member's session starts now, and partitions
        left initializing are asked for again."""
        for group in self.groups.values():
            for member_id in group.members:
                self._schedule_session_timeout(group.group_id, member_id)
            if group.initializing:
                self._initialize_in_background(group, {topic_id: (entry.name, entry.partitions)
                                                       for topic_id, entry in group.initializing.items()})

    # -- ShareGroupHeartbeat ---------------------------------------------------------------

    async def heartbeat(self, client_id: str, client_host: str, body: dict) -> dict:
        try:
            answer, group, initialize = self._heartbeat(client_id, client_host, body)
        except GroupError as exc:
            return {"error_code": exc.code, "error_message": str(exc), "member_id": None,
                    "member_epoch": 0, "heartbeat_interval_ms": 0, "assignment": None}
        try:
            await self.persist(group)
        except GroupError as exc:
            return {"error_code": exc.code, "error_message": str(exc), "member_id": None,
                    "member_epoch": 0, "heartbeat_interval_ms": 0, "assignment": None}
        if initialize:
            self._initialize_in_background(group, initialize)
        return answer

    def _validate(self, body: dict) -> None:
        def invalid(message: str) -> GroupError:
            return GroupError(Errors.INVALID_REQUEST, message)
        member_id = body["member_id"]
        if not member_id_valid(member_id):
            raise invalid("Invalid member id in the request.")
        if not member_id.strip():
            raise invalid("MemberId can't be empty.")
        if not body["group_id"].strip():
            raise invalid("GroupId can't be empty.")
        if body["rack_id"] is not None and not body["rack_id"].strip():
            raise invalid("RackId can't be empty.")
        if body["member_epoch"] == JOIN_GROUP_MEMBER_EPOCH and not body["subscribed_topic_names"]:
            raise invalid("SubscribedTopicNames must be set in first request.")
        if body["member_epoch"] < LEAVE_GROUP_MEMBER_EPOCH:
            raise invalid("MemberEpoch is invalid.")

    def _heartbeat(self, client_id: str, client_host: str,
                   body: dict) -> tuple[dict, ShareGroup, dict[bytes, tuple[str, frozenset[int]]]]:
        self._validate(body)
        group_id, member_id, epoch = body["group_id"], body["member_id"], body["member_epoch"]
        if self._is_other_group(group_id):
            raise GroupError(Errors.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        group = self.groups.get(group_id)
        if epoch == LEAVE_GROUP_MEMBER_EPOCH:
            if group is None:
                raise GroupError(Errors.GROUP_ID_NOT_FOUND, f"Share group {group_id} not found.")
            if member_id not in group.members:
                raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
            logger.info("[GroupId %s] Member %s left the share group.", group_id, member_id)
            self._fence(group, member_id)
            return ({"error_code": 0, "error_message": None, "member_id": member_id,
                     "member_epoch": LEAVE_GROUP_MEMBER_EPOCH, "heartbeat_interval_ms": 0, "assignment": None},
                    group, {})
        if group is None:
            if epoch != JOIN_GROUP_MEMBER_EPOCH:
                raise GroupError(Errors.GROUP_ID_NOT_FOUND, f"Share group {group_id} not found.")
            group = ShareGroup(group_id)
        if len(group.members) >= self.config.max_size and member_id not in group.members:
            raise GroupError(Errors.GROUP_MAX_SIZE_REACHED,
                             f"The share group has reached its maximum capacity of {self.config.max_size} members.")
        member = group.members.get(member_id)
        if member is None:
            if epoch != JOIN_GROUP_MEMBER_EPOCH:
                raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
            member = ShareGroupMember(member_id)
        elif epoch != JOIN_GROUP_MEMBER_EPOCH and (epoch > member.member_epoch or (
                epoch < member.member_epoch and epoch != member.previous_member_epoch)):
            raise GroupError(Errors.FENCED_MEMBER_EPOCH, f"The share group member has a greater member epoch "
                             f"({epoch}) than the one known by the group coordinator ({member.member_epoch})."
                             if epoch > member.member_epoch else
                             f"The share group member has a smaller member epoch ({epoch}) than the one known "
                             f"by the group coordinator ({member.member_epoch}).")
        names = body["subscribed_topic_names"]
        updated = dataclasses.replace(
            member, rack_id=body["rack_id"] if body["rack_id"] is not None else member.rack_id,
            subscribed_topic_names=tuple(sorted(set(names))) if names is not None else member.subscribed_topic_names,
            client_id=client_id, client_host=client_host)
        self.groups.setdefault(group_id, group)
        subscription_changed = updated.subscribed_topic_names != member.subscribed_topic_names
        topics = self._topics()
        bump = subscription_changed
        if group.assignment_epoch >= group.group_epoch:
            bump = bump or self._initialized_assignment_pending(group, topics)
        group.members[member_id] = updated
        new_hash = metadata_hash(group.subscribed_topic_names(), topics)
        if bump or new_hash != group.metadata_hash:
            group.group_epoch += 1
            self.metrics.share_group_rebalances += 1
            group.metadata_hash = new_hash
            logger.info("[GroupId %s] Bumped share group epoch to %d.", group_id, group.group_epoch)
        now = self._clock_ms()
        if group.assignment_epoch < group.group_epoch and _may_compute_assignment(
                group.assignment_timestamp_ms, self._group_value(group_id, group_config.SHARE_ASSIGNMENT_INTERVAL_MS),
                now):
            self._update_target_assignment(group, topics, now)
        reconciled = self._reconcile(group, updated, subscription_changed, topics)
        group.members[member_id] = reconciled
        initialize = self._partitions_to_initialize(group, topics, now)
        self._schedule_session_timeout(group_id, member_id)
        assignment = None
        if epoch == JOIN_GROUP_MEMBER_EPOCH or names is not None or reconciled.assigned != member.assigned:
            assignment = {"topic_partitions": [{"topic_id": topic_id, "partitions": sorted(partitions)}
                                               for topic_id, partitions in sorted(reconciled.assigned.items())]}
        return ({"error_code": 0, "error_message": None, "member_id": member_id,
                 "member_epoch": reconciled.member_epoch,
                 "heartbeat_interval_ms": self._group_value(group_id, group_config.SHARE_HEARTBEAT_INTERVAL_MS),
                 "assignment": assignment}, group, initialize)

    @staticmethod
    def _subscribed_ids(names, topics: dict[str, tuple[bytes, int]]) -> frozenset[bytes]:
        return frozenset(topics[name][0] for name in names if name in topics)

    def _assignable(self, group: ShareGroup, topics: dict[str, tuple[bytes, int]]) -> Assignment:
        """Initialized partitions of topics that still exist."""
        existing = {topic_id: count for topic_id, count in topics.values()}
        return {topic_id: frozenset(p for p in partitions if p < existing[topic_id])
                for topic_id, partitions in group.initialized_partitions().items() if topic_id in existing}

    def _initialized_assignment_pending(self, group: ShareGroup, topics: dict[str, tuple[bytes, int]]) -> bool:
        """Initialized partitions of a subscribed topic that the target assignment does not cover."""
        if not group.members:
            return False
        assignable = self._assignable(group, topics)
        subscribed = self._subscribed_ids(group.subscribed_topic_names(), topics)
        for topic_id in subscribed & assignable.keys():
            covered = set().union(*(target.get(topic_id, ()) for target in group.target_assignment.values()))
            if covered != set(assignable[topic_id]):
                return True
        return False

    def _update_target_assignment(self, group: ShareGroup, topics: dict[str, tuple[bytes, int]], now: int) -> None:
        subscriptions = {member_id: self._subscribed_ids(member.subscribed_topic_names, topics)
                         for member_id, member in group.members.items()}
        targets = simple_assignor.assign(subscriptions, self._assignable(group, topics), group.target_assignment)
        group.target_assignment = {member_id: target for member_id, target in targets.items()}
        group.assignment_epoch = group.group_epoch
        group.assignment_timestamp_ms = now

    def _reconcile(self, group: ShareGroup, member: ShareGroupMember, subscription_changed: bool,
                   topics: dict[str, tuple[bytes, int]]) -> ShareGroupMember:
        """ShareGroupAssignmentBuilder: straight to the target, filtered to the subscribed topics."""
        target_epoch = group.assignment_epoch
        if not subscription_changed and member.member_epoch == target_epoch:
            return member
        subscribed = self._subscribed_ids(member.subscribed_topic_names, topics)
        target = {topic_id: partitions for topic_id, partitions in group.target_assignment.get(
            member.member_id, {}).items() if topic_id in subscribed}
        if member.member_epoch != target_epoch:
            return dataclasses.replace(member, member_epoch=target_epoch, previous_member_epoch=member.member_epoch,
                                       assigned=target)
        return dataclasses.replace(member, assigned=target)

    def _partitions_to_initialize(self, group: ShareGroup, topics: dict[str, tuple[bytes, int]],
                                  now: int) -> dict[bytes, tuple[str, frozenset[int]]]:
        """Subscribed partitions with no share state yet (nor an initialization younger than the
        retry interval): marked initializing, to be asked of the share coordinator."""
        wanted: dict[bytes, tuple[str, frozenset[int]]] = {}
        for name in sorted(group.subscribed_topic_names()):
            if name not in topics:
                continue
            topic_id, count = topics[name]
            done = set(group.initialized.get(topic_id, (name, frozenset()))[1])
            pending = group.initializing.get(topic_id)
            if pending is not None and now - pending.since_ms < INITIALIZE_RETRY_INTERVAL_MS:
                done |= pending.partitions
            missing = frozenset(range(count)) - done
            if missing:
                wanted[topic_id] = (name, missing)
                previous = pending.partitions if pending is not None else frozenset()
                group.initializing[topic_id] = InitializingPartitions(name, previous | missing, now)
                group.deleting.pop(topic_id, None)
        return wanted

    def _initialize_in_background(self, group: ShareGroup, partitions: dict[bytes, tuple[str, frozenset[int]]]) -> None:
        """InitializeShareGroupState at the share coordinator with the group's epoch as the state
        epoch and no start offset; success moves the partitions to initialized, failure drops
        them from initializing (a later heartbeat asks again)."""
        group_id, state_epoch = group.group_id, group.group_epoch

        async def initialize() -> None:
            done: dict[bytes, tuple[str, set[int]]] = {}
            failed: dict[bytes, set[int]] = {}
            for topic_id, (name, numbers) in partitions.items():
                for partition in sorted(numbers):
                    try:
                        await self._share_coordinator.initialize(SharePartitionKey(group_id, topic_id, partition),
                                                                 state_epoch, UNINITIALIZED_START_OFFSET)
                        done.setdefault(topic_id, (name, set()))[1].add(partition)
                    except ShareStateError as exc:
                        logger.warning("[GroupId %s] Could not initialize the share state of %s-%d: %s", group_id,
                                       name, partition, exc)
                        failed.setdefault(topic_id, set()).add(partition)
            current = self.groups.get(group_id)
            if current is not group:
                return  # deleted meanwhile
            for topic_id, (name, numbers) in done.items():
                group.mark_initialized(topic_id, name, frozenset(numbers))
            for topic_id, numbers in failed.items():
                group.forget_initializing(topic_id, frozenset(numbers))
            await self.persist(group)
        self._writer.track(asyncio.get_running_loop().create_task(self._logged(group_id, initialize())))

    @staticmethod
    async def _logged(group_id: str, work: Awaitable[None]) -> None:
        try:
            await work
        except GroupError as exc:
            logger.error("[GroupId %s] Could not write the share group's records: %s", group_id, exc)

    # -- leaving ---------------------------------------------------------------------------

    def _fence(self, group: ShareGroup, member_id: str) -> None:
        """shareGroupFenceMember: the member goes and the group epoch always moves."""
        self._cancel(group.group_id, member_id)
        group.members.pop(member_id, None)
        group.target_assignment.pop(member_id, None)
        group.group_epoch += 1
        group.metadata_hash = metadata_hash(group.subscribed_topic_names(), self._topics())

    def _schedule_session_timeout(self, group_id: str, member_id: str) -> None:
        timeout_ms = self._group_value(group_id, group_config.SHARE_SESSION_TIMEOUT_MS)

        def expire() -> None:
            group = self.groups.get(group_id)
            if group is not None and member_id in group.members:
                logger.info("[GroupId %s] Member %s fenced from the share group because the member session "
                            "expired.", group_id, member_id)
                self._fence(group, member_id)
                self._writer.persist_in_background(group)
        self._timers.schedule((group_id, member_id), timeout_ms, expire)

    def _cancel(self, group_id: str, member_id: str) -> None:
        self._timers.cancel((group_id, member_id))

    def forget_deleted_topics(self) -> None:
        """Topics deleted since: gone from every group's share-partition bookkeeping (record 15),
        written in the background (GroupMetadataManager.onTopicsDeleted)."""
        known = {topic_id for topic_id, _ in self._topics().values()}
        for group in self.groups.values():
            stale = [t for t in (*group.initialized, *group.initializing, *group.deleting) if t not in known]
            for topic_id in stale:
                group.initialized.pop(topic_id, None)
                group.initializing.pop(topic_id, None)
                group.deleting.pop(topic_id, None)
            if stale:
                self._writer.persist_in_background(group)

    # -- admin -----------------------------------------------------------------------------

    def describe(self, group_ids: list[str], names_by_id: Callable[[bytes], str | None]) -> list[dict]:
        answers = []
        for group_id in group_ids:
            group = self.groups.get(group_id)
            if not group_id:
                answers.append({"error_code": Errors.INVALID_GROUP_ID, "error_message": None, "group_id": "",
                                "group_state": "", "group_epoch": 0, "assignment_epoch": 0, "assignor_name": "",
                                "members": []})
                continue
            if group is None:
                message = (f"Group {group_id} is not a share group." if self._is_other_group(group_id)
                           else f"Group {group_id} not found.")
                answers.append({"error_code": Errors.GROUP_ID_NOT_FOUND, "error_message": message,
                                "group_id": group_id, "group_state": "", "group_epoch": 0,
                                "assignment_epoch": 0, "assignor_name": "", "members": []})
                continue
            answers.append({
                "error_code": 0, "error_message": None, "group_id": group_id, "group_state": group.state,
                "group_epoch": group.group_epoch, "assignment_epoch": group.assignment_epoch,
                "assignor_name": simple_assignor.NAME,
                "members": [{
                    "member_id": member.member_id, "rack_id": member.rack_id, "member_epoch": member.member_epoch,
                    "client_id": member.client_id, "client_host": member.client_host,
                    "subscribed_topic_names": list(member.subscribed_topic_names),
                    "assignment": {"topic_partitions": [
                        {"topic_id": topic_id, "topic_name": names_by_id(topic_id), "partitions": sorted(ps)}
                        for topic_id, ps in sorted(member.assigned.items()) if names_by_id(topic_id) is not None]}}
                    for member in group.members.values()]})
        return answers

    # -- share-group offsets (kafka-share-groups.sh --describe --offsets, --reset-offsets, --delete-offsets)

    def describe_offsets(self, group_id: str, topics: list[dict] | None,
                         high_watermark: Callable[[str, int], int | None]) -> dict:
        """DescribeShareGroupOffsets of one group: each partition's share-partition start offset
        and lag (end offset - start offset - records finished above it), from the share
        coordinator; -1 where there is no state (no error, as Kafka answers it)."""
        view = self._topics()
        if topics is None:  # every initialized partition of the group
            group = self.groups.get(group_id)
            wanted = [] if group is None else [
                (name, topic_id, sorted(partitions))
                for topic_id, (name, partitions) in sorted(group.initialized.items())
                if view.get(name, (None,))[0] == topic_id]
        else:
            wanted = [(t["topic_name"], view.get(t["topic_name"], (bytes(16),))[0], t["partitions"]) for t in topics]
        answer_topics = []
        for name, topic_id, partitions in wanted:
            answers = []
            for partition in partitions:
                state = (self._share_coordinator.read_summary(SharePartitionKey(group_id, topic_id, partition))
                         if name in view else None)
                start, epoch, lag = -1, 0, -1
                if state is not None:
                    start, epoch = state.start_offset, state.leader_epoch
                    end = high_watermark(name, partition)
                    if start != UNINITIALIZED_START_OFFSET and state.delivery_complete_count != -1 and end is not None:
                        lag = end - start - state.delivery_complete_count
                answers.append({"partition_index": partition, "start_offset": start, "leader_epoch": epoch,
                                "lag": lag, "error_code": Errors.NONE, "error_message": None})
            answer_topics.append({"topic_name": name, "topic_id": topic_id, "partitions": answers})
        return {"group_id": group_id, "topics": answer_topics, "error_code": Errors.NONE, "error_message": None}

    def _empty_share_group(self, group_id: str, create: bool) -> ShareGroup:
        """The group whose offsets an admin changes: a share group (made when `create`) with no
        members. Raises GroupError."""
        if self._is_other_group(group_id):
            raise GroupError(Errors.GROUP_ID_NOT_FOUND, f"Group {group_id} is not a share group.")
        group = self.groups.get(group_id)
        if group is None:
            if not create:
                raise GroupError(Errors.GROUP_ID_NOT_FOUND, f"Group {group_id} not found.")
            group = ShareGroup(group_id)  # kept only once a partition's state is set (alter_offsets)
        if group.members:
            raise GroupError(Errors.NON_EMPTY_GROUP, f"Share group {group_id} is not empty.")
        return group

    async def _persisted_answer(self, group: ShareGroup, responses: list[dict]) -> dict:
        """An offsets admin answer once the group's records say what changed."""
        try:
            await self.persist(group)
        except GroupError as exc:
            return _admin_answer(exc.code, str(exc), responses)
        return _admin_answer(Errors.NONE, None, responses)

    async def alter_offsets(self, group_id: str, topics: list[dict]) -> dict:
        """AlterShareGroupOffsets: each partition's state starts again at the given offset (a
        fresh snapshot at the share coordinator under the group's epoch). The group, made if
        it is new, must have no members."""
        try:
            group = self._empty_share_group(group_id, create=True)
        except GroupError as exc:
            return _admin_answer(exc.code, str(exc), [])
        view = self._topics()
        responses = []
        for topic in topics:
            name = topic["topic_name"]
            topic_id, count = view.get(name, (bytes(16), 0))
            answers = []
            done: set[int] = set()
            for entry in topic["partitions"]:
                partition = entry["partition_index"]
                code, message = Errors.NONE, None
                if name not in view or not 0 <= partition < count:
                    code = Errors.UNKNOWN_TOPIC_OR_PARTITION
                else:
                    try:
                        await self._share_coordinator.initialize(SharePartitionKey(group_id, topic_id, partition),
                                                                 group.group_epoch, entry["start_offset"])
                        done.add(partition)
                    except ShareStateError as exc:
                        code, message = exc.code, str(exc)
                answers.append({"partition_index": partition, "error_code": code, "error_message": message})
            if done:
                group.mark_initialized(topic_id, name, frozenset(done))
                self.groups.setdefault(group_id, group)
            responses.append({"topic_name": name, "topic_id": topic_id, "partitions": answers})
        if self.groups.get(group_id) is not group:  # nothing was set: no group, no records
            return _admin_answer(Errors.NONE, None, responses)
        return await self._persisted_answer(group, responses)

    async def delete_offsets(self, group_id: str, topics: list[dict]) -> dict:
        """DeleteShareGroupOffsets: forget the state of the topics' initialized partitions; a
        later heartbeat of a subscriber initializes them again."""
        try:
            group = self._empty_share_group(group_id, create=False)
        except GroupError as exc:
            return _admin_answer(exc.code, str(exc), [])
        state_key = serde.consumer_group_key(serde.SHARE_GROUP_STATE_PARTITION_METADATA, group_id)
        if not (group.initialized or group.initializing or group.deleting or state_key in group.persisted):
            return _admin_answer(Errors.NONE, None, [])  # no ShareGroupStatePartitionMetadata: nothing to say
        view = self._topics()
        responses = []
        for topic in topics:
            name = topic["topic_name"]
            topic_id = view.get(name, (bytes(16),))[0]
            code, message = Errors.NONE, None
            if name not in view:
                code, message = Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNKNOWN_TOPIC_OR_PARTITION.name
            elif topic_id not in group.initialized:
                code, message = Errors.UNKNOWN_TOPIC_OR_PARTITION, "There is no offset information to delete."
            else:
                try:
                    for partition in sorted(group.initialized[topic_id][1]):
                        await self._share_coordinator.delete(SharePartitionKey(group_id, topic_id, partition))
                    del group.initialized[topic_id]
                except ShareStateError as exc:
                    code, message = exc.code, str(exc)
            # an error names the topic only (its id stays zero), as Kafka's answer does
            responses.append({"topic_name": name, "topic_id": topic_id if code == Errors.NONE else bytes(16),
                              "error_code": code, "error_message": message})
        return await self._persisted_answer(group, responses)

    async def delete_group(self, group_id: str) -> None:
        """Forget an empty share group and tombstone its records (its share-partition state is
        deleted at the share coordinator first). Raises GroupError."""
        group = self.groups.get(group_id)
        if group is None:
            return
        if group.members:
            raise GroupError(Errors.NON_EMPTY_GROUP, f"Share group {group_id} is not empty.")
        with_state = [(topic_id, partitions) for topic_id, (_, partitions) in group.initialized.items()]
        with_state += [(topic_id, entry.partitions) for topic_id, entry in group.initializing.items()]
        for topic_id, partitions in with_state:  # shareGroupBuildPartitionDeleteRequest: both kinds
            for partition in sorted(partitions):
                try:
                    await self._share_coordinator.delete(SharePartitionKey(group_id, topic_id, partition))
                except ShareStateError as exc:
                    raise GroupError(exc.code, str(exc)) from None
        self.groups.pop(group_id, None)
        group.dead = True
        try:
            await self.persist(group)
        except GroupError:
            group.dead = False
            self.groups.setdefault(group_id, group)
            raise


def _may_compute_assignment(timestamp_ms: int, interval_ms: int, now_ms: int) -> bool:
    """canComputeNextTargetAssignment: never computed, no interval, or the interval has passed."""
    return timestamp_ms == 0 or interval_ms == 0 or now_ms >= timestamp_ms + interval_ms


def _admin_answer(code: int, message: str | None, responses: list[dict]) -> dict:
    return {"error_code": code, "error_message": message, "responses": responses}
