"""Incremental fetch sessions, KIP-227 (kafka.server.FetchSession).

A client that sends session epoch 0 asks for a session: the broker answers the
full fetch and, if the cache makes room, a new session id. Later requests name
that session and the next epoch and list only the partitions that changed
(new fetch offsets or epochs) or are to be forgotten; the broker fetches every
partition of the session and answers only those with something new: records,
an error, a diverging epoch, or a changed high watermark or log start offset.

Epochs: -1 (FINAL) ends the session named, if any, and is a sessionless full
fetch; 0 (INITIAL) starts a new one; n > 0 must be the session's next epoch,
else INVALID_FETCH_SESSION_EPOCH; an unknown session id gets
FETCH_SESSION_ID_NOT_FOUND. The epoch after 2^31-1 is 1.

A session made by Fetch v13+ keys its partitions by topic id, an older one by
topic name, and a request of the other kind is FETCH_SESSION_TOPIC_ID_ERROR. A
topic id the broker does not know is kept as a partition with no name, named
again on each fetch until the topic appears; nothing but the client's forgotten
list takes a partition out, so a deleted topic's partitions keep answering
their error.

The cache (FetchSessionCacheShard) is 8 shards of `slots // 8` sessions; new
sessions go to the shards in turn, each owning a range of session ids. A full
shard evicts at most one session: its least recently used one if idle longer
than 120 s, else the smallest session that is more than 120 s old if the new
one has more partitions (a follower's session may also evict any consumer's).
When nothing can go, the fetch is answered without a session (id 0), and the
sessions in the cache are left alone.

Invariants: a session's partitions are read in order, and one that has just
returned records moves to the end (Kafka's FetchSession.PartitionIterator), so
when the response size limit cuts a fetch short, the partitions it left out
come first next time; the cached response values are those last sent, so an
omitted partition is exactly one whose answer would tell the client nothing new.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import uuid
from typing import Final

from franz.protocol.errors import Errors

INITIAL_EPOCH: Final = 0
FINAL_EPOCH: Final = -1
INVALID_SESSION_ID: Final = 0
MAX_EPOCH: Final = 2**31 - 1
NUM_SHARDS: Final = 8  # KafkaBroker.NumFetchSessionCacheShards
SESSION_ID_RANGE: Final = MAX_EPOCH // NUM_SHARDS  # the session ids each shard hands out
EVICTION_MS: Final = 120_000  # KafkaBroker.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS: not a config
TOPIC_IDS_MIN_VERSION: Final = 13  # Fetch v13 names topics by id

# A session partition's key: (topic id, partition) in a v13+ session, else (name, partition).
PartitionKey = tuple[bytes | str, int]


def next_epoch(epoch: int) -> int:
    """FetchMetadata.nextEpoch: the session epoch after `epoch`, wrapping to 1."""
    if epoch < 0:
        return FINAL_EPOCH  # no next epoch for a sessionless fetch
    return 1 if epoch == MAX_EPOCH else epoch + 1


@dataclasses.dataclass(slots=True)
class CachedPartition:
    topic: str | None  # None: a topic id this broker does not know (yet)
    partition: int
    topic_id: bytes  # 16 zero bytes before Fetch v13
    fetch_offset: int
    partition_max_bytes: int
    current_leader_epoch: int = -1
    last_fetched_epoch: int = -1
    topic_uuid: uuid.UUID | None = None  # the id a v13+ fetcher expects the topic to have
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1

    def key(self, uses_topic_ids: bool) -> PartitionKey:
        return (self.topic_id, self.partition) if uses_topic_ids else (self.topic, self.partition)

    def update_request_params(self, requested: CachedPartition) -> None:
        """What a later request says of this partition replaces what the session had; a name
        once resolved stays (CachedPartition.maybeResolveUnknownName)."""
        self.fetch_offset = requested.fetch_offset
        self.partition_max_bytes = requested.partition_max_bytes
        self.current_leader_epoch = requested.current_leader_epoch
        self.last_fetched_epoch = requested.last_fetched_epoch

    def needs_response(self, error: Errors, size_bytes: int, high_watermark: int, last_stable_offset: int,
                       log_start_offset: int, diverging: bool = False) -> bool:
        """Whether the answer tells the client something new; updates the cached values
        (CachedPartition.maybeUpdateResponseData: the last stable offset alone is no news).
        An error always answers, and forgets the high watermark so that the partition
        answers again once the error has gone."""
        changed = (error != Errors.NONE or size_bytes > 0 or diverging or high_watermark != self.high_watermark
                   or log_start_offset != self.log_start_offset)
        self.high_watermark = -1 if error != Errors.NONE else high_watermark
        self.last_stable_offset, self.log_start_offset = last_stable_offset, log_start_offset
        return changed


@dataclasses.dataclass(eq=False)
class FetchSession:
    session_id: int
    epoch: int
    partitions: dict[PartitionKey, CachedPartition]
    uses_topic_ids: bool
    privileged: bool
    creation_ms: int
    last_used_ms: int = 0
    cached_size: int = -1  # the partition count at the last touch, which eviction weighs
    evictable_by_all: bool = False
    evictable_by_privileged: bool = False

    def update(self, requested: list[CachedPartition], forgotten: list[PartitionKey]) -> None:
        """FetchSession.update: add or update the requested partitions, then forget (so a
        partition in both lists is gone)."""
        partitions = self.partitions
        for partition in requested:
            key = partition.key(self.uses_topic_ids)
            cached = partitions.get(key)
            if cached is None:
                partitions[key] = partition
            else:
                cached.update_request_params(partition)
        for key in forgotten:
            partitions.pop(key, None)

    def served_last(self, served: list[CachedPartition]) -> None:
        """Move the partitions that just returned records behind the others."""
        for cached in served:
            key = cached.key(self.uses_topic_ids)
            if self.partitions.pop(key, None) is not None:
                self.partitions[key] = cached


@dataclasses.dataclass
class FetchContext:
    """What one fetch request means under its session rules."""
    error: Errors = Errors.NONE
    session: FetchSession | None = None          # incremental: the session being continued
    expected_epoch: int = FINAL_EPOCH            # incremental: the epoch the session must still have to answer
    new_session_wanted: bool = False             # full fetch at epoch 0
    uses_topic_ids: bool = False
    partitions: list[CachedPartition] = dataclasses.field(default_factory=list)

    @property
    def incremental(self) -> bool:
        return self.session is not None and not self.new_session_wanted


class FetchSessionCacheShard:
    """One shard of the cache: at most `max_entries` sessions, with ids in its own range."""

    def __init__(self, max_entries: int, shard_num: int, eviction_ms: int = EVICTION_MS) -> None:
        self.max_entries = max_entries
        self.shard_num = shard_num
        self.eviction_ms = eviction_ms
        self.sessions: dict[int, FetchSession] = {}
        self._random = random.Random()

    def maybe_create_session(self, now_ms: int, privileged: bool, uses_topic_ids: bool,
                             partitions: list[CachedPartition]) -> int:
        """A new session holding `partitions`, if there is room or room can be made by evicting
        one; INVALID_SESSION_ID otherwise."""
        if len(self.sessions) >= self.max_entries and not self._try_evict(privileged, len(partitions), now_ms):
            return INVALID_SESSION_ID
        session = FetchSession(self._new_session_id(), next_epoch(INITIAL_EPOCH),
                               {p.key(uses_topic_ids): p for p in partitions}, uses_topic_ids, privileged, now_ms)
        self.sessions[session.session_id] = session
        self.touch(session, now_ms)
        return session.session_id

    def _new_session_id(self) -> int:
        low, high = max(1, self.shard_num * SESSION_ID_RANGE), (self.shard_num + 1) * SESSION_ID_RANGE
        while True:
            session_id = self._random.randrange(low, high)
            if session_id not in self.sessions:
                return session_id

    def _try_evict(self, privileged: bool, size: int, now_ms: int) -> bool:
        """FetchSessionCacheShard.tryEvict: the least recently used session if stale, else the
        least valuable evictable one if the new session is worth more (privilege, then size)."""
        if not self.sessions:
            return False
        oldest = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.session_id))
        if now_ms - oldest.last_used_ms > self.eviction_ms:
            self.remove(oldest.session_id)
            return True
        candidates = [s for s in self.sessions.values()
                      if (s.evictable_by_privileged if privileged else s.evictable_by_all)]
        if not candidates:
            return False
        weakest = min(candidates, key=lambda s: (s.privileged, s.cached_size, s.session_id))
        # The new session's key has id 0, below every real one: an equal size never evicts.
        if (privileged, size, 0) < (weakest.privileged, weakest.cached_size, weakest.session_id):
            return False
        self.remove(weakest.session_id)
        return True

    def touch(self, session: FetchSession, now_ms: int) -> None:
        """Mark `session` used now, and weigh it for eviction at its current size: a session
        younger than the eviction time can be evicted only by a follower's, and a follower's
        only once it is older than that."""
        session.last_used_ms = now_ms
        session.cached_size = len(session.partitions)
        old = now_ms - session.creation_ms > self.eviction_ms
        session.evictable_by_privileged = not session.privileged or old
        session.evictable_by_all = old

    def remove(self, session_id: int) -> FetchSession | None:
        return self.sessions.pop(session_id, None)


class FetchSessionCache:
    """FetchManager's session rules over the sharded FetchSessionCache."""

    def __init__(self, max_slots: int, num_shards: int = NUM_SHARDS) -> None:
        self.shards = [FetchSessionCacheShard(max_slots // num_shards, shard) for shard in range(num_shards)]
        self._next_shard = itertools.count()

    def __len__(self) -> int:
        return sum(len(shard.sessions) for shard in self.shards)

    def _shard_of(self, session_id: int) -> FetchSessionCacheShard | None:
        index = session_id // SESSION_ID_RANGE
        return self.shards[index] if 0 <= index < len(self.shards) else None

    def get(self, session_id: int) -> FetchSession | None:
        shard = self._shard_of(session_id)
        return shard.sessions.get(session_id) if shard is not None else None

    def remove(self, session_id: int) -> None:
        shard = self._shard_of(session_id)
        if shard is not None:
            shard.remove(session_id)

    def new_context(self, version: int, session_id: int, epoch: int, requested: list[CachedPartition],
                    forgotten: list[PartitionKey], now_ms: int) -> FetchContext:
        """FetchManager.newContext. `requested` holds one entry per partition named, in request
        order; `forgotten` keys as the request's version names topics."""
        uses_topic_ids = version >= TOPIC_IDS_MIN_VERSION
        if epoch == FINAL_EPOCH or epoch == INITIAL_EPOCH:  # a full fetch ends any session it names
            if session_id != INVALID_SESSION_ID:
                self.remove(session_id)
            return FetchContext(partitions=requested, new_session_wanted=epoch == INITIAL_EPOCH,
                                uses_topic_ids=uses_topic_ids)
        session = self.get(session_id)
        if session is None:
            return FetchContext(error=Errors.FETCH_SESSION_ID_NOT_FOUND)
        if session.epoch != epoch:
            return FetchContext(error=Errors.INVALID_FETCH_SESSION_EPOCH)
        if session.uses_topic_ids != uses_topic_ids:
            return FetchContext(error=Errors.FETCH_SESSION_TOPIC_ID_ERROR)
        session.update(requested, forgotten)
        if not session.partitions:  # all forgotten: the session ends, the fetch is sessionless (id 0)
            self.remove(session_id)
            return FetchContext(partitions=requested, uses_topic_ids=uses_topic_ids)
        shard = self._shard_of(session_id)
        assert shard is not None
        shard.touch(session, now_ms)
        session.epoch = next_epoch(session.epoch)
        return FetchContext(session=session, expected_epoch=session.epoch, uses_topic_ids=uses_topic_ids,
                            partitions=list(session.partitions.values()))

    def create_session(self, context: FetchContext, now_ms: int, privileged: bool = False) -> int:
        """A new session for a full fetch at epoch 0, in the next shard in turn; INVALID_SESSION_ID
        when that shard has no room it may make."""
        shard = self.shards[next(self._next_shard) % len(self.shards)]
        return shard.maybe_create_session(now_ms, privileged, context.uses_topic_ids, context.partitions)
