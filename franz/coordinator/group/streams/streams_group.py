"""A streams group of KIP-1071 (Kafka's StreamsGroup): the members of one Kafka Streams
application, its topology, and who runs which task.

Epochs, as in the consumer group protocol (consumer_group.py): the group epoch moves
up whenever what the task assignor sees changes (a member joins, leaves or changes its
metadata; the topology is first validated; the metadata of a topic the topology needs
changes; the assignment configs change); the assignment epoch is the group epoch the
target assignment was computed for; a member's epoch is the assignment epoch it has
reconciled to (streams/current_assignment_builder.py).

Ownership invariant: an active task is held (assigned or pending revocation) by the
one process named in `current_active_task_process_id`; standby and warm-up tasks may
be held by several processes at once (`..._process_ids`). CurrentAssignmentBuilder
gives a member an active task only when no other process holds it, so no two
processes ever run one active task.

Group states (StreamsGroupState): Empty (no members), NotReady (the topology is not
validated: source topics missing, internal topics not created yet, or partition
counts that do not fit), Assigning (group epoch ahead of the target assignment),
Reconciling (some member not at the target yet), Stable; Dead once deleted.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any, Final

from franz.common.utils import (
    TIMELINE_HASH_TABLE_MIN_CAPACITY, timeline_hash_map_capacity_after_add, timeline_hash_map_order,
)
from franz.coordinator.group.group_metadata import GroupError
from franz.coordinator.group.metadata_hash import metadata_hash
from franz.coordinator.group.streams.streams_group_member import StreamsGroupMember
from franz.coordinator.group.streams.streams_topology import StreamsTopology
from franz.coordinator.group.streams.tasks_tuple import TasksTuple
from franz.coordinator.group.streams.tasks_tuple_with_epochs import TasksTupleWithEpochs
from franz.protocol.errors import Errors

# TargetAssignmentMetadata.INITIAL: a group's target before one was ever computed (epoch 1, no
# timestamp), of which no record is written
INITIAL_ASSIGNMENT_EPOCH: Final = 1


class StreamsGroupState(enum.Enum):
    EMPTY = "Empty"
    NOT_READY = "NotReady"
    ASSIGNING = "Assigning"
    RECONCILING = "Reconciling"
    STABLE = "Stable"
    DEAD = "Dead"

    @property
    def lower_case_name(self) -> str:
        """The name ListGroups' states filter matches (Kafka's toLowerCaseString)."""
        return "not_ready" if self is StreamsGroupState.NOT_READY else self.value.lower()


class StreamsGroup:
    def __init__(self, group_id: str) -> None:
        self.group_id = group_id
        self.group_epoch = 1  # 4.3 starts a group at 1: its first member's join takes it to 2
        self.assignment_epoch = INITIAL_ASSIGNMENT_EPOCH
        self.assignment_timestamp_ms = 0  # when the target was computed; 0: unknown
        self.members: dict[str, StreamsGroupMember] = {}  # in the order they joined
        # the slots of Kafka's TimelineHashMap of the members, which decide the order Kafka walks
        # them in (describe, the endpoints told): it grows with the members, never shrinks
        self.members_capacity = TIMELINE_HASH_TABLE_MIN_CAPACITY
        self.target_assignment: dict[str, TasksTuple] = {}  # member id -> its target
        # the topology the first member brought (StreamsGroupTopology record), and what it makes
        # of the cluster's topics now (not persisted: computed again after a load)
        self.topology: StreamsTopology | None = None
        self.configured_topology: Any = None  # topics.configured_topology.ConfiguredTopology
        self.metadata_hash = 0
        # the topology epoch last found ready (-1: not ready); 0 before any heartbeat, as Kafka's
        # TimelineInteger starts
        self.validated_topology_epoch = 0
        self.last_assignment_configs: dict[str, str] = {}
        # KIP-1071 interactive queries: moves when the members' endpoints may have changed
        # (not persisted, as in Kafka)
        self.endpoint_information_epoch = 0
        self.shutdown_request_member_id: str | None = None
        self.current_active_task_process_id: dict[tuple[str, int], str] = {}
        self.current_standby_task_process_ids: dict[tuple[str, int], set[str]] = {}
        self.current_warmup_task_process_ids: dict[tuple[str, int], set[str]] = {}
        self.dead = False
        # the group's records as `__consumer_offsets` holds them (key -> value): what a write
        # must change (streams_group_records.py)
        self.persisted: dict[bytes, bytes] = {}
        # (kind, member id) -> (the member or target object, its encoded records): see records_of
        self.encoded_records: dict[tuple[str, str], tuple[object, dict[bytes, bytes]]] = {}

    # -- state -------------------------------------------------------------------------

    @property
    def state(self) -> StreamsGroupState:
        """StreamsGroup.maybeUpdateGroupState, computed when asked."""
        if self.dead:
            return StreamsGroupState.DEAD
        if not self.members:
            return StreamsGroupState.EMPTY
        if self.topology is None or self.topology.topology_epoch != self.validated_topology_epoch:
            return StreamsGroupState.NOT_READY
        if self.group_epoch > self.assignment_epoch:
            return StreamsGroupState.ASSIGNING
        # a copy: a metrics scrape reads this on its own thread while the loop changes members
        if any(not m.is_reconciled_to(self.assignment_epoch) for m in list(self.members.values())):
            return StreamsGroupState.RECONCILING
        return StreamsGroupState.STABLE

    @property
    def has_target_assignment_metadata(self) -> bool:
        """A target was computed (or loaded): its epoch has a record."""
        return (self.assignment_epoch, self.assignment_timestamp_ms) != (INITIAL_ASSIGNMENT_EPOCH, 0)

    def compute_metadata_hash(self, topics: Mapping[str, tuple[bytes, int]], topology: StreamsTopology) -> int:
        """The hash of every topic the topology needs that exists (StreamsGroup.computeMetadataHash)."""
        return metadata_hash(topology.required_topics(), topics)

    # -- members -----------------------------------------------------------------------

    def member_or_raise(self, member_id: str) -> StreamsGroupMember:
        member = self.members.get(member_id)
        if member is None:
            raise GroupError(Errors.UNKNOWN_MEMBER_ID, f"Member {member_id} is not a member of group "
                             f"{self.group_id}.")
        return member

    def update_member(self, member: StreamsGroupMember) -> None:
        """Put the member in (new or replacing its older self) and move its tasks' owners."""
        old = self.members.get(member.member_id)
        if old is not None:
            self._release(old)
        else:
            self.members_capacity = timeline_hash_map_capacity_after_add(len(self.members), self.members_capacity)
        self.members[member.member_id] = member
        for tasks in (member.assigned_tasks, member.tasks_pending_revocation):
            self._hold(tasks, member.process_id)

    def members_in_kafka_order(self) -> list[StreamsGroupMember]:
        """The members in the order Kafka's TimelineHashMap iterates them."""
        return [self.members[member_id] for member_id in timeline_hash_map_order(self.members, self.members_capacity)]

    def remove_member(self, member_id: str) -> StreamsGroupMember | None:
        member = self.members.pop(member_id, None)
        if member is not None:
            self._release(member)
        if not self.members:
            self.shutdown_request_member_id = None  # an emptied group forgets a shutdown request
        return member

    def _hold(self, tasks: TasksTupleWithEpochs, process_id: str) -> None:
        for subtopology, partitions in tasks.active_tasks_with_epochs.items():
            for partition in partitions:
                holder = self.current_active_task_process_id.setdefault((subtopology, partition), process_id)
                assert holder == process_id, (f"active task {subtopology}_{partition} of group {self.group_id} is "
                                              f"held by process {holder}")
        for owners, by_subtopology in ((self.current_standby_task_process_ids, tasks.standby_tasks),
                                       (self.current_warmup_task_process_ids, tasks.warmup_tasks)):
            for subtopology, partitions in by_subtopology.items():
                for partition in partitions:
                    owners.setdefault((subtopology, partition), set()).add(process_id)

    def _release(self, member: StreamsGroupMember) -> None:
        for tasks in (member.assigned_tasks, member.tasks_pending_revocation):
            for subtopology, partitions in tasks.active_tasks_with_epochs.items():
                for partition in partitions:
                    self.current_active_task_process_id.pop((subtopology, partition), None)
            for owners, by_subtopology in ((self.current_standby_task_process_ids, tasks.standby_tasks),
                                           (self.current_warmup_task_process_ids, tasks.warmup_tasks)):
                for subtopology, partitions in by_subtopology.items():
                    for partition in partitions:
                        holders = owners.get((subtopology, partition))
                        if holders is not None:
                            holders.discard(member.process_id)
                            if not holders:
                                del owners[(subtopology, partition)]

    def current_active_task_process_id_of(self, subtopology_id: str, partition: int) -> str | None:
        return self.current_active_task_process_id.get((subtopology_id, partition))

    def current_standby_task_process_ids_of(self, subtopology_id: str, partition: int) -> set[str]:
        return self.current_standby_task_process_ids.get((subtopology_id, partition), set())

    def current_warmup_task_process_ids_of(self, subtopology_id: str, partition: int) -> set[str]:
        return self.current_warmup_task_process_ids.get((subtopology_id, partition), set())

    def target_assignment_of(self, member_id: str) -> TasksTuple:
        return self.target_assignment.get(member_id, TasksTuple.EMPTY)

    # -- offsets (the Group interface) ---------------------------------------------------

    def validate_offset_commit(self, member_id: str, instance_id: str | None, member_epoch: int,
                               epoch_aware_version: bool, transactional: bool,
                               partitions_by_topic: Mapping[str, list[int]] | None = None) -> Errors:
        """StreamsGroup.validateOffsetCommit: with no member epoch only while the group is empty,
        or from a transaction naming no member; a member commits with OffsetCommit v9+ at its own
        epoch, or at an older one for active tasks it was given at or before that epoch and
        still holds (Kafka's assignment epoch validator)."""
        if member_epoch < 0 and not self.members:
            return Errors.NONE
        if transactional and member_epoch == -1 and member_id == "" and instance_id is None:
            return Errors.NONE
        member = self.members.get(member_id)
        if member is None:
            return Errors.UNKNOWN_MEMBER_ID
        if not transactional and not epoch_aware_version:
            return Errors.UNSUPPORTED_VERSION
        if member_epoch == member.member_epoch:
            return Errors.NONE
        if member_epoch > member.member_epoch or self.topology is None:
            return Errors.STALE_MEMBER_EPOCH
        for topic, partitions in (partitions_by_topic or {}).items():
            subtopology = self.topology.source_topic_map.get(topic)
            for partition in partitions:
                assigned_at = (None if subtopology is None
                               else _active_task_epoch(member, subtopology.subtopology_id, partition))
                if assigned_at is None or member_epoch < assigned_at:
                    return Errors.STALE_MEMBER_EPOCH
        return Errors.NONE

    def validate_offset_fetch(self, member_id: str | None, member_epoch: int) -> Errors:
        if member_id is None and member_epoch < 0:
            return Errors.NONE
        member = self.members.get(member_id or "")
        if member is None:
            return Errors.UNKNOWN_MEMBER_ID
        return Errors.NONE if member_epoch == member.member_epoch else Errors.STALE_MEMBER_EPOCH

    def is_subscribed_to_topic(self, topic: str) -> bool:
        """Offsets of a source topic do not expire while the group has members."""
        if self.state in (StreamsGroupState.EMPTY, StreamsGroupState.DEAD) or self.topology is None:
            return False
        return topic in self.topology.source_topic_map

    # -- description ---------------------------------------------------------------------

    def as_described_group(self) -> dict:
        """StreamsGroup.asDescribedGroup: the configured topology once it is ready, else the one
        the members brought."""
        configured = self.configured_topology
        if configured is not None and configured.is_ready():
            topology = configured.as_streams_group_describe_topology()
        else:
            assert self.topology is not None, f"streams group {self.group_id} has no topology"
            topology = self.topology.as_streams_group_describe_topology()
        return {"error_code": 0, "error_message": None, "group_id": self.group_id, "group_state": self.state.value,
                "group_epoch": self.group_epoch, "assignment_epoch": self.assignment_epoch, "topology": topology,
                "members": [member.as_streams_group_describe_member(self.target_assignment.get(member.member_id))
                            for member in self.members_in_kafka_order()]}


def _active_task_epoch(member: StreamsGroupMember, subtopology_id: str, partition: int) -> int | None:
    """The epoch at which the member was given an active task it holds, assigned or pending
    revocation; None when it holds no such task."""
    for tasks in (member.assigned_tasks, member.tasks_pending_revocation):
        epoch = tasks.active_tasks_with_epochs.get(subtopology_id, {}).get(partition)
        if epoch is not None:
            return epoch
    return None

