"""What the task assignor learns of a streams group's topology (Kafka 4.3's streams TopologyMetadata,
a TopologyDescriber).

It reads the subtopologies of a ready ConfiguredTopology: a subtopology has as many tasks as
its ConfiguredSubtopology's number_of_tasks (the partitions of its largest source topic), and is
stateful when it has state changelog topics. Subtopologies are listed in id order, as Kafka's
SortedMap has them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any


class NoSuchElementError(KeyError, IndexError):
    """A subtopology id the topology does not have (Kafka's NoSuchElementException); a LookupError
    either way it is caught."""


@dataclasses.dataclass(frozen=True)
class TopologyMetadata:
    # the topics the group coordinator sees: name -> (topic id, number of partitions)
    metadata_image: Mapping[str, tuple[bytes, int]]
    # subtopology id -> ConfiguredSubtopology (anything with number_of_tasks and state_changelog_topics)
    subtopology_map: Mapping[str, Any]

    def __post_init__(self) -> None:
        if self.metadata_image is None or self.subtopology_map is None:
            raise TypeError("metadata_image and subtopology_map cannot be None")
        object.__setattr__(self, "subtopology_map", dict(sorted(self.subtopology_map.items())))

    def subtopologies(self) -> list[str]:
        return list(self.subtopology_map)

    def is_stateful(self, subtopology_id: str) -> bool:
        return bool(self._subtopology_or_fail(subtopology_id).state_changelog_topics)

    def max_num_input_partitions(self, subtopology_id: str) -> int:
        """The number of tasks of the subtopology: the partitions of its largest input topic."""
        return self._subtopology_or_fail(subtopology_id).number_of_tasks

    # the name the shared assignor interface gives maxNumInputPartitions
    max_number_input_partitions = max_num_input_partitions

    def _subtopology_or_fail(self, subtopology_id: str) -> Any:
        subtopology = self.subtopology_map.get(subtopology_id)
        if subtopology is None:
            raise NoSuchElementError(f"Topology does not contain subtopology {subtopology_id}")
        return subtopology
