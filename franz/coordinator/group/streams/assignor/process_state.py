"""ProcessState (org.apache.kafka.coordinator.group.streams.assignor.ProcessState): the tasks an assignor
has placed on one Kafka Streams process (all members sharing a process id, one per stream thread) and
the load they make."""

from __future__ import annotations

import sys

from franz.common.java_priority_queue import JavaPriorityQueue
from franz.common.utils import java_hash_map_order
from franz.coordinator.group.streams.assignor.task_assignor import TaskAssignorException
from franz.coordinator.group.streams.assignor.task_id import TaskId


class ProcessState:
    """Capacity is the number of members; load is tasks per member (Double.MAX_VALUE before the first
    member joins)."""

    def __init__(self, process_id: str) -> None:
        self._process_id = process_id
        self._capacity = 0
        self._load = sys.float_info.max
        self._task_count = 0
        self._member_to_task_counts: dict[str, int] = {}
        self._assigned_active_tasks: dict[str, set[TaskId]] = {}
        self._assigned_standby_tasks: dict[str, set[TaskId]] = {}
        self._assigned_tasks: set[TaskId] = set()
        # [member id, task count] pairs keyed by count; None once add_task has put a count out of date
        self._members_by_load: JavaPriorityQueue[list] | None = None

    @property
    def process_id(self) -> str:
        return self._process_id

    @property
    def capacity(self) -> int:
        return self._capacity

    @property
    def load(self) -> float:
        return self._load

    @property
    def member_to_task_counts(self) -> dict[str, int]:
        return self._member_to_task_counts

    def assigned_active_tasks(self) -> set[TaskId]:
        return set().union(*self._assigned_active_tasks.values())

    def assigned_active_tasks_by_member(self) -> dict[str, set[TaskId]]:
        return self._assigned_active_tasks

    def assigned_standby_tasks(self) -> set[TaskId]:
        return set().union(*self._assigned_standby_tasks.values())

    def assigned_standby_tasks_by_member(self) -> dict[str, set[TaskId]]:
        return self._assigned_standby_tasks

    def assigned_tasks(self) -> set[TaskId]:
        return self._assigned_tasks

    def add_task(self, member_id: str, task_id: TaskId, is_active: bool) -> int:
        """Gives the task to that member; the member's task count after it."""
        new_task_count = self._add_task_internal(member_id, task_id, is_active)
        # The heap of members cannot be reordered for one member cheaply, so it is dropped and rebuilt by the
        # next add_task_to_least_loaded_member; the assignor's call order rebuilds it at most twice.
        self._members_by_load = None
        return new_task_count

    def _add_task_internal(self, member_id: str, task_id: TaskId, is_active: bool) -> int:
        self._task_count += 1
        self._assigned_tasks.add(task_id)
        by_member = self._assigned_active_tasks if is_active else self._assigned_standby_tasks
        by_member.setdefault(member_id, set()).add(task_id)
        new_task_count = self._member_to_task_counts[member_id] + 1
        self._member_to_task_counts[member_id] = new_task_count
        self.compute_load()
        return new_task_count

    def add_task_to_least_loaded_member(self, task_id: TaskId, is_active: bool) -> int:
        """Gives the task to the member with the fewest tasks; its task count after it, or -1 when the
        process has no member. Among equally loaded members, Java's heap over Java's HashMap order of the
        members decides, as in Kafka."""
        if not self._member_to_task_counts:
            return -1
        if len(self._member_to_task_counts) == 1:
            return self._add_task_internal(next(iter(self._member_to_task_counts)), task_id, is_active)
        if self._members_by_load is None:
            counts = self._member_to_task_counts
            self._members_by_load = JavaPriorityQueue(
                key=lambda entry: entry[1], elements=([member_id, counts[member_id]]
                                                      for member_id in java_hash_map_order(counts)))
        member = self._members_by_load.poll()
        if member is None:
            raise TaskAssignorException(f"No members available to assign task {task_id}")
        new_task_count = self._add_task_internal(member[0], task_id, is_active)
        member[1] = new_task_count
        self._members_by_load.add(member)
        return new_task_count

    def compute_load(self) -> None:
        self._load = -1.0 if self._capacity <= 0 else self._task_count / self._capacity

    def add_member(self, member_id: str) -> None:
        self._member_to_task_counts[member_id] = 0
        self._capacity += 1
        self.compute_load()

    def has_capacity(self) -> bool:
        return self._load < 1.0

    def compare_to(self, other: ProcessState) -> int:
        """By load; at equal load the process with more capacity first."""
        if self._load != other.load:
            return -1 if self._load < other.load else 1
        return (other.capacity > self._capacity) - (other.capacity < self._capacity)

    def has_task(self, task_id: TaskId) -> bool:
        return task_id in self._assigned_tasks
