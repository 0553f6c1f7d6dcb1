"""The consumer group protocol of KIP-848: ConsumerGroupHeartbeat and ConsumerGroupDescribe
(the consumer-group half of Kafka's GroupMetadataManager).

A heartbeat does three things, as Kafka's does:
1. create or update the member; when that changes what the assignor sees (a
   new member, another subscription or assignor, a subscribed topic created
   or grown) the group epoch goes up;
2. when the group epoch is ahead of the target assignment, run the group's
   assignor (franz/coordinator/group/assignor.py) for every member;
3. move the member one step towards its target (CurrentAssignmentBuilder),
   and answer its epoch and, when it changed or the request was a full one,
   its assignment.

Timers: a member is fenced (removed, group epoch bumped) when no heartbeat
comes within group.consumer.session.timeout.ms, or when it has not revoked
its partitions within its rebalance timeout. They run on the broker's event
loop (CoordinatorTimer), where every request of this coordinator runs, so
group state needs no lock.

Durability: every change is written to the group's partition of
`__consumer_offsets` as Kafka's consumer group records
(consumer_group_records.py) before the heartbeat is answered; a restarted
broker loads the groups back and its members carry on at their epochs, their
sessions restarted. A change made by a timer is written in the background.
Limits: the in-memory change comes first (Kafka reverts it through its
snapshot registry); if its write fails the member gets the error and the
group's next write puts every record of the group again and tombstones every
other key it may have written, so the log catches up with memory.

Regex subscriptions (Kafka's maybeUpdateRegularExpressions): the group's regexes are
resolved together, after the heartbeat that called for it was answered, as Kafka's
executor does, and only to topics the principal of that heartbeat may DESCRIBE
(topic_regex_resolver.py). A heartbeat calls for it when no resolution is under way,
the last one is more than 10s old and a regex of the group is not resolved yet, a
topic was created since, or group.consumer.regex.refresh.interval.ms has passed
(which is also how long an ACL granted later may take to show). A member moving to
a regex not resolved yet does not bump the group epoch; the resolution does when a
regex's topics changed. The resolutions are kept as ConsumerGroupRegularExpression
records. franz has no metadata image: the version a resolution is stamped with is
the time the coordinator first saw the newest topic, and a restart counts as new
topics, so every group is resolved again after one.

Online migration (group.consumer.migration.policy, bidirectional by default):
a first heartbeat into a classic group of consumers converts it (the claim
callback, group_migration.py); members that speak the classic protocol live in
the group as members with ClassicMemberMetadata and are served their JoinGroup,
SyncGroup, Heartbeat and LeaveGroup here, with the broker as their assignor; when
the last consumer-protocol member goes and classic members stay, the group is
handed back as a classic group (the hand-back callback), as it is when a classic
member takes the last consumer-protocol member's place under its static
instance id. With the policy disabled, a JoinGroup into a non-empty consumer
group gets INCONSISTENT_GROUP_PROTOCOL and a heartbeat into a non-empty classic
group GROUP_ID_NOT_FOUND. After a restart every member's first session is the
group's session timeout, classic members' too, as Kafka re-arms them.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import logging
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Final

from franz.coordinator.group import consumer_group_records, consumer_protocol
from franz.coordinator.group.assignor import ASSIGNORS, MemberSpec, PartitionAssignor
from franz.coordinator.group.consumer_group import (
    LEAVE_GROUP_MEMBER_EPOCH,
    LEAVE_GROUP_STATIC_MEMBER_EPOCH,
    NOT_RESOLVED,
    ClassicMemberMetadata,
    ConsumerGroup,
    ConsumerGroupMember,
    MemberState,
    ResolvedRegularExpression,
    regex_of,
)
from franz.coordinator.group.consumer_protocol import ConsumerProtocolError
from franz.coordinator.group.coordinator_timer import CoordinatorTimer
from franz.coordinator.group.current_assignment_builder import OwnedPartitions, reconcile
from franz.coordinator.group.group_coordinator import UNKNOWN_MEMBER_ID, join_error, sync_answer
from franz.coordinator.group.group_coordinator_metrics import GroupCoordinatorMetrics
from franz.coordinator.group.group_coordinator_record_serde import ConsumerGroupRecordKey, RecordFormatError
from franz.coordinator.group.group_metadata import GroupError
from franz.coordinator.group.group_record_writer import delete_group
from franz.coordinator.group.group_migration import ConsumerGroupMigrationPolicy
from franz.coordinator.group.subscription import compile_regex
from franz.coordinator.group.topic_regex_resolver import DescribableTopics, resolve_regular_expressions
from franz.protocol.api_keys import AUTHORIZED_OPERATIONS_OMITTED
from franz.protocol.errors import Errors
from franz.records.builder import now_ms
from franz.storage.checkpoint import uuid_to_kafka_string

logger = logging.getLogger(__name__)

# ConsumerGroupHeartbeat from v1 on: the client makes its member id (KIP-1082)
CLIENT_MEMBER_ID_VERSION: Final = 1
# ConsumerGroupDescribe v1 MemberType: 0 a classic member, 1 a consumer member (-1 unknown).
CLASSIC_MEMBER_TYPE: Final = 0
CONSUMER_MEMBER_TYPE: Final = 1
# JoinGroup from v4 on: a new dynamic member first gets its id with MEMBER_ID_REQUIRED (KIP-394)
REQUIRE_KNOWN_MEMBER_ID_VERSION: Final = 4
# A group's regexes are resolved at most this often (REGEX_BATCH_REFRESH_MIN_INTERVAL_MS).
REGEX_BATCH_REFRESH_MIN_INTERVAL_MS: Final = 10_000


@dataclasses.dataclass(frozen=True)
class ConsumerGroupConfig:
    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 5000
    max_size: int = 2**31 - 1
    assignors: tuple[str, ...] = ("uniform", "range")
    migration_policy: ConsumerGroupMigrationPolicy = ConsumerGroupMigrationPolicy.BIDIRECTIONAL
    classic_max_size: int = 2**31 - 1  # group.max.size: a downgrade must fit a classic group
    assignment_interval_ms: int = 1000
    regex_refresh_interval_ms: int = 600_000

    @classmethod
    def from_kafka_config(cls, config) -> ConsumerGroupConfig:
        assignors = tuple(config["group.consumer.assignors"])  # KafkaConfig checked the names
        assert assignors and all(name in ASSIGNORS for name in assignors), assignors
        return cls(config["group.consumer.session.timeout.ms"], config["group.consumer.heartbeat.interval.ms"],
                   config["group.consumer.max.size"], assignors,
                   ConsumerGroupMigrationPolicy.parse(config["group.consumer.migration.policy"]),
                   config["group.max.size"], config["group.consumer.assignment.interval.ms"],
                   config["group.consumer.regex.refresh.interval.ms"])


# the cluster's topics: name -> (topic id, partitions)
TopicsView = Callable[[], dict[str, tuple[bytes, int]]]
# Called with a group id a member joins by ConsumerGroupHeartbeat where no consumer group is: the
# consumer group to use (new, or converted from the classic group of that id) and what to do once
# the heartbeat has succeeded (take the id from the classic group). Raises GroupError when the
# classic group keeps the id.
ClaimGroupId = Callable[[str], tuple[ConsumerGroup, Callable[[], None]]]
# Called when the last consumer-protocol member of a group is going (the ids in the set, or
# replaced by a classic member already in the group) and only classic members stay: makes their
# classic group, starts it (a rebalance when asked), and returns its records. Raises GroupError
# when it cannot be made.
HandBackGroupId = Callable[[ConsumerGroup, set[str], bool], list[tuple[bytes, bytes | None]]]
# appends records of the group (value None: a tombstone); raises GroupError with Kafka's code
WriteRecords = Callable[[str, list[tuple[bytes, bytes | None]]], Awaitable[Any]]


class ConsumerGroupCoordinator:
    def __init__(self, config: ConsumerGroupConfig, topics: TopicsView, claim_group_id: ClaimGroupId,
                 write: WriteRecords, group_configs=None, hand_back_group_id: HandBackGroupId | None = None,
                 metrics: GroupCoordinatorMetrics | None = None, clock_ms: Callable[[], int] = now_ms,
                 other_group_exists: Callable[[str], bool] = lambda _id: False) -> None:
        self.config = config
        self.metrics = metrics if metrics is not None else GroupCoordinatorMetrics()
        # whether a group of another kind holds an id: Kafka tells "not a consumer group" then
        self._other_group_exists = other_group_exists
        # A group's own session timeout and heartbeat interval (GroupConfigManager), read on
        # every heartbeat; without one, the broker's.
        self._group_configs = group_configs
        self._write = write
        self._background: set[asyncio.Task] = set()
        self.groups: dict[str, ConsumerGroup] = {}
        self.assignors: dict[str, PartitionAssignor] = {name: ASSIGNORS[name]() for name in config.assignors}
        self._topics = topics
        self._claim_group_id = claim_group_id
        self._hand_back_group_id = hand_back_group_id
        # keyed (group id, member id, kind): a member's session, rebalance, and a classic member's join and sync
        self._timers = CoordinatorTimer()
        self._clock_ms = clock_ms
        self._regex_refreshes: dict[str, asyncio.Task] = {}  # group id -> its resolution under way
        # The ids of the topics last seen, and the version of the topics view: raised when a
        # topic not seen before shows up (lastMetadataImageWithNewTopics).
        self._seen_topic_ids: set[bytes] | None = None
        self._version_with_new_topics = -1

    def group(self, group_id: str) -> ConsumerGroup | None:
        return self.groups.get(group_id)

    async def shutdown(self) -> None:
        self._timers.cancel_all()
        for task in self._regex_refreshes.values():
            task.cancel()
        if self._background:  # writes of timer changes: let them land
            await asyncio.gather(*self._background, return_exceptions=True)

    async def delete_group(self, group_id: str, before: list[tuple[bytes, bytes | None]] = ()) -> None:
        """Forget an empty group (DeleteGroups, or a classic group taking the id over) and
        tombstone its records, in one write after `before` (DeleteGroups' offset tombstones).
        Raises GroupError when the write fails."""
        await delete_group(self.groups, group_id, lambda group: self.persist(group, before))

    # -- records -------------------------------------------------------------------------

    async def persist(self, group: ConsumerGroup, before: list[tuple[bytes, bytes | None]] = ()) -> None:
        """Write what changed in the group since its last write. The difference is taken and
        handed to the (single, ordered) append thread in one step of the loop, so writes
        land in the order the changes were made."""
        current = consumer_group_records.records_of(group)
        if group.dead:  # Kafka tombstones the 4.0 subscription metadata of every deleted group
            group.persisted.setdefault(consumer_group_records.subscription_metadata_key(group.group_id), b"")
        classic_before, after = group.classic_records_before, group.classic_records_after
        entries = [*before, *classic_before, *consumer_group_records.changes(group.persisted, current), *after]
        if not entries:
            return
        previous, group.persisted = group.persisted, current
        group.classic_records_before, group.classic_records_after = [], []
        try:
            await self._write(group.group_id, entries)
        except GroupError:
            # What the log holds is unknown now: keep every key it may hold, with no value
            # matching, so the next write puts every record again and tombstones the rest.
            group.persisted = dict.fromkeys(previous.keys() | current.keys() | group.persisted.keys(), b"")
            group.classic_records_before = classic_before + group.classic_records_before
            group.classic_records_after = after + group.classic_records_after
            raise

    def _persist_in_background(self, group: ConsumerGroup) -> None:
        async def write() -> None:
            try:
                await self.persist(group)
            except GroupError as exc:
                logger.error("[GroupId %s] Could not write the group's records: %s", group.group_id, exc)
        task = asyncio.get_running_loop().create_task(write())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def load(self, records_by_group: dict[str, dict[ConsumerGroupRecordKey, bytes | None]]) -> int:
        """Rebuild the groups from the last record of every key read from `__consumer_offsets`
        (None: a tombstone) and restart their members' sessions; the number of groups."""
        for group_id, records in records_by_group.items():
            live = {key: value for key, value in records.items() if value is not None}
            try:
                group = consumer_group_records.load(group_id, live)
            except (RecordFormatError, AssertionError) as exc:
                logger.error("[GroupId %s] Skipping the consumer group's records that do not load: %s", group_id, exc)
                continue
            if group is None:
                continue
            group.persisted = consumer_group_records.records_of(group)
            if group.has_subscription_metadata_record:  # the next write tombstones it
                group.persisted[consumer_group_records.subscription_metadata_key(group_id)] = b""
            self.groups[group_id] = group
            for member in group.members.values():
                # The group's session timeout for every loaded member, classic ones too, as
                # GroupMetadataManager.onLoaded arms them; a classic member's own comes back with
                # its next heartbeat.
                self._schedule_session_timeout(group_id, member.member_id, self._session_timeout_ms(group_id))
                if member.state is MemberState.UNREVOKED_PARTITIONS and not member.uses_classic_protocol:
                    self._schedule_rebalance_timeout(group_id, member.member_id, member.member_epoch,
                                                     member.rebalance_timeout_ms)
        return len(self.groups)

    # -- ConsumerGroupHeartbeat ------------------------------------------------------

    async def heartbeat(self, version: int, client_id: str, client_host: str, body: dict,
                        describable: DescribableTopics | None = None) -> dict:
        """The answer once the change it made is written. `describable` filters topic names
        to those the heartbeat's principal may describe (None: no authorizer)."""
        try:
            self._validate(version, body)
            epoch = body["member_epoch"]
            if epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
                answer, group = self._leave(body["group_id"], body["instance_id"], body["member_id"], epoch)
            else:
                answer, group = self._heartbeat(version, client_id, client_host, body, describable)
            await self.persist(group)  # after a downgrade, the group's last write (it is dead)
            return answer
        except GroupError as exc:
            return {"throttle_time_ms": 0, "error_code": exc.code, "error_message": str(exc), "member_id": None,
                    "member_epoch": 0, "heartbeat_interval_ms": 0, "assignment": None}

    def _validate(self, version: int, body: dict) -> None:
        """GroupMetadataManager.throwIfConsumerGroupHeartbeatRequestIsInvalid."""
        def invalid(message: str) -> GroupError:
            return GroupError(Errors.INVALID_REQUEST, message)

        if not body["group_id"]:
            raise invalid("GroupId can't be empty.")
        if body["instance_id"] == "":
            raise invalid("InstanceId can't be empty.")
        if body["rack_id"] == "":
            raise invalid("RackId can't be empty.")
        epoch = body["member_epoch"]
        if version >= CLIENT_MEMBER_ID_VERSION and not body["member_id"]:
            raise invalid("MemberId can't be empty.")
        regex = body.get("subscribed_topic_regex")
        if regex is not None:
            compile_regex(regex)  # INVALID_REGULAR_EXPRESSION
        if epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH:
            if not body["member_id"]:
                raise invalid("MemberId can't be empty.")
        elif epoch == 0:
            if body["rebalance_timeout_ms"] == -1:
                raise invalid("RebalanceTimeoutMs must be provided in first request.")
            if body["topic_partitions"] is None or body["topic_partitions"]:
                raise invalid("TopicPartitions must be empty when (re-)joining.")
            # An empty list of names (or an empty regex) joins subscribed to nothing, as the Java
            # client's subscribe(Pattern) does before its pattern matches; only null is refused.
            if body["subscribed_topic_names"] is None and regex is None:
                raise invalid("Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when "
                              "(re-)joining.")
        elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            if not body["member_id"]:
                raise invalid("MemberId can't be empty.")
            if body["instance_id"] is None:
                raise invalid("InstanceId can't be null.")
        else:
            raise invalid("MemberEpoch is invalid.")
        assignor = body["server_assignor"]
        if assignor is not None and assignor not in self.assignors:
            raise GroupError(Errors.UNSUPPORTED_ASSIGNOR, f"ServerAssignor {assignor} is not supported. "
                             f"Supported assignors: {', '.join(self.assignors)}.")

    def _heartbeat(self, version: int, client_id: str, client_host: str, body: dict,
                   describable: DescribableTopics | None) -> tuple[dict, ConsumerGroup]:
        group_id = body["group_id"]
        group = self.groups.get(group_id)
        if group is not None:
            return self._heartbeat_in(group, version, client_id, client_host, body, describable), group
        if body["member_epoch"] != 0:  # getOrMaybeCreateConsumerGroup, not to create
            raise self._not_found(group_id, "Consumer group {} not found.")
        # The group is made (or converted from the classic group of the id) for this heartbeat:
        # refused, it is dropped and the classic group keeps the id, as Kafka drops the records.
        group, take_over = self._claim_group_id(group_id)
        self.groups[group_id] = group
        try:
            answer = self._heartbeat_in(group, version, client_id, client_host, body, describable)
        except GroupError:
            del self.groups[group_id]
            raise
        take_over()
        for member in group.classic_members():  # converted members: sessions of their own length
            self._schedule_session_timeout(group_id, member.member_id)
        return answer, group

    def _heartbeat_in(self, group: ConsumerGroup, version: int, client_id: str, client_host: str, body: dict,
                      describable: DescribableTopics | None) -> dict:
        group_id, member_id, epoch = body["group_id"], body["member_id"], body["member_epoch"]
        instance_id = body["instance_id"]
        owned: OwnedPartitions = None
        if body["topic_partitions"] is not None:
            owned = [(bytes(t["topic_id"]), list(t["partitions"])) for t in body["topic_partitions"]]
        joining = epoch == 0
        self._throw_if_full(group, member_id, instance_id)
        if not member_id:
            member_id = str(uuid.uuid4())
        if instance_id is None:
            member = self._dynamic_member(group, member_id, epoch, owned)
        else:
            member = self._static_member(group, member_id, epoch, instance_id, owned)
        regex = body.get("subscribed_topic_regex")
        updated = dataclasses.replace(
            member,
            instance_id=instance_id if instance_id is not None else member.instance_id,
            rack_id=body["rack_id"] if body["rack_id"] is not None else member.rack_id,
            rebalance_timeout_ms=(body["rebalance_timeout_ms"] if body["rebalance_timeout_ms"] != -1
                                  else member.rebalance_timeout_ms),
            server_assignor=body["server_assignor"] if body["server_assignor"] is not None else member.server_assignor,
            subscribed_topic_names=(tuple(sorted(body["subscribed_topic_names"]))
                                    if body["subscribed_topic_names"] is not None else member.subscribed_topic_names),
            subscribed_topic_regex=regex if regex is not None else member.subscribed_topic_regex,
            client_id=client_id, client_host=client_host, classic=None)
        regex_resolved = self._maybe_update_regexes(group, member, updated, describable)
        after = self._update_and_reconcile(group, member, updated, owned, regex_resolved)
        self._schedule_session_timeout(group_id, member_id)
        full = joining or (body["rebalance_timeout_ms"] != -1 and owned is not None and (
            body["subscribed_topic_names"] is not None or body.get("subscribed_topic_regex") is not None))
        assignment = None
        if full or after.assigned != member.assigned:
            assignment = {"topic_partitions": [{"topic_id": topic_id, "partitions": sorted(partitions)}
                                               for topic_id, partitions in sorted(after.assigned.items())]}
        return {"throttle_time_ms": 0, "error_code": Errors.NONE, "error_message": None, "member_id": member_id,
                "member_epoch": after.member_epoch, "heartbeat_interval_ms": self._heartbeat_interval_ms(group_id),
                "assignment": assignment}

    def _throw_if_full(self, group: ConsumerGroup, member_id: str, instance_id: str | None) -> None:
        """A static member coming back under a new member id replaces itself (KAFKA-20601, 4.3)."""
        if instance_id is not None and group.static_member(instance_id) is not None:
            return
        if len(group.members) >= self.config.max_size and member_id not in group.members:
            raise GroupError(Errors.GROUP_MAX_SIZE_REACHED, f"The consumer group has reached its maximum "
                             f"capacity of {self.config.max_size} members.")

    def _update_and_reconcile(self, group: ConsumerGroup, member: ConsumerGroupMember, updated: ConsumerGroupMember,
                              owned: OwnedPartitions, regex_resolved: bool = False) -> ConsumerGroupMember:
        """Put the updated member in, bump the group epoch when what the assignor sees changed,
        compute the target when it is behind, and move the member one step towards its own;
        the member after."""
        subscription_changed = self._update_subscription(group, member, updated, regex_resolved)
        self._update_target_assignment_if_behind(group)
        return self._reconcile(group, updated.member_id, owned, subscription_changed)

    def _update_subscription(self, group: ConsumerGroup, member: ConsumerGroupMember,
                             updated: ConsumerGroupMember, regex_resolved: bool = False) -> bool:
        """Put the updated member in; bump the group epoch when its subscription changed; whether
        its topic names or its regex changed (4.3's hasSubscriptionChanged).
        A regex taken up bumps it only when the group has it resolved already (`regex_resolved`);
        one given up always does (REGEX_UPDATED_AND_RESOLVED in 4.3). A new member bumps it
        only through its subscription: one subscribing to nothing, or to a regex not resolved
        yet, leaves a new group at its initial epoch (4.3 dropped the bump of a group at epoch 0)."""
        regex_changed = regex_of(member) != regex_of(updated)
        regex_left = regex_changed and regex_of(updated) is None
        names_changed = member.subscribed_topic_names != updated.subscribed_topic_names
        # hasMemberSubscriptionChanged: the topic names alone. A new server assignor is only
        # written; it counts at the next target the group computes for another reason (4.3).
        bump = names_changed or regex_left or regex_resolved
        group.update_member(updated)
        group.forget_unsubscribed_regexes()
        metadata_hash = group.metadata_hash_of(self._topics())
        if metadata_hash != group.metadata_hash:  # a subscribed topic appeared, went or grew
            group.metadata_hash = metadata_hash
            bump = True
        if bump:
            group.group_epoch += 1
            self.metrics.consumer_group_rebalances += 1
            logger.info("[GroupId %s] Bumped group epoch to %d with metadata hash %d.", group.group_id,
                        group.group_epoch, group.metadata_hash)
        return names_changed or regex_changed

    def _update_target_assignment_if_behind(self, group: ConsumerGroup) -> None:
        """maybeUpdateTargetAssignment: when the group epoch is ahead, and the last target is at
        least the group's assignment interval old (KIP-1263, 4.3: changes that come together are
        assigned together); until then members reconcile towards the last target."""
        if group.group_epoch > group.assignment_epoch and _can_compute_next_target_assignment(
                group.assignment_timestamp_ms, self._assignment_interval_ms(group.group_id), self._clock_ms()):
            self._update_target_assignment(group, self._topics())

    def _reconcile(self, group: ConsumerGroup, member_id: str, owned: OwnedPartitions,
                   subscription_changed: bool = False) -> ConsumerGroupMember:
        """Move the member one step towards its target (CurrentAssignmentBuilder), within the
        topics it subscribes to; the member after."""
        group_id = group.group_id
        before = group.members[member_id]
        if not subscription_changed and before.is_reconciled_to(group.assignment_epoch):
            return before  # maybeReconcile: nothing to do, and no topics view built for it
        topics = self._topics()
        subscribed = frozenset(topics[name][0] for name in group.member_topics(before, set(topics)))
        after = reconcile(before, group.assignment_epoch, group.target_assignment.get(member_id, {}),
                          group.current_partition_epoch, owned, subscribed, subscription_changed)
        if after != before:
            group.update_member(after)
            # A classic member has no rebalance timer: its join and sync timers bound it.
            if after.state is MemberState.UNREVOKED_PARTITIONS and not after.uses_classic_protocol:
                self._schedule_rebalance_timeout(group_id, member_id, after.member_epoch, after.rebalance_timeout_ms)
            else:
                self._cancel(group_id, member_id, "rebalance")
        return after

    def _dynamic_member(self, group: ConsumerGroup, member_id: str, epoch: int,
                        owned: OwnedPartitions) -> ConsumerGroupMember:
        member = group.members.get(member_id)
        if member is None:
            if epoch != 0:
                raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group "
                                 f"{group.group_id}.")
            logger.info("[GroupId %s] Member %s joins the consumer group using the consumer protocol.",
                        group.group_id, member_id)
            return ConsumerGroupMember(member_id)
        if epoch == 0:
            # The client lost its epoch (fenced, or its answer was lost) and rejoins with the same
            # id (KIP-1082 keeps it): 4.3 takes it back as it is, assignment and epochs included
            # (throwIfConsumerGroupMemberEpochIsInvalid, KAFKA-19233), and answers it in full.
            return member
        _check_member_epoch(member, epoch, owned)
        return member

    def _static_member(self, group: ConsumerGroup, member_id: str, epoch: int, instance_id: str,
                       owned: OwnedPartitions) -> ConsumerGroupMember:
        existing = group.static_member(instance_id)
        if epoch == 0:
            if existing is None:
                return self._dynamic_member(group, member_id, epoch, owned)
            # Even under its own member id, an instance that did not leave is not released
            # (throwIfInstanceIdIsUnreleased); one that speaks the classic protocol is replaced.
            if existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH and not existing.uses_classic_protocol:
                raise GroupError(Errors.UNRELEASED_INSTANCE_ID, f"Static member {existing.member_id} with instance "
                                 f"id {instance_id} is not released yet.")
            return self._replace_static_member(group, existing, member_id, "consumer")
        if existing is None:
            raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if existing.member_id != member_id:
            raise GroupError(Errors.FENCED_INSTANCE_ID, f"Static member {member_id} with instance id "
                             f"{instance_id} was fenced by member {existing.member_id}.")
        _check_member_epoch(existing, epoch, owned)
        return existing

    def _update_target_assignment(self, group: ConsumerGroup, topics: dict[str, tuple[bytes, int]]) -> None:
        names = set(topics)
        partitions = dict(topics[name] for name in group.subscribed_topic_names(names))
        specs = [MemberSpec(m.member_id, m.instance_id,
                            frozenset(topics[name][0] for name in group.member_topics(m, names)),
                            group.target_assignment.get(m.member_id, {})) for m in group.members.values()]
        assignor = self.assignors[self._preferred_assignor(group)]
        group.target_assignment = assignor.assign(specs, partitions)
        group.assignment_epoch = group.group_epoch
        group.assignment_timestamp_ms = self._clock_ms()
        logger.info("[GroupId %s] Computed a new target assignment for epoch %d with '%s' assignor.",
                    group.group_id, group.group_epoch, assignor.name)

    def _preferred_assignor(self, group: ConsumerGroup) -> str:
        """The assignor most members ask for (ties: the earlier configured), else the default."""
        votes = collections.Counter(m.server_assignor for m in group.members.values() if m.server_assignor)
        if not votes:
            return next(iter(self.assignors))
        order = list(self.assignors)
        return max(votes, key=lambda name: (votes[name], -order.index(name)))

    # -- regex subscriptions -------------------------------------------------------------

    def _maybe_update_regexes(self, group: ConsumerGroup, member: ConsumerGroupMember, updated: ConsumerGroupMember,
                              describable: DescribableTopics | None) -> bool:
        """maybeUpdateRegularExpressions, before the member is put in: start a resolution of the
        group's regexes when one is called for; whether the member took up a regex the group
        has resolved already (its topics are known: the group epoch goes up now)."""
        now = self._clock_ms()
        old, new = regex_of(member), regex_of(updated)
        before = group.subscribed_regexes()
        require_refresh = resolved = False
        if old != new:
            logger.debug("[GroupId %s] Member %s updated its subscribed regex to: %s.", group.group_id,
                         updated.member_id, new)
            if new is not None and before.get(new, 0) == 0:
                require_refresh = True  # a regex new to the group (_validate compiled it)
            elif new is not None:
                resolved = new in group.resolved_regexes
        if not require_refresh and not before:
            return resolved
        if group.group_id in self._regex_refreshes:
            return resolved
        last_refresh = group.last_regex_refresh_ms
        if last_refresh is not None and now <= last_refresh + REGEX_BATCH_REFRESH_MIN_INTERVAL_MS:
            return resolved
        after = dict(before)
        if old is not None:
            after[old] -= 1
            if not after[old]:
                del after[old]
        if new is not None:
            after[new] = after.get(new, 0) + 1
        require_refresh = (require_refresh or len(after) != len(group.resolved_regexes)
                           or group.last_regex_version < self._topics_version(self._topics())
                           or last_refresh is None or now > last_refresh + self.config.regex_refresh_interval_ms)
        if require_refresh and after:
            self._start_regex_refresh(group.group_id, updated.member_id, set(after), describable)
        return resolved

    def _topics_version(self, topics: dict[str, tuple[bytes, int]]) -> int:
        """The version of the topics view, raised (to the clock, at least by one) when a topic id
        not seen before is in it; the first look counts as new topics."""
        ids = {topic_id for topic_id, _ in topics.values()}
        if self._seen_topic_ids is None or not ids <= self._seen_topic_ids:
            self._version_with_new_topics = max(self._version_with_new_topics + 1, self._clock_ms())
        self._seen_topic_ids = ids
        return self._version_with_new_topics

    def _start_regex_refresh(self, group_id: str, member_id: str, regexes: set[str],
                             describable: DescribableTopics | None) -> None:
        """Resolve the regexes once the heartbeat is answered, one resolution per group at a time."""
        async def refresh() -> None:
            await asyncio.sleep(0)  # after the heartbeat that asked for it
            topics = self._topics()
            try:
                resolved = resolve_regular_expressions(group_id, sorted(regexes), topics,
                                                       self._topics_version(topics), self._clock_ms(), describable)
            except Exception as exc:  # the authorizer's, say: a later heartbeat calls for another try
                logger.error("[GroupId %s] Couldn't update regular expression due to: %s", group_id, exc)
                return
            self._apply_resolved_regexes(group_id, member_id, resolved)

        task = asyncio.get_running_loop().create_task(refresh())
        self._regex_refreshes[group_id] = task
        task.add_done_callback(lambda _: self._regex_refreshes.pop(group_id, None))

    def _apply_resolved_regexes(self, group_id: str, member_id: str,
                                resolved: dict[str, ResolvedRegularExpression]) -> None:
        """handleRegularExpressionsResult: keep each resolution of a regex still subscribed to;
        bump the group epoch when a regex's topics or the group's metadata hash changed."""
        group = self.groups.get(group_id)
        if group is None:
            logger.debug("[GroupId %s] Received result of regular expression resolution but it no longer exists.",
                         group_id)
            return
        logger.debug("[GroupId %s] Received updated regular expressions based on the context of member %s: %s.",
                     group_id, member_id, resolved)
        subscribed = group.subscribed_regexes()
        bump = False
        for regex, resolution in resolved.items():
            if regex not in subscribed:
                continue
            bump = bump or group.resolved_regexes.get(regex, NOT_RESOLVED).topics != resolution.topics
            group.resolved_regexes[regex] = resolution
        metadata_hash = group.metadata_hash_of(self._topics())
        if bump or metadata_hash != group.metadata_hash:
            group.metadata_hash = metadata_hash
            group.group_epoch += 1
            self.metrics.consumer_group_rebalances += 1
            logger.info("[GroupId %s] Bumped group epoch to %d with metadata hash %d.", group_id, group.group_epoch,
                        metadata_hash)
        self._persist_in_background(group)

    # -- classic members (KIP-848 online migration) ---------------------------------------
    # A non-empty consumer group takes JoinGroup, SyncGroup, Heartbeat and LeaveGroup from
    # members that speak the classic protocol (GroupMetadataManager.classicGroup*ToConsumerGroup).
    # The broker is their assignor: a join reconciles the member towards its target as a
    # heartbeat would and answers its member epoch as the generation; the sync answers the
    # partitions it holds now, in the ConsumerProtocol version of its subscription; a heartbeat
    # says REBALANCE_IN_PROGRESS when the member has to join again to move on.

    async def classic_join(self, version: int, client_id: str, client_host: str, body: dict) -> dict:
        """JoinGroup into a non-empty consumer group; the answer once the change is written."""
        group = self.groups[body["group_id"]]
        try:
            answer = self._classic_join(group, version, client_id, client_host, body)
            if answer["error_code"] == Errors.MEMBER_ID_REQUIRED:
                return answer
            await self.persist(group)  # after a downgrade, the group's last write (it is dead)
        except GroupError as exc:
            return join_error(version, exc.code)  # Kafka's answer to a failed operation names no member
        group_id, member_id = group.group_id, answer["member_id"]
        if self.groups.get(group_id) is group and member_id in group.members:
            self._cancel(group_id, member_id, "join")
            self._schedule_sync_timeout(group_id, member_id, body["rebalance_timeout_ms"])
        return answer

    def _classic_join(self, group: ConsumerGroup, version: int, client_id: str, client_host: str, body: dict) -> dict:
        group_id, member_id, instance_id = group.group_id, body["member_id"], body["group_instance_id"]
        if self.config.migration_policy is ConsumerGroupMigrationPolicy.DISABLED:
            raise GroupError(Errors.INCONSISTENT_GROUP_PROTOCOL, f"Cannot join the consumer group {group_id} with "
                             "the classic protocol because the group migration is disabled.")
        unknown = member_id == UNKNOWN_MEMBER_ID
        if unknown:
            member_id = uuid_to_kafka_string(uuid.uuid4())
        self._throw_if_full(group, member_id, instance_id)
        protocols = tuple((p["name"], bytes(p["metadata"])) for p in body["protocols"])
        if not group.supports_classic_protocols(body["protocol_type"], {name for name, _ in protocols}):
            raise GroupError(Errors.INCONSISTENT_GROUP_PROTOCOL, f"Member {member_id}'s protocols are not supported.")
        if unknown and instance_id is None and version >= REQUIRE_KNOWN_MEMBER_ID_VERSION:
            logger.info("[GroupId %s] Dynamic member with unknown member id joins the consumer group. Created a new "
                        "member id %s and requesting the member to rejoin with this id.", group_id, member_id)
            return join_error(version, Errors.MEMBER_ID_REQUIRED, member_id)
        member, replaced = self._classic_member_to_join(group, member_id, instance_id, unknown)
        try:
            subscription = consumer_protocol.deserialize_subscription(protocols[0][1])
        except ConsumerProtocolError:
            raise GroupError(Errors.INCONSISTENT_GROUP_PROTOCOL, "Malformed embedded consumer protocol in "
                             "subscription deserialization.") from None
        # Nothing below refuses the join: the group may change now.
        existing = group.static_member(instance_id) if instance_id is not None else None
        downgrade = existing is not None and self._can_downgrade_replacing(group, existing)
        if replaced is not None:
            member = self._replace_static_member(group, replaced, member_id, "classic")
        topics = self._topics()
        owned = [(topics[topic][0], list(partitions)) for topic, partitions in subscription.owned_partitions
                 if topic in topics]
        updated = dataclasses.replace(
            member, instance_id=instance_id if instance_id is not None else member.instance_id,
            rack_id=subscription.rack_id if subscription.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=body["rebalance_timeout_ms"], subscribed_topic_names=tuple(sorted(subscription.topics)),
            subscribed_topic_regex=None, client_id=client_id, client_host=client_host,
            classic=ClassicMemberMetadata(body["session_timeout_ms"], protocols))
        if downgrade:
            after = self._join_and_downgrade(group, member, updated, owned)
        else:
            after = self._update_and_reconcile(group, member, updated, owned)
            self._schedule_session_timeout(group_id, after.member_id)
        return {"error_code": Errors.NONE, "generation_id": after.member_epoch,
                "protocol_type": consumer_protocol.PROTOCOL_TYPE, "protocol_name": after.classic.protocol_name,
                "leader": "", "skip_assignment": False, "member_id": after.member_id, "members": []}

    def _classic_member_to_join(self, group: ConsumerGroup, member_id: str, instance_id: str | None,
                                unknown: bool) -> tuple[ConsumerGroupMember | None, ConsumerGroupMember | None]:
        """The member a JoinGroup is for (getOrMaybeSubscribe*ConsumerGroupMember with the classic
        protocol), or (None, the member it replaces): a static member coming back without its id
        replaces its older self even if that one did not leave. No epoch to check; the group is
        not changed here."""
        if instance_id is None:
            member = group.members.get(member_id)
            if member is None:
                logger.info("[GroupId %s] Member %s joins the consumer group using the classic protocol.",
                            group.group_id, member_id)
                return ConsumerGroupMember(member_id), None
            return member, None
        existing = group.static_member(instance_id)
        if not unknown:
            return self._known_static_member(group, existing, member_id, instance_id), None
        if existing is None:
            logger.info("[GroupId %s] Static member %s with instance id %s joins the consumer group using the classic "
                        "protocol.", group.group_id, member_id, instance_id)
            return ConsumerGroupMember(member_id), None
        return None, existing

    def _join_and_downgrade(self, group: ConsumerGroup, member: ConsumerGroupMember, updated: ConsumerGroupMember,
                            owned: OwnedPartitions) -> ConsumerGroupMember:
        """A classic member took the place of the last consumer-protocol member (same instance id):
        the group turns classic at once. With the target still current the member takes the
        replaced one's assignment and the classic group stays Stable; a changed subscription
        makes the classic group rebalance instead. The member after."""
        subscription_changed = self._update_subscription(group, member, updated)
        rebalance = group.assignment_epoch < group.group_epoch
        after = group.members[updated.member_id] if rebalance else \
            self._reconcile(group, updated.member_id, owned, subscription_changed)
        try:
            group.classic_records_after = self._hand_back_group_id(group, set(), rebalance)
        except GroupError as exc:
            logger.warning("[GroupId %s] Cannot downgrade the consumer group: %s", group.group_id, exc)
            self._update_target_assignment_if_behind(group)
            after = self._reconcile(group, updated.member_id, owned)
            self._schedule_session_timeout(group.group_id, after.member_id)
            return after
        self._retire(group)
        return after

    def _replace_static_member(self, group: ConsumerGroup, existing: ConsumerGroupMember, member_id: str,
                               protocol: str) -> ConsumerGroupMember:
        """The instance comes back under a new member id: it takes over the old member's
        partitions and target, so nothing moves to other members."""
        target = group.target_assignment.get(existing.member_id)
        group.remove_member(existing.member_id)
        self._cancel_all(group.group_id, existing.member_id)
        replacement = dataclasses.replace(existing, member_id=member_id, member_epoch=0, previous_member_epoch=0)
        group.update_member(replacement)
        if target is not None:
            group.target_assignment[member_id] = target
        logger.info("[GroupId %s] Static member with instance id %s re-joins the consumer group using the %s "
                    "protocol. Created a new member %s to replace the existing member %s.", group.group_id,
                    existing.instance_id, protocol, member_id, existing.member_id)
        return replacement

    @staticmethod
    def _known_static_member(group: ConsumerGroup, member: ConsumerGroupMember | None, member_id: str,
                             instance_id: str) -> ConsumerGroupMember:
        if member is None:
            raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Member with instance id {instance_id} is not a member of "
                             f"group {group.group_id}.")
        if member.member_id != member_id:
            raise GroupError(Errors.FENCED_INSTANCE_ID, f"Static member {member_id} with instance id {instance_id} "
                             f"was fenced by member {member.member_id}.")
        return member

    def _classic_member(self, group: ConsumerGroup, member_id: str, instance_id: str | None,
                        generation_id: int) -> ConsumerGroupMember:
        """validateConsumerGroupMember, then: the member speaks the classic protocol and is at
        the generation it says."""
        if instance_id is None:
            member = group.members.get(member_id)
            if member is None:
                raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group "
                                 f"{group.group_id}.")
        else:
            member = self._known_static_member(group, group.static_member(instance_id), member_id, instance_id)
        if not member.uses_classic_protocol:
            raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Member {member.member_id} does not use the classic protocol.")
        if member.member_epoch != generation_id:
            raise GroupError(Errors.ILLEGAL_GENERATION, f"The request generation id {generation_id} is not equal to "
                             f"the member epoch {member.member_epoch} of member {member.member_id}.")
        return member

    def classic_sync(self, body: dict) -> dict:
        """SyncGroup of a classic member of a consumer group: its partitions, nothing to write."""
        group = self.groups.get(body["group_id"])
        if group is None or not group.members:
            return sync_answer(Errors.UNKNOWN_MEMBER_ID)
        try:
            member = self._classic_member(group, body["member_id"], body["group_instance_id"], body["generation_id"])
            assert member.classic is not None
            protocol_name = member.classic.protocol_name
            if body["protocol_type"] is not None and body["protocol_type"] != consumer_protocol.PROTOCOL_TYPE:
                raise GroupError(Errors.INCONSISTENT_GROUP_PROTOCOL, f"The protocol type {body['protocol_type']} "
                                 f"from member {member.member_id} request is not equal to the group protocol type "
                                 f"{consumer_protocol.PROTOCOL_TYPE}.")
            if body["protocol_name"] is not None and body["protocol_name"] != protocol_name:
                raise GroupError(Errors.INCONSISTENT_GROUP_PROTOCOL, f"The protocol name {body['protocol_name']} "
                                 f"from member {member.member_id} request is not equal to the protocol name "
                                 f"{protocol_name} returned in the join response.")
            # A new target came since the join: the member joins again to catch up, unless it is
            # still revoking (it rejoins by itself once done).
            if (group.assignment_epoch > member.member_epoch
                    and member.state is not MemberState.UNREVOKED_PARTITIONS):
                self._schedule_join_timeout_if_absent(group.group_id, member.member_id, member.rebalance_timeout_ms)
                raise GroupError(Errors.REBALANCE_IN_PROGRESS, f"A new rebalance is triggered in group "
                                 f"{group.group_id} and member {member.member_id} should rejoin to catch up.")
        except GroupError as exc:
            return sync_answer(exc.code)
        self._cancel(group.group_id, member.member_id, "sync")
        self._schedule_session_timeout(group.group_id, member.member_id)
        names = {topic_id: name for name, (topic_id, _) in self._topics().items()}
        partitions = {names[topic_id]: ps for topic_id, ps in member.assigned.items() if topic_id in names}
        version = consumer_protocol.deserialize_version(member.classic.supported_protocols[0][1])
        return sync_answer(Errors.NONE, consumer_protocol.serialize_assignment(partitions, version),
                           body["protocol_type"], body["protocol_name"])

    def classic_heartbeat(self, body: dict) -> Errors:
        group = self.groups.get(body["group_id"])
        if group is None:
            return Errors.UNKNOWN_MEMBER_ID
        try:
            member = self._classic_member(group, body["member_id"], body["group_instance_id"], body["generation_id"])
        except GroupError as exc:
            return Errors(exc.code)
        self._schedule_session_timeout(group.group_id, member.member_id)
        # Rejoin when a new target came, when partitions are to be revoked, or when the
        # partitions it waited for are free.
        if (member.member_epoch < group.assignment_epoch or member.state is MemberState.UNREVOKED_PARTITIONS
                or (member.state is MemberState.UNRELEASED_PARTITIONS
                    and not group.waiting_on_unreleased_partition(member))):
            self._schedule_join_timeout_if_absent(group.group_id, member.member_id, member.rebalance_timeout_ms)
            return Errors.REBALANCE_IN_PROGRESS
        return Errors.NONE

    async def classic_leave(self, group_id: str, identities: list[dict]) -> tuple[Errors, list[dict]]:
        """LeaveGroup of members of a consumer group: every valid one is removed with one epoch bump
        (or the group turns classic); (top-level error, one answer per identity)."""
        group = self.groups[group_id]
        answers, leaving = [], set()
        for identity in identities:
            member_id, instance_id = identity["member_id"], identity.get("group_instance_id")
            answer = {"member_id": member_id, "group_instance_id": instance_id, "error_code": Errors.NONE}
            answers.append(answer)
            reason = identity.get("reason") or "not provided"
            if instance_id is None:
                member = group.members.get(member_id)
                if member is None:
                    answer["error_code"] = Errors.UNKNOWN_MEMBER_ID
                    continue
                logger.info("[GroupId %s] Dynamic member %s has left group through explicit `LeaveGroup` request; "
                            "client reason: %s", group_id, member_id, reason)
            else:
                member = group.static_member(instance_id)
                if member is None:
                    answer["error_code"] = Errors.UNKNOWN_MEMBER_ID
                    continue
                # An admin removes a static member by its instance id alone.
                if member_id != UNKNOWN_MEMBER_ID and member.member_id != member_id:
                    answer["error_code"] = Errors.FENCED_INSTANCE_ID
                    continue
                logger.info("[GroupId %s] Static member %s with instance id %s has left group through explicit "
                            "`LeaveGroup` request; client reason: %s", group_id, member_id, instance_id, reason)
            leaving.add(member.member_id)
        try:
            self.fence_members(group, leaving)
            await self.persist(group)
        except GroupError as exc:
            return Errors(exc.code), []
        return Errors.NONE, answers

    def _not_found(self, group_id: str, message: str) -> GroupError:
        """No consumer group of the id: `message`, or "not a consumer group" when another kind holds it."""
        if self._other_group_exists(group_id):
            message = "Group {} is not a consumer group."
        return GroupError(Errors.GROUP_ID_NOT_FOUND, message.format(group_id))

    # -- leaving and fencing -----------------------------------------------------------

    def _leave(self, group_id: str, instance_id: str | None, member_id: str,
               epoch: int) -> tuple[dict, ConsumerGroup]:
        group = self.groups.get(group_id)
        if group is None:  # GroupMetadataManager.consumerGroup
            raise self._not_found(group_id, "Group {} not found.")
        answer = {"throttle_time_ms": 0, "error_code": Errors.NONE, "error_message": None, "member_id": member_id,
                  "member_epoch": epoch, "heartbeat_interval_ms": 0, "assignment": None}
        if instance_id is None:
            if member_id not in group.members:
                raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group {group_id}.")
            logger.info("[GroupId %s] Member %s left the consumer group.", group_id, member_id)
            self.fence_members(group, {member_id})
            return answer, group
        member = group.static_member(instance_id)
        if member is None:
            raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Instance id {instance_id} is unknown.")
        if member.member_id != member_id:
            raise GroupError(Errors.FENCED_INSTANCE_ID, f"Static member {member_id} with instance id "
                             f"{instance_id} was fenced by member {member.member_id}.")
        if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            # It comes back within its session (a restart): keeps its partitions meanwhile.
            logger.info("[GroupId %s] Static member %s with instance id %s temporarily left the consumer group.",
                        group_id, member_id, instance_id)
            # Its partitions count as assigned at epoch 0 to whichever member id it comes back
            # with (consumerGroupStaticMemberGroupLeave).
            group.update_member(dataclasses.replace(
                member, member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, pending_revocation={},
                assignment_epochs={(t, p): 0 for t, ps in member.assigned.items() for p in ps}))
            self._cancel(group_id, member_id, "rebalance")
            return answer, group
        logger.info("[GroupId %s] Static member %s with instance id %s left the consumer group.",
                    group_id, member_id, instance_id)
        self.fence_members(group, {member_id})
        return answer, group

    def fence_members(self, group: ConsumerGroup, member_ids: set[str]) -> None:
        """Remove the members, with one epoch bump; the others are reassigned their partitions at
        their next heartbeat. When the last consumer-protocol members go and classic ones stay,
        the group turns back into a classic group instead (consumerGroupFenceMembers); the
        caller's persist of the (then dead) group writes the change. Raises GroupError
        (GROUP_ID_NOT_FOUND) when that classic group cannot be made; nobody is fenced then."""
        member_ids = {member_id for member_id in member_ids if member_id in group.members}
        if not member_ids:
            return
        if self._can_downgrade(group, member_ids):
            group.classic_records_after = self._hand_back_group_id(group, member_ids, True)
            self._retire(group)
            return
        for member_id in member_ids:
            group.remove_member(member_id)
            self._cancel_all(group.group_id, member_id)
        group.forget_unsubscribed_regexes()
        group.metadata_hash = group.metadata_hash_of(self._topics())
        group.group_epoch += 1

    def _retire(self, group: ConsumerGroup) -> None:
        """The group was handed back to a classic group: it is dead here, its timers stopped."""
        for member_id in group.members:
            self._cancel_all(group.group_id, member_id)
        del self.groups[group.group_id]
        group.dead = True
        logger.info("[GroupId %s] Converted the consumer group to a classic group.", group.group_id)

    def _can_downgrade(self, group: ConsumerGroup, leaving: set[str]) -> bool:
        """validateOnlineDowngradeWithFencedMembers."""
        staying = len(group.members) - len(leaving)
        if self._hand_back_group_id is None or not group.all_members_use_classic_protocol_except(leaving):
            return False
        if staying <= 0:
            return False  # an empty group stays a consumer group
        return self._downgrade_allowed(group, staying)

    def _can_downgrade_replacing(self, group: ConsumerGroup, replaced: ConsumerGroupMember) -> bool:
        """validateOnlineDowngradeWithReplacedMember: a classic member takes the place of the only
        consumer-protocol member."""
        if self._hand_back_group_id is None or replaced.uses_classic_protocol:
            return False
        if not group.all_members_use_classic_protocol_except({replaced.member_id}):
            return False
        return self._downgrade_allowed(group, len(group.members))

    def _downgrade_allowed(self, group: ConsumerGroup, staying: int) -> bool:
        if not self.config.migration_policy.downgrade_enabled:
            logger.info("Cannot downgrade consumer group %s to classic group because the online downgrade is "
                        "disabled.", group.group_id)
            return False
        if staying > self.config.classic_max_size:
            logger.info("Cannot downgrade consumer group %s to classic group because its group size is greater "
                        "than classic group max size.", group.group_id)
            return False
        return True

    # -- timers --------------------------------------------------------------------------

    def _schedule(self, group_id: str, member_id: str, kind: str, delay_ms: int, action: Callable[[], None]) -> None:
        self._timers.schedule((group_id, member_id, kind), delay_ms, action)

    def _cancel(self, group_id: str, member_id: str, kind: str) -> None:
        self._timers.cancel((group_id, member_id, kind))

    def _cancel_all(self, group_id: str, member_id: str) -> None:
        for kind in ("session", "rebalance", "join", "sync"):
            self._cancel(group_id, member_id, kind)

    def _fence_on_timer(self, group_id: str, member_id: str, reason: str) -> None:
        """consumerGroupFenceMemberOperation: a timer fences the member, if it is still there."""
        group = self.groups.get(group_id)
        if group is not None and member_id in group.members:
            logger.info("[GroupId %s] Member %s fenced from the group because %s.", group_id, member_id, reason)
            self._fence_in_background(group, {member_id})

    def _fence_in_background(self, group: ConsumerGroup, member_ids: set[str]) -> None:
        try:
            self.fence_members(group, member_ids)
        except GroupError as exc:
            logger.warning("[GroupId %s] Could not fence %s: %s", group.group_id, ", ".join(sorted(member_ids)), exc)
            return
        self._persist_in_background(group)

    def _schedule_session_timeout(self, group_id: str, member_id: str, timeout_ms: int | None = None) -> None:
        """A classic member's session is the one it joined with; a consumer member's the group's."""
        member = self.groups[group_id].members[member_id]
        if timeout_ms is None:
            timeout_ms = (member.classic.session_timeout_ms if member.classic is not None
                          else self._session_timeout_ms(group_id))
        self._schedule(group_id, member_id, "session", timeout_ms,
                       lambda: self._fence_on_timer(group_id, member_id, "its session expired"))

    def _schedule_join_timeout_if_absent(self, group_id: str, member_id: str, timeout_ms: int) -> None:
        """A classic member told to rejoin must within its rebalance timeout."""
        self._timers.schedule_if_absent((group_id, member_id, "join"), timeout_ms, lambda: self._fence_on_timer(
            group_id, member_id, "the classic member failed to join within the rebalance timeout"))

    def _schedule_sync_timeout(self, group_id: str, member_id: str, timeout_ms: int) -> None:
        self._schedule(group_id, member_id, "sync", timeout_ms, lambda: self._fence_on_timer(
            group_id, member_id, "the member failed to sync within timeout"))

    def _session_timeout_ms(self, group_id: str) -> int:
        if self._group_configs is None:
            return self.config.session_timeout_ms
        return self._group_configs.session_timeout_ms(group_id)

    def _assignment_interval_ms(self, group_id: str) -> int:
        if self._group_configs is None:
            return self.config.assignment_interval_ms
        return self._group_configs.assignment_interval_ms(group_id)

    def _heartbeat_interval_ms(self, group_id: str) -> int:
        if self._group_configs is None:
            return self.config.heartbeat_interval_ms
        return self._group_configs.heartbeat_interval_ms(group_id)

    def _schedule_rebalance_timeout(self, group_id: str, member_id: str, epoch: int, timeout_ms: int) -> None:
        def expire() -> None:
            group = self.groups.get(group_id)
            member = None if group is None else group.members.get(member_id)
            if member is not None and member.member_epoch == epoch:
                logger.info("[GroupId %s] Member %s fenced from the group because it failed to transition from "
                            "epoch %d within %dms.", group_id, member_id, epoch, timeout_ms)
                self._fence_in_background(group, {member_id})
        self._schedule(group_id, member_id, "rebalance", timeout_ms, expire)

    # -- ConsumerGroupDescribe ------------------------------------------------------------

    def describe(self, group_ids: list[str], names_by_id: Callable[[bytes], str | None]) -> list[dict]:
        answers = []
        for group_id in group_ids:
            group = self.groups.get(group_id)
            answer: dict[str, Any] = {"error_code": Errors.NONE, "error_message": None, "group_id": group_id,
                                      "group_state": "", "group_epoch": 0, "assignment_epoch": 0,
                                      "assignor_name": "", "members": [],
                                      "authorized_operations": AUTHORIZED_OPERATIONS_OMITTED}
            answers.append(answer)
            if group is None:
                answer.update(error_code=Errors.GROUP_ID_NOT_FOUND,
                              error_message=f"Group {group_id} not found.")
                continue
            answer.update(group_state=group.state.value, group_epoch=group.group_epoch,
                          assignment_epoch=group.assignment_epoch, assignor_name=self._preferred_assignor(group))
            answer["members"] = [{
                "member_id": m.member_id, "instance_id": m.instance_id, "rack_id": m.rack_id,
                "member_epoch": m.member_epoch, "client_id": m.client_id, "client_host": m.client_host,
                "subscribed_topic_names": list(m.subscribed_topic_names),
                "subscribed_topic_regex": m.subscribed_topic_regex,
                # The member answers for the partitions it is revoking too, until it has
                # (ConsumerGroupMember.asConsumerGroupDescribeMember, KAFKA-20431).
                "assignment": _described(_held(m), names_by_id),
                "target_assignment": _described(group.target_assignment.get(m.member_id, {}), names_by_id),
                "member_type": CLASSIC_MEMBER_TYPE if m.uses_classic_protocol else CONSUMER_MEMBER_TYPE,  # v1 (KIP-1099)
            } for m in group.members.values()]
        return answers


def _can_compute_next_target_assignment(assignment_timestamp_ms: int, interval_ms: int, now_ms: int) -> bool:
    """GroupMetadataManager.canComputeNextTargetAssignment: at once with no earlier target (or
    none whose time is known) or no interval (also the way out of a wall clock moved back)."""
    return assignment_timestamp_ms == 0 or interval_ms == 0 or now_ms >= assignment_timestamp_ms + interval_ms




def _is_subset(owned: OwnedPartitions, assigned) -> bool:
    if owned is None:
        return False
    return all(topic_id in assigned and set(partitions) <= assigned[topic_id] for topic_id, partitions in owned)


def _check_member_epoch(member: ConsumerGroupMember, received: int, owned: OwnedPartitions) -> None:
    """GroupMetadataManager.throwIfConsumerGroupMemberEpochIsInvalid: an epoch ahead is fenced; one
    behind only when it is the previous epoch and the member owns no more than it is assigned (the
    answer that moved it on was lost)."""
    if received > member.member_epoch or (received < member.member_epoch and (
            received != member.previous_member_epoch or not _is_subset(owned, member.assigned))):
        raise GroupError(Errors.FENCED_MEMBER_EPOCH, f"The consumer group member has a member epoch ({received}) "
                         f"other than the one known by the group coordinator ({member.member_epoch}). The member "
                         "must abandon all its partitions and rejoin.")


def _described(assignment, names_by_id: Callable[[bytes], str | None]) -> dict:
    """Described partitions; a topic no longer known (deleted) is left out, as Kafka's image lookup does."""
    return {"topic_partitions": [{"topic_id": topic_id, "topic_name": names_by_id(topic_id),
                                  "partitions": sorted(partitions)}
                                 for topic_id, partitions in sorted(assignment.items())
                                 if names_by_id(topic_id) is not None]}


def _held(member: ConsumerGroupMember) -> dict[bytes, frozenset[int]]:
    held = dict(member.assigned)
    for topic_id, partitions in member.pending_revocation.items():
        held[topic_id] = held.get(topic_id, frozenset()) | partitions
    return held
