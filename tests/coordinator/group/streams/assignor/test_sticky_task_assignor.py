"""StickyTaskAssignor, ported from Kafka 4.3's StickyTaskAssignorTest (each test names its Kafka original),
plus the few places where the port pins down what Kafka does beyond those tests."""

from __future__ import annotations

import dataclasses
import logging

import pytest

from franz.coordinator.group.streams.assignor.group_assignment import GroupAssignment
from franz.coordinator.group.streams.assignor.group_spec import AssignmentMemberSpec, GroupSpec
from franz.coordinator.group.streams.assignor.sticky_task_assignor import StickyTaskAssignor
from franz.coordinator.group.streams.assignor.task_assignor import TaskAssignorException

NUM_STANDBY_REPLICAS_CONFIG = "num.standby.replicas"
assignor = StickyTaskAssignor()


@dataclasses.dataclass
class Describer:
    """Kafka's TopologyDescriberImpl: every subtopology has num_tasks tasks, all stateful or none."""

    num_tasks: int
    stateful: bool
    subtopology_ids: list[str]

    def subtopologies(self) -> list[str]:
        return self.subtopology_ids

    def max_number_input_partitions(self, subtopology_id: str) -> int:
        return self.num_tasks

    def is_stateful(self, subtopology_id: str) -> bool:
        return self.stateful


class UnequalDescriber:
    """Kafka's TopologyDescriberImpl2: two stateless subtopologies of 6 and 1 tasks."""

    def subtopologies(self) -> list[str]:
        return ["test-subtopology1", "test-subtopology2"]

    def max_number_input_partitions(self, subtopology_id: str) -> int:
        return 6 if subtopology_id == "test-subtopology1" else 1

    def is_stateful(self, subtopology_id: str) -> bool:
        return False


def spec(process_id: str, active: dict | None = None, standby: dict | None = None) -> AssignmentMemberSpec:
    return AssignmentMemberSpec(None, None, {s: frozenset(p) for s, p in (active or {}).items()},
                                {s: frozenset(p) for s, p in (standby or {}).items()}, {}, process_id, {}, {}, {})


def assign(members: dict[str, AssignmentMemberSpec], describer, standby_replicas: int | None = None):
    configs = {} if standby_replicas is None else {NUM_STANDBY_REPLICAS_CONFIG: str(standby_replicas)}
    return assignor.assign(GroupSpec(members, configs), describer)


def one(num_tasks: int, stateful: bool = False) -> Describer:
    return Describer(num_tasks, stateful, ["test-subtopology"])


def active_ids(result: GroupAssignment, *member_ids: str) -> list[int]:
    member_ids = member_ids or tuple(result.members)
    return [p for m in member_ids for ps in result.members[m].active_tasks.values() for p in ps]


def standby_ids(result: GroupAssignment, *member_ids: str) -> list[int]:
    member_ids = member_ids or tuple(result.members)
    return [p for m in member_ids for ps in result.members[m].standby_tasks.values() for p in ps]


def merged(result: GroupAssignment, role: str, *member_ids: str) -> dict[str, set[int]]:
    tasks: dict[str, set[int]] = {}
    for member_id in member_ids or result.members:
        for subtopology, partitions in getattr(result.members[member_id], role).items():
            tasks.setdefault(subtopology, set()).update(partitions)
    return tasks


def actives(result: GroupAssignment, member_id: str) -> dict[str, set[int]]:
    return {s: set(p) for s, p in result.members[member_id].active_tasks.items()}


def test_to_string_returns_name():
    """testToStringReturnsName"""
    assert assignor.name() == "sticky"
    assert str(assignor) == assignor.name()


def test_assign_one_active_task_to_each_process_when_task_count_same_as_process_count():
    """shouldAssignOneActiveTaskToEachProcessWhenTaskCountSameAsProcessCount"""
    result = assign({"member1": spec("process1"), "member2": spec("process2"), "member3": spec("process3")}, one(3))
    assert len(result.members) == 3
    assert all(len(result.members[m].active_tasks) == 1 for m in ("member1", "member2", "member3"))
    assert sorted(active_ids(result)) == [0, 1, 2]


def _six_members_of_three_processes() -> dict[str, AssignmentMemberSpec]:
    return {f"member{p}_{t}": spec(f"process{p}") for p in (1, 2, 3) for t in (1, 2)}


def test_assign_topic_group_id_evenly_across_clients_with_no_standby_tasks():
    """shouldAssignTopicGroupIdEvenlyAcrossClientsWithNoStandByTasks"""
    members = _six_members_of_three_processes()
    result = assign(members, Describer(3, False, ["test-subtopology1", "test-subtopology2"]))
    assert all(len(active_ids(result, m)) == 1 for m in members)
    assert merged(result, "active_tasks") == {"test-subtopology1": {0, 1, 2}, "test-subtopology2": {0, 1, 2}}


def test_assign_topic_group_id_evenly_across_clients_with_standby_tasks():
    """shouldAssignTopicGroupIdEvenlyAcrossClientsWithStandByTasks"""
    members = _six_members_of_three_processes()
    result = assign(members, Describer(3, True, ["test-subtopology1", "test-subtopology2"]), standby_replicas=1)
    assert all(len(active_ids(result, m)) == 1 for m in members)
    assert merged(result, "active_tasks") == {"test-subtopology1": {0, 1, 2}, "test-subtopology2": {0, 1, 2}}


def test_not_migrate_active_task_to_other_process():
    """shouldNotMigrateActiveTaskToOtherProcess"""
    result = assign({"member1": spec("process1", {"test-subtopology": {0}}),
                     "member2": spec("process2", {"test-subtopology": {1}})}, one(3))
    assert 0 in result.members["member1"].active_tasks["test-subtopology"]
    assert 1 in result.members["member2"].active_tasks["test-subtopology"]
    assert len(active_ids(result)) == 3

    # the previous active tasks flipped around
    result = assign({"member2": spec("process2", {"test-subtopology": {1}}),
                     "member3": spec("process1", {"test-subtopology": {2}})}, one(3))
    assert 1 in result.members["member2"].active_tasks["test-subtopology"]
    assert 2 in result.members["member3"].active_tasks["test-subtopology"]
    assert len(active_ids(result)) == 3


def test_migrate_active_tasks_to_new_process_without_changing_all_assignments():
    """shouldMigrateActiveTasksToNewProcessWithoutChangingAllAssignments"""
    result = assign({"member1": spec("process1", {"test-subtopology": {0, 2}}),
                     "member2": spec("process2", {"test-subtopology": {1}}),
                     "member3": spec("process3")}, one(3))
    member1 = result.members["member1"].active_tasks["test-subtopology"]
    member3 = result.members["member3"].active_tasks["test-subtopology"]
    assert 0 in member1 or 2 in member1
    assert result.members["member2"].active_tasks["test-subtopology"] == {1}
    assert 2 in member3 or 0 in member3
    assert len(active_ids(result)) == 3


def test_assign_based_on_capacity():
    """shouldAssignBasedOnCapacity"""
    result = assign({"member1": spec("process1"), "member2_1": spec("process2"), "member2_2": spec("process2")},
                    one(3))
    assert all(len(result.members[m].active_tasks["test-subtopology"]) == 1
               for m in ("member1", "member2_1", "member2_2"))


def test_assign_tasks_evenly_with_unequal_topic_group_sizes():
    """shouldAssignTasksEvenlyWithUnequalTopicGroupSizes"""
    previous = {"test-subtopology1": {0, 1, 2, 3, 4, 5}, "test-subtopology2": {0}}
    result = assign({"member1": spec("process1", previous), "member2": spec("process2")}, UnequalDescriber())
    assert len(active_ids(result, "member1")) == 4
    assert len(active_ids(result, "member2")) == 3
    assert merged(result, "active_tasks") == previous


def test_keep_active_task_stickiness_when_more_clients_than_active_tasks():
    """shouldKeepActiveTaskStickinessWhenMoreClientThanActiveTasks"""
    members = {f"member{i}": spec(f"process{i}") for i in range(1, 6)}
    members |= {"member1": spec("process1", {"test-subtopology": {0}}),
                "member2": spec("process2", {"test-subtopology": {2}}),
                "member3": spec("process3", {"test-subtopology": {1}})}
    result = assign(members, one(3))
    assert [actives(result, f"member{i}") for i in range(1, 6)] == [
        {"test-subtopology": {0}}, {"test-subtopology": {2}}, {"test-subtopology": {1}}, {}, {}]

    # a changed assignment stays sticky too
    members = {f"member{i}": spec(f"process{i}") for i in range(1, 6)}
    members |= {"member2": spec("process2", {"test-subtopology": {0}}),
                "member4": spec("process4", {"test-subtopology": {2}}),
                "member5": spec("process5", {"test-subtopology": {1}})}
    result = assign(members, one(3))
    assert [actives(result, f"member{i}") for i in range(1, 6)] == [
        {}, {"test-subtopology": {0}}, {}, {"test-subtopology": {2}}, {"test-subtopology": {1}}]


def test_assign_tasks_to_client_with_previous_standby_tasks():
    """shouldAssignTasksToClientWithPreviousStandbyTasks"""
    result = assign({"member1": spec("process1", standby={"test-subtopology": {2}}),
                     "member2": spec("process2", standby={"test-subtopology": {1}}),
                     "member3": spec("process3", standby={"test-subtopology": {0}})}, one(3))
    assert [actives(result, m) for m in ("member1", "member2", "member3")] == [
        {"test-subtopology": {2}}, {"test-subtopology": {1}}, {"test-subtopology": {0}}]


def test_not_assign_standby_tasks_to_client_with_previous_standby_tasks_and_current_active_tasks():
    """shouldNotAssignStandbyTasksToClientWithPreviousStandbyTasksAndCurrentActiveTasks"""
    result = assign({"member1": spec("process1", standby={"test-subtopology": {0}}),
                     "member2": spec("process2", standby={"test-subtopology": {1}})},
                    one(2, stateful=True), standby_replicas=1)
    assert result.members["member1"].active_tasks == {"test-subtopology": {0}}
    assert result.members["member1"].standby_tasks == {"test-subtopology": {1}}
    assert result.members["member2"].active_tasks == {"test-subtopology": {1}}
    assert result.members["member2"].standby_tasks == {"test-subtopology": {0}}


def test_assign_based_on_capacity_when_multiple_clients_have_standby_tasks():
    """shouldAssignBasedOnCapacityWhenMultipleClientHaveStandbyTasks"""
    result = assign({"member1": spec("process1", {"test-subtopology": {0}}, {"test-subtopology": {1}}),
                     "member2_1": spec("process2", {"test-subtopology": {2}}, {"test-subtopology": {1}}),
                     "member2_2": spec("process2")}, one(3))
    assert [actives(result, m) for m in ("member1", "member2_1", "member2_2")] == [
        {"test-subtopology": {0}}, {"test-subtopology": {2}}, {"test-subtopology": {1}}]


def test_assign_standby_tasks_to_different_client_than_corresponding_active_task():
    """shouldAssignStandbyTasksToDifferentClientThanCorrespondingActiveTaskIsAssignedTo"""
    members = {f"member{i + 1}": spec(f"process{i + 1}", {"test-subtopology": {i}}) for i in range(4)}
    result = assign(members, one(4, stateful=True), standby_replicas=1)
    non_empty = 0
    for i in range(4):
        standbys = standby_ids(result, f"member{i + 1}")
        assert i not in standbys and len(standbys) <= 2
        non_empty += bool(standbys)
    assert non_empty >= 3
    assert merged(result, "standby_tasks") == {"test-subtopology": {0, 1, 2, 3}}


def test_assign_multiple_replicas_of_standby_task():
    """shouldAssignMultipleReplicasOfStandbyTask"""
    members = {f"member{i + 1}": spec(f"process{i + 1}", {"test-subtopology": {i}}) for i in range(3)}
    result = assign(members, one(3, stateful=True), standby_replicas=2)
    assert set(standby_ids(result, "member1")) == {1, 2}
    assert set(standby_ids(result, "member2")) == {0, 2}
    assert set(standby_ids(result, "member3")) == {0, 1}


def test_not_assign_standby_task_replicas_when_no_client_available_without_the_task():
    """shouldNotAssignStandbyTaskReplicasWhenNoClientAvailableWithoutHavingTheTaskAssigned"""
    result = assign({"member1": spec("process1")}, one(1, stateful=True), standby_replicas=1)
    assert result.members["member1"].standby_tasks == {}


def test_assign_active_and_standby_tasks():
    """shouldAssignActiveAndStandbyTasks"""
    result = assign({f"member{i}": spec(f"process{i}") for i in (1, 2, 3)}, one(3, stateful=True),
                    standby_replicas=1)
    assert set(active_ids(result)) == {0, 1, 2}
    assert set(standby_ids(result)) == {0, 1, 2}


def test_assign_at_least_one_task_to_each_client_if_possible():
    """shouldAssignAtLeastOneTaskToEachClientIfPossible"""
    members = {f"member1_{t}": spec("process1") for t in (1, 2, 3)}
    members |= {"member2": spec("process2"), "member3": spec("process3")}
    result = assign(members, one(3))
    assert len(active_ids(result, "member1_1", "member1_2", "member1_3")) == 1
    assert len(active_ids(result, "member2")) == 1
    assert len(active_ids(result, "member3")) == 1


def test_assign_each_active_task_to_one_client_when_more_clients_than_tasks():
    """shouldAssignEachActiveTaskToOneClientWhenMoreClientsThanTasks"""
    result = assign({f"member{i}": spec(f"process{i}") for i in range(1, 7)}, one(3))
    assert len(active_ids(result)) == 3
    assert merged(result, "active_tasks") == {"test-subtopology": {0, 1, 2}}


def test_balance_active_and_standby_tasks_across_available_clients():
    """shouldBalanceActiveAndStandbyTasksAcrossAvailableClients"""
    result = assign({f"member{i}": spec(f"process{i}") for i in range(1, 7)}, one(3, stateful=True),
                    standby_replicas=1)
    for member_id in result.members:
        assert len(result.members[member_id].standby_tasks) + len(active_ids(result, member_id)) == 1


def test_assign_more_tasks_to_client_with_more_capacity():
    """shouldAssignMoreTasksToClientWithMoreCapacity"""
    result = assign({"member1": spec("process1"), "member2_1": spec("process2"), "member2_2": spec("process2")},
                    Describer(3, False, [f"test-subtopology{i}" for i in range(4)]))
    assert len(active_ids(result, "member2_1", "member2_2")) == 8
    assert len(active_ids(result, "member1")) == 4


def test_rebalance_tasks_across_all_clients_when_capacity_and_task_count_the_same():
    """shouldReBalanceTasksAcrossAllClientsWhenCapacityAndTaskCountTheSame"""
    result = assign({"member1": spec("process1"), "member2": spec("process2"),
                     "member3": spec("process3", {"test-subtopology": {0, 1, 2, 3}}),
                     "member4": spec("process4")}, one(4))
    assert [len(active_ids(result, f"member{i}")) for i in range(1, 5)] == [1, 1, 1, 1]


def test_rebalance_tasks_across_clients_when_capacity_less_than_task_count():
    """shouldReBalanceTasksAcrossClientsWhenCapacityLessThanTaskCount"""
    result = assign({"member1": spec("process1"), "member2": spec("process2"),
                     "member3": spec("process3", {"test-subtopology": {0, 1, 2, 3}})}, one(4))
    assert [len(active_ids(result, f"member{i}")) for i in range(1, 4)] == [1, 1, 2]


def test_rebalance_tasks_to_clients_based_on_capacity():
    """shouldRebalanceTasksToClientsBasedOnCapacity"""
    result = assign({"member2": spec("process2", {"test-subtopology": {0, 3, 2}}),
                     "member3_1": spec("process3"), "member3_2": spec("process3")}, one(3))
    assert len(active_ids(result, "member2")) == 1
    assert len(active_ids(result, "member3_1", "member3_2")) == 2


def test_move_minimal_number_of_tasks_when_previously_above_capacity_and_new_client_added():
    """shouldMoveMinimalNumberOfTasksWhenPreviouslyAboveCapacityAndNewClientAdded"""
    p1_previous, p2_previous = {0, 2}, {1, 3}
    result = assign({"member1": spec("process1", {"test-subtopology": p1_previous}),
                     "member2": spec("process2", {"test-subtopology": p2_previous}),
                     "member3": spec("process3")}, one(4))
    moved = active_ids(result, "member3")
    assert len(moved) == 1
    if set(moved) & p1_previous:
        assert set(active_ids(result, "member2")) == p2_previous
    else:
        assert set(active_ids(result, "member1")) == p1_previous


def test_not_move_any_tasks_when_new_tasks_added():
    """shouldNotMoveAnyTasksWhenNewTasksAdded"""
    result = assign({"member1": spec("process1", {"test-subtopology": {0, 1}}),
                     "member2": spec("process2", {"test-subtopology": {2, 3}})}, one(6))
    assert {0, 1} <= set(active_ids(result, "member1"))
    assert {2, 3} <= set(active_ids(result, "member2"))


def test_assign_new_tasks_to_new_client_when_previous_tasks_assigned_to_old_clients():
    """shouldAssignNewTasksToNewClientWhenPreviousTasksAssignedToOldClients"""
    result = assign({"member1": spec("process1", {"test-subtopology": {2, 1}}),
                     "member2": spec("process2", {"test-subtopology": {0, 3}}),
                     "member3": spec("process3")}, one(6))
    assert {2, 1} <= set(active_ids(result, "member1"))
    assert {0, 3} <= set(active_ids(result, "member2"))
    assert {4, 5} <= set(active_ids(result, "member3"))


def _three_subtopologies() -> Describer:
    return Describer(4, False, ["test-subtopology0", "test-subtopology1", "test-subtopology2"])


def test_assign_tasks_not_previously_active_to_new_client():
    """shouldAssignTasksNotPreviouslyActiveToNewClient"""
    members = {
        "member1": spec("process1", {"test-subtopology0": {1}, "test-subtopology1": {2, 3}},
                        {"test-subtopology0": {0}, "test-subtopology1": {1}, "test-subtopology2": {0, 1, 3}}),
        "member2": spec("process2", {"test-subtopology0": {0}, "test-subtopology1": {1}, "test-subtopology2": {2}},
                        {"test-subtopology0": {1, 2, 3}, "test-subtopology1": {0, 2, 3},
                         "test-subtopology2": {0, 1, 3}}),
        "member3": spec("process3", {"test-subtopology2": {0, 1, 3}},
                        {"test-subtopology0": {2}, "test-subtopology1": {2}}),
        "newMember": spec("process4", {}, {f"test-subtopology{i}": {0, 1, 2, 3} for i in range(3)}),
    }
    result = assign(members, _three_subtopologies())
    assert actives(result, "member1") == {"test-subtopology0": {1}, "test-subtopology1": {2, 3}}
    assert actives(result, "member2") == {"test-subtopology0": {0}, "test-subtopology1": {1}, "test-subtopology2": {2}}
    assert actives(result, "member3") == {"test-subtopology2": {0, 1, 3}}
    assert actives(result, "newMember") == {"test-subtopology0": {2, 3}, "test-subtopology1": {0}}


def test_assign_tasks_not_previously_active_to_multiple_new_clients():
    """shouldAssignTasksNotPreviouslyActiveToMultipleNewClients"""
    members = {
        "member1": spec("process1", {"test-subtopology0": {1}, "test-subtopology1": {2, 3}},
                        {"test-subtopology0": {0}, "test-subtopology1": {1}, "test-subtopology2": {0, 1, 3}}),
        "member2": spec("process2", {"test-subtopology0": {0}, "test-subtopology1": {1}, "test-subtopology2": {2}},
                        {"test-subtopology0": {1, 2, 3}, "test-subtopology1": {0, 2, 3},
                         "test-subtopology2": {0, 1, 3}}),
        "bounce_member1": spec("bounce1", {}, {"test-subtopology2": {0, 1, 3}}),
        "bounce_member2": spec("bounce2", {}, {"test-subtopology0": {2, 3}, "test-subtopology1": {0}}),
    }
    result = assign(members, _three_subtopologies())
    assert actives(result, "member1") == {"test-subtopology0": {1}, "test-subtopology1": {2, 3}}
    assert actives(result, "member2") == {"test-subtopology0": {0}, "test-subtopology1": {1}, "test-subtopology2": {2}}
    assert actives(result, "bounce_member1") == {"test-subtopology2": {0, 1, 3}}
    assert actives(result, "bounce_member2") == {"test-subtopology0": {2, 3}, "test-subtopology1": {0}}


def test_assign_tasks_to_new_client():
    """shouldAssignTasksToNewClient"""
    result = assign({"member1": spec("process1", {"test-subtopology": {1, 2}}), "member2": spec("process2")}, one(2))
    assert len(active_ids(result, "member1")) == 1


def test_assign_tasks_to_new_client_without_flipping_assignment_between_existing_clients():
    """shouldAssignTasksToNewClientWithoutFlippingAssignmentBetweenExistingClients"""
    result = assign({"member1": spec("process1", {"test-subtopology": {0, 1, 2}}),
                     "member2": spec("process2", {"test-subtopology": {3, 4, 5}}),
                     "newMember": spec("process3")}, one(6))
    member1, member2 = active_ids(result, "member1"), active_ids(result, "member2")
    assert not {3, 4, 5} & set(member1) and len(member1) == 2
    assert not {0, 1, 2} & set(member2) and len(member2) == 2
    assert len(active_ids(result, "newMember")) == 2


def test_assign_tasks_to_new_client_without_flipping_assignment_between_existing_and_bounced_clients():
    """shouldAssignTasksToNewClientWithoutFlippingAssignmentBetweenExistingAndBouncedClients"""
    result = assign({"member1": spec("process1", {"test-subtopology": {0, 1, 2, 6}}),
                     "member2": spec("process2", {}, {"test-subtopology": {3, 4, 5}}),
                     "newMember": spec("newProcess")}, one(7))
    member1, member2 = active_ids(result, "member1"), active_ids(result, "member2")
    assert not {3, 4, 5} & set(member1) and len(member1) == 3
    assert not {0, 1, 2} & set(member2) and len(member2) == 2
    assert len(active_ids(result, "newMember")) == 2


def _clients(count: int) -> dict[str, AssignmentMemberSpec]:
    return {f"member{i}": spec(f"process{i}") for i in range(count)}


def _no_member_holds_a_task_twice(result: GroupAssignment) -> None:
    for member_id in result.members:
        assert not set(active_ids(result, member_id)) & set(standby_ids(result, member_id)), member_id


def test_handle_large_number_of_tasks_with_standby_assignment():
    """shouldHandleLargeNumberOfTasksWithStandbyAssignment"""
    result = assign(_clients(5), one(100, stateful=True), standby_replicas=2)
    assert len(set(active_ids(result))) == 100
    assert 0 < len(set(standby_ids(result))) <= 100 * 2
    _no_member_holds_a_task_twice(result)
    assert {len(active_ids(result, m)) for m in result.members} == {20}
    assert max(len(standby_ids(result, m)) for m in result.members) > 0


def test_handle_odd_number_of_clients_with_standby_tasks():
    """shouldHandleOddNumberOfClientsWithStandbyTasks"""
    result = assign(_clients(7), one(14, stateful=True), standby_replicas=1)
    assert len(set(active_ids(result))) == 14
    assert len(set(standby_ids(result))) == 14
    assert [len(active_ids(result, m)) for m in result.members] == [2] * 7


def test_handle_high_standby_replica_count():
    """shouldHandleHighStandbyReplicaCount"""
    result = assign(_clients(3), one(6, stateful=True), standby_replicas=5)
    assert len(set(active_ids(result))) == 6
    assert 0 < len(set(standby_ids(result))) <= 6 * 2


def test_handle_large_number_of_subtopologies_with_standby_tasks():
    """shouldHandleLargeNumberOfSubtopologiesWithStandbyTasks"""
    subtopologies = [f"subtopology-{i}" for i in range(10)]
    result = assign(_clients(4), Describer(5, True, subtopologies), standby_replicas=1)
    assert set(merged(result, "active_tasks")) == set(subtopologies)
    assert set(merged(result, "standby_tasks")) == set(subtopologies)


def test_handle_edge_case_with_single_client_and_multiple_standby_replicas():
    """shouldHandleEdgeCaseWithSingleClientAndMultipleStandbyReplicas"""
    result = assign({"member1": spec("process1")}, one(10, stateful=True), standby_replicas=3)
    assert len(active_ids(result, "member1")) == 10
    assert standby_ids(result, "member1") == []


def test_handle_edge_case_with_more_standby_replicas_than_available_clients():
    """shouldHandleEdgeCaseWithMoreStandbyReplicasThanAvailableClients"""
    result = assign(_clients(2), one(4, stateful=True), standby_replicas=5)
    assert len(set(active_ids(result))) == 4
    assert len(set(standby_ids(result))) == 4


def test_reassign_tasks_when_new_node_joins_with_existing_active_and_standby_assignments():
    """shouldReassignTasksWhenNewNodeJoinsWithExistingActiveAndStandbyAssignments"""
    result = assign({"member1": spec("process1", {"test-subtopology": {0, 1}}, {"test-subtopology": {2, 3}}),
                     "member2": spec("process2", {"test-subtopology": {2, 3}}, {"test-subtopology": {0, 1}}),
                     "member3": spec("process3")}, one(4, stateful=True), standby_replicas=1)
    assert set(active_ids(result)) == {0, 1, 2, 3}
    assert set(standby_ids(result)) == {0, 1, 2, 3}
    for member_id in ("member1", "member2", "member3"):
        assert 1 <= len(active_ids(result, member_id)) <= 2
        assert len(active_ids(result, member_id)) + len(standby_ids(result, member_id)) <= 3


def _assert_one_of_each_subtopology(result: GroupAssignment) -> None:
    for role in ("active_tasks", "standby_tasks"):
        for member_id in ("member1", "member2"):
            tasks = getattr(result.members[member_id], role)
            assert {s: len(p) for s, p in tasks.items()} == {"test-subtopology1": 1, "test-subtopology2": 1}
    assert merged(result, "active_tasks") == {"test-subtopology1": {0, 1}, "test-subtopology2": {0, 1}}


def test_range_assign_tasks_when_scaling_up():
    """shouldRangeAssignTasksWhenScalingUp"""
    result = assign({"member1": spec("process1", {"test-subtopology1": {0, 1}, "test-subtopology2": {0, 1}}),
                     "member2": spec("process2")},
                    Describer(2, True, ["test-subtopology1", "test-subtopology2"]), standby_replicas=1)
    _assert_one_of_each_subtopology(result)


def test_range_assign_tasks_when_starting_empty():
    """shouldRangeAssignTasksWhenStartingEmpty"""
    result = assign({"member1": spec("process1"), "member2": spec("process2")},
                    Describer(2, True, ["test-subtopology1", "test-subtopology2"]), standby_replicas=1)
    _assert_one_of_each_subtopology(result)


def test_assign_standby_task_to_previous_owner_based_on_below_quota_condition():
    """shouldAssignStandbyTaskToPreviousOwnerBasedOnBelowQuotaCondition: process1 had task 0 active and task 1
    as a standby; with 4 tasks over 3 processes the quota is 2, so it keeps the standby although process3 is
    less loaded."""
    result = assign({"member1": spec("process1", {"test-subtopology": {0}}, {"test-subtopology": {1}}),
                     "member2": spec("process2", {"test-subtopology": {1}}),
                     "member3": spec("process3")}, one(2, stateful=True), standby_replicas=1)
    member1 = result.members["member1"]
    assert member1.active_tasks == {"test-subtopology": {0}}
    assert member1.standby_tasks == {"test-subtopology": {1}}


# Beyond Kafka's tests


def test_the_assignment_names_every_member_and_no_warm_up_tasks():
    result = assign({"member1": spec("process1"), "member2": spec("process2")}, one(1))
    assert set(result.members) == {"member1", "member2"}
    assert all(m.warmup_tasks == {} for m in result.members.values())
    assert sorted(len(m.active_tasks) for m in result.members.values()) == [0, 1]
    assert all(isinstance(p, frozenset) for m in result.members.values() for p in m.active_tasks.values())


def test_the_member_specs_given_are_left_as_they_were():
    member = spec("process1", {"test-subtopology": {0}}, {"test-subtopology": {1}})
    before = dataclasses.replace(member, active_tasks=dict(member.active_tasks),
                                 standby_tasks=dict(member.standby_tasks))
    assign({"member1": member, "member2": spec("process2")}, one(4, stateful=True), standby_replicas=1)
    assert member == before


def test_tasks_but_no_members_cannot_be_assigned():
    # Kafka's message shows the TaskId as its record's toString does
    with pytest.raises(TaskAssignorException,
                       match=r"^No process available to assign active task "
                             r"TaskId\[subtopologyId=test-subtopology, partition=0\]\.$"):
        assign({}, one(1))
    assert assign({}, one(0)).members == {}


def test_configs_without_the_standby_replica_count_are_refused_as_by_kafka():
    # Kafka reads "num.standby.replicas" of any non-empty configs (Integer.parseInt(null) throws)
    with pytest.raises(ValueError):
        assignor.assign(GroupSpec({"member1": spec("process1")}, {"other": "1"}), one(1, stateful=True))


def test_standbys_that_find_no_process_are_logged(caplog):
    with caplog.at_level(logging.WARNING, logger="franz.coordinator.group.streams.assignor.sticky_task_assignor"):
        assign({"member1": spec("process1"), "member2": spec("process2")}, one(1, stateful=True),
               standby_replicas=2)
    assert ("Unable to assign 1 of 2 standby tasks for task [TaskId[subtopologyId=test-subtopology, partition=0]]. "
            "There is not enough available capacity.") in caplog.text


def test_a_stateless_subtopology_gets_no_standbys():
    result = assign(_clients(3), one(3), standby_replicas=2)
    assert standby_ids(result) == []


# Ties between equally loaded processes and members go as Kafka's HashMap and PriorityQueue order them. The
# expected assignments are what Kafka 4.3's StickyTaskAssignor computes for these inputs on OpenJDK 17 (members
# in the order given); walking processes or members in insertion order instead gives others in each case.

def _threads(*processes_and_threads: tuple[str, int]) -> dict[str, AssignmentMemberSpec]:
    return {f"{process}-thread{t}": spec(process) for process, threads in processes_and_threads
            for t in range(1, threads + 1)}


def test_an_unowned_task_goes_to_the_first_process_in_java_order():
    result = assign(_threads(("process4", 1), ("process2", 1), ("process3", 1)), one(1, stateful=True),
                    standby_replicas=1)
    assert {m: (actives(result, m), dict(a.standby_tasks)) for m, a in result.members.items()} == {
        "process4-thread1": ({}, {}),
        "process2-thread1": ({"test-subtopology": {0}}, {}),
        "process3-thread1": ({}, {"test-subtopology": {0}}),
    }


def test_the_threads_of_a_process_take_tasks_in_java_order():
    result = assign(_threads(("process7", 1), ("process1", 2)), one(4, stateful=True), standby_replicas=0)
    assert {m: actives(result, m) for m in result.members} == {
        "process7-thread1": {"test-subtopology": {1, 3}},
        "process1-thread1": {"test-subtopology": {2}},
        "process1-thread2": {"test-subtopology": {0}},
    }


def test_standbys_of_equally_loaded_processes_go_in_java_order():
    result = assign(_threads(("process5", 2), ("process2", 2)), one(2, stateful=True), standby_replicas=1)
    assert {m: (actives(result, m), dict(a.standby_tasks)) for m, a in result.members.items()} == {
        "process5-thread1": ({}, {"test-subtopology": {1}}),
        "process5-thread2": ({"test-subtopology": {0}}, {}),
        "process2-thread1": ({}, {"test-subtopology": {0}}),
        "process2-thread2": ({"test-subtopology": {1}}, {}),
    }
