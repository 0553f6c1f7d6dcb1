"""TopologyDescriber (org.apache.kafka.coordinator.group.streams.assignor.TopologyDescriber): what an
assignor may know of the group's configured topology."""

from __future__ import annotations

from typing import Protocol


class TopologyDescriber(Protocol):
    def subtopologies(self) -> list[str]:
        """The subtopology ids, in the order the assignor walks them."""

    def max_number_input_partitions(self, subtopology_id: str) -> int:
        """The largest partition count among the subtopology's source topics: its number of tasks. Raises
        (Kafka: NoSuchElementException) for a subtopology the topology lacks."""

    def is_stateful(self, subtopology_id: str) -> bool:
        """Whether the subtopology has state changelog topics, so that its tasks can have standbys."""
