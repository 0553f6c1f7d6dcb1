"""A streams group member's next step towards its target assignment (Kafka 4.3's streams CurrentAssignmentBuilder).

A member reconciles in steps, one a heartbeat:
1. tasks no longer in its target are revoked first: the member keeps `assigned ∩ target`,
   stays at its epoch in UNREVOKED_TASKS, and moves on once its heartbeat no longer reports
   any task pending revocation (then to its epoch + 1, towards the newest target);
2. it then moves to the target epoch and takes the tasks of its target that are free; a
   task that is not waits in UNRELEASED_TASKS until a later heartbeat finds it free.

When a task is free depends on its role in the target:
- an active task, when no member holds it as active, and no member of this member's
  process holds it as standby or warm-up;
- a standby or warm-up task, when no member of this member's process holds it in any role.
So a task runs as active in one member at a time, and a process never holds one task twice.

Tasks kept or being revoked keep their assignment epochs; active tasks handed over now get
the target epoch.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from franz.coordinator.group.group_metadata import GroupError
from franz.coordinator.group.streams.member_state import MemberState
from franz.coordinator.group.streams.streams_group_member import StreamsGroupMember
from franz.coordinator.group.streams.tasks_tuple import Tasks, TasksTuple
from franz.coordinator.group.streams.tasks_tuple_with_epochs import TasksTupleWithEpochs, TasksWithEpochs
from franz.protocol.errors import Errors

# (subtopology id, partition) -> the process id of the member holding the task as active, or None
ActiveTaskProcessId = Callable[[str, int], str | None]
# (subtopology id, partition) -> the process ids of the members holding it as standby (or warm-up)
TaskProcessIds = Callable[[str, int], "set[str] | frozenset[str]"]
IsUnreleased = Callable[[str, int], bool]


class CurrentAssignmentBuilder:
    """Configured with the target and the ownership functions, then `build()`."""

    def __init__(self, member: StreamsGroupMember) -> None:
        if member is None:
            raise TypeError("member cannot be None")
        self._member = member
        self._target_assignment_epoch = 0
        self._target_assignment: TasksTuple | None = None
        self._current_active_task_process_id: ActiveTaskProcessId | None = None
        self._current_standby_task_process_ids: TaskProcessIds | None = None
        self._current_warmup_task_process_ids: TaskProcessIds | None = None
        # the tasks the member reported in this heartbeat; None when it did not report them
        self._owned_tasks: TasksTuple | None = None

    def with_target_assignment(self, target_assignment_epoch: int,
                               target_assignment: TasksTuple) -> CurrentAssignmentBuilder:
        if target_assignment is None:
            raise TypeError("target_assignment cannot be None")
        self._target_assignment_epoch = target_assignment_epoch
        self._target_assignment = target_assignment
        return self

    def with_current_active_task_process_id(self, function: ActiveTaskProcessId) -> CurrentAssignmentBuilder:
        self._current_active_task_process_id = function
        return self

    def with_current_standby_task_process_ids(self, function: TaskProcessIds) -> CurrentAssignmentBuilder:
        self._current_standby_task_process_ids = function
        return self

    def with_current_warmup_task_process_ids(self, function: TaskProcessIds) -> CurrentAssignmentBuilder:
        self._current_warmup_task_process_ids = function
        return self

    def with_owned_assignment(self, owned_tasks: TasksTuple | None) -> CurrentAssignmentBuilder:
        self._owned_tasks = owned_tasks
        return self

    def build(self) -> StreamsGroupMember:
        """The member's next state, or the member itself when it cannot move on yet."""
        member = self._member
        if member.state is MemberState.STABLE:
            if member.member_epoch == self._target_assignment_epoch:
                return member
            return self._compute_next_assignment(member.member_epoch, member.assigned_tasks)
        if member.state is MemberState.UNREVOKED_TASKS:
            if self._owned_tasks is None or self._owned_tasks.contains_any(member.tasks_pending_revocation):
                return member
            return self._compute_next_assignment(member.member_epoch + 1, member.assigned_tasks)
        if member.state is MemberState.UNRELEASED_TASKS:
            return self._compute_next_assignment(member.member_epoch, member.assigned_tasks)
        # UNKNOWN: a state of a newer coordinator. The member must give up every task and rejoin.
        if self._owned_tasks is None or not self._owned_tasks.is_empty():
            raise GroupError(Errors.FENCED_MEMBER_EPOCH, "The streams group member is in a unknown state. "
                                                         "The member must abandon all its tasks and rejoin.")
        return self._compute_next_assignment(self._target_assignment_epoch, member.assigned_tasks)

    def _compute_next_assignment(self, member_epoch: int, assigned: TasksTupleWithEpochs) -> StreamsGroupMember:
        target = self._target_assignment
        assert target is not None, "with_target_assignment was not called"
        process_id = self._member.process_id
        active_process_id = self._current_active_task_process_id
        standby_process_ids = self._current_standby_task_process_ids
        warmup_process_ids = self._current_warmup_task_process_ids
        assert active_process_id is not None

        def held_by_this_process_as_standby_or_warmup(subtopology_id: str, partition: int) -> bool:
            assert standby_process_ids is not None and warmup_process_ids is not None
            return (process_id in standby_process_ids(subtopology_id, partition)
                    or process_id in warmup_process_ids(subtopology_id, partition))

        def active_unreleased(subtopology_id: str, partition: int) -> bool:
            return (active_process_id(subtopology_id, partition) is not None
                    or held_by_this_process_as_standby_or_warmup(subtopology_id, partition))

        def standby_or_warmup_unreleased(subtopology_id: str, partition: int) -> bool:
            return (active_process_id(subtopology_id, partition) == process_id
                    or held_by_this_process_as_standby_or_warmup(subtopology_id, partition))

        active = _difference_with_epochs(assigned.active_tasks_with_epochs, target.active_tasks,
                                         self._target_assignment_epoch, active_unreleased)
        standby = _difference(assigned.standby_tasks, target.standby_tasks, standby_or_warmup_unreleased)
        warmup = _difference(assigned.warmup_tasks, target.warmup_tasks, standby_or_warmup_unreleased)
        return self._build_new_member(
            member_epoch,
            pending_revocation=TasksTupleWithEpochs(active[1], standby[1], warmup[1]),
            kept=TasksTupleWithEpochs(active[0], standby[0], warmup[0]),
            pending_assignment=TasksTupleWithEpochs(active[2], standby[2], warmup[2]),
            has_unreleased_tasks=active[3] or standby[3] or warmup[3])

    def _build_new_member(self, member_epoch: int, pending_revocation: TasksTupleWithEpochs,
                          kept: TasksTupleWithEpochs, pending_assignment: TasksTupleWithEpochs,
                          has_unreleased_tasks: bool) -> StreamsGroupMember:
        member = self._member
        if not pending_revocation.is_empty() and (self._owned_tasks is None
                                                  or self._owned_tasks.contains_any(pending_revocation)):
            # Revoke first: the member keeps its epoch until it reports the tasks gone.
            return member.update_member_epoch(member_epoch, state=MemberState.UNREVOKED_TASKS, assigned_tasks=kept,
                                               tasks_pending_revocation=pending_revocation)
        if not pending_assignment.is_empty():
            state = MemberState.UNRELEASED_TASKS if has_unreleased_tasks else MemberState.STABLE
            return member.update_member_epoch(self._target_assignment_epoch, state=state,
                                              assigned_tasks=kept.merge(pending_assignment),
                                              tasks_pending_revocation=TasksTupleWithEpochs.EMPTY)
        state = MemberState.UNRELEASED_TASKS if has_unreleased_tasks else MemberState.STABLE
        return member.update_member_epoch(self._target_assignment_epoch, state=state, assigned_tasks=kept,
                                          tasks_pending_revocation=TasksTupleWithEpochs.EMPTY)


# (kept, to revoke, to assign now, whether a task of the target is not free yet), per role
_Difference = tuple[dict[str, frozenset[int]], dict[str, frozenset[int]], dict[str, frozenset[int]], bool]


def _difference(current: Tasks, target: Tasks, is_unreleased: IsUnreleased) -> _Difference:
    kept: dict[str, frozenset[int]] = {}
    revoking: dict[str, frozenset[int]] = {}
    incoming: dict[str, frozenset[int]] = {}
    unreleased = False
    for subtopology_id in set(target) | set(current):
        held = frozenset(current.get(subtopology_id, ()))
        wanted = frozenset(target.get(subtopology_id, ()))
        both = held & wanted
        free = frozenset(p for p in wanted - both if not is_unreleased(subtopology_id, p))
        unreleased = unreleased or len(free) < len(wanted - both)
        _put_non_empty(kept, subtopology_id, both)
        _put_non_empty(revoking, subtopology_id, held - both)
        _put_non_empty(incoming, subtopology_id, free)
    return kept, revoking, incoming, unreleased


def _difference_with_epochs(current: TasksWithEpochs, target: Tasks, target_epoch: int,
                            is_unreleased: IsUnreleased) -> tuple[dict[str, dict[int, int]], dict[str, dict[int, int]],
                                                                  dict[str, dict[int, int]], bool]:
    """`_difference` for active tasks: kept and revoked tasks keep their epochs, those assigned
    now get the target epoch."""
    without_epochs = {subtopology_id: frozenset(epochs) for subtopology_id, epochs in current.items()}
    kept, revoking, incoming, unreleased = _difference(without_epochs, target, is_unreleased)
    return (_with_epochs_of(current, kept), _with_epochs_of(current, revoking),
            {sid: dict.fromkeys(partitions, target_epoch) for sid, partitions in incoming.items()}, unreleased)


def _with_epochs_of(current: TasksWithEpochs, tasks: Mapping[str, frozenset[int]]) -> dict[str, dict[int, int]]:
    return {sid: {p: current[sid][p] for p in partitions} for sid, partitions in tasks.items()}


def _put_non_empty(tasks: dict[str, frozenset[int]], subtopology_id: str, partitions: frozenset[int]) -> None:
    if partitions:
        tasks[subtopology_id] = partitions
