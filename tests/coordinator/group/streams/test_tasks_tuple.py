"""TasksTuple and TasksTupleWithEpochs, ported from Kafka 4.3's TasksTupleTest and TasksTupleWithEpochsTest."""

from __future__ import annotations

import logging

import pytest

from franz.coordinator.group.streams.tasks_tuple import TasksTuple
from franz.coordinator.group.streams.tasks_tuple_with_epochs import TasksTupleWithEpochs

S1, S2, S3 = "subtopology1", "subtopology2", "subtopology3"


@pytest.mark.parametrize("cls", [TasksTuple, TasksTupleWithEpochs])
def test_tasks_cannot_be_none(cls):
    """testTasksCannotBeNull (both classes)."""
    for args in ((None, {}, {}), ({}, None, {}), ({}, {}, None)):
        with pytest.raises(TypeError):
            cls(*args)


def test_from_target_assignment_record():
    """TasksTupleTest.testFromTargetAssignmentRecord."""
    def task_ids(*entries):
        return [{"subtopology_id": sid, "partitions": list(ps)} for sid, ps in entries]
    value = {"active_tasks": task_ids((S1, [1, 2, 3]), (S2, [4, 5, 6])),
             "standby_tasks": task_ids((S1, [7, 8, 9]), (S2, [1, 2, 3])),
             "warmup_tasks": task_ids((S1, [4, 5, 6]), (S2, [7, 8, 9]))}
    assert TasksTuple.from_target_assignment_record(value) == TasksTuple(
        {S1: {1, 2, 3}, S2: {4, 5, 6}}, {S1: {7, 8, 9}, S2: {1, 2, 3}}, {S1: {4, 5, 6}, S2: {7, 8, 9}})


def test_from_heartbeat_request():
    owned = [{"subtopology_id": S1, "partitions": [0, 2]}]
    assert TasksTuple.from_heartbeat_request(owned, [], owned) == TasksTuple({S1: {0, 2}}, {}, {S1: {0, 2}})


def test_contains_any():
    """TasksTupleTest.testContainsAny: overlap in any one role counts, across roles does not."""
    tuple1 = TasksTuple({S1: frozenset({1, 2, 3})}, {S2: frozenset({4, 5, 6})}, {S3: frozenset({7, 8, 9})})
    assert tuple1.contains_any(TasksTupleWithEpochs({S1: {3: 5, 10: 5, 11: 5}}, {S2: {12, 13}}, {S3: {14, 15}}))
    assert not tuple1.contains_any(TasksTupleWithEpochs({S1: {10: 5, 11: 5}}, {S2: {12, 13}}, {S3: {14, 15}}))
    assert tuple1.contains_any(TasksTupleWithEpochs({S1: {10: 5, 11: 5}}, {S2: {4, 12, 13}}, {S3: {14, 15}}))
    assert tuple1.contains_any(TasksTupleWithEpochs({S1: {10: 5, 11: 5}}, {S2: {12, 13}}, {S3: {7, 14, 15}}))
    assert not tuple1.contains_any(TasksTupleWithEpochs({S2: {4: 1}}, {S1: {1}}, {}))


def test_is_empty():
    """testIsEmpty (both classes)."""
    assert TasksTuple({}, {}, {}).is_empty() and TasksTuple({}, {}, {}) == TasksTuple.EMPTY
    assert not TasksTuple({S1: frozenset({1})}, {}, {}).is_empty()
    assert TasksTupleWithEpochs({}, {}, {}).is_empty()
    assert TasksTupleWithEpochs({}, {}, {}) == TasksTupleWithEpochs.EMPTY
    assert not TasksTupleWithEpochs({S1: {1: 10}}, {}, {}).is_empty()


def test_from_current_assignment_record():
    """TasksTupleWithEpochsTest.testFromCurrentAssignmentRecord."""
    active = [{"subtopology_id": "1", "partitions": [1, 2, 3], "assignment_epochs": [10, 11, 12]},
              {"subtopology_id": "2", "partitions": [4, 5, 6], "assignment_epochs": [20, 21, 22]}]
    standby = [{"subtopology_id": "1", "partitions": [7, 8, 9]}, {"subtopology_id": "2", "partitions": [1, 2, 3]}]
    warmup = [{"subtopology_id": "1", "partitions": [4, 5, 6]}, {"subtopology_id": "2", "partitions": [7, 8, 9]}]
    tasks = TasksTupleWithEpochs.from_current_assignment_record("test-group", active, standby, warmup, 100)
    assert tasks == TasksTupleWithEpochs({"1": {1: 10, 2: 11, 3: 12}, "2": {4: 20, 5: 21, 6: 22}},
                                         {"1": {7, 8, 9}, "2": {1, 2, 3}}, {"1": {4, 5, 6}, "2": {7, 8, 9}})


def test_from_current_assignment_record_without_epochs_uses_the_member_epoch():
    """testFromCurrentAssignmentRecordWithoutEpochs: a record written before 4.3."""
    active = [{"subtopology_id": "1", "partitions": [1, 2, 3], "assignment_epochs": None}]
    tasks = TasksTupleWithEpochs.from_current_assignment_record("test-group", active, [], [], 100)
    assert tasks.active_tasks_with_epochs == {"1": {1: 100, 2: 100, 3: 100}}


def test_from_current_assignment_record_with_mismatched_epochs_logs_and_uses_the_member_epoch(caplog):
    """testFromCurrentAssignmentRecordWithMismatchedEpochs."""
    active = [{"subtopology_id": "1", "partitions": [1, 2, 3], "assignment_epochs": [10, 11]}]
    with caplog.at_level(logging.ERROR):
        tasks = TasksTupleWithEpochs.from_current_assignment_record("test-group", active, [], [], 100)
    assert tasks.active_tasks_with_epochs == {"1": {1: 100, 2: 100, 3: 100}}
    assert sum("[GroupId test-group] Size of assignment epochs 2 is not equal to partitions 3 for subtopology 1."
               in record.getMessage() for record in caplog.records) == 1


def test_merge():
    """testMerge: active tasks of both with their epochs, standby and warm-up unions."""
    tuple1 = TasksTupleWithEpochs({"1": {1: 10, 2: 11}}, {"2": frozenset({4, 5})}, {"3": frozenset({7, 8})})
    tuple2 = TasksTupleWithEpochs({"1": {3: 13}, "2": {6: 26}}, {"2": frozenset({9, 10})}, {"3": frozenset({11, 12})})
    merged = tuple1.merge(tuple2)
    assert merged == TasksTupleWithEpochs({"1": {1: 10, 2: 11, 3: 13}, "2": {6: 26}}, {"2": {4, 5, 9, 10}},
                                          {"3": {7, 8, 11, 12}})
    assert tuple1.active_tasks_with_epochs == {"1": {1: 10, 2: 11}}  # neither operand changes


def test_merge_with_overlapping_active_tasks_takes_the_epochs_of_the_other():
    """testMergeWithOverlappingActiveTasks."""
    merged = TasksTupleWithEpochs({"1": {1: 10, 2: 11}}, {}, {}).merge(
        TasksTupleWithEpochs({"1": {1: 99, 3: 13}}, {}, {}))
    assert merged.active_tasks_with_epochs == {"1": {1: 99, 2: 11, 3: 13}}


def test_to_string():
    """TasksTupleWithEpochsTest.testToString, and TasksTuple's form."""
    tasks = TasksTupleWithEpochs({"1": {2: 11, 1: 10}, "2": {3: 20}}, {"2": frozenset({5, 4})}, {"3": frozenset({6})})
    assert str(tasks) == "(active=[1-1@10, 1-2@11, 2-3@20], standby=[2-4, 2-5], warmup=[3-6])"
    assert str(TasksTuple({"b": frozenset({2, 1}), "a": frozenset({0})}, {}, {})) == \
        "(active=[a-0, b-1, b-2], standby=[], warmup=[])"
