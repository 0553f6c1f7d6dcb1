"""The share coordinator (ShareCoordinatorService and ShareCoordinatorShard): the durable state
of every share-partition, kept in `__share_group_state` as Kafka 4.3 keeps it.

A share-partition (group, topic id, partition) has a start offset (below it every
record is done with), the state epoch its group gave it, the leader epoch of the
partition that last wrote it, the count of finished records at or above the start
offset (KIP-1226), and state batches: offset ranges with their delivery state
(available, acknowledged, archived) and delivery count.

- `initialize` (InitializeShareGroupState) writes a fresh snapshot: the group
  coordinator calls it for each partition a share group subscribes to, with start
  offset -1 (unset: the partition's leader applies share.auto.offset.reset when it
  first reads the state).
- `read` (ReadShareGroupState) answers the state; a read with a newer leader epoch
  records that epoch, which fences writes of older leaders.
- `write` (WriteShareGroupState) records a change: an update record, or a snapshot
  of the combined state once share.coordinator.snapshot.update.records.per.snapshot
  updates followed the last snapshot.
- `delete` tombstones the share-partition; `read_summary` answers start offset and
  finished count for the admin's offsets (`summary`, ReadShareGroupStateSummary, the
  same with the shard's checks).

Those are ShareCoordinatorShard's operations on one share-partition, with its checks
and messages; franz's share-partition leaders and share groups call them in-process,
and franz/server/share/share_state_apis.py serves them as the state RPCs (83-87) to
a persister elsewhere, which finds this node through FindCoordinator (`resolve`).

Invariant: the in-memory state changes only by replaying a record after its append
returned, so what a caller was told is written is what a restart loads. Writes of
one share-partition are serialized, so a snapshot never misses an update computed
beside it.

Space: the topic (share.coordinator.state.topic.num.partitions, 50; cleanup.policy=
delete with retention.ms=-1, as Kafka makes it) is kept small as Kafka keeps it: every
share.coordinator.state.topic.prune.interval.ms the log start of each partition moves
up to the oldest latest-snapshot of the share-partitions living there (everything
before it is redundant; retention then deletes whole segments below it), and every
share.coordinator.cold.partition.snapshot.interval.ms a share-partition whose snapshot
is that old is snapshotted again, so an idle one does not hold the log start back.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import dataclasses
import logging
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Final

from sortedcontainers import SortedKeyList

from franz.common.utils import java_string_hash, kafka_abs
from franz.coordinator.group.coordinator_loader import CoordinatorPartitionWriter, CoordinatorWriteError, load_partition
from franz.coordinator.keyed_locks import KeyedLocks
from franz.coordinator.share import share_coordinator_record_serde as serde
from franz.coordinator.share.share_coordinator_record_serde import SharePartitionKey
from franz.protocol.errors import Errors, default_message
from franz.records.builder import now_ms
from franz.server.broker_features import SHARE_VERSION

logger = logging.getLogger(__name__)

SHARE_GROUP_STATE_TOPIC: Final = "__share_group_state"
UNINITIALIZED_START_OFFSET: Final = -1
# RecordState ids as persisted (ACQUIRED, 1, never is)
AVAILABLE: Final = 0
ACKNOWLEDGED: Final = 2
ARCHIVED: Final = 4


@dataclasses.dataclass(frozen=True, slots=True)
class StateBatch:
    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int


@dataclasses.dataclass(frozen=True, slots=True)
class ShareGroupOffset:
    snapshot_epoch: int
    state_epoch: int
    leader_epoch: int
    start_offset: int
    delivery_complete_count: int
    create_timestamp: int
    write_timestamp: int
    state_batches: tuple[StateBatch, ...]


# The shard's messages (ShareCoordinatorShard's constants, and Errors' own where it uses those).
NEGATIVE_PARTITION_ID: Final = "The partition id cannot be a negative number."
FENCED_LEADER_EPOCH_MESSAGE: Final = default_message(Errors.FENCED_LEADER_EPOCH)
FENCED_STATE_EPOCH_MESSAGE: Final = default_message(Errors.FENCED_STATE_EPOCH)
UNKNOWN_PARTITION_MESSAGE: Final = default_message(Errors.UNKNOWN_TOPIC_OR_PARTITION)
DEFAULT_STATE_EPOCH: Final = 0  # PartitionFactory's, for a summary of a share-partition with no state
DEFAULT_LEADER_EPOCH: Final = 0
_UUID_TEXT = re.compile(r"[A-Za-z0-9_-]*={0,2}")
_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_JAVA_WHITESPACE = "".join(chr(c) for c in range(33))  # what String.trim() strips


class ShareStateError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class ShareStateWriteError(ShareStateError):
    """The records of an operation could not be written to __share_group_state."""


def coordinator_key(key: SharePartitionKey) -> str:
    """SharePartitionKey.asCoordinatorKey: group:topicId:partition, the topic id as Kafka prints a Uuid."""
    topic = base64.urlsafe_b64encode(key.topic_id).rstrip(b"=").decode("ascii")
    return f"{key.group_id}:{topic}:{key.partition}"


def parse_coordinator_key(text: str) -> SharePartitionKey:
    """SharePartitionKey.getInstance(String): the key a FindCoordinator of type SHARE names.
    The group is everything before the last two colons (it may hold colons itself); as Java's
    String.split, trailing empty parts are dropped first. Raises ValueError with Kafka's message."""
    if not text:
        raise ValueError("Share partition key cannot be empty")
    tokens = text.split(":")
    while tokens and not tokens[-1]:
        tokens.pop()
    if len(tokens) < 3:
        raise ValueError(f"Invalid key format: expected - groupId:topicId:partition, found - {text}")
    group_id, topic_text, partition_text = ":".join(tokens[:-2]), tokens[-2], tokens[-1]
    if not group_id.strip(_JAVA_WHITESPACE):
        raise ValueError("GroupId must not be empty")
    topic_id = b""
    # Uuid.fromString: URL-safe base64 of 16 bytes, 22 characters, or 24 with Java's padding "=="
    if _UUID_TEXT.fullmatch(topic_text) and (len(topic_text), topic_text.count("=")) in ((22, 0), (24, 2)):
        try:
            topic_id = base64.urlsafe_b64decode(topic_text[:22] + "==")
        except (binascii.Error, ValueError):
            topic_id = b""
    if len(topic_id) != 16:
        raise ValueError(f"Invalid topic ID: {topic_text}")
    if not _INT_TEXT.fullmatch(partition_text) or not -2**31 <= int(partition_text) < 2**31:
        raise ValueError(f"Invalid partition: {partition_text}")
    return SharePartitionKey(group_id, topic_id, int(partition_text))


def _order(batch: StateBatch) -> tuple[int, int, int, int]:
    """PersisterStateBatch.compareTo: first offset, last offset, delivery count, state."""
    return batch.first_offset, batch.last_offset, batch.delivery_count, batch.delivery_state


def _info(batch: StateBatch) -> tuple[int, int]:
    """compareBatchDeliveryInfo's order: delivery count, then state."""
    return batch.delivery_count, batch.delivery_state


def _resolve(prev: StateBatch, candidate: StateBatch) -> tuple[StateBatch, ...]:
    """One overlapping (or contiguous, same-info) pair, as the combiner's handle* cases resolve it:
    the same info merges; otherwise the higher (count, state) keeps the offsets both cover."""
    if _info(candidate) == _info(prev):
        return (StateBatch(prev.first_offset, max(candidate.last_offset, prev.last_offset), prev.delivery_state,
                           prev.delivery_count),)
    lower = _info(candidate) < _info(prev)
    if candidate.first_offset == prev.first_offset:
        if candidate.last_offset == prev.last_offset:
            return (candidate,)
        if lower:
            return (prev, dataclasses.replace(candidate, first_offset=prev.last_offset + 1))
        return (candidate,)
    head = dataclasses.replace(prev, last_offset=candidate.first_offset - 1)
    if candidate.last_offset < prev.last_offset:  # prev swallows candidate
        return (prev,) if lower else (head, candidate, dataclasses.replace(prev, first_offset=candidate.last_offset + 1))
    if candidate.last_offset == prev.last_offset:
        return (prev,) if lower else (head, candidate)
    if lower:  # the candidate runs past prev
        return (prev, dataclasses.replace(candidate, first_offset=prev.last_offset + 1))
    return (head, candidate)


def combine(current: Iterable[StateBatch], new: Iterable[StateBatch], start_offset: int) -> tuple[StateBatch, ...]:
    """PersisterStateBatchCombiner.combineStateBatches, step for step (its output is persisted and
    answered, so its exact shape matters): batches below `start_offset` (unless -1) are dropped
    or cut; then, over the batches in compareTo order with duplicates gone, the first pair that
    overlaps or touches with the same count and state is resolved and the search starts again,
    batches before that pair being final. A batch found final is never merged with a later one,
    so touching batches of the same state and count can stay apart."""
    batches = [*current, *new]
    if start_offset != -1:
        batches = [b if b.first_offset >= start_offset else dataclasses.replace(b, first_offset=start_offset)
                   for b in batches if b.last_offset >= start_offset]
    if len(batches) < 2:
        return tuple(batches)
    # The TreeSet: kept sorted as pairs are replaced, so each step costs a logarithm, not a sort
    # (a WriteShareGroupState of thousands of overlapping batches must not hold the loop).
    pending = SortedKeyList(set(batches), key=_order)
    final: list[StateBatch] = []
    while len(pending) > 1:
        prev, candidate = pending[0], pending[1]
        if not (candidate.first_offset <= prev.last_offset
                or (prev.last_offset + 1 == candidate.first_offset and _info(prev) == _info(candidate))):
            final.append(pending.pop(0))  # apart from everything after it: final
            continue
        del pending[:2]
        for resolved in _resolve(prev, candidate):
            if resolved not in pending:
                pending.add(resolved)
    return tuple(final + list(pending))


def _batches(entries: list[dict]) -> tuple[StateBatch, ...]:
    return tuple(StateBatch(e["first_offset"], e["last_offset"], e["delivery_state"], e["delivery_count"])
                 for e in entries)


def _entries(batches: Iterable[StateBatch]) -> list[dict]:
    return [{"first_offset": b.first_offset, "last_offset": b.last_offset, "delivery_state": b.delivery_state,
             "delivery_count": b.delivery_count} for b in batches]


class ShareCoordinator:
    def __init__(self, config, controller, replica_manager, metadata,
                 clock_ms: Callable[[], int] = now_ms) -> None:
        self.controller = controller
        self.replica_manager = replica_manager
        self.metadata = metadata
        self.num_partitions: int = config["share.coordinator.state.topic.num.partitions"]
        self.segment_bytes: int = config["share.coordinator.state.topic.segment.bytes"]
        self.updates_per_snapshot: int = config["share.coordinator.snapshot.update.records.per.snapshot"]
        self.writer = CoordinatorPartitionWriter(replica_manager, SHARE_GROUP_STATE_TOPIC)
        self.clock_ms = clock_ms
        self.prune_interval_ms: int = config["share.coordinator.state.topic.prune.interval.ms"]
        self.cold_snapshot_interval_ms: int = config["share.coordinator.cold.partition.snapshot.interval.ms"]
        self.states: dict[SharePartitionKey, ShareGroupOffset] = {}
        # The highest leader and state epochs any record of a share-partition carried: they fence
        # older leaders and groups. The state itself keeps each record's own (leaderEpochMap and
        # stateEpochMap beside shareStateMap).
        self.leader_epochs: dict[SharePartitionKey, int] = {}
        self.state_epochs: dict[SharePartitionKey, int] = {}
        self.updates_since_snapshot: dict[SharePartitionKey, int] = {}
        self.snapshot_offsets: dict[SharePartitionKey, int] = {}  # where each one's latest snapshot is
        self.last_tombstones: dict[int, int] = {}  # partition -> offset of its latest tombstone
        self._lock = KeyedLocks()  # per SharePartitionKey
        self._maintenance: list[asyncio.Task] = []

    # -- the topic ------------------------------------------------------------------

    async def startup(self) -> None:
        topic = self.metadata.get(SHARE_GROUP_STATE_TOPIC)
        if topic is None:
            return
        count = 0
        for partition in range(topic.num_partitions):
            log = self.replica_manager.log_of((SHARE_GROUP_STATE_TOPIC, partition))
            if log is not None:
                count += load_partition(log, self._replay_bytes)
        if count:
            logger.info("Loaded %d records of %s: %d share-partitions", count, SHARE_GROUP_STATE_TOPIC,
                        len(self.states))

    def start_maintenance(self) -> None:
        """On the running loop: the periodic pruning and cold snapshots."""
        self._maintenance = [asyncio.get_running_loop().create_task(self._every(interval_ms, work))
                             for interval_ms, work in ((self.cold_snapshot_interval_ms, self.write_cold_snapshots),
                                                       (self.prune_interval_ms, self.prune))]

    async def shutdown(self) -> None:
        tasks, self._maintenance = self._maintenance, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _every(self, interval_ms: int, work: Callable[[], Awaitable[object]]) -> None:
        while True:
            await asyncio.sleep(interval_ms / 1000)
            if self.metadata.features.level(SHARE_VERSION) < 1:
                continue  # ShareCoordinatorService runs its periodic jobs only while share groups are on
            try:
                await work()
            except ShareStateError as exc:
                logger.warning("Share state maintenance failed: %s", exc)

    async def write_cold_snapshots(self) -> int:
        """A fresh snapshot of every share-partition whose latest is cold.partition.snapshot.interval.ms
        old (same state and epochs, its creation time kept); how many were written."""
        now = self.clock_ms()
        written = 0
        if all(state.create_timestamp != state.write_timestamp for state in self.states.values()):
            return 0  # snapshotColdPartitions: every one has had its cold snapshot already
        for key, state in list(self.states.items()):
            if now - state.write_timestamp < self.cold_snapshot_interval_ms:
                continue
            async with self._lock(key):
                current = self.states.get(key)
                if current is None or now - current.write_timestamp < self.cold_snapshot_interval_ms:
                    continue
                await self._append(key, serde.SHARE_SNAPSHOT, {
                    "snapshot_epoch": current.snapshot_epoch + 1, "state_epoch": current.state_epoch,
                    "leader_epoch": current.leader_epoch, "start_offset": current.start_offset,
                    "delivery_complete_count": current.delivery_complete_count,
                    "create_timestamp": current.create_timestamp, "write_timestamp": now,
                    "state_batches": _entries(current.state_batches)})
                written += 1
        return written

    async def prune(self) -> dict[int, int]:
        """Move each partition's log start to its oldest latest-snapshot (to its end when no
        share-partition lives there any more); the new log starts by partition."""
        topic = self.metadata.get(SHARE_GROUP_STATE_TOPIC)
        if topic is None:
            return {}
        oldest: dict[int, int] = {}
        for key, offset in self.snapshot_offsets.items():
            partition = self.partition_for(key)
            oldest[partition] = min(offset, oldest.get(partition, offset))
        for partition, offset in self.last_tombstones.items():  # a tombstone stays, as Kafka keeps it
            oldest[partition] = min(offset, oldest.get(partition, offset))
        moved = {}
        for partition in range(topic.num_partitions):
            log = self.replica_manager.log_of((SHARE_GROUP_STATE_TOPIC, partition))
            if log is None or log.offline:  # gone offline after a disk error: it refuses the move
                continue
            redundant_below = oldest.get(partition, log.log_start_offset)
            if redundant_below > log.log_start_offset and self.replica_manager.increment_log_start_offset(
                    (SHARE_GROUP_STATE_TOPIC, partition), redundant_below,
                    "share state snapshots made earlier records redundant") is not None:
                moved[partition] = redundant_below
        return moved

    def _state_topic_configs(self) -> dict[str, str]:
        # share.coordinator.state.topic.min.isr is not set on the topic: franz makes every
        # topic with one replica, which a minimum of 2 would refuse every write.
        return {"cleanup.policy": "delete", "compression.type": "producer", "retention.ms": "-1",
                "segment.bytes": str(self.segment_bytes)}

    async def ensure_state_topic(self) -> None:
        if self.metadata.get(SHARE_GROUP_STATE_TOPIC) is None:
            await self.controller.create_topic(SHARE_GROUP_STATE_TOPIC, self.num_partitions,
                                               self._state_topic_configs())

    def partition_for(self, key: SharePartitionKey) -> int:
        """The key's __share_group_state partition, over the topic's own partition count once it
        exists (metadataCache.numPartitions, else share.coordinator.state.topic.num.partitions)."""
        return kafka_abs(java_string_hash(coordinator_key(key))) % self.metadata.partition_count(
            SHARE_GROUP_STATE_TOPIC, self.num_partitions)

    def resolve(self, key: str, request) -> tuple:
        """FindCoordinator of type SHARE (KafkaApis.getCoordinator): a key that is not
        group:topicId:partition is INVALID_REQUEST; else this node, once the state topic exists
        (its creation starts on the first ask, answered COORDINATOR_NOT_AVAILABLE meanwhile)."""
        if request.api_version < 6:  # v6 brought the SHARE type
            return Errors.INVALID_REQUEST, -1, "", -1
        try:
            partition_key = parse_coordinator_key(key)
        except ValueError as exc:
            logger.error("Share coordinator key is invalid: %s", exc)
            return Errors.INVALID_REQUEST, -1, "", -1
        return self.controller.find_coordinator(SHARE_GROUP_STATE_TOPIC, self.partition_for(partition_key),
                                                self.num_partitions, self._state_topic_configs(),
                                                request.listener_name)

    async def _append(self, key: SharePartitionKey, record_type: int, value: dict | None) -> None:
        entry = (serde.key(record_type, key), None if value is None else serde.value(record_type, value))
        await self.ensure_state_topic()
        try:
            next_offset = await self.writer.append(self.partition_for(key), [entry])
        except CoordinatorWriteError as exc:
            logger.error("Could not write the state of share-partition %s: %s", coordinator_key(key), exc)
            raise ShareStateWriteError(exc.code, str(exc)) from None
        self._replay(record_type, key, value, next_offset - 1)

    # -- replay ---------------------------------------------------------------------

    def _replay_bytes(self, key_bytes: bytes, value_bytes: bytes | None, offset: int) -> None:
        record_type, key = serde.read_key(key_bytes)
        value = None if value_bytes is None else serde.read_value(record_type, value_bytes)
        self._replay(record_type, key, value, offset)

    def _replay(self, record_type: int, key: SharePartitionKey, value: dict | None, offset: int) -> None:
        if value is None:
            for kept in (self.states, self.updates_since_snapshot, self.snapshot_offsets, self.leader_epochs,
                         self.state_epochs):
                kept.pop(key, None)
            self.last_tombstones[self.partition_for(key)] = offset
            return
        self.leader_epochs[key] = max(value["leader_epoch"], self.leader_epochs.get(key, value["leader_epoch"]))
        if record_type == serde.SHARE_SNAPSHOT:
            self.state_epochs[key] = max(value["state_epoch"], self.state_epochs.get(key, value["state_epoch"]))
            self.snapshot_offsets[key] = offset
            self.states[key] = ShareGroupOffset(
                value["snapshot_epoch"], value["state_epoch"], value["leader_epoch"], value["start_offset"],
                value["delivery_complete_count"], value["create_timestamp"], value["write_timestamp"],
                _batches(value["state_batches"]))
            if self.updates_since_snapshot.get(key, 0) >= self.updates_per_snapshot:
                self.updates_since_snapshot[key] = 0
            return
        current = self.states.get(key)
        if current is None:  # an update with no snapshot before it stands as the state (fromRecord)
            self.states[key] = ShareGroupOffset(
                value["snapshot_epoch"], 0, value["leader_epoch"], value["start_offset"],
                value["delivery_complete_count"], 0, 0, _batches(value["state_batches"]))
        else:  # ShareCoordinatorShard.merge: -1 keeps the start offset and leader epoch as they were
            start = (value["start_offset"] if value["start_offset"] != UNINITIALIZED_START_OFFSET
                     else current.start_offset)
            leader = value["leader_epoch"] if value["leader_epoch"] != -1 else current.leader_epoch
            self.states[key] = dataclasses.replace(
                current, leader_epoch=leader, start_offset=start,
                delivery_complete_count=value["delivery_complete_count"],
                state_batches=combine(current.state_batches, _batches(value["state_batches"]), start))
        self.updates_since_snapshot[key] = self.updates_since_snapshot.get(key, 0) + 1

    # -- the state RPCs -------------------------------------------------------------

    def _known_partition(self, key: SharePartitionKey) -> bool:
        name = self.metadata.name_of(key.topic_id)
        topic = None if name is None else self.metadata.get(name)
        return topic is not None and 0 <= key.partition < topic.num_partitions

    def _check_index(self, key: SharePartitionKey) -> None:
        if key.partition < 0:
            raise ShareStateError(Errors.INVALID_REQUEST, NEGATIVE_PARTITION_ID)

    def _check_known(self, key: SharePartitionKey) -> None:
        if not self._known_partition(key):
            raise ShareStateError(Errors.UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_PARTITION_MESSAGE)

    def _checked(self, key: SharePartitionKey, operation: str, leader_epoch: int, state_epoch: int) -> ShareGroupOffset:
        """ShareCoordinatorShard's checks of a read or write, in its order: a partition index of
        0 or more, initialized, not fenced by a newer leader or state epoch (-1: not checked), a
        partition that exists."""
        self._check_index(key)
        current = self.states.get(key)
        if current is None:
            raise ShareStateError(Errors.INVALID_REQUEST,
                                  f"{operation} operation on uninitialized share partition not allowed.")
        if leader_epoch != -1 and self.leader_epochs.get(key, leader_epoch) > leader_epoch:
            raise ShareStateError(Errors.FENCED_LEADER_EPOCH, FENCED_LEADER_EPOCH_MESSAGE)
        if state_epoch != -1 and self.state_epochs.get(key, state_epoch) > state_epoch:
            raise ShareStateError(Errors.FENCED_STATE_EPOCH, FENCED_STATE_EPOCH_MESSAGE)
        self._check_known(key)
        return current

    async def initialize(self, key: SharePartitionKey, state_epoch: int, start_offset: int) -> None:
        """A fresh snapshot of the share-partition. Raises ShareStateError."""
        async with self._lock(key):
            self._check_index(key)
            current = self.states.get(key)
            if state_epoch != -1 and self.state_epochs.get(key, state_epoch) > state_epoch:
                raise ShareStateError(Errors.FENCED_STATE_EPOCH, FENCED_STATE_EPOCH_MESSAGE)
            self._check_known(key)
            now = self.clock_ms()
            await self._append(key, serde.SHARE_SNAPSHOT, {
                "snapshot_epoch": current.snapshot_epoch + 1 if current else 0, "state_epoch": state_epoch,
                "leader_epoch": 0, "start_offset": start_offset,
                "delivery_complete_count": (serde.UNINITIALIZED_DELIVERY_COMPLETE_COUNT
                                            if start_offset == UNINITIALIZED_START_OFFSET else 0),
                "create_timestamp": now, "write_timestamp": now, "state_batches": []})

    async def read(self, key: SharePartitionKey, leader_epoch: int) -> ShareGroupOffset:
        """The state, for the partition's leader at `leader_epoch`. Raises ShareStateError."""
        async with self._lock(key):
            current = self._checked(key, "Read", leader_epoch, -1)
            if leader_epoch != -1 and self.leader_epochs.get(key) != leader_epoch:
                # readStateAndMaybeUpdateLeaderEpoch: a new leader's epoch is recorded; the answer
                # is the state as it was read
                await self._append_state(key, current, current.start_offset, current.delivery_complete_count,
                                         leader_epoch, ())
            return current

    async def write(self, key: SharePartitionKey, state_epoch: int, leader_epoch: int, start_offset: int,
                    delivery_complete_count: int, batches: Iterable[StateBatch]) -> None:
        """Record a change of the share-partition's state. Raises ShareStateError."""
        async with self._lock(key):
            current = self._checked(key, "Write", leader_epoch, state_epoch)
            # a write never moves the leader epoch: only a read does
            await self._append_state(key, current, start_offset, delivery_complete_count, current.leader_epoch,
                                     tuple(batches))

    async def _append_state(self, key: SharePartitionKey, current: ShareGroupOffset, start_offset: int,
                            delivery_complete_count: int, leader_epoch: int, batches: tuple[StateBatch, ...]) -> None:
        """generateShareStateRecord: a snapshot of the combined state once updates_per_snapshot
        updates followed the last one, else an update of the change alone."""
        if self.updates_since_snapshot.get(key, 0) >= self.updates_per_snapshot:
            start = start_offset if start_offset != UNINITIALIZED_START_OFFSET else current.start_offset
            now = self.clock_ms()
            await self._append(key, serde.SHARE_SNAPSHOT, {
                "snapshot_epoch": current.snapshot_epoch + 1, "state_epoch": current.state_epoch,
                "leader_epoch": leader_epoch, "start_offset": start,
                "delivery_complete_count": delivery_complete_count, "create_timestamp": now, "write_timestamp": now,
                "state_batches": _entries(combine(current.state_batches, batches, start))})
        else:
            await self._append(key, serde.SHARE_UPDATE, {
                "snapshot_epoch": current.snapshot_epoch, "leader_epoch": leader_epoch,
                "start_offset": start_offset, "delivery_complete_count": delivery_complete_count,
                "state_batches": _entries(combine((), batches, start_offset))})

    async def delete(self, key: SharePartitionKey, *, known_partition_only: bool = False) -> None:
        """Forget the share-partition (a tombstone); nothing to do when it has no state.
        DeleteShareGroupState asks with `known_partition_only`: the shard refuses a partition
        that is not in the metadata (the cleanup of deleted topics' state must not)."""
        async with self._lock(key):
            if known_partition_only:
                self._check_index(key)
                self._check_known(key)
            if key in self.states:
                await self._append(key, serde.SHARE_SNAPSHOT, None)

    def read_summary(self, key: SharePartitionKey) -> ShareGroupOffset | None:
        return self.states.get(key)

    def summary(self, key: SharePartitionKey) -> tuple[int, int, int, int]:
        """ReadShareGroupStateSummary of one share-partition: (state epoch, leader epoch, start
        offset, finished count), PartitionFactory's defaults when it has no state. Raises
        ShareStateError for a partition index below 0 or a partition not in the metadata."""
        self._check_index(key)
        self._check_known(key)
        state = self.states.get(key)
        if state is None:
            return (DEFAULT_STATE_EPOCH, DEFAULT_LEADER_EPOCH, UNINITIALIZED_START_OFFSET,
                    serde.UNINITIALIZED_DELIVERY_COMPLETE_COUNT)
        return state.state_epoch, state.leader_epoch, state.start_offset, state.delivery_complete_count

    async def delete_states_of_deleted_topics(self) -> int:
        """Tombstone the state of every share-partition whose topic is gone (Kafka does it as the
        metadata of a deletion arrives); how many."""
        gone = [key for key in self.states if self.metadata.name_of(key.topic_id) is None]
        for key in gone:
            await self.delete(key)
        return len(gone)
