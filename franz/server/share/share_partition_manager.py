"""The broker's share-partitions and share sessions (SharePartitionManager, DelayedShareFetch).

A share-partition is made on the first fetch of its group and partition and reads
its state from the share coordinator then (share_partition.py). A fetch acquires
records partition by partition, in an order that turns with the session epoch so
that no partition starves, out of one MaxRecords budget and MaxBytes split evenly
between the partitions. A fetch that gets nothing waits up to MaxWaitMs for records
(an append to one of its partitions, or records made available again by a release,
a rejection-free acknowledgement or a lock expiry) and tries once more.

Sessions (share_session_cache.py) end with their connection: the member's acquired
records are released then, as Kafka's ShareSessionCache does on a disconnect. A
deleted topic's share-partitions are dropped.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from typing import Any

from franz.coordinator.group import group_config
from franz.coordinator.share.share_coordinator import ShareCoordinator, ShareStateError, StateBatch
from franz.coordinator.share.share_coordinator_record_serde import SharePartitionKey
from franz.protocol.errors import Errors
from franz.server.request_channel import waiting_on_others
from franz.server.share.share_partition import Acquired, SharePartition, SharePartitionConfig, SharePartitionError
from franz.server.share.share_session_cache import ShareSessionCache
from franz.storage.unified_log import FetchIsolation

logger = logging.getLogger(__name__)

TopicIdPartition = tuple[bytes, int]


class SharePartitionManager:
    def __init__(self, config, replica_manager, metadata, share_coordinator: ShareCoordinator,
                 group_configs) -> None:
        self.replica_manager = replica_manager
        self.metadata = metadata
        self.share_coordinator = share_coordinator
        self.group_configs = group_configs
        self.broker_config = config
        self.fetch_max_bytes: int = config["fetch.max.bytes"]
        self.sessions = ShareSessionCache(config["group.share.max.share.sessions"])
        self.partitions: dict[SharePartitionKey, SharePartition] = {}
        # (topic name, partition) -> fetches waiting for records there
        self._waiters: dict[tuple[str, int], set[asyncio.Future]] = {}
        self._background: set[asyncio.Task] = set()

    # -- share-partitions ----------------------------------------------------------------

    def partition_config(self, group_id: str) -> SharePartitionConfig:
        values = self.group_configs
        isolation = values.value(group_id, group_config.SHARE_ISOLATION_LEVEL)
        return SharePartitionConfig(
            values.value(group_id, group_config.SHARE_RECORD_LOCK_DURATION_MS),
            values.value(group_id, group_config.SHARE_DELIVERY_COUNT_LIMIT),
            values.value(group_id, group_config.SHARE_PARTITION_MAX_RECORD_LOCKS),
            values.value(group_id, group_config.SHARE_AUTO_OFFSET_RESET),
            FetchIsolation.TXN_COMMITTED if isolation == "read_committed" else FetchIsolation.HIGH_WATERMARK,
            values.value(group_id, group_config.SHARE_RENEW_ACKNOWLEDGE_ENABLE))

    def record_lock_duration_ms(self, group_id: str) -> int:
        return self.group_configs.value(group_id, group_config.SHARE_RECORD_LOCK_DURATION_MS)

    def existing(self, group_id: str, topic_id: bytes, partition: int) -> SharePartition | None:
        return self.partitions.get(SharePartitionKey(group_id, topic_id, partition))

    def _get_or_create(self, group_id: str, topic_id: bytes, partition: int) -> SharePartition:
        key = SharePartitionKey(group_id, topic_id, partition)
        found = self.partitions.get(key)
        if found is not None:
            return found
        name = self.metadata.name_of(topic_id)
        log = None if name is None else self.replica_manager.log_of((name, partition))
        if log is None:
            raise SharePartitionError(Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNKNOWN_TOPIC_OR_PARTITION.name)
        coordinator = self.share_coordinator

        async def read_state():
            try:
                return await coordinator.read(key, 0)
            except ShareStateError as exc:
                raise SharePartitionError(_persister_error(exc.code), str(exc)) from None

        async def write_state(state_epoch: int, start_offset: int, finished: int, batches: list[StateBatch]) -> None:
            try:
                await coordinator.write(key, state_epoch, 0, start_offset, finished, batches)
            except ShareStateError as exc:
                raise SharePartitionError(_persister_error(exc.code), str(exc)) from None

        share_partition = SharePartition(group_id, topic_id, name, partition, log,
                                         lambda: self.partition_config(group_id), read_state, write_state,
                                         lambda: self._wake(name, partition))
        self.partitions[key] = share_partition
        return share_partition

    async def _ready(self, group_id: str, topic_id: bytes, partition: int) -> SharePartition:
        key = SharePartitionKey(group_id, topic_id, partition)
        cached = self.partitions.get(key)
        if cached is not None and cached.state_epoch != -1:
            state = self.share_coordinator.read_summary(key)
            if state is None or state.state_epoch != cached.state_epoch:
                # the admin altered or deleted the group's offsets: read the state again
                cached.fence()
                del self.partitions[key]
        share_partition = self._get_or_create(group_id, topic_id, partition)
        try:
            await share_partition.maybe_initialize()
        except SharePartitionError:
            self.partitions.pop(SharePartitionKey(group_id, topic_id, partition), None)  # the next fetch retries
            raise
        return share_partition

    # -- fetching ------------------------------------------------------------------------

    async def fetch(self, group_id: str, member_id: str, partitions: list[TopicIdPartition], epoch: int,
                    max_records: int, batch_size: int, max_bytes: int, min_bytes: int,
                    max_wait_ms: int, record_limit: bool = False
                    ) -> dict[TopicIdPartition, tuple[int, Acquired | None]]:
        """(error, what was acquired) of each partition."""
        results: dict[TopicIdPartition, tuple[int, Acquired | None]] = {}
        ready: list[tuple[TopicIdPartition, SharePartition]] = []
        if partitions and max_records > 0 and max_bytes > 0:  # processShareFetch: a fetch that asks for data
            self._mark_topics("TotalShareFetchRequestsPerSec", partitions)
        for topic_partition in partitions:
            try:
                ready.append((topic_partition, await self._ready(group_id, *topic_partition)))
            except SharePartitionError as exc:
                results[topic_partition] = (exc.code, None)
        self._mark_topics("FailedShareFetchRequestsPerSec", results)  # ShareFetch.addErroneousToResponse
        if len(ready) > 1 and epoch >= 1:  # PartitionRotateStrategy: turn by the request's session epoch
            turn = epoch % len(ready)
            ready = ready[turn:] + ready[:turn]
        max_bytes = min(max_bytes, self.fetch_max_bytes)
        min_bytes = min(min_bytes, max_bytes)  # KafkaApis: fetchMinBytes = min(minBytes, fetchMaxBytes)
        if not ready or max_records <= 0 or max_bytes <= 0:
            results.update((tp, (Errors.NONE, None)) for tp, _ in ready)
            return results
        deadline = time.monotonic() + max(max_wait_ms, 0) / 1000
        per_partition = max(max_bytes // len(ready), 1)
        while True:
            # DelayedShareFetch.tryComplete: once some partition can acquire (canAcquireRecords),
            # the bytes between each one's next fetch offset and its end against MinBytes; met, the
            # answer goes out even empty (a MinBytes of 0 is met at once)
            acquirable = [found for _, sp in ready if (found := sp.acquirable_bytes(per_partition)) is not None]
            enough = bool(acquirable) and sum(acquirable) >= min_bytes
            if enough or time.monotonic() >= deadline:
                acquired = self._acquire(ready, member_id, max_records, batch_size, max_bytes, record_limit)
                if any(a is not None for a in acquired.values()) or min_bytes <= 0 or time.monotonic() >= deadline:
                    results.update((tp, (Errors.NONE, a)) for tp, a in acquired.items())
                    return results
            await self._wait_for_records([sp for _, sp in ready], deadline - time.monotonic())

    def _acquire(self, ready: list[tuple[TopicIdPartition, SharePartition]], member_id: str, max_records: int,
                 batch_size: int, max_bytes: int, record_limit: bool) -> dict[TopicIdPartition, Acquired | None]:
        per_partition = max(max_bytes // len(ready), 1)
        acquired: dict[TopicIdPartition, Acquired | None] = {}
        budget = max_records
        for topic_partition, share_partition in ready:
            got = (share_partition.acquire(member_id, budget, batch_size, per_partition, record_limit)
                   if budget > 0 else None)
            acquired[topic_partition] = got
            if got is not None:
                budget -= got.count
        return acquired

    async def _wait_for_records(self, share_partitions: list[SharePartition], timeout_s: float) -> None:
        if timeout_s <= 0:
            return
        future = asyncio.get_running_loop().create_future()
        keys = [(sp.topic, sp.partition) for sp in share_partitions]
        for key in keys:
            self._waiters.setdefault(key, set()).add(future)
        waiting_on_others()
        try:
            await asyncio.wait_for(asyncio.shield(future), timeout_s)
        except asyncio.TimeoutError:
            pass
        finally:
            for key in keys:
                waiting = self._waiters.get(key)
                if waiting is not None:
                    waiting.discard(future)
                    if not waiting:
                        del self._waiters[key]

    def _wake(self, topic: str, partition: int) -> None:
        for future in self._waiters.pop((topic, partition), ()):
            if not future.done():
                future.set_result(None)

    def on_appended(self, keys) -> None:
        """ReplicaManager's hook after an append: wake fetches waiting on those partitions."""
        if self._waiters:
            for topic, partition in keys:
                self._wake(topic, partition)

    # -- acknowledging -------------------------------------------------------------------

    async def acknowledge(self, group_id: str, member_id: str,
                          batches: dict[TopicIdPartition, list[dict]]
                          ) -> dict[TopicIdPartition, tuple[int, str | None]]:
        results: dict[TopicIdPartition, tuple[int, str | None]] = {}
        self._mark_topics("TotalShareAcknowledgementRequestsPerSec", batches)
        for (topic_id, partition), partition_batches in batches.items():
            share_partition = self.existing(group_id, topic_id, partition)
            if share_partition is None:
                results[(topic_id, partition)] = (Errors.UNKNOWN_TOPIC_OR_PARTITION, None)
                continue
            try:
                await share_partition.acknowledge(member_id, partition_batches)
                results[(topic_id, partition)] = (Errors.NONE, None)
            except SharePartitionError as exc:
                results[(topic_id, partition)] = (exc.code, str(exc))
                if exc.code in _FENCING_ERRORS:  # fencedSharePartitionHandler: the next fetch reads it again
                    share_partition.fence()
                    self.partitions.pop(SharePartitionKey(group_id, topic_id, partition), None)
        self._mark_topics("FailedShareAcknowledgementRequestsPerSec",
                          [tp for tp, (code, _message) in results.items() if code != Errors.NONE])
        return results

    def _mark_topics(self, meter: str, partitions: Iterable[TopicIdPartition]) -> None:
        """One mark per topic of these partitions, as SharePartitionManager marks its meters."""
        topics = {name for topic_id, _partition in partitions if (name := self.metadata.name_of(topic_id)) is not None}
        self.replica_manager.broker_topic_stats.mark_topics(meter, dict.fromkeys(topics, 1))

    # -- sessions ------------------------------------------------------------------------

    async def release_session(self, group_id: str, member_id: str) -> None:
        """The session ends: the member's acquired records in its partitions go back. When it was
        the group's last session here, the group's share-partitions are dropped (onGroupEmpty):
        the next fetch reads their state afresh, so a group deleted and made again, or whose
        offsets an admin set, starts from what the share coordinator holds."""
        session = self.sessions.remove((group_id, member_id))
        if session is None:
            return
        writes = []
        for topic_id, partition in session.partitions:
            share_partition = self.existing(group_id, topic_id, partition)
            if share_partition is not None:
                write = share_partition.release_member(member_id)
                if write is not None:
                    writes.append(write)
        for outcome in await asyncio.gather(*writes, return_exceptions=True):
            if isinstance(outcome, Exception):
                logger.warning("Could not write released records of member %s of group %s: %s", member_id,
                               group_id, outcome)
        if not any(key[0] == group_id for key in self.sessions.sessions):
            self.fence_group(group_id)

    def on_connection_closed(self, connection_id: str) -> None:
        for session in self.sessions.of_connection(connection_id):
            self._in_background(self.release_session(*session.key))

    def _in_background(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def on_topic_deleted(self, topic: str) -> None:
        """Drop the topic's share-partitions; the share coordinator forgets their state."""
        for key, share_partition in list(self.partitions.items()):
            if share_partition.topic == topic:
                share_partition.fence()
                del self.partitions[key]
        try:
            await self.share_coordinator.delete_states_of_deleted_topics()
        except ShareStateError as exc:
            logger.warning("Could not delete the share state of topic %s: %s", topic, exc)

    async def shutdown(self) -> None:
        for share_partition in self.partitions.values():
            share_partition.fence()
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)

    def on_share_version_toggle(self, level: int) -> None:
        """share.version turned off (onShareVersionToggle): every share session ends and every
        share-partition is dropped, fenced; waiting fetches wake to find them gone."""
        if level >= 1:
            return
        self.sessions.remove_all_sessions()
        for share_partition in self.partitions.values():
            share_partition.fence()
            self._wake(share_partition.topic, share_partition.partition)
        self.partitions.clear()

    def fence_group(self, group_id: str) -> None:
        for key in [k for k in self.partitions if k.group_id == group_id]:
            self.partitions.pop(key).fence()


# Errors of a write or read of the share state that fence the share-partition here.
_FENCING_ERRORS = frozenset((Errors.NOT_LEADER_OR_FOLLOWER, Errors.UNKNOWN_TOPIC_OR_PARTITION,
                             Errors.GROUP_ID_NOT_FOUND))


def _persister_error(code: int) -> int:
    """SharePartition.fetchPersisterError: what a client is told of a share state error."""
    if code in (Errors.NOT_COORDINATOR, Errors.COORDINATOR_NOT_AVAILABLE, Errors.COORDINATOR_LOAD_IN_PROGRESS):
        return Errors.COORDINATOR_NOT_AVAILABLE
    if code in (Errors.FENCED_LEADER_EPOCH, Errors.FENCED_STATE_EPOCH):
        return Errors.NOT_LEADER_OR_FOLLOWER  # another leader, or a newer state, owns it now
    if code in (Errors.GROUP_ID_NOT_FOUND, Errors.UNKNOWN_TOPIC_OR_PARTITION):
        return code
    return Errors.UNKNOWN_SERVER_ERROR
