"""Kafka's org.apache.kafka.common.errors.StreamsInvalidTopologyException: a topology that no set
of topics could satisfy (a repartition loop, a repartition topic nothing writes to, a subtopology
without inputs). The heartbeat answers it with STREAMS_INVALID_TOPOLOGY and its message."""

from __future__ import annotations

from typing import Final

from franz.protocol.errors import Errors


class StreamsInvalidTopologyException(Exception):
    error: Final = Errors.STREAMS_INVALID_TOPOLOGY

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
