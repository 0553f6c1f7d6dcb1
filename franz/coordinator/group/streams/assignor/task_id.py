"""TaskId (org.apache.kafka.coordinator.group.streams.assignor.TaskId): a task is one partition of a
subtopology's input topics."""

from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, order=True, slots=True)
class TaskId:
    """Ordered by subtopology id, then partition, as Kafka's compareTo."""

    subtopology_id: str
    partition: int

    def __str__(self) -> str:
        # Kafka 4.3's TaskId is a record without its own toString; exception messages show this form.
        return f"TaskId[subtopologyId={self.subtopology_id}, partition={self.partition}]"
