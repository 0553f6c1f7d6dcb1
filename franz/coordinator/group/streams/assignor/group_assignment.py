"""GroupAssignment and MemberAssignment (org.apache.kafka.coordinator.group.streams.assignor): the
target assignment an assignor computes."""

from __future__ import annotations

import dataclasses

# subtopology id -> partitions (task ids of that subtopology)
Tasks = dict[str, frozenset[int]]


@dataclasses.dataclass(frozen=True, slots=True)
class MemberAssignment:
    active_tasks: Tasks
    standby_tasks: Tasks
    warmup_tasks: Tasks

    @staticmethod
    def empty() -> MemberAssignment:
        return MemberAssignment({}, {}, {})


@dataclasses.dataclass(frozen=True, slots=True)
class GroupAssignment:
    members: dict[str, MemberAssignment]
