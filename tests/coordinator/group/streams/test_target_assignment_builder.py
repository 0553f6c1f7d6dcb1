"""The streams TargetAssignmentBuilder, ported from Kafka 4.3's streams TargetAssignmentBuilderTest: a
recording assignor stands in for Kafka's mock, and duck-typed objects for ConfiguredTopology and
ConfiguredSubtopology. Kafka's cases check the records of the changed targets; here the changed
members are named instead."""

from __future__ import annotations

import dataclasses
import uuid
from types import SimpleNamespace

import pytest

from franz.coordinator.group.streams.assignor.group_assignment import GroupAssignment, MemberAssignment
from franz.coordinator.group.streams.assignor.group_spec import AssignmentMemberSpec, GroupSpec
from franz.coordinator.group.streams.streams_group_member import Endpoint, StreamsGroupMember
from franz.coordinator.group.streams.target_assignment_builder import (
    TargetAssignmentBuilder,
    create_assignment_member_spec,
)
from franz.coordinator.group.streams.tasks_tuple import TasksTuple
from franz.coordinator.group.streams.topology_metadata import TopologyMetadata
from tests.coordinator.group.streams.task_assignment_test_util import TaskRole, mk_tasks, mk_tasks_tuple

ROLES = pytest.mark.parametrize("role", list(TaskRole))


class RecordingAssignor:
    """Answers a prepared assignment and remembers what it was asked."""

    def __init__(self, assignment: GroupAssignment) -> None:
        self.assignment = assignment
        self.calls: list[tuple[GroupSpec, TopologyMetadata]] = []

    def name(self) -> str:
        return "recording"

    def assign(self, group_spec, topology_describer):
        self.calls.append((group_spec, topology_describer))
        return self.assignment


def _topology(subtopologies: dict | None, ready: bool = True) -> SimpleNamespace:
    return SimpleNamespace(subtopologies=subtopologies, is_ready=lambda: ready)


class Context:
    """Kafka's TargetAssignmentBuilderTestContext."""

    def __init__(self, group_id: str = "my-group", group_epoch: int = 20) -> None:
        self.group_id, self.group_epoch = group_id, group_epoch
        self.subtopologies: dict[str, SimpleNamespace] = {}
        self.metadata_image: dict[str, tuple[bytes, int]] = {}
        self.members: dict[str, StreamsGroupMember] = {}
        self.updated_members: dict[str, StreamsGroupMember | None] = {}
        self.target_assignment: dict[str, TasksTuple] = {}
        self.member_assignments: dict[str, MemberAssignment] = {}
        self.static_members: dict[str, str] = {}

    def add_group_member(self, member_id: str, target: TasksTuple, instance_id: str | None = None) -> None:
        self.members[member_id] = StreamsGroupMember(member_id, process_id="processId", instance_id=instance_id,
                                                     user_endpoint=Endpoint("host", 9090))
        if instance_id is not None:
            self.static_members[instance_id] = member_id
        self.target_assignment[member_id] = target

    def add_subtopology_with_single_source_topic(self, topic: str, num_tasks: int) -> str:
        subtopology_id = str(uuid.uuid4())
        topic_id = uuid.uuid4().bytes
        self.metadata_image[topic] = (topic_id, num_tasks)
        self.subtopologies[subtopology_id] = SimpleNamespace(number_of_tasks=num_tasks, source_topics={topic},
                                                             state_changelog_topics={})
        return subtopology_id

    def update_member_metadata(self, member_id: str, instance_id: str | None = None,
                               rack_id: str | None = None) -> None:
        member = self.members.get(member_id) or StreamsGroupMember(member_id, process_id="processId",
                                                                   user_endpoint=Endpoint("host", 9090))
        if instance_id is not None:
            member = dataclasses.replace(member, instance_id=instance_id)
        if rack_id is not None:
            member = dataclasses.replace(member, rack_id=rack_id)
        self.updated_members[member_id] = member

    def remove_member(self, member_id: str) -> None:
        self.updated_members[member_id] = None

    def prepare_member_assignment(self, member_id: str, assignment: TasksTuple) -> None:
        self.member_assignments[member_id] = MemberAssignment(assignment.active_tasks, assignment.standby_tasks,
                                                              assignment.warmup_tasks)

    def expected_member_specs(self) -> dict[str, AssignmentMemberSpec]:
        specs = {member_id: create_assignment_member_spec(member, self.target_assignment.get(member_id,
                                                                                             TasksTuple.EMPTY))
                 for member_id, member in self.members.items()}
        for member_id, member in self.updated_members.items():
            if member is None:
                specs.pop(member_id, None)
                continue
            target = self.target_assignment.get(member_id, TasksTuple.EMPTY)
            previous = self.static_members.get(member.instance_id) if member.instance_id else None
            if previous is not None and previous != member_id:
                target = self.target_assignment.get(previous, TasksTuple.EMPTY)
            specs[member_id] = create_assignment_member_spec(member, target)
        return specs

    def build(self):
        assignor = RecordingAssignor(GroupAssignment(dict(self.member_assignments)))
        builder = (TargetAssignmentBuilder(self.group_id, self.group_epoch, assignor, {})
                   .with_members(self.members).with_topology(_topology(self.subtopologies))
                   .with_static_members(self.static_members).with_metadata_image(self.metadata_image)
                   .with_target_assignment(self.target_assignment))
        for member_id, member in self.updated_members.items():
            if member is None:
                builder.remove_member(member_id)
            else:
                builder.add_or_update_member(member_id, member)
        result = builder.build()
        # the assignor was asked once, about exactly these members and this topology
        assert assignor.calls == [(GroupSpec(self.expected_member_specs(), {}),
                                   TopologyMetadata(self.metadata_image, self.subtopologies))]
        return result


def _foo_and_bar() -> tuple[Context, str, str]:
    """A context with the subtopologies of Kafka's cases: one for topic foo, one for bar, 6 tasks each."""
    context = Context()
    return (context, context.add_subtopology_with_single_source_topic("foo", 6),
            context.add_subtopology_with_single_source_topic("bar", 6))


def _pairs(role: TaskRole, foo: str, bar: str,
           *member_partitions: tuple[str, tuple[int, ...]]) -> dict[str, TasksTuple]:
    """member id -> the same partitions of foo's and bar's subtopologies."""
    return {member_id: mk_tasks_tuple(role, mk_tasks(foo, *partitions), mk_tasks(bar, *partitions))
            for member_id, partitions in member_partitions}


def _build_with(context: Context, assignments: dict[str, TasksTuple]):
    for member_id, target in assignments.items():
        context.prepare_member_assignment(member_id, target)
    return context.build()


def test_build_empty_assignment_when_topology_not_ready():
    """testBuildEmptyAssignmentWhenTopologyNotReady: no assignor call, every member's target empty."""
    assignor = RecordingAssignor(GroupAssignment({}))
    member = StreamsGroupMember("member-1", process_id="p")
    result = (TargetAssignmentBuilder("test-group", 1, assignor, {}).with_topology(_topology(None, ready=False))
              .with_members({"member-1": member})
              .with_target_assignment({"member-1": mk_tasks_tuple(TaskRole.ACTIVE, mk_tasks("s", 0))}).build())
    assert assignor.calls == []
    assert result.target_assignment == {"member-1": TasksTuple.EMPTY}
    assert result.changed_members == ("member-1",)
    empty = TargetAssignmentBuilder("test-group", 1, assignor, {}).with_topology(_topology(None, False)).build()
    assert (empty.target_assignment, empty.changed_members) == ({}, ())


def test_ready_topology_without_subtopologies_is_refused():
    with pytest.raises(RuntimeError, match="Subtopologies must be present if topology is ready."):
        TargetAssignmentBuilder("g", 1, RecordingAssignor(GroupAssignment({})), {}).with_topology(
            _topology(None)).build()


@ROLES
def test_create_assignment_member_spec(role):
    member = StreamsGroupMember("member-id", rack_id="rackId", instance_id="instanceId", process_id="processId",
                                client_tags={"tag1": "value1", "tag2": "value2"})
    assignment = mk_tasks_tuple(role, mk_tasks("foo", 1, 2, 3), mk_tasks("bar", 1, 2, 3))
    assert create_assignment_member_spec(member, assignment) == AssignmentMemberSpec(
        "instanceId", "rackId", assignment.active_tasks, assignment.standby_tasks, assignment.warmup_tasks,
        "processId", {"tag1": "value1", "tag2": "value2"}, {}, {})


def test_empty():
    result = Context().build()
    assert (result.target_assignment, result.changed_members) == ({}, ())


@ROLES
def test_assignment_has_not_changed(role):
    context, foo, bar = _foo_and_bar()
    targets = _pairs(role, foo, bar, ("member-1", (1, 2, 3)), ("member-2", (4, 5, 6)))
    for member_id, target in targets.items():
        context.add_group_member(member_id, target)
    result = _build_with(context, targets)
    assert result.changed_members == ()
    assert result.target_assignment == targets


@ROLES
def test_assignment_swapped(role):
    context, foo, bar = _foo_and_bar()
    context.add_group_member("member-1", _pairs(role, foo, bar, ("m", (1, 2, 3)))["m"])
    context.add_group_member("member-2", _pairs(role, foo, bar, ("m", (4, 5, 6)))["m"])
    expected = _pairs(role, foo, bar, ("member-2", (1, 2, 3)), ("member-1", (4, 5, 6)))
    result = _build_with(context, expected)
    assert set(result.changed_members) == {"member-1", "member-2"}
    assert result.target_assignment == expected


@ROLES
def test_new_member(role):
    context, foo, bar = _foo_and_bar()
    context.add_group_member("member-1", _pairs(role, foo, bar, ("m", (1, 2, 3)))["m"])
    context.add_group_member("member-2", _pairs(role, foo, bar, ("m", (4, 5, 6)))["m"])
    context.update_member_metadata("member-3")
    expected = _pairs(role, foo, bar, ("member-1", (1, 2)), ("member-2", (3, 4)), ("member-3", (5, 6)))
    result = _build_with(context, expected)
    assert result.changed_members == ("member-1", "member-2", "member-3")
    assert result.target_assignment == expected


@ROLES
def test_update_member(role):
    context, foo, bar = _foo_and_bar()
    context.add_group_member("member-1", mk_tasks_tuple(role, mk_tasks(foo, 1, 2, 3), mk_tasks(bar, 1, 2)))
    context.add_group_member("member-2", mk_tasks_tuple(role, mk_tasks(foo, 4, 5, 6), mk_tasks(bar, 3, 4)))
    context.add_group_member("member-3", mk_tasks_tuple(role, mk_tasks(bar, 5, 6)))
    context.update_member_metadata("member-3", "instance-id-3", "rack-0")
    expected = _pairs(role, foo, bar, ("member-1", (1, 2)), ("member-2", (3, 4)), ("member-3", (5, 6)))
    result = _build_with(context, expected)
    assert result.changed_members == ("member-1", "member-2", "member-3")
    assert result.target_assignment == expected


@ROLES
def test_partial_assignment_update(role):
    context, foo, bar = _foo_and_bar()
    for member_id, target in _pairs(role, foo, bar, ("member-1", (1, 2)), ("member-2", (3, 4)),
                                    ("member-3", (5, 6))).items():
        context.add_group_member(member_id, target)
    expected = _pairs(role, foo, bar, ("member-1", (1, 2)), ("member-2", (3, 4, 5)), ("member-3", (6,)))
    result = _build_with(context, expected)
    assert result.changed_members == ("member-2", "member-3")
    assert result.target_assignment == expected


@ROLES
def test_delete_member(role):
    context, foo, bar = _foo_and_bar()
    for member_id, target in _pairs(role, foo, bar, ("member-1", (1, 2)), ("member-2", (3, 4)),
                                    ("member-3", (5, 6))).items():
        context.add_group_member(member_id, target)
    context.remove_member("member-3")
    expected = _pairs(role, foo, bar, ("member-1", (1, 2, 3)), ("member-2", (4, 5, 6)))
    result = _build_with(context, expected)
    assert result.changed_members == ("member-1", "member-2")
    assert result.target_assignment == expected


@ROLES
def test_replace_static_member(role):
    """A static member rejoining under a new member id starts from the departed one's target."""
    context, foo, bar = _foo_and_bar()
    for member_id, target in _pairs(role, foo, bar, ("member-1", (1, 2)), ("member-2", (3, 4)),
                                    ("member-3", (5, 6))).items():
        context.add_group_member(member_id, target, f"instance-{member_id}")
    context.remove_member("member-3")
    context.update_member_metadata("member-3-a", "instance-member-3")
    expected = _pairs(role, foo, bar, ("member-1", (1, 2)), ("member-2", (3, 4)), ("member-3-a", (5, 6)))
    result = _build_with(context, expected)
    assert result.changed_members == ("member-3-a",)
    assert result.target_assignment == expected


def test_member_the_assignor_leaves_out_gets_an_empty_target():
    context = Context()
    foo = context.add_subtopology_with_single_source_topic("foo", 2)
    context.add_group_member("member-1", mk_tasks_tuple(TaskRole.ACTIVE, mk_tasks(foo, 0, 1)))
    result = context.build()
    assert result.target_assignment == {"member-1": TasksTuple.EMPTY}
    assert result.changed_members == ("member-1",)
