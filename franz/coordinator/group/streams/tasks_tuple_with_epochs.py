"""The tasks a streams group member holds, active ones with the epoch each was assigned at
(Kafka 4.3's TasksTupleWithEpochs).

An active task's assignment epoch is the member epoch at which the member was given it; an
offset commit from an older member epoch is still the member's for the tasks it held since
then (KIP-1251's fencing of zombie commits). Standby and warm-up tasks commit nothing and
carry no epochs. Like TasksTuple, a value whose maps are never mutated.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

from franz.coordinator.group.streams.tasks_tuple import Tasks, task_assignment_to_string, task_map

logger = logging.getLogger(__name__)

# subtopology id -> partition id -> assignment epoch
TasksWithEpochs = Mapping[str, Mapping[int, int]]


@dataclasses.dataclass(frozen=True)
class TasksTupleWithEpochs:
    active_tasks_with_epochs: TasksWithEpochs
    standby_tasks: Tasks
    warmup_tasks: Tasks

    EMPTY: ClassVar[TasksTupleWithEpochs]

    def __post_init__(self) -> None:
        for name in ("active_tasks_with_epochs", "standby_tasks", "warmup_tasks"):
            if getattr(self, name) is None:
                raise TypeError(f"{name} cannot be None")

    def is_empty(self) -> bool:
        return not self.active_tasks_with_epochs and not self.standby_tasks and not self.warmup_tasks

    def merge(self, other: TasksTupleWithEpochs) -> TasksTupleWithEpochs:
        """Every task of both; an active task in both keeps `other`'s epoch."""
        active: dict[str, dict[int, int]] = {sid: dict(epochs) for sid, epochs in self.active_tasks_with_epochs.items()}
        for subtopology_id, epochs in other.active_tasks_with_epochs.items():
            active.setdefault(subtopology_id, {}).update(epochs)
        return TasksTupleWithEpochs(active, _union(self.standby_tasks, other.standby_tasks),
                                    _union(self.warmup_tasks, other.warmup_tasks))

    @classmethod
    def from_current_assignment_record(cls, group_id: str, active_tasks: Iterable[Mapping[str, Any]],
                                       standby_tasks: Iterable[Mapping[str, Any]],
                                       warmup_tasks: Iterable[Mapping[str, Any]],
                                       member_epoch: int) -> TasksTupleWithEpochs:
        """From the TaskIds lists of a StreamsGroupCurrentMemberAssignmentValue as the record serde
        decodes them. Active tasks of a record written before 4.3 (no AssignmentEpochs), or whose
        epochs do not match its partitions one for one, get the member epoch."""
        active: dict[str, dict[int, int]] = {}
        for entry in active_tasks:
            subtopology_id, partitions, epochs = entry["subtopology_id"], entry["partitions"], entry.get(
                "assignment_epochs")
            if epochs is not None and len(epochs) == len(partitions):
                active[subtopology_id] = dict(zip(partitions, epochs))
                continue
            if epochs is not None:
                logger.error("[GroupId %s] Size of assignment epochs %d is not equal to partitions %d for subtopology "
                             "%s. Using default epoch %d for all partitions.", group_id, len(epochs), len(partitions),
                             subtopology_id, member_epoch)
            active[subtopology_id] = dict.fromkeys(partitions, member_epoch)
        return cls(active, task_map(standby_tasks), task_map(warmup_tasks))

    def __str__(self) -> str:
        active = ", ".join(f"{sid}-{p}@{self.active_tasks_with_epochs[sid][p]}"
                           for sid in sorted(self.active_tasks_with_epochs)
                           for p in sorted(self.active_tasks_with_epochs[sid]))
        return (f"(active=[{active}], standby={task_assignment_to_string(self.standby_tasks)}, "
                f"warmup={task_assignment_to_string(self.warmup_tasks)})")


TasksTupleWithEpochs.EMPTY = TasksTupleWithEpochs({}, {}, {})


def _union(tasks: Tasks, other: Tasks) -> dict[str, frozenset[int]]:
    merged = dict(tasks)
    for subtopology_id, partitions in other.items():
        merged[subtopology_id] = frozenset(merged.get(subtopology_id, ())).union(partitions)
    return merged
