"""The target assignment of a streams group for a group epoch (Kafka 4.3's streams TargetAssignmentBuilder).

Every member, with the updates of the heartbeat being served (a member added, changed or
removed before the group holds it), becomes an AssignmentMemberSpec whose tasks are its current
target; the task assignor computes the new targets from these. A static member that replaces a
departed one (same instance id, new member id) starts from the departed member's target, so the
assignor can keep its tasks where they were.

While the topology is not ready (its topics are missing or misconfigured) the assignor is not
called and every member's target is empty.

Kafka's builder yields records; franz's group writes records by diffing its state, so the
result is the new targets and the members whose target changed (or who had none). Removed
members have no target in the result; their target records go with the member's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from franz.common.utils import java_hash_map_order
from franz.coordinator.group.streams.assignor.group_assignment import GroupAssignment, MemberAssignment
from franz.coordinator.group.streams.assignor.group_spec import AssignmentMemberSpec, GroupSpec
from franz.coordinator.group.streams.assignor.task_assignor import TaskAssignor
from franz.coordinator.group.streams.streams_group_member import StreamsGroupMember
from franz.coordinator.group.streams.tasks_tuple import TasksTuple
from franz.coordinator.group.streams.topology_metadata import TopologyMetadata


@dataclasses.dataclass(frozen=True)
class TargetAssignmentResult:
    # member id -> its new target, for every member of the group after the updates
    target_assignment: dict[str, TasksTuple]
    # the members whose target is new or different, in the group's member order
    changed_members: tuple[str, ...]


def create_assignment_member_spec(member: StreamsGroupMember, target_assignment: TasksTuple) -> AssignmentMemberSpec:
    return AssignmentMemberSpec(
        instance_id=member.instance_id,
        rack_id=member.rack_id,
        active_tasks=target_assignment.active_tasks,
        standby_tasks=target_assignment.standby_tasks,
        warmup_tasks=target_assignment.warmup_tasks,
        process_id=member.process_id,
        client_tags=member.client_tags,
        task_offsets={},
        task_end_offsets={},
    )


class TargetAssignmentBuilder:
    def __init__(self, group_id: str, group_epoch: int, assignor: TaskAssignor,
                 assignment_configs: Mapping[str, str]) -> None:
        if group_id is None or assignor is None or assignment_configs is None:
            raise TypeError("group_id, assignor and assignment_configs cannot be None")
        self.group_id = group_id
        self.group_epoch = group_epoch
        self._assignor = assignor
        self._assignment_configs = assignment_configs
        self._members: Mapping[str, StreamsGroupMember] = {}
        self._static_members: Mapping[str, str] = {}
        self._metadata_image: Mapping[str, tuple[bytes, int]] = {}
        self._target_assignment: Mapping[str, TasksTuple] = {}
        self._topology: Any = None
        # member id -> the member as updated by the request being served; None when removed
        self._updated_members: dict[str, StreamsGroupMember | None] = {}

    def with_members(self, members: Mapping[str, StreamsGroupMember]) -> TargetAssignmentBuilder:
        self._members = members
        return self

    def with_static_members(self, static_members: Mapping[str, str]) -> TargetAssignmentBuilder:
        """instance id -> member id of the group's static members."""
        self._static_members = static_members
        return self

    def with_metadata_image(self, metadata_image: Mapping[str, tuple[bytes, int]]) -> TargetAssignmentBuilder:
        self._metadata_image = metadata_image
        return self

    def with_target_assignment(self, target_assignment: Mapping[str, TasksTuple]) -> TargetAssignmentBuilder:
        self._target_assignment = target_assignment
        return self

    def with_topology(self, topology: Any) -> TargetAssignmentBuilder:
        """The group's ConfiguredTopology (`is_ready()`, `subtopologies`)."""
        self._topology = topology
        return self

    def add_or_update_member(self, member_id: str, member: StreamsGroupMember) -> TargetAssignmentBuilder:
        self._updated_members[member_id] = member
        return self

    def remove_member(self, member_id: str) -> TargetAssignmentBuilder:
        self._updated_members[member_id] = None
        return self

    def build(self) -> TargetAssignmentResult:
        """Raises the assignor's TaskAssignorException when it cannot assign."""
        targets = self._target_assignment
        member_specs: dict[str, AssignmentMemberSpec] = {
            member_id: create_assignment_member_spec(member, targets.get(member_id, TasksTuple.EMPTY))
            for member_id, member in self._members.items()}
        for member_id, updated in self._updated_members.items():
            if updated is None:
                member_specs.pop(member_id, None)
                continue
            target = targets.get(member_id, TasksTuple.EMPTY)
            if updated.instance_id is not None:
                previous_member_id = self._static_members.get(updated.instance_id)
                if previous_member_id is not None and previous_member_id != member_id:
                    target = targets.get(previous_member_id, TasksTuple.EMPTY)
            member_specs[member_id] = create_assignment_member_spec(updated, target)

        if self._topology.is_ready():
            if self._topology.subtopologies is None:
                raise RuntimeError("Subtopologies must be present if topology is ready.")
            # Kafka hands the assignor its member specs in a new HashMap, whose order breaks its ties
            in_kafka_order = {member_id: member_specs[member_id] for member_id in java_hash_map_order(member_specs)}
            assignment = self._assignor.assign(
                GroupSpec(members=in_kafka_order, assignment_configs=dict(self._assignment_configs)),
                TopologyMetadata(self._metadata_image, self._topology.subtopologies))
        else:
            assignment = GroupAssignment(members={member_id: MemberAssignment(active_tasks={}, standby_tasks={},
                                                                              warmup_tasks={})
                                                  for member_id in member_specs})

        new_targets: dict[str, TasksTuple] = {}
        changed: list[str] = []
        for member_id in member_specs:
            new_target = _new_member_assignment(assignment, member_id)
            new_targets[member_id] = new_target
            if targets.get(member_id) != new_target:
                changed.append(member_id)
        return TargetAssignmentResult(new_targets, tuple(changed))


def _new_member_assignment(assignment: GroupAssignment, member_id: str) -> TasksTuple:
    member_assignment = assignment.members.get(member_id)
    if member_assignment is None:
        return TasksTuple.EMPTY
    return TasksTuple(member_assignment.active_tasks, member_assignment.standby_tasks, member_assignment.warmup_tasks)
