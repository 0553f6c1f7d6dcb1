"""The internal topics of streams groups, created for their heartbeats (the streams half of
Kafka's AutoTopicCreationManager, with its ExpiringErrorCache).

A streams group's heartbeat names the repartition and changelog topics its topology
lacks (KIP-1071); KafkaApis hands them here and answers the heartbeat at once, and
the creation goes on in the background, as Kafka's CreateTopics to the controller
does. A topic already being created is not asked for again; one whose creation
failed is not retried until its error expires (twice the group's heartbeat interval),
and meanwhile the failure is told to the group's members in their
MISSING_INTERNAL_TOPICS status ("Creation failed: ..."). Metadata auto-creation
(Metadata's allow_auto_topic_creation) is KafkaApis._auto_create.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
from collections.abc import Callable, Iterable
from typing import Final

from franz.protocol.errors import default_message
from franz.records.builder import now_ms
from franz.server.controller import ApiError

logger = logging.getLogger(__name__)

# ExpiringErrorCache's capacity: beyond it the entries expiring first go.
MAX_CACHED_ERRORS: Final = 1000


class ExpiringErrorCache:
    """Topic -> (error message, expiry); an entry lives until its expiry, the earliest expiring
    going first when the cache is full."""

    def __init__(self, max_size: int = MAX_CACHED_ERRORS) -> None:
        self.max_size = max_size
        self._by_topic: dict[str, tuple[str, int]] = {}
        self._expiry: list[tuple[int, str]] = []

    def put(self, topic: str, message: str, ttl_ms: int, now: int) -> None:
        expires = now + ttl_ms
        self._by_topic[topic] = (message, expires)
        heapq.heappush(self._expiry, (expires, topic))
        while self._expiry and (self._expiry[0][0] <= now or len(self._by_topic) > self.max_size):
            expired_at, name = heapq.heappop(self._expiry)
            entry = self._by_topic.get(name)
            if entry is not None and entry[1] == expired_at:  # not replaced by a later put
                del self._by_topic[name]

    def has_error(self, topic: str, now: int) -> bool:
        entry = self._by_topic.get(topic)
        return entry is not None and entry[1] > now

    def errors_for(self, topics: Iterable[str], now: int) -> dict[str, str]:
        return {topic: self._by_topic[topic][0] for topic in topics if self.has_error(topic, now)}


class AutoTopicCreationManager:
    def __init__(self, controller, clock_ms: Callable[[], int] = now_ms) -> None:
        self._controller = controller
        self._clock_ms = clock_ms
        self._errors = ExpiringErrorCache()
        self._inflight: set[str] = set()
        self._tasks: set[asyncio.Task] = set()

    def create_streams_internal_topics(self, topics: dict[str, dict], timeout_ms: int) -> None:
        """Start creating the topics (CreateTopics entries by name) not being created already
        and not failed within `timeout_ms`."""
        now = self._clock_ms()
        to_create = {name: topic for name, topic in topics.items()
                     if not self._errors.has_error(name, now) and name not in self._inflight}
        if not to_create:
            return
        self._inflight.update(to_create)
        task = asyncio.get_running_loop().create_task(self._create(to_create, timeout_ms))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _create(self, topics: dict[str, dict], ttl_ms: int) -> None:
        try:
            for name, topic in topics.items():
                try:
                    count, overrides = self._controller.validate_new_topic(
                        name, topic["num_partitions"], topic["replication_factor"], topic["assignments"],
                        {config["name"]: config["value"] for config in topic["configs"]})
                    await self._controller.create_topic(name, count, overrides)
                    logger.info("Created internal topic %s of a streams group with %d partitions.", name, count)
                except ApiError as exc:
                    message = exc.message or default_message(exc.code)
                    logger.debug("Cached topic creation error for %s: %s", name, message)
                    self._errors.put(name, message, ttl_ms, self._clock_ms())
        finally:
            self._inflight.difference_update(topics)

    def streams_internal_topic_creation_errors(self, topics: Iterable[str]) -> dict[str, str]:
        return self._errors.errors_for(topics, self._clock_ms())

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
