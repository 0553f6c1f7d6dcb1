"""Task maps and tuples for the streams group tests (Kafka's TaskAssignmentTestUtil)."""

from __future__ import annotations

import enum

from franz.coordinator.group.streams.tasks_tuple import TasksTuple
from franz.coordinator.group.streams.tasks_tuple_with_epochs import TasksTupleWithEpochs


class TaskRole(enum.Enum):
    ACTIVE = "active"
    STANDBY = "standby"
    WARMUP = "warmup"


def mk_tasks(subtopology_id: str, *partitions: int) -> tuple[str, frozenset[int]]:
    return subtopology_id, frozenset(partitions)


def mk_tasks_with_epochs(subtopology_id: str, epochs: dict[int, int]) -> tuple[str, dict[int, int]]:
    return subtopology_id, epochs


def mk_tasks_per_subtopology(*entries: tuple[str, frozenset[int]]) -> dict[str, frozenset[int]]:
    return dict(entries)


def mk_tasks_tuple(role: TaskRole, *entries: tuple[str, frozenset[int]]) -> TasksTuple:
    tasks = dict(entries)
    return TasksTuple(tasks if role is TaskRole.ACTIVE else {}, tasks if role is TaskRole.STANDBY else {},
                      tasks if role is TaskRole.WARMUP else {})


def mk_tasks_tuple_with_common_epoch(role: TaskRole, epoch: int,
                                     *entries: tuple[str, frozenset[int]]) -> TasksTupleWithEpochs:
    return mk_tasks_tuple_with_epochs(role, *((sid, dict.fromkeys(ps, epoch)) for sid, ps in entries))


def mk_tasks_tuple_with_epochs(role: TaskRole, *entries: tuple[str, dict[int, int]]) -> TasksTupleWithEpochs:
    """Epochs are kept for active tasks only; standby and warm-up tasks have none."""
    if role is TaskRole.ACTIVE:
        return TasksTupleWithEpochs(dict(entries), {}, {})
    tasks = {sid: frozenset(epochs) for sid, epochs in entries}
    return TasksTupleWithEpochs({}, tasks if role is TaskRole.STANDBY else {}, tasks if role is TaskRole.WARMUP else {})
