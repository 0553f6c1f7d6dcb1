"""StickyTaskAssignor (org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor), "sticky":
the built-in assignor of streams groups in Kafka 4.3.

It balances tasks over processes by load (tasks per member) and keeps a task where the previous target
put it while the member is under its quota:

- active tasks: first to the member that had the task active, then to the least loaded process among
  the members that had it as a standby, then, in range order (by subtopology, then partition), each to
  the least loaded process and there to its least loaded member;
- standby tasks ("num.standby.replicas" per stateful task): to the previous active owner, else to the
  least loaded previous standby owner, while under the total quota, never to a process holding the task
  already; the rest, walked in reverse range order, to the least loaded processes without the task.

Quotas are recomputed as members fill up: a member reaching the quota leaves the pool, and the quota of
the others is ceil(remaining tasks / remaining members).

Where Kafka iterates a HashMap (processes, and the members of a process) this port walks them in Java's
HashMap order and ties in its priority queues break as java.util.PriorityQueue breaks them, so that the
same GroupSpec (members in the same order) gets the same assignment as from Kafka.
"""

from __future__ import annotations

import dataclasses
import logging

from franz.common.java_priority_queue import JavaPriorityQueue
from franz.common.utils import java_hash_map_order
from franz.coordinator.group.streams.assignor.group_assignment import GroupAssignment, MemberAssignment, Tasks
from franz.coordinator.group.streams.assignor.group_spec import GroupSpec
from franz.coordinator.group.streams.assignor.process_state import ProcessState
from franz.coordinator.group.streams.assignor.task_assignor import TaskAssignorException
from franz.coordinator.group.streams.assignor.task_id import TaskId
from franz.coordinator.group.streams.assignor.topology_describer import TopologyDescriber

logger = logging.getLogger(__name__)

STICKY_ASSIGNOR_NAME = "sticky"
NUM_STANDBY_REPLICAS_CONFIG = "num.standby.replicas"


@dataclasses.dataclass(frozen=True, slots=True)
class _Member:
    process_id: str
    member_id: str


@dataclasses.dataclass(slots=True)
class _LocalState:
    """One assign call's working state: previous owners, the processes, and the shrinking quotas."""

    num_standby_replicas: int
    total_active_tasks: int
    total_tasks: int
    total_members_with_active_task_capacity: int
    total_members_with_task_capacity: int
    active_tasks_per_member: int
    total_tasks_per_member: int
    process_id_to_state: dict[str, ProcessState]
    # Java's HashMap order of process_id_to_state, in which Kafka fills its process heaps
    processes_in_java_order: list[ProcessState]
    active_task_to_prev_member: dict[TaskId, _Member]
    # in the order of the group's members
    standby_task_to_prev_member: dict[TaskId, list[_Member]]


def _by_load(process: ProcessState) -> float:
    return process.load


class StickyTaskAssignor:
    def name(self) -> str:
        return STICKY_ASSIGNOR_NAME

    def __str__(self) -> str:
        return self.name()

    def assign(self, group_spec: GroupSpec, topology_describer: TopologyDescriber) -> GroupAssignment:
        state = _initialize(group_spec, topology_describer)
        _assign_active(state, _task_ids(topology_describer, stateful_only=False))
        if state.num_standby_replicas > 0:
            _assign_standby(state, _task_ids(topology_describer, stateful_only=True))
        return _build_group_assignment(state, group_spec.members)


def _task_ids(topology_describer: TopologyDescriber, stateful_only: bool) -> list[TaskId]:
    return [TaskId(subtopology, partition)
            for subtopology in topology_describer.subtopologies()
            if not stateful_only or topology_describer.is_stateful(subtopology)
            for partition in range(topology_describer.max_number_input_partitions(subtopology))]


def _num_standby_replicas(assignment_configs: dict[str, str]) -> int:
    if not assignment_configs:
        return 0
    value = assignment_configs.get(NUM_STANDBY_REPLICAS_CONFIG)
    if value is None:  # Kafka's Integer.parseInt(null) fails alike: configs without the key are a caller's bug
        raise ValueError("Cannot parse null string: null")
    return int(value)


def _initialize(group_spec: GroupSpec, topology_describer: TopologyDescriber) -> _LocalState:
    num_standby_replicas = _num_standby_replicas(group_spec.assignment_configs)
    total_active_tasks = total_tasks = 0
    for subtopology in topology_describer.subtopologies():
        partitions = topology_describer.max_number_input_partitions(subtopology)
        total_active_tasks += partitions
        total_tasks += partitions
        if topology_describer.is_stateful(subtopology):
            total_tasks += partitions * num_standby_replicas
    member_count = len(group_spec.members)

    process_id_to_state: dict[str, ProcessState] = {}
    active_task_to_prev_member: dict[TaskId, _Member] = {}
    standby_task_to_prev_member: dict[TaskId, list[_Member]] = {}
    for member_id, spec in group_spec.members.items():
        member = _Member(spec.process_id, member_id)
        if spec.process_id not in process_id_to_state:
            process_id_to_state[spec.process_id] = ProcessState(spec.process_id)
        process_id_to_state[spec.process_id].add_member(member_id)
        for subtopology, partitions in spec.active_tasks.items():
            for partition in partitions:
                active_task_to_prev_member[TaskId(subtopology, partition)] = member
        for subtopology, partitions in spec.standby_tasks.items():
            for partition in partitions:
                standby_task_to_prev_member.setdefault(TaskId(subtopology, partition), []).append(member)

    return _LocalState(
        num_standby_replicas=num_standby_replicas,
        total_active_tasks=total_active_tasks,
        total_tasks=total_tasks,
        total_members_with_active_task_capacity=member_count,
        total_members_with_task_capacity=member_count,
        active_tasks_per_member=_compute_tasks_per_member(total_active_tasks, member_count),
        total_tasks_per_member=_compute_tasks_per_member(total_tasks, member_count),
        process_id_to_state=process_id_to_state,
        # Kafka sizes this HashMap for the number of members
        processes_in_java_order=[process_id_to_state[process_id]
                                 for process_id in java_hash_map_order(process_id_to_state, member_count)],
        active_task_to_prev_member=active_task_to_prev_member,
        standby_task_to_prev_member=standby_task_to_prev_member,
    )


def _build_group_assignment(state: _LocalState, members: dict) -> GroupAssignment:
    active: dict[str, set[TaskId]] = {}
    standby: dict[str, set[TaskId]] = {}
    for process in state.process_id_to_state.values():
        for member_id, tasks in process.assigned_active_tasks_by_member().items():
            active.setdefault(member_id, set()).update(tasks)
        for member_id, tasks in process.assigned_standby_tasks_by_member().items():
            standby.setdefault(member_id, set()).update(tasks)
    return GroupAssignment({
        member_id: MemberAssignment(_to_compacted_task_ids(active.get(member_id, ())),
                                    _to_compacted_task_ids(standby.get(member_id, ())), {})
        for member_id in members})


def _to_compacted_task_ids(task_ids) -> Tasks:
    by_subtopology: dict[str, set[int]] = {}
    for task_id in task_ids:
        by_subtopology.setdefault(task_id.subtopology_id, set()).add(task_id.partition)
    return {subtopology: frozenset(partitions) for subtopology, partitions in by_subtopology.items()}


def _assign_active(state: _LocalState, active_tasks: list[TaskId]) -> None:
    # The previous assignment pairs equal partitions of different subtopologies (range style), so the
    # sticky passes walk partition first.
    active_tasks.sort(key=lambda task: (task.partition, task.subtopology_id))

    # 1. to the member that had the task active
    remaining = []
    for task in active_tasks:
        prev_member = state.active_task_to_prev_member.get(task)
        if prev_member is not None:
            process = state.process_id_to_state[prev_member.process_id]
            if _has_unfulfilled_active_task_quota(state, process, prev_member):
                _count_active_task(state, process.add_task(prev_member.member_id, task, True))
                continue
        remaining.append(task)

    # 2. to the least loaded of the members that had the task as a standby
    unassigned = []
    for task in remaining:
        prev_member = _find_prev_member_with_least_load(state, state.standby_task_to_prev_member.get(task), None)
        if prev_member is not None:
            process = state.process_id_to_state[prev_member.process_id]
            if _has_unfulfilled_active_task_quota(state, process, prev_member):
                _count_active_task(state, process.add_task(prev_member.member_id, task, True))
                continue
        unassigned.append(task)

    # 3. the rest in range order, each to the least loaded process
    unassigned.sort()
    process_by_load = JavaPriorityQueue(_by_load, state.processes_in_java_order)
    for task in unassigned:
        process = process_by_load.poll()
        if process is None:
            raise TaskAssignorException(f"No process available to assign active task {task}.")
        new_task_count = process.add_task_to_least_loaded_member(task, True)
        if new_task_count == -1:
            raise TaskAssignorException(f"No member available to assign active task {task}.")
        _count_active_task(state, new_task_count)
        process_by_load.add(process)


def _count_active_task(state: _LocalState, member_task_count: int) -> None:
    _maybe_update_active_tasks_per_member(state, member_task_count)
    _maybe_update_total_tasks_per_member(state, member_task_count)


def _maybe_update_active_tasks_per_member(state: _LocalState, active_tasks: int) -> None:
    if active_tasks == state.active_tasks_per_member:
        state.total_members_with_active_task_capacity -= 1
        state.total_active_tasks -= active_tasks
        state.active_tasks_per_member = _compute_tasks_per_member(
            state.total_active_tasks, state.total_members_with_active_task_capacity)


def _maybe_update_total_tasks_per_member(state: _LocalState, tasks: int) -> None:
    if tasks == state.total_tasks_per_member:
        state.total_members_with_task_capacity -= 1
        state.total_tasks -= tasks
        state.total_tasks_per_member = _compute_tasks_per_member(
            state.total_tasks, state.total_members_with_task_capacity)


def _assign_standby_to_member_with_least_load(state: _LocalState, queue: JavaPriorityQueue[ProcessState],
                                              task: TaskId) -> bool:
    """The least loaded process not holding the task takes it; the processes passed over go back into the
    queue innermost first, as Kafka's recursion puts them back."""
    passed_over: list[ProcessState] = []
    found = False
    while (process := queue.poll()) is not None:
        passed_over.append(process)
        if not process.has_task(task):
            new_task_count = process.add_task_to_least_loaded_member(task, False)
            if new_task_count != -1:
                found = True
                _maybe_update_total_tasks_per_member(state, new_task_count)
            break
        if not len(queue):
            break
    for process in reversed(passed_over):
        queue.add(process)
    return found


def _find_prev_member_with_least_load(state: _LocalState, members: list[_Member] | None,
                                      task: TaskId | None) -> _Member | None:
    """The previous owner on the least loaded process (and, among those, with the fewest tasks), skipping
    processes that hold `task` already (None: any). Kafka 4.3 keeps the first member's process for the final
    check, so a first member whose process holds the task makes the answer None even when a later member
    would do; ported as is."""
    if not members:
        return None
    candidate = members[0]
    candidate_process = state.process_id_to_state[candidate.process_id]
    candidate_process_load = candidate_process.load
    candidate_member_load = candidate_process.member_to_task_counts[candidate.member_id]
    for member in members[1:]:
        process = state.process_id_to_state[member.process_id]
        if process.load < candidate_process_load and (task is None or not process.has_task(task)):
            member_load = process.member_to_task_counts[member.member_id]
            if member_load < candidate_member_load:
                candidate_process_load = process.load
                candidate_member_load = member_load
                candidate = member
    if task is None or not candidate_process.has_task(task):
        return candidate
    return None


def _has_unfulfilled_active_task_quota(state: _LocalState, process: ProcessState, member: _Member) -> bool:
    return process.member_to_task_counts[member.member_id] < state.active_tasks_per_member


def _has_unfulfilled_task_quota(state: _LocalState, process: ProcessState, member: _Member) -> bool:
    return process.member_to_task_counts[member.member_id] < state.total_tasks_per_member


def _assign_standby(state: _LocalState, standby_tasks: list[TaskId]) -> None:
    # Reverse order, so that a process gets standbys of other partitions than its actives (range style).
    standby_tasks.sort(key=lambda task: (task.partition, task.subtopology_id), reverse=True)
    to_least_loaded: list[tuple[TaskId, int]] = []  # (task, replicas still to place)
    for task in standby_tasks:
        for replica in range(state.num_standby_replicas):
            prev_active = state.active_task_to_prev_member.get(task)
            if prev_active is not None:
                process = state.process_id_to_state[prev_active.process_id]
                if not process.has_task(task) and _has_unfulfilled_task_quota(state, process, prev_active):
                    _maybe_update_total_tasks_per_member(state, process.add_task(prev_active.member_id, task, False))
                    continue

            prev_standbys = state.standby_task_to_prev_member.get(task)
            if prev_standbys:
                prev_standby = _find_prev_member_with_least_load(state, prev_standbys, task)
                if prev_standby is not None:
                    process = state.process_id_to_state[prev_standby.process_id]
                    if _has_unfulfilled_task_quota(state, process, prev_standby):
                        _maybe_update_total_tasks_per_member(
                            state, process.add_task(prev_standby.member_id, task, False))
                        continue

            to_least_loaded.append((task, state.num_standby_replicas - replica))
            break

    to_least_loaded.sort(key=lambda entry: entry[0], reverse=True)
    process_by_load = JavaPriorityQueue(_by_load, state.processes_in_java_order)
    for task, remaining_replicas in to_least_loaded:
        for replica in range(remaining_replicas):
            if not _assign_standby_to_member_with_least_load(state, process_by_load, task):
                logger.warning("%s There is not enough available capacity. You should increase the number of "
                               "threads and/or application instances to maintain the requested number of "
                               "standby replicas.", _error_message(state.num_standby_replicas, replica, task))
                break


def _error_message(num_standby_replicas: int, replica: int, task: TaskId) -> str:
    return (f"Unable to assign {num_standby_replicas - replica} of {num_standby_replicas} standby tasks for "
            f"task [{task}].")


def _compute_tasks_per_member(number_of_tasks: int, number_of_members: int) -> int:
    if number_of_members == 0:
        return 0
    return -(-number_of_tasks // number_of_members)
