"""Kafka's ConfiguredInternalTopic: a repartition or changelog topic of a topology with the
partition count the coordinator decided for it."""

from __future__ import annotations

import dataclasses
from typing import Any

from franz.server.metadata_cache import validate_topic_name


@dataclasses.dataclass(frozen=True)
class ConfiguredInternalTopic:
    """replication_factor None uses the broker's default."""

    name: str
    number_of_partitions: int
    replication_factor: int | None
    topic_configs: dict[str, str]

    def __post_init__(self) -> None:
        if self.name is None:
            raise TypeError("name can't be null")
        validate_topic_name(self.name)
        if self.number_of_partitions < 1:
            raise ValueError("Number of partitions must be at least 1.")
        if self.topic_configs is None:
            raise TypeError("topicConfigs can't be null")
        object.__setattr__(self, "topic_configs", dict(self.topic_configs))

    def as_streams_group_describe_topic_info(self) -> dict[str, Any]:
        """StreamsGroupDescribeResponse's TopicInfo, as franz's codec shapes it."""
        return {
            "name": self.name,
            "partitions": self.number_of_partitions,
            "replication_factor": self.replication_factor if self.replication_factor is not None else 0,
            "topic_configs": [{"key": key, "value": value} for key, value in self.topic_configs.items()],
        }
