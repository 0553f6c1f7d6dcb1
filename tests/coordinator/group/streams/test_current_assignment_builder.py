"""The streams CurrentAssignmentBuilder, ported from Kafka 4.3's streams CurrentAssignmentBuilderTest
(each case for every task role where Kafka's is parameterized)."""

from __future__ import annotations

import uuid

import pytest

from franz.coordinator.group.group_metadata import GroupError
from franz.coordinator.group.streams.current_assignment_builder import CurrentAssignmentBuilder
from franz.coordinator.group.streams.member_state import MemberState
from franz.coordinator.group.streams.streams_group_member import StreamsGroupMember
from franz.coordinator.group.streams.tasks_tuple import TasksTuple
from franz.coordinator.group.streams.tasks_tuple_with_epochs import TasksTupleWithEpochs
from franz.protocol.errors import Errors
from tests.coordinator.group.streams.task_assignment_test_util import (
    TaskRole,
    mk_tasks,
    mk_tasks_tuple,
    mk_tasks_tuple_with_common_epoch,
    mk_tasks_tuple_with_epochs,
    mk_tasks_with_epochs,
)

SUBTOPOLOGY_ID1 = str(uuid.uuid4())
SUBTOPOLOGY_ID2 = str(uuid.uuid4())
PROCESS_ID = "process_id"
MEMBER_NAME = "member"
ROLES = pytest.mark.parametrize("role", list(TaskRole))


def _member(state: MemberState, epoch: int, assigned: TasksTupleWithEpochs,
            pending: TasksTupleWithEpochs = TasksTupleWithEpochs.EMPTY, previous_epoch: int | None = None,
            process_id: str = PROCESS_ID) -> StreamsGroupMember:
    return StreamsGroupMember(MEMBER_NAME, member_epoch=epoch,
                              previous_member_epoch=epoch if previous_epoch is None else previous_epoch, state=state,
                              process_id=process_id, assigned_tasks=assigned, tasks_pending_revocation=pending)


def _builder(member: StreamsGroupMember, target_epoch: int, target: TasksTuple, active=lambda s, p: None,
             standby=lambda s, p: set(), warmup=lambda s, p: set()) -> CurrentAssignmentBuilder:
    return (CurrentAssignmentBuilder(member).with_target_assignment(target_epoch, target)
            .with_current_active_task_process_id(active).with_current_standby_task_process_ids(standby)
            .with_current_warmup_task_process_ids(warmup))


def _common(role, epoch, tasks1, tasks2):
    return mk_tasks_tuple_with_common_epoch(role, epoch, mk_tasks(SUBTOPOLOGY_ID1, *tasks1),
                                            mk_tasks(SUBTOPOLOGY_ID2, *tasks2))


def _target(role, tasks1, tasks2):
    return mk_tasks_tuple(role, mk_tasks(SUBTOPOLOGY_ID1, *tasks1), mk_tasks(SUBTOPOLOGY_ID2, *tasks2))


@ROLES
def test_stable_to_stable(role):
    member = _member(MemberState.STABLE, 10, _common(role, 10, [1, 2], [3, 4]))
    updated = _builder(member, 11, _target(role, [1, 2], [3, 4]), active=lambda s, p: PROCESS_ID).build()
    assert updated == _member(MemberState.STABLE, 11, _common(role, 10, [1, 2], [3, 4]), previous_epoch=10)


@ROLES
def test_stable_to_stable_at_target_epoch(role):
    member = _member(MemberState.STABLE, 10, _common(role, 10, [1, 2], [3, 4]))
    assert _builder(member, 10, _target(role, [1, 2], [3, 4]), active=lambda s, p: PROCESS_ID).build() == member


@ROLES
def test_stable_to_stable_with_new_tasks(role):
    """Kept tasks keep their epochs, new active tasks get the target epoch."""
    member = _member(MemberState.STABLE, 10, mk_tasks_tuple_with_epochs(
        role, mk_tasks_with_epochs(SUBTOPOLOGY_ID1, {1: 9, 2: 8}), mk_tasks_with_epochs(SUBTOPOLOGY_ID2, {3: 9, 4: 8})))
    updated = _builder(member, 11, _target(role, [1, 2, 4], [3, 4, 7])).build()
    assert updated == _member(MemberState.STABLE, 11, mk_tasks_tuple_with_epochs(
        role, mk_tasks_with_epochs(SUBTOPOLOGY_ID1, {1: 9, 2: 8, 4: 11}),
        mk_tasks_with_epochs(SUBTOPOLOGY_ID2, {3: 9, 4: 8, 7: 11})), previous_epoch=10)


@ROLES
def test_stable_to_unrevoked_tasks(role):
    member = _member(MemberState.STABLE, 10, _common(role, 10, [1, 2], [3, 4]))
    updated = _builder(member, 11, _target(role, [2, 3], [4, 5])).build()
    assert updated == _member(MemberState.UNREVOKED_TASKS, 10, _common(role, 10, [2], [4]),
                              _common(role, 10, [1], [3]))


@ROLES
def test_stable_to_unrevoked_with_empty_assignment(role):
    member = _member(MemberState.STABLE, 10, _common(role, 10, [1, 2], [3, 4]))
    updated = _builder(member, 11, TasksTuple.EMPTY, active=lambda s, p: PROCESS_ID).build()
    assert updated == _member(MemberState.UNREVOKED_TASKS, 10, TasksTupleWithEpochs.EMPTY,
                              _common(role, 10, [1, 2], [3, 4]))


@ROLES
def test_stable_to_unreleased_tasks(role):
    member = _member(MemberState.STABLE, 10, _common(role, 10, [1, 2], [3, 4]))
    updated = _builder(member, 11, _target(role, [1, 2, 4], [3, 4, 7]), active=lambda s, p: PROCESS_ID).build()
    assert updated == _member(MemberState.UNRELEASED_TASKS, 11, _common(role, 10, [1, 2], [3, 4]), previous_epoch=10)


@ROLES
def test_stable_to_unreleased_tasks_with_owned_tasks_not_having_revoked_tasks(role):
    """The member reports none of the tasks it would revoke: nothing to wait for there."""
    member = _member(MemberState.STABLE, 10, _common(role, 10, [1, 2], [3, 4]))
    updated = (_builder(member, 11, _target(role, [1, 2], [3, 5]),
                        active=lambda s, p: PROCESS_ID if s == SUBTOPOLOGY_ID2 else None)
               .with_owned_assignment(mk_tasks_tuple(role)).build())
    assert updated == _member(MemberState.UNRELEASED_TASKS, 11, _common(role, 10, [1, 2], [3]), previous_epoch=10)


@ROLES
def test_unrevoked_tasks_to_stable(role):
    member = _member(MemberState.UNREVOKED_TASKS, 10, _common(role, 10, [2, 3], [5, 6]), _common(role, 10, [1], [4]))
    updated = (_builder(member, 11, _target(role, [2, 3], [5, 6]))
               .with_owned_assignment(_target(role, [2, 3], [5, 6])).build())
    assert updated == _member(MemberState.STABLE, 11, _common(role, 10, [2, 3], [5, 6]), previous_epoch=10)


@ROLES
def test_remains_in_unrevoked_tasks(role):
    """Not reporting its tasks, or still reporting one to revoke, keeps the member where it is."""
    member = _member(MemberState.UNREVOKED_TASKS, 10, _common(role, 10, [2, 3], [5, 6]), _common(role, 10, [1], [4]))
    builder = _builder(member, 12, _target(role, [3], [6]))
    assert builder.with_owned_assignment(None).build() == member
    assert builder.with_owned_assignment(_target(role, [1, 2, 3], [5, 6])).build() == member
    assert builder.with_owned_assignment(_target(role, [2, 3], [4, 5, 6])).build() == member


@ROLES
def test_unrevoked_tasks_to_unrevoked_tasks(role):
    """Revoked, the member moves to epoch + 1 and revokes again towards a newer target."""
    member = _member(MemberState.UNREVOKED_TASKS, 10, _common(role, 10, [2, 3], [5, 6]), _common(role, 10, [1], [4]))
    updated = (CurrentAssignmentBuilder(member).with_target_assignment(12, _target(role, [3], [6]))
               .with_current_active_task_process_id(lambda s, p: None)
               .with_owned_assignment(_target(role, [2, 3], [5, 6])).build())
    assert updated == _member(MemberState.UNREVOKED_TASKS, 11, _common(role, 10, [3], [6]),
                              _common(role, 10, [2], [5]), previous_epoch=10)


@ROLES
def test_unrevoked_tasks_to_unreleased_tasks(role):
    member = _member(MemberState.UNREVOKED_TASKS, 11, _common(role, 11, [2, 3], [5, 6]), _common(role, 11, [1], [4]),
                     previous_epoch=10)
    updated = (_builder(member, 11, _target(role, [2, 3, 4], [5, 6, 7]), active=lambda s, p: PROCESS_ID)
               .with_owned_assignment(_target(role, [2, 3], [5, 6])).build())
    assert updated == _member(MemberState.UNRELEASED_TASKS, 11, _common(role, 11, [2, 3], [5, 6]))


@ROLES
def test_unreleased_tasks_to_stable(role):
    """Every target task already held: the owners of other tasks do not matter."""
    member = _member(MemberState.UNRELEASED_TASKS, 11, _common(role, 11, [2, 3], [5, 6]), process_id="process1")
    updated = _builder(member, 12, _target(role, [2, 3], [5, 6]), active=lambda s, p: PROCESS_ID,
                       standby=lambda s, p: {PROCESS_ID}, warmup=lambda s, p: {PROCESS_ID}).build()
    assert updated == _member(MemberState.STABLE, 12, _common(role, 11, [2, 3], [5, 6]), previous_epoch=11,
                              process_id="process1")


@ROLES
def test_unreleased_tasks_to_stable_with_new_tasks(role):
    member = _member(MemberState.UNRELEASED_TASKS, 11, _common(role, 11, [2, 3], [5, 6]), process_id="process1")
    updated = _builder(member, 11, _target(role, [2, 3, 4], [5, 6, 7])).build()
    assert updated == _member(MemberState.STABLE, 11, _common(role, 11, [2, 3, 4], [5, 6, 7]), process_id="process1")


@ROLES
def test_unreleased_tasks_to_unreleased_tasks(role):
    member = _member(MemberState.UNRELEASED_TASKS, 11, _common(role, 11, [2, 3], [5, 6]))
    updated = _builder(member, 11, _target(role, [2, 3, 4], [5, 6, 7]), active=lambda s, p: PROCESS_ID,
                       standby=lambda s, p: {PROCESS_ID}, warmup=lambda s, p: {PROCESS_ID}).build()
    assert updated == member


@ROLES
def test_unreleased_tasks_to_unreleased_tasks_other_unreleased_task_role(role):
    """The wanted task is held in another role by a member of the same process."""
    member = _member(MemberState.UNRELEASED_TASKS, 11, _common(role, 11, [2, 3], [5, 6]))
    updated = _builder(member, 11, _target(role, [2, 3, 4], [5, 6, 7]),
                       standby=lambda s, p: set() if role is TaskRole.STANDBY else {PROCESS_ID},
                       warmup=lambda s, p: {PROCESS_ID} if role is TaskRole.STANDBY else set()).build()
    assert updated == member


def test_unreleased_tasks_to_unreleased_tasks_any_active_owner():
    """An active task stays unreleased while any process holds it as active; the free one is assigned."""
    member = _member(MemberState.UNRELEASED_TASKS, 11, _common(TaskRole.ACTIVE, 11, [2, 3], [5, 6]))
    updated = _builder(member, 11, _target(TaskRole.ACTIVE, [2, 3, 4], [5, 6, 7]),
                       active=lambda s, p: "anyOtherProcess" if (s, p) == (SUBTOPOLOGY_ID1, 4) else None).build()
    assert updated == _member(MemberState.UNRELEASED_TASKS, 11, _common(TaskRole.ACTIVE, 11, [2, 3], [5, 6, 7]))


@pytest.mark.parametrize("role", [TaskRole.STANDBY, TaskRole.WARMUP])
def test_standby_or_warmup_task_held_as_active_by_another_process_is_free(role):
    """A standby or warm-up task waits only for this member's own process, not for another's active."""
    member = _member(MemberState.UNRELEASED_TASKS, 11, _common(role, 11, [2], [5]))
    updated = _builder(member, 11, _target(role, [2, 3], [5]), active=lambda s, p: "anyOtherProcess").build()
    assert updated == _member(MemberState.STABLE, 11, _common(role, 11, [2, 3], [5]))


@ROLES
def test_unreleased_tasks_to_unrevoked_tasks(role):
    member = _member(MemberState.UNRELEASED_TASKS, 11, _common(role, 11, [2, 3], [5, 6]), _common(role, 11, [4], [7]),
                     process_id="process1")
    updated = _builder(member, 12, _target(role, [3], [6]), active=lambda s, p: PROCESS_ID).build()
    assert updated == _member(MemberState.UNREVOKED_TASKS, 11, _common(role, 11, [3], [6]),
                              _common(role, 11, [2], [5]), process_id="process1")


@ROLES
def test_unknown_state(role):
    """A member in a state of a newer coordinator is fenced until it rejoins owning nothing."""
    member = _member(MemberState.UNKNOWN, 11, _common(role, 11, [3], [6]), _common(role, 11, [2], [5]))
    with pytest.raises(GroupError) as raised:
        (CurrentAssignmentBuilder(member).with_target_assignment(12, _target(role, [3], [6]))
         .with_current_active_task_process_id(lambda s, p: PROCESS_ID).build())
    assert raised.value.code == Errors.FENCED_MEMBER_EPOCH
    assert str(raised.value) == ("The streams group member is in a unknown state. "
                                 "The member must abandon all its tasks and rejoin.")
    updated = (_builder(member, 12, _target(role, [3], [6]), active=lambda s, p: PROCESS_ID)
               .with_owned_assignment(mk_tasks_tuple(role)).build())
    assert updated == _member(MemberState.STABLE, 12, _common(role, 11, [3], [6]), previous_epoch=11)


def test_assignment_epochs_should_be_preserved_from_previous_assignment():
    member = _member(MemberState.STABLE, 10, mk_tasks_tuple_with_epochs(
        TaskRole.ACTIVE, mk_tasks_with_epochs(SUBTOPOLOGY_ID1, {1: 5, 2: 6}),
        mk_tasks_with_epochs(SUBTOPOLOGY_ID2, {3: 7, 4: 8})))
    updated = _builder(member, 11, _target(TaskRole.ACTIVE, [1, 2], [3, 4]), active=lambda s, p: PROCESS_ID).build()
    assert updated == _member(MemberState.STABLE, 11, member.assigned_tasks, previous_epoch=10)


def test_newly_assigned_tasks_get_target_assignment_epoch():
    member = _member(MemberState.STABLE, 10, TasksTupleWithEpochs.EMPTY)
    updated = _builder(member, 11, _target(TaskRole.ACTIVE, [1, 2], [3, 4])).build()
    assert updated == _member(MemberState.STABLE, 11, _common(TaskRole.ACTIVE, 11, [1, 2], [3, 4]), previous_epoch=10)


def test_mixed_preserved_and_new_assignment_epochs():
    """Tasks 1 and 2 keep their epochs (whether reported or not), task 3 (revoked, then given back)
    and task 5 (new) get the target epoch."""
    member = _member(MemberState.UNREVOKED_TASKS, 10,
                     mk_tasks_tuple_with_epochs(TaskRole.ACTIVE, mk_tasks_with_epochs(SUBTOPOLOGY_ID1, {1: 5, 2: 6})),
                     mk_tasks_tuple_with_epochs(TaskRole.ACTIVE, mk_tasks_with_epochs(SUBTOPOLOGY_ID2, {3: 7, 4: 8})))
    updated = (_builder(member, 11, _target(TaskRole.ACTIVE, [1, 2], [3, 5]))
               .with_owned_assignment(mk_tasks_tuple(TaskRole.ACTIVE, mk_tasks(SUBTOPOLOGY_ID1, 1))).build())
    assert updated == _member(MemberState.STABLE, 11, mk_tasks_tuple_with_epochs(
        TaskRole.ACTIVE, mk_tasks_with_epochs(SUBTOPOLOGY_ID1, {1: 5, 2: 6}),
        mk_tasks_with_epochs(SUBTOPOLOGY_ID2, {3: 11, 5: 11})), previous_epoch=10)
