"""Kafka's TopicConfigurationException: why a streams group's topology cannot be configured
against the topics the broker has, with the heartbeat status that reports it to the members."""

from __future__ import annotations

import enum


class Status(enum.IntEnum):
    """StreamsGroupHeartbeatResponse.Status: the status codes of a StreamsGroupHeartbeat response."""

    STALE_TOPOLOGY = 0
    MISSING_SOURCE_TOPICS = 1
    INCORRECTLY_PARTITIONED_TOPICS = 2
    MISSING_INTERNAL_TOPICS = 3
    SHUTDOWN_APPLICATION = 4
    ASSIGNMENT_DELAYED = 5


class TopicConfigurationException(Exception):
    """A topology the topics do not fit. Two are equal when their status and message are."""

    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TopicConfigurationException):
            return NotImplemented
        return self.status == other.status and self.message == other.message

    def __hash__(self) -> int:
        return hash((self.status, self.message))

    def __repr__(self) -> str:
        return f"TopicConfigurationException(status={self.status.name}, message={self.message!r})"

    @classmethod
    def incorrectly_partitioned_topics(cls, message: str) -> TopicConfigurationException:
        return cls(Status.INCORRECTLY_PARTITIONED_TOPICS, message)

    @classmethod
    def missing_source_topics(cls, message: str) -> TopicConfigurationException:
        return cls(Status.MISSING_SOURCE_TOPICS, message)

    @classmethod
    def missing_internal_topics(cls, message: str) -> TopicConfigurationException:
        return cls(Status.MISSING_INTERNAL_TOPICS, message)
