"""The active, standby and warm-up tasks of a streams group member's target (Kafka's streams TasksTuple).

A task map is `subtopology id -> partition ids` (Kafka's Map<String, Set<Integer>>). A
tuple is a value: its maps are never mutated, neither by the tuple nor by whoever holds it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from franz.coordinator.group.streams.tasks_tuple_with_epochs import TasksTupleWithEpochs

# subtopology id -> partition ids
Tasks = Mapping[str, frozenset[int]]


@dataclasses.dataclass(frozen=True)
class TasksTuple:
    active_tasks: Tasks
    standby_tasks: Tasks
    warmup_tasks: Tasks

    EMPTY: ClassVar[TasksTuple]

    def __post_init__(self) -> None:
        for name in ("active_tasks", "standby_tasks", "warmup_tasks"):
            if getattr(self, name) is None:
                raise TypeError(f"{name} cannot be None")

    def is_empty(self) -> bool:
        return not self.active_tasks and not self.standby_tasks and not self.warmup_tasks

    def contains_any(self, other: TasksTupleWithEpochs) -> bool:
        """Whether a task of this tuple is also in `other`, in the same role."""
        return (_overlaps(self.active_tasks, other.active_tasks_with_epochs)
                or _overlaps(self.standby_tasks, other.standby_tasks)
                or _overlaps(self.warmup_tasks, other.warmup_tasks))

    @classmethod
    def from_target_assignment_record(cls, value: Mapping[str, Any]) -> TasksTuple:
        """From a StreamsGroupTargetAssignmentMemberValue as the record serde decodes it."""
        return cls(task_map(value["active_tasks"]), task_map(value["standby_tasks"]), task_map(value["warmup_tasks"]))

    @classmethod
    def from_heartbeat_request(cls, owned_active_tasks: Iterable[Mapping[str, Any]],
                               owned_standby_tasks: Iterable[Mapping[str, Any]],
                               owned_warmup_tasks: Iterable[Mapping[str, Any]]) -> TasksTuple:
        """From the TaskIds lists of a StreamsGroupHeartbeat request (`subtopology_id`, `partitions`)."""
        return cls(task_map(owned_active_tasks), task_map(owned_standby_tasks), task_map(owned_warmup_tasks))

    def __str__(self) -> str:
        return (f"(active={task_assignment_to_string(self.active_tasks)}, "
                f"standby={task_assignment_to_string(self.standby_tasks)}, "
                f"warmup={task_assignment_to_string(self.warmup_tasks)})")


TasksTuple.EMPTY = TasksTuple({}, {}, {})


def task_map(task_ids: Iterable[Mapping[str, Any]]) -> dict[str, frozenset[int]]:
    """A task map from TaskIds entries (`subtopology_id`, `partitions`); a later entry for a
    subtopology replaces an earlier one, as Collectors.toMap would refuse it."""
    return {entry["subtopology_id"]: frozenset(entry["partitions"]) for entry in task_ids}


def _overlaps(tasks: Tasks, other: Mapping[str, Iterable[int]]) -> bool:
    return any(subtopology_id in other and not partitions.isdisjoint(other[subtopology_id])
               for subtopology_id, partitions in tasks.items())


def task_assignment_to_string(tasks: Mapping[str, Iterable[int]]) -> str:
    """`[subtopology-partition, ...]`, sorted, as Kafka logs an assignment."""
    return "[" + ", ".join(f"{subtopology_id}-{partition}" for subtopology_id in sorted(tasks)
                           for partition in sorted(tasks[subtopology_id])) + "]"
