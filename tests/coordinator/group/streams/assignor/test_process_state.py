"""ProcessState, ported from Kafka 4.3's ProcessStateTest (each test names its Kafka original)."""

from __future__ import annotations

from franz.coordinator.group.streams.assignor.process_state import ProcessState
from franz.coordinator.group.streams.assignor.task_id import TaskId


def process_with_member() -> ProcessState:
    process = ProcessState("process1")
    process.add_member("member1")
    return process


def test_add_active_task_to_member():
    """shouldAddActiveTaskToMember"""
    process = process_with_member()
    process.add_task("member1", TaskId("id1", 0), True)
    assert TaskId("id1", 0) in process.assigned_active_tasks()
    assert process.member_to_task_counts["member1"] == 1


def test_add_standby_task_to_member():
    """shouldAddStandbyTaskToMember"""
    process = process_with_member()
    process.add_task("member1", TaskId("id1", 0), False)
    assert TaskId("id1", 0) in process.assigned_standby_tasks()
    assert process.member_to_task_counts["member1"] == 1


def test_increase_capacity():
    """shouldIncreaseCapacity"""
    assert process_with_member().capacity == 1


def test_true_when_capacity_is_available():
    """shouldReturnTrueWhenCapacityIsAvailable"""
    assert process_with_member().has_capacity()


def test_false_when_capacity_is_full():
    """shouldReturnFalseWhenCapacityIsFull"""
    process = process_with_member()
    process.add_task("member1", TaskId("id1", 0), True)
    assert not process.has_capacity()


def test_compare_based_on_load_and_capacity():
    """shouldCompareBasedOnLoadAndCapacity"""
    process1, process2 = ProcessState("process1"), ProcessState("process2")
    process1.add_member("member1")
    process2.add_member("member2")
    process1.add_task("member1", TaskId("id1", 0), True)
    assert process1.compare_to(process2) > 0


def test_true_if_task_is_assigned():
    """shouldReturnTrueIfTaskIsAssigned"""
    process = process_with_member()
    process.add_task("member1", TaskId("id1", 0), True)
    assert process.has_task(TaskId("id1", 0))


def test_false_if_task_is_not_assigned():
    """shouldReturnFalseIfTaskIsNotAssigned"""
    assert not process_with_member().has_task(TaskId("id1", 0))


def test_return_all_assigned_tasks():
    """shouldReturnAllAssignedTasks"""
    process = process_with_member()
    process.add_task("member1", TaskId("id1", 0), True)
    process.add_task("member1", TaskId("id1", 1), False)
    assert {TaskId("id1", 0), TaskId("id1", 1)} <= process.assigned_tasks()


# Beyond Kafka's tests


def test_load_is_tasks_per_member():
    process = ProcessState("process1")
    assert process.load > 1e300  # Double.MAX_VALUE until a member joins
    process.add_member("member1")
    process.add_member("member2")
    process.add_task("member1", TaskId("id1", 0), True)
    assert process.load == 0.5 and process.has_capacity()


def test_equal_loads_compare_by_capacity_larger_first():
    small, large = ProcessState("small"), ProcessState("large")
    small.add_member("a")
    large.add_member("b")
    large.add_member("c")
    assert large.compare_to(small) < 0 < small.compare_to(large)


def test_the_least_loaded_member_takes_the_task_and_equal_members_go_in_java_order():
    process = ProcessState("process1")
    for member_id in ("member-a", "member-b", "member-c", "member-d", "member-e"):
        process.add_member(member_id)
    process.add_task("member-e", TaskId("id1", 9), True)
    # A JVM's HashMap() holds these ids as member-a, member-b, member-e, member-c, member-d; Java's heap over
    # that order gives the equally loaded members out as member-a, member-d, member-b, member-c (OpenJDK 17).
    taken = []
    for partition in range(4):
        task = TaskId("id1", partition)
        process.add_task_to_least_loaded_member(task, True)
        taken.append(next(m for m, tasks in process.assigned_active_tasks_by_member().items() if task in tasks))
    assert taken == ["member-a", "member-d", "member-b", "member-c"]
    assert process.member_to_task_counts == {f"member-{x}": 1 for x in "abcde"}


def test_a_process_without_members_takes_no_task():
    assert ProcessState("process1").add_task_to_least_loaded_member(TaskId("id1", 0), True) == -1
