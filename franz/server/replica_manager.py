"""ReplicaManager: appends to and reads from the partitions this node leads (kafka.server.ReplicaManager).

Appends: `append_records` returns per-partition results with Kafka's error
codes. It runs on the single append thread (run_on_append_thread) when it may
block or take long: an fsync (`flush.messages` set), record-by-record work
(compressed batches, compacted topics, a topic codec to convert to) or more
than INLINE_APPEND_BYTES_MAX while the loop is busy. Otherwise, and only while
that thread has nothing pending, it runs on the event loop itself
(can_append_on_loop): under the Java producer on two busy cores each hop to the
thread and back waited 0.2-0.9 ms (median) and 3-4 ms (p90) for a CPU, and on
the loop a lone 100-byte produce's round trip went from 0.26-0.39 to 0.20-0.29
ms. Requests up to LOOP_APPEND_BYTES_MAX also stay on the loop while appending
takes a small share of its time (LoopAppendBudget): at moderate rates the hops
are the larger part of a produce's time in the broker. Either way appends reach a
partition in the order their requests arrived: the loop never overtakes work
it handed to the thread. acks=-1 produces then wait in the produce purgatory
until the HW passes them.

Reads: `fetch_messages` reads each partition up to its partition max bytes and
the response budget (the first partition with data may exceed both by one
batch, Kafka's min-one-message rule), bounded by the HW for consumers
(the LSO for read_committed, plus the aborted transactions in range), and
parks in the fetch purgatory until fetch.min.bytes are there or max.wait.ms.

Record bytes leave as file regions of the segment (sent with os.sendfile) when
large, or copied with one pread when small, where a sendfile round trip costs
more than the copy. A region owns a duplicate of the segment's descriptor, so
a segment deleted meanwhile cannot make the send read another file.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any, Final

from franz.protocol.errors import Errors
from franz.common.config_def import INT64_MAX
from franz.records import CompressionType, FileRecords, MemoryRecords
from franz.records.constants import ATTRIBUTES_OFFSET, COMPRESSION_CODEC_MASK
from franz.server.append_thread import AppendThread
from franz.server.delayed_operations import DelayedFetch, DelayedProduce
from franz.server.error_responses import error_code_of
from franz.server.metadata_cache import MetadataCache
from franz.server.partition import Partition
from franz.server.purgatory import PURGE_INTERVAL_DEFAULT, DelayedOperationPurgatory
from franz.server.request_thread_time import on_worker_thread
from franz.storage.broker_topic_stats import BrokerTopicStats
from franz.storage.epoch_cache import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
from franz.storage.local_log import KafkaStorageError, OffsetOutOfRangeError
from franz.storage.log_manager import LogManager
from franz.storage.producer_append_info import AppendOrigin, VerificationGuard
from franz.storage.segment import EMPTY_RECORDS
from franz.storage.unified_log import FetchIsolation, UnifiedLog
from franz.storage.validator import target_compression

logger = logging.getLogger(__name__)

COPY_SIZE_BYTES_MAX: Final = 64 * 1024
# A produce request's records appended on the event loop, at most: ~45 us of write() here
# (~1.5 GB/s into the page cache), well under one hop to the append thread. Bulk requests
# go to the thread, where the loop keeps receiving while their bytes are written. Two Java
# producers at full speed, 100 B records on 8 partitions, 8 alternating runs of each: with
# this limit 830,530 msgs/s and p99 70.5 ms (medians); with 8 MiB on the loop 672,283 msgs/s
# and p99 201 ms.
INLINE_APPEND_BYTES_MAX: Final = 64 * 1024
# Larger requests, up to LOOP_APPEND_BYTES_MAX, are appended on the loop too while appends
# there took at most LOOP_APPEND_SHARE of its time, with bursts up to LOOP_APPEND_BURST_NS.
# At moderate rates the loop is mostly idle and the two hops cost more than the append. Two
# C producers pacing 200,000 x 100 B records/s on 8 partitions, traced in the broker: the
# requests over 64 KiB, handed to the thread, took 2.1 ms (median) and 17 ms (p99) from
# their last byte read to their answer written; those appended on the loop 0.5 and 3.5 ms.
# The load of broker_bench's paced 1 KiB cells (50,000 records/s, ~128 KiB requests), four
# alternated pairs of three runs: the broker's mean Produce time went from 0.79 (1 partition)
# and 0.87 ms (8) to 0.38 and 0.43 ms, the clients' p99 from 13.5 and 15 ms to 7 and 10 ms
# (medians). At full speed the
# loop takes at most that share of the appending and the thread the bulk, where it pays (the
# loop reads the next request while the thread writes): six alternated pairs of 300,000 x
# 1 KiB records from two producers gave 561,479 and 580,096 msgs/s (1 and 8 partitions)
# without the budget and 576,405 and 573,204 with it; a quarter of the loop's time cost 4-6%.
LOOP_APPEND_BYTES_MAX: Final = 1024 * 1024
LOOP_APPEND_SHARE: Final = 0.10
LOOP_APPEND_BURST_NS: Final = 1_000_000
_CODEC_BYTE: Final = ATTRIBUTES_OFFSET + 1  # the low byte of the big-endian int16 attributes
TopicPartition = tuple[str, int]


def _first_batch_codec(records) -> int:
    """The compression codec id of the first batch (0 when too short to say: the append refuses it)."""
    return records[_CODEC_BYTE] & COMPRESSION_CODEC_MASK if len(records) > _CODEC_BYTE else 0


class FileRegion:
    """Bytes [position, position + size) of a file, on a descriptor of its own."""

    __slots__ = ("_fd", "position", "size")

    def __init__(self, fd: int, position: int, size: int) -> None:
        self._fd = os.dup(fd)
        self.position = position
        self.size = size

    def fileno(self) -> int:
        return self._fd

    def close(self) -> None:
        """Close the descriptor now (the channel does, once the region is sent or cannot be):
        an answer cut off by a reset lives on in its exception's reference cycle until a rare
        cyclic collection (garbage_collector), and kept a segment's descriptor open till then."""
        fd, self._fd = self._fd, -1
        if fd >= 0:
            os.close(fd)

    __del__ = close


# Append errors answered as ReplicaManager.appendToLocalLog's first case: no log start offset
# (UNKNOWN_LOG_APPEND_INFO), no message.
_APPEND_ERRORS_WITHOUT_INFO: Final = frozenset((
    Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_LEADER_OR_FOLLOWER, Errors.MESSAGE_TOO_LARGE,
    Errors.RECORD_LIST_TOO_LARGE, Errors.CORRUPT_MESSAGE, Errors.KAFKA_STORAGE_ERROR))


def _append_error(code: int, exc: Exception, log_start_offset: int) -> dict:
    """A partition's answer to a failed append, as Kafka's LogAppendResult makes it: only a
    record-level validation failure carries its message (with the record errors)."""
    if code in _APPEND_ERRORS_WITHOUT_INFO:
        return {"error_code": code}
    result: dict = {"error_code": code, "log_start_offset": log_start_offset}
    record_errors = getattr(exc, "record_errors", None)
    if record_errors:
        result["error_message"] = str(exc)
        result["record_errors"] = [{"batch_index": record_index, "batch_index_error_message": message}
                                   for _batch, record_index, message in record_errors]
    return result


def response_records(records: Any) -> Any:
    """Records of a read as a response chunk: bytes-like or a FileRegion."""
    if isinstance(records, FileRecords):
        size = records.size_in_bytes
        if size == 0:
            return b""
        if size <= COPY_SIZE_BYTES_MAX:
            return os.pread(records.fd, size, records.start)
        return FileRegion(records.fd, records.start, size)
    if isinstance(records, MemoryRecords):
        return records.buffer
    return records


def response_records_size(records: Any) -> int:
    """Bytes of what response_records gave (FetchResponse.recordsSize)."""
    size = getattr(records, "size", None)  # a FileRegion
    return size if isinstance(size, int) else len(records or b"")


@dataclasses.dataclass(slots=True)
class PartitionFetch:
    """One partition of a fetch: what was asked and what the read found."""
    topic: str
    partition: int
    fetch_offset: int
    partition_max_bytes: int
    current_leader_epoch: int = -1  # the leader epoch the client believes current; -1: unchecked
    last_fetched_epoch: int = -1  # the epoch of the last batch the fetcher has; -1: no divergence check
    topic_id: uuid.UUID | None = None  # the topic id a v13+ fetcher expects; None: unchecked
    error: Errors = Errors.NONE
    high_watermark: int = -1
    last_stable_offset: int = -1
    log_start_offset: int = -1
    records: Any = b""
    size_bytes: int = 0
    aborted: list | None = None
    position: Any = None
    diverging_epoch: tuple[int, int] | None = None  # (epoch, end offset) where the fetcher's log diverges


SENTINEL: Final = VerificationGuard.SENTINEL


class LoopAppendBudget:
    """A leaky bucket of the event loop's time spent appending: what was spent drains at
    `share` of the time that passes, and the loop may take another append while less than
    `burst_ns` is left in it. Loop thread only."""

    __slots__ = ("_share", "_burst_ns", "_clock_ns", "_spent_ns", "_stamp_ns")

    def __init__(self, share: float = LOOP_APPEND_SHARE, burst_ns: int = LOOP_APPEND_BURST_NS,
                 clock_ns: Callable[[], int] = time.monotonic_ns) -> None:
        self._share = share
        self._burst_ns = burst_ns
        self._clock_ns = clock_ns
        self._spent_ns = 0
        self._stamp_ns = clock_ns()

    def has_room(self) -> bool:
        now_ns = self._clock_ns()
        self._spent_ns = max(0, self._spent_ns - int((now_ns - self._stamp_ns) * self._share))
        self._stamp_ns = now_ns
        return self._spent_ns < self._burst_ns

    def spend(self, ns: int) -> None:
        self._spent_ns += ns


# Append errors that BrokerTopicStats does not count as failed produce requests: the client's or
# the cluster's ordinary conditions (ReplicaManager.appendToLocalLog's first catch).
_NOT_FAILED_APPEND_ERRORS: Final = frozenset((
    Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_LEADER_OR_FOLLOWER, Errors.MESSAGE_TOO_LARGE,
    Errors.RECORD_LIST_TOO_LARGE, Errors.CORRUPT_MESSAGE, Errors.KAFKA_STORAGE_ERROR, Errors.UNKNOWN_TOPIC_ID,
    Errors.INVALID_TOPIC_EXCEPTION))


class ReplicaManager:
    def __init__(self, node_id: int, log_manager: LogManager, metadata: MetadataCache,
                 broker_topic_stats: BrokerTopicStats | None = None, *,
                 fetch_purge_interval: int = PURGE_INTERVAL_DEFAULT,
                 produce_purge_interval: int = PURGE_INTERVAL_DEFAULT) -> None:
        self.node_id = node_id
        self.log_manager = log_manager
        self.metadata = metadata
        self.broker_topic_stats = broker_topic_stats if broker_topic_stats is not None else BrokerTopicStats()
        self._partitions: dict[TopicPartition, Partition] = {}
        self.append_thread = AppendThread()
        self._appends_pending = 0  # jobs handed to the append thread and not finished; loop thread only
        self.loop_append_budget = LoopAppendBudget()
        # producer/fetch.purgatory.purge.interval.requests: completed operations purged past this many
        self.produce_purgatory: DelayedOperationPurgatory[DelayedProduce] = \
            DelayedOperationPurgatory("Produce", broker_id=node_id, purge_interval=produce_purge_interval)
        self.fetch_purgatory: DelayedOperationPurgatory[DelayedFetch] = \
            DelayedOperationPurgatory("Fetch", broker_id=node_id, purge_interval=fetch_purge_interval)
        self.append_listeners: list[Callable[[Iterable[TopicPartition]], None]] = []

    def startup(self) -> None:
        self.produce_purgatory.start()
        self.fetch_purgatory.start()

    async def shutdown(self) -> None:
        await self.produce_purgatory.shutdown()
        await self.fetch_purgatory.shutdown()
        self.append_thread.shutdown(wait=True)

    def get_partition(self, topic: str, partition: int) -> Partition | None:
        """The partition this node leads, None once the metadata no longer has it: a deleted
        topic's partitions are gone from its unpublishing on (Kafka's stopPartitions drops them
        from allPartitions), while its logs are still being closed and removed."""
        key = (topic, partition)
        found = self._partitions.get(key)
        if (found is not None and found.log is self.log_manager.get_log(topic, partition)
                and self.metadata.has_partition(topic, partition)):
            return found
        log = self.log_manager.get_log(topic, partition)
        if log is None or not self.metadata.has_partition(topic, partition):
            self._partitions.pop(key, None)
            return None
        found = Partition(topic, partition, log, self.node_id)
        self._partitions[key] = found
        return found

    async def stop_partitions(self, topic: str) -> None:
        """ReplicaManager.stopPartitions on a topic's deletion: its partitions leave the hosted
        ones before their logs are closed and deleted. Looked up only lazily (get_partition),
        a deleted topic's Partition and closed log stayed here for good: ~8.5 KB a partition
        under topic churn."""
        for key in [key for key in self._partitions if key[0] == topic]:
            del self._partitions[key]

    def log_of(self, key: TopicPartition) -> UnifiedLog | None:
        partition = self.get_partition(*key)
        return partition.log if partition is not None else None

    def increment_log_start_offset(self, key: TopicPartition, offset: int, reason: str) -> UnifiedLog | None:
        """Move the partition's log start offset up (DeleteRecords, the share coordinator's pruning);
        the log it ends on, None when the partition is gone. A log replaced meanwhile by the one a
        move between log dirs made (which carries the offset over only if it was there first)
        gets it too. Raises OffsetOutOfRangeError past the high watermark."""
        while True:
            log = self.log_of(key)
            if log is None:
                return None
            log.maybe_increment_log_start_offset(offset, reason)
            if self.log_of(key) is log:
                return log

    # -- produce ---------------------------------------------------------------

    async def run_on_append_thread(self, fn, *args):
        """Run an append job on the append thread, after every job handed to it before."""
        future = self.append_thread.submit(asyncio.get_running_loop(), on_worker_thread(fn), args,
                                           self._append_finished)
        # Counted down on the loop once the job has run, even if the awaiting request is
        # cancelled meanwhile: until then the loop must not append ahead of it.
        self._appends_pending += 1
        return await future

    def _append_finished(self) -> None:
        self._appends_pending -= 1

    def can_append_on_loop(self, entries: dict[TopicPartition, Any]) -> bool:
        """True when appending `entries` on the event loop keeps arrival order and holds the loop
        briefly: no fsync or record-by-record work, and small, or within the loop's append budget."""
        if self._appends_pending:
            return False
        total_bytes = 0
        for key, records in entries.items():
            partition = self.get_partition(*key)
            if partition is None or records is None:
                continue  # answered with an error code, without touching a log
            config = partition.log.config
            if (config.flush_messages != INT64_MAX or config.compact or _first_batch_codec(records) != 0
                    or target_compression(config, CompressionType.NONE) != CompressionType.NONE):
                return False
            total_bytes += len(records)
        if total_bytes <= INLINE_APPEND_BYTES_MAX:
            return True
        return total_bytes <= LOOP_APPEND_BYTES_MAX and self.loop_append_budget.has_room()

    def append_records_on_loop(self, required_acks: int, entries: dict[TopicPartition, Any],
                               verification_guards: dict[TopicPartition, VerificationGuard] | None = None
                               ) -> dict[TopicPartition, dict]:
        """append_records on the event loop (can_append_on_loop said so), its time charged to
        the loop's budget."""
        start_ns = time.monotonic_ns()
        try:
            return self.append_records(required_acks, entries, AppendOrigin.CLIENT, verification_guards)
        finally:
            self.loop_append_budget.spend(time.monotonic_ns() - start_ns)

    def append_records(self, required_acks: int, entries: dict[TopicPartition, Any],
                       origin: AppendOrigin = AppendOrigin.CLIENT,
                       verification_guards: dict[TopicPartition, VerificationGuard] | None = None,
                       transaction_version: int = 0) -> dict[TopicPartition, dict]:
        """Append each partition's records (on the append thread, or on the loop: see the module
        docstring); `verification_guards` holds the guards of verified transactional batches,
        `transaction_version` the version of a coordinator's markers."""
        results: dict[TopicPartition, dict] = {}
        stats = self.broker_topic_stats
        for key, records in entries.items():
            partition = self.get_partition(*key)
            if partition is None:
                results[key] = {"error_code": Errors.UNKNOWN_TOPIC_OR_PARTITION}
                continue
            if records is None:
                results[key] = {"error_code": Errors.CORRUPT_MESSAGE,
                                "error_message": "Produce request contained null records"}
                continue
            try:
                # The validator stamps offsets in place: a view over a frame the request
                # owns (large frames arrive in their own bytearray) is written as is.
                writable = isinstance(records, bytearray) or (
                    isinstance(records, memoryview) and not records.readonly)
                buffer = records if writable else bytearray(records)
                guard = verification_guards.get(key, SENTINEL) if verification_guards else SENTINEL
                info = partition.append_records_to_leader(MemoryRecords(buffer), required_acks, origin, guard,
                                                          transaction_version)
            except Exception as exc:  # every storage error carries its Kafka code
                code = getattr(exc, "error_code", None)
                if isinstance(exc, OffsetOutOfRangeError):
                    code = Errors.OFFSET_OUT_OF_RANGE
                if code is None or code == Errors.UNKNOWN_SERVER_ERROR:
                    logger.error("Error processing append operation on partition %s-%d", *key, exc_info=exc)
                    code = Errors.UNKNOWN_SERVER_ERROR
                results[key] = _append_error(int(code), exc, partition.log.log_start_offset)
                for meter, amount in getattr(exc, "all_topics_marks", ()):  # validation's (RecordValidationError)
                    stats.mark_all_topics(meter, amount)
                stats.mark_many(key[0], ("TotalProduceRequestsPerSec", 1),
                                ("BytesRejectedPerSec" if code == Errors.MESSAGE_TOO_LARGE else None, len(records)),
                                (None if code in _NOT_FAILED_APPEND_ERRORS else "FailedProduceRequestsPerSec", 1))
                continue
            stats.mark_many(key[0], ("TotalProduceRequestsPerSec", 1), ("BytesInPerSec", len(records)),
                            ("MessagesInPerSec", info.num_messages))
            results[key] = {"error_code": 0, "base_offset": info.first_offset,
                            "log_append_time_ms": info.log_append_time_ms,
                            "log_start_offset": info.log_start_offset,
                            "last_offset": info.last_offset, "num_messages": info.num_messages,
                            "valid_bytes": info.valid_bytes, "record_validation_stats": info.record_validation_stats}
        return results

    async def wait_for_acks(self, timeout_ms: int, results: dict[TopicPartition, dict]) -> None:
        """acks=-1: wait until the HW passes every successful append (DelayedProduce)."""
        pending = {key: result["last_offset"] + 1 for key, result in results.items()
                   if result["error_code"] == 0}
        if not pending:
            return

        def check(key: TopicPartition, required_offset: int):
            partition = self.get_partition(*key)
            if partition is None:
                return True, Errors.NOT_LEADER_OR_FOLLOWER
            return partition.check_enough_replicas_reach_offset(required_offset)

        operation = DelayedProduce(timeout_ms, asyncio.get_running_loop(), pending, check)
        self.produce_purgatory.try_complete_else_watch(operation, list(pending))
        errors = await operation
        for key, error in errors.items():
            results[key]["error_code"] = int(error)

    def on_appended(self, keys) -> None:
        """New data or a new HW on these partitions: retry the operations watching them."""
        for key in keys:
            self.produce_purgatory.check_and_complete(key)
            self.fetch_purgatory.check_and_complete(key)
        for listener in self.append_listeners:  # share fetches waiting for records
            listener(keys)

    # -- fetch -----------------------------------------------------------------

    def read_from_log(self, fetches: list[PartitionFetch], isolation: FetchIsolation, max_bytes: int,
                      hard_max_bytes_limit: bool) -> int:
        """Read every partition in order; returns the bytes read."""
        remaining = max_bytes
        total = 0
        min_one_message = not hard_max_bytes_limit
        for fetch in fetches:
            fetch.records, fetch.size_bytes, fetch.aborted, fetch.diverging_epoch = b"", 0, None, None
            partition = self.get_partition(fetch.topic, fetch.partition)
            if partition is None:
                fetch.error = Errors.UNKNOWN_TOPIC_OR_PARTITION
                continue
            log = partition.log
            error = Errors.NONE
            if fetch.topic_id is not None and log.topic_id is not None and fetch.topic_id != log.topic_id:
                error = Errors.INCONSISTENT_TOPIC_ID  # the topic was deleted and made again under its name
            elif fetch.current_leader_epoch != partition.leader_epoch:  # -1 or another epoch: rare
                error = partition.check_current_leader_epoch(fetch.current_leader_epoch)
            if error == Errors.NONE and fetch.last_fetched_epoch >= 0:
                error = self._check_divergence(fetch, log)
            if error != Errors.NONE:
                fetch.error = error
                fetch.high_watermark = fetch.last_stable_offset = fetch.log_start_offset = -1
                continue
            fetch.error = Errors.NONE
            fetch.high_watermark = log.high_watermark
            fetch.last_stable_offset = log.last_stable_offset
            fetch.log_start_offset = log.log_start_offset
            if fetch.diverging_epoch is not None:  # no records: the fetcher must truncate first
                continue
            try:
                info = log.read(fetch.fetch_offset, min(fetch.partition_max_bytes, max(remaining, 0)), isolation,
                                min_one_message)
            except OffsetOutOfRangeError:
                fetch.error = Errors.OFFSET_OUT_OF_RANGE
                fetch.high_watermark = fetch.last_stable_offset = fetch.log_start_offset = -1
                continue
            except Exception as exc:  # noqa: BLE001 - ReplicaManager.readFromLog: this partition fails, not the fetch
                if not isinstance(exc, KafkaStorageError):  # a disk error is logged where it happened, as in Kafka
                    logger.error("Error processing fetch with max size %d on partition %s-%d: offset %d",
                                 fetch.partition_max_bytes, fetch.topic, fetch.partition, fetch.fetch_offset,
                                 exc_info=exc)
                fetch.error = error_code_of(exc)
                fetch.high_watermark = fetch.last_stable_offset = fetch.log_start_offset = -1
                continue
            fetch.position = info.fetch_offset_metadata
            records, aborted = info.records, info.aborted_transactions
            if info.first_entry_incomplete and not hard_max_bytes_limit:
                # Fetch v3+ (ReplicaManager.checkFetchDataInfo): a first batch cut by the size
                # limit is left out, not sent in part; the client asks again and gets it whole
                # once it comes first in a response.
                records, aborted = EMPTY_RECORDS, None
            size = records.size_in_bytes
            fetch.size_bytes = size
            fetch.records = response_records(records)
            if isolation == FetchIsolation.TXN_COMMITTED:
                fetch.aborted = [{"producer_id": txn.producer_id, "first_offset": txn.first_offset}
                                 for txn in (aborted or [])]
            if size > 0:
                min_one_message = False
            remaining -= size
            total += size
        return total

    @staticmethod
    def _check_divergence(fetch: PartitionFetch, log: UnifiedLog) -> Errors:
        """Partition.readRecords with a last fetched epoch (KIP-595/KIP-320): where the epoch the
        fetcher last read ended in this log; a fetcher ahead of that end has diverged, and is
        answered that (epoch, end offset) instead of records. Sets `fetch.diverging_epoch`."""
        epoch, end_offset = log.leader_epoch_cache.end_offset_for(fetch.last_fetched_epoch, log.log_end_offset)
        if epoch == UNDEFINED_EPOCH or end_offset == UNDEFINED_EPOCH_OFFSET:
            return Errors.OFFSET_OUT_OF_RANGE  # the end of the last fetched epoch is unknown here
        if fetch.fetch_offset < log.log_start_offset:
            return Errors.OFFSET_OUT_OF_RANGE
        if epoch < fetch.last_fetched_epoch or end_offset < fetch.fetch_offset:
            fetch.diverging_epoch = (epoch, end_offset)
        return Errors.NONE

    async def fetch_messages(self, fetches: list[PartitionFetch], isolation: FetchIsolation, max_bytes: int,
                             min_bytes: int, max_wait_ms: int, hard_max_bytes_limit: bool = False) -> None:
        total = self.read_from_log(fetches, isolation, max_bytes, hard_max_bytes_limit)
        reads: dict[str, int] = {}  # the first read only, of the partitions this broker has
        for fetch in fetches:
            if fetch.error != Errors.UNKNOWN_TOPIC_OR_PARTITION:
                reads[fetch.topic] = reads.get(fetch.topic, 0) + 1
                if fetch.error == Errors.UNKNOWN_SERVER_ERROR:
                    self.broker_topic_stats.mark(fetch.topic, "FailedFetchRequestsPerSec")
        self.broker_topic_stats.mark_topics("TotalFetchRequestsPerSec", reads)
        # A partition this node does not have is answered with its error but does not end the
        # wait: KafkaApis sets such partitions aside before the read (only errors reading a log do).
        errors = any(fetch.error not in (Errors.NONE, Errors.UNKNOWN_TOPIC_OR_PARTITION)
                     or fetch.diverging_epoch is not None for fetch in fetches)
        readable = any(fetch.error == Errors.NONE for fetch in fetches)
        if max_wait_ms <= 0 or not readable or total >= min_bytes or errors:
            return
        positions = {(fetch.topic, fetch.partition): (fetch.position, fetch.partition_max_bytes)
                     for fetch in fetches if fetch.position is not None}
        operation = DelayedFetch(max_wait_ms, asyncio.get_running_loop(), min_bytes, positions, self.log_of,
                                 isolation)
        self.fetch_purgatory.try_complete_else_watch(operation, list(positions))
        await operation
        self.read_from_log(fetches, isolation, max_bytes, hard_max_bytes_limit)
