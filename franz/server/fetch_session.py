"""Incremental fetch sessions, KIP-227 (kafka.server.FetchSession).

A client that sends session epoch 0 asks for a session: the broker answers the
full fetch and, if a cache slot is free, a new session id. Later requests name
that session and the next epoch and list only the partitions that changed
(new fetch offsets) or are to be forgotten; the broker fetches every partition
of the session and answers only those with something new: records, an error,
or a changed high watermark, last stable offset or log start offset.

Epochs: -1 (FINAL) ends the session named, if any, and is a sessionless full
fetch; 0 (INITIAL) starts a new one; n > 0 must be the session's next epoch,
else INVALID_FETCH_SESSION_EPOCH; an unknown session id gets
FETCH_SESSION_ID_NOT_FOUND. Sessions live in a cache of
`max.incremental.fetch.session.cache.slots`, least recently used evicted first.

Invariants: a session's partitions are read in order, and one that has just
returned records moves to the end (Kafka's FetchSession.PartitionIterator), so
when the response size limit cuts a fetch short, the partitions it left out
come first next time; the cached response values are those last sent, so an
omitted partition is exactly one whose answer would tell the client nothing new.
"""

from __future__ import annotations

import collections
import dataclasses
import random
from typing import Final

from franz.protocol.errors import Errors

INITIAL_EPOCH: Final = 0
FINAL_EPOCH: Final = -1
INVALID_SESSION_ID: Final = 0

TopicPartition = tuple[str, int]


@dataclasses.dataclass(slots=True)
class CachedPartition:
    topic: str
    partition: int
    topic_id: bytes
    fetch_offset: int
    partition_max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1

    def update_request_params(self, requested: CachedPartition) -> None:
        """What a later request says of this partition replaces what the session had."""
        self.fetch_offset = requested.fetch_offset
        self.partition_max_bytes = requested.partition_max_bytes
        self.current_leader_epoch = requested.current_leader_epoch
        self.last_fetched_epoch = requested.last_fetched_epoch

    def needs_response(self, error: Errors, size_bytes: int, high_watermark: int, last_stable_offset: int,
                       log_start_offset: int, diverging: bool = False) -> bool:
        """Whether the answer tells the client something new; updates the cached values
        (CachedPartition.maybeUpdateResponseData). An error always answers, and forgets the
        high watermark so that the partition answers again once the error has gone."""
        changed = (error != Errors.NONE or size_bytes > 0 or diverging or high_watermark != self.high_watermark
                   or last_stable_offset != self.last_stable_offset or log_start_offset != self.log_start_offset)
        self.high_watermark = -1 if error != Errors.NONE else high_watermark
        self.last_stable_offset, self.log_start_offset = last_stable_offset, log_start_offset
        return changed


@dataclasses.dataclass
class FetchSession:
    session_id: int
    epoch: int
    partitions: dict[TopicPartition, CachedPartition]

    def served_last(self, served: list[TopicPartition]) -> None:
        """Move the partitions that just returned records behind the others."""
        for key in served:
            cached = self.partitions.pop(key, None)
            if cached is not None:
                self.partitions[key] = cached


@dataclasses.dataclass
class FetchContext:
    """What one fetch request means under its session rules."""
    error: Errors = Errors.NONE
    session: FetchSession | None = None          # incremental: the session being continued
    new_session_wanted: bool = False             # full fetch at epoch 0
    partitions: list[CachedPartition] = dataclasses.field(default_factory=list)

    @property
    def incremental(self) -> bool:
        return self.session is not None and not self.new_session_wanted


class FetchSessionCache:
    def __init__(self, max_slots: int) -> None:
        self.max_slots = max_slots
        self._sessions: collections.OrderedDict[int, FetchSession] = collections.OrderedDict()
        self._random = random.Random()

    def __len__(self) -> int:
        return len(self._sessions)

    def new_context(self, session_id: int, epoch: int, requested: list[CachedPartition],
                    forgotten: list[TopicPartition]) -> FetchContext:
        if epoch == FINAL_EPOCH:
            self._sessions.pop(session_id, None)
            return FetchContext(partitions=requested)
        if epoch == INITIAL_EPOCH:
            self._sessions.pop(session_id, None)
            return FetchContext(partitions=requested, new_session_wanted=True)
        session = self._sessions.get(session_id)
        if session is None:
            return FetchContext(error=Errors.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            return FetchContext(error=Errors.INVALID_FETCH_SESSION_EPOCH)
        for key in forgotten:
            session.partitions.pop(key, None)
        for partition in requested:
            cached = session.partitions.get((partition.topic, partition.partition))
            if cached is None:
                session.partitions[(partition.topic, partition.partition)] = partition
            else:
                cached.update_request_params(partition)
        if not session.partitions:  # all forgotten: the session ends, the fetch is sessionless (id 0)
            del self._sessions[session_id]
            return FetchContext(partitions=requested)
        session.epoch += 1
        self._sessions.move_to_end(session_id)
        return FetchContext(session=session, partitions=list(session.partitions.values()))

    def create_session(self, partitions: list[CachedPartition]) -> int:
        """A new session holding `partitions`; INVALID_SESSION_ID when no slot is allowed."""
        if self.max_slots <= 0:
            return INVALID_SESSION_ID
        while len(self._sessions) >= self.max_slots:
            self._sessions.popitem(last=False)
        session_id = INVALID_SESSION_ID
        while session_id == INVALID_SESSION_ID or session_id in self._sessions:
            session_id = self._random.randint(1, 2**31 - 1)
        self._sessions[session_id] = FetchSession(
            session_id, INITIAL_EPOCH + 1, {(p.topic, p.partition): p for p in partitions})
        return session_id

    def remove_topic(self, topic: str) -> None:
        for session in self._sessions.values():
            for key in [key for key in session.partitions if key[0] == topic]:
                del session.partitions[key]
