"""GroupSpec and AssignmentMemberSpec (org.apache.kafka.coordinator.group.streams.assignor, with
GroupSpecImpl): what an assignor is told of the group's members."""

from __future__ import annotations

import dataclasses

from franz.coordinator.group.streams.assignor.group_assignment import Tasks
from franz.coordinator.group.streams.assignor.task_id import TaskId


@dataclasses.dataclass(frozen=True, slots=True)
class AssignmentMemberSpec:
    """One member: its current target tasks (not what it owns), the process it runs in, and what it
    reported of rack, client tags and task offsets. The sticky assignor reads only the tasks and the
    process id."""

    instance_id: str | None
    rack_id: str | None
    active_tasks: Tasks
    standby_tasks: Tasks
    warmup_tasks: Tasks
    process_id: str
    client_tags: dict[str, str]
    task_offsets: dict[TaskId, int]
    task_end_offsets: dict[TaskId, int]


@dataclasses.dataclass(frozen=True, slots=True)
class GroupSpec:
    """The members keyed by member id, and the assignment configs ("num.standby.replicas" is the one the sticky
    assignor reads). The assignor visits the members in the dict's order and its tie-breaks follow it; Kafka's
    TargetAssignmentBuilder collects them in a `new HashMap<>()`, so a caller after Kafka's exact choices
    orders them as franz.common.utils.java_hash_map_order(member ids) does."""

    members: dict[str, AssignmentMemberSpec]
    assignment_configs: dict[str, str]
