"""A member of a streams group (Kafka 4.3's StreamsGroupMember).

A member is a value: an update is a new member (`dataclasses.replace`, Kafka's Builder), which
the group swaps in. The defaults are those of Kafka's Builder.withDefaults. Everything here is
what the StreamsGroupMemberMetadata and StreamsGroupCurrentMemberAssignment records of the member
say (franz/coordinator/group/streams/streams_coordinator_record_helpers.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from franz.coordinator.group.streams.member_state import MemberState
from franz.coordinator.group.streams.tasks_tuple import Tasks, TasksTuple
from franz.coordinator.group.streams.tasks_tuple_with_epochs import TasksTupleWithEpochs


@dataclasses.dataclass(frozen=True)
class Endpoint:
    """The endpoint a Streams client serves Interactive Queries on (StreamsGroupMemberMetadataValue.Endpoint)."""
    host: str
    port: int


@dataclasses.dataclass(frozen=True)
class StreamsGroupMember:
    member_id: str
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    rebalance_timeout_ms: int = -1
    topology_epoch: int = -1
    # the Streams client (process) the member belongs to; one process may run several members
    process_id: str = ""
    user_endpoint: Endpoint | None = None
    client_tags: Mapping[str, str] = dataclasses.field(default_factory=dict)
    assigned_tasks: TasksTupleWithEpochs = TasksTupleWithEpochs.EMPTY
    tasks_pending_revocation: TasksTupleWithEpochs = TasksTupleWithEpochs.EMPTY

    def __post_init__(self) -> None:
        if self.member_id is None:
            raise TypeError("memberId cannot be null")

    def update_member_epoch(self, member_epoch: int, **changes: Any) -> StreamsGroupMember:
        """The member at `member_epoch`, remembering the epoch it leaves (Builder.updateMemberEpoch)."""
        return dataclasses.replace(self, previous_member_epoch=self.member_epoch, member_epoch=member_epoch, **changes)

    def is_reconciled_to(self, target_assignment_epoch: int) -> bool:
        return self.state is MemberState.STABLE and self.member_epoch == target_assignment_epoch

    @staticmethod
    def has_assigned_tasks_changed(member1: StreamsGroupMember, member2: StreamsGroupMember) -> bool:
        """Whether the two have different assigned tasks, assignment epochs included."""
        return member1.assigned_tasks != member2.assigned_tasks

    def as_streams_group_describe_member(self, target_assignment: TasksTuple | None) -> dict[str, Any]:
        """The member as StreamsGroupDescribeResponse's Member in franz's codec shape; a member
        without a target gets empty task lists there."""
        assigned = self.assigned_tasks
        return {
            "member_id": self.member_id,
            "member_epoch": self.member_epoch,
            "instance_id": self.instance_id,
            "rack_id": self.rack_id,
            "client_id": self.client_id,
            "client_host": self.client_host,
            "topology_epoch": self.topology_epoch,
            "process_id": self.process_id,
            "user_endpoint": None if self.user_endpoint is None else {
                "host": self.user_endpoint.host, "port": self.user_endpoint.port},
            "client_tags": [{"key": key, "value": value} for key, value in self.client_tags.items()],
            "task_offsets": [],
            "task_end_offsets": [],
            "assignment": {
                "active_tasks": _task_ids(assigned.active_tasks_with_epochs),
                "standby_tasks": _task_ids(assigned.standby_tasks),
                "warmup_tasks": _task_ids(assigned.warmup_tasks),
            },
            "target_assignment": {
                "active_tasks": [] if target_assignment is None else _task_ids(target_assignment.active_tasks),
                "standby_tasks": [] if target_assignment is None else _task_ids(target_assignment.standby_tasks),
                "warmup_tasks": [] if target_assignment is None else _task_ids(target_assignment.warmup_tasks),
            },
            "is_classic": False,
        }


def _task_ids(tasks: Tasks | Mapping[str, Mapping[int, int]]) -> list[dict[str, Any]]:
    """Describe's TaskIds: subtopologies and their partitions in ascending order."""
    return [{"subtopology_id": subtopology_id, "partitions": sorted(tasks[subtopology_id])}
            for subtopology_id in sorted(tasks)]
