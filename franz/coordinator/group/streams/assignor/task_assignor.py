"""TaskAssignor and TaskAssignorException (org.apache.kafka.coordinator.group.streams.assignor): the
server-side assignor interface of streams groups."""

from __future__ import annotations

from typing import Protocol

from franz.coordinator.group.streams.assignor.group_assignment import GroupAssignment
from franz.coordinator.group.streams.assignor.group_spec import GroupSpec
from franz.coordinator.group.streams.assignor.topology_describer import TopologyDescriber


class TaskAssignorException(Exception):
    """The assignor could not compute an assignment. Kafka's is an ApiException without an error code of
    its own, so a client that runs into it sees UNKNOWN_SERVER_ERROR."""


class TaskAssignor(Protocol):
    def name(self) -> str:
        """The unique name a group selects the assignor by."""

    def assign(self, group_spec: GroupSpec, topology_describer: TopologyDescriber) -> GroupAssignment:
        """The new target assignment of every member of the group; raises TaskAssignorException."""
