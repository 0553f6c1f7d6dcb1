"""UnifiedLog: the semantics of one partition's log on top of LocalLog.

Owns what LocalLog does not: the log start offset, the high watermark, the
last stable offset, producer state (idempotence and transactions), the leader
epoch cache, validation on the leader, retention, and reads by isolation.

Invariants (asserted after every change):
    log_start_offset <= last_stable_offset <= high_watermark <= log_end_offset
- The high watermark only moves forward except on truncation; the log start
  offset only moves forward and never past the high watermark.
- A duplicate batch from an idempotent producer is answered with the offsets
  it got the first time and is not written again.
- Appends are serialised by `self.lock` (Kafka's partition lock); readers take
  no lock and read only below the bound their isolation level allows.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
import typing
import uuid
from collections.abc import Callable
from pathlib import Path

from franz.records import MemoryRecords, RecordBatch, TimestampAndOffset
from franz.records.errors import RecordBatchTooLargeError
from franz.storage import files, log_flush_stats
from franz.storage.checkpoint import (
    LEADER_EPOCH_CHECKPOINT_FILE,
    CheckpointError,
    InconsistentTopicIdError,
    LeaderEpochCheckpointFile,
    PartitionMetadataFile,
    flush_file_if_exists,
)
from franz.storage.epoch_cache import LeaderEpochFileCache
from franz.storage.loader import LogLoader, rebuild_producer_state
from franz.storage.local_log import (
    KafkaStorageError,
    LocalLog,
    OffsetOutOfRangeError,
    append_unless_roll_due,
    maybe_handle_io_error,
    replace_segments,
    schedule_once,
    storage_error,
)
from franz.storage.log_append_info import LogAppendInfo
from franz.storage.log_config import LogConfig
from franz.storage.producer_append_info import InvalidProducerEpochError, InvalidTxnStateError, VerificationGuard
from franz.storage.producer_state import (
    AppendOrigin,
    ProducerStateManager,
    ProducerStateManagerConfig,
    update_producers,
)
from franz.storage.segment import (
    FetchDataInfo,
    LogOffsetMetadata,
    LogSegment,
    RollParams,
    empty_fetch_data_info,
    now_ms,
)
from franz.storage.segments import LogSegments
from franz.storage.txn_index import AbortedTxn
from franz.storage.validator import (
    MESSAGE_TOO_LARGE,
    RecordValidationError,
    analyze_and_validate,
    assign_offsets_in_place,
    trim_invalid_bytes,
    validate_messages_and_assign_offsets,
)

log = logging.getLogger(__name__)

APPEND_ERROR = "Error while appending records to {tp} in dir {dir}"  # Kafka's words

EARLIEST_TIMESTAMP = -2
LATEST_TIMESTAMP = -1
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5
EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6


class FetchIsolation(enum.Enum):
    LOG_END = 0
    HIGH_WATERMARK = 1
    TXN_COMMITTED = 2


class UnexpectedAppendOffsetError(Exception):
    error_code = -1


_new_tuple = tuple.__new__

try:  # franz/storage/_unified_log_fast.c, built by `pip install` with the two modules it calls
    from franz.storage._unified_log_fast import append_as_leader_common_case
except ImportError:
    append_as_leader_common_case = None


class ActiveProducer(typing.NamedTuple):
    """One producer's state as DescribeProducers reports it (Kafka's UnifiedLog.activeProducers)."""
    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int
    current_txn_start_offset: int  # -1 when no transaction is open


class UnifiedLog:
    # The attributes the C append path reads and writes (SlotAttr in franz/storage/_fast_common.h).
    __slots__ = ("local_log", "leader_epoch_cache", "producer_state_manager", "_log_start_offset", "__dict__")

    def __init__(self, log_start_offset: int, local_log: LocalLog, leader_epoch_cache: LeaderEpochFileCache,
                 producer_state_manager: ProducerStateManager, topic_id: uuid.UUID | None = None,
                 time_ms=now_ms) -> None:
        self.local_log = local_log
        self.leader_epoch_cache = leader_epoch_cache
        self.producer_state_manager = producer_state_manager
        self.topic_id = topic_id
        self.time_ms = time_ms
        self.lock = threading.RLock()
        self._log_start_offset = log_start_offset
        self._high_watermark = log_start_offset
        self._first_unstable_offset: int | None = None
        self._update_first_unstable_offset()
        # Set by a disk error that left the files and this state apart (maybe_handle_io_error);
        # never cleared: a restart recovers the log from its files.
        self.offline = False
        # Called on the thread that takes the log offline (LogManager's, for its current logs);
        # two failures racing may both call it, so it must be idempotent.
        self.on_offline: Callable[[], None] | None = None

    # -- construction --------------------------------------------------------------------
    @classmethod
    def create(cls, directory: Path | str, config: LogConfig, log_start_offset: int = 0, recovery_point: int = 0,
               had_clean_shutdown: bool = True, topic_id: uuid.UUID | None = None, scheduler=None,
               time_ms=now_ms, max_transaction_timeout_ms: int = 900_000,
               producer_state_config: ProducerStateManagerConfig | None = None) -> UnifiedLog:
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        topic, partition = files.parse_topic_partition_name(directory.name)
        topic_partition = f"{topic}-{partition}"
        metadata = PartitionMetadataFile(directory)
        if metadata.exists():
            # Kafka's initializeTopicId: a directory left by a deleted topic of the same name
            # (its removal failed on disk) is not handed to a new topic, records and all.
            stored_topic_id = metadata.read()
            if topic_id is not None and topic_id != stored_topic_id:
                raise InconsistentTopicIdError.assigning(topic_partition, topic_id, stored_topic_id)
            topic_id = stored_topic_id
        elif topic_id is not None:
            metadata.write(topic_id)  # before any data, as Kafka does
        epoch_checkpoint = LeaderEpochCheckpointFile(directory / LEADER_EPOCH_CHECKPOINT_FILE)
        try:
            epoch_cache = LeaderEpochFileCache(topic_partition, epoch_checkpoint)
            rebuild_epochs = False
        except CheckpointError as exc:
            # Kafka takes the log dir offline here; franz rebuilds the cache from
            # the batch headers, which carry every epoch, and says so.
            log.warning("Discarding unreadable %s and rebuilding the leader epoch cache from the log: %s",
                        epoch_checkpoint.path, exc)
            epoch_checkpoint.path.write_text("")
            epoch_cache = LeaderEpochFileCache(topic_partition, epoch_checkpoint)
            rebuild_epochs = True
        producer_state = ProducerStateManager(topic_partition, directory, max_transaction_timeout_ms,
                                              producer_state_config, time_ms)
        segments = LogSegments(topic_partition)
        offsets = LogLoader(directory, topic_partition, config, had_clean_shutdown, segments, log_start_offset,
                            recovery_point, epoch_cache, producer_state, max_transaction_timeout_ms,
                            time_ms).load()
        local_log = LocalLog(directory, config, segments, offsets.recovery_point, offsets.next_offset_metadata,
                             topic_partition, scheduler, time_ms)
        if rebuild_epochs:
            for segment in segments.values():
                for batch in segment.log.batches():
                    epoch_cache.assign_if_newer(batch.partition_leader_epoch,
                                                max(batch.base_offset, offsets.log_start_offset))
        return cls(offsets.log_start_offset, local_log, epoch_cache, producer_state, topic_id, time_ms)

    # -- offsets -------------------------------------------------------------------------
    @property
    def dir(self) -> Path:
        return self.local_log.dir

    @property
    def config(self) -> LogConfig:
        return self.local_log.config

    @property
    def topic_partition(self) -> str:
        return self.local_log.topic_partition

    @property
    def log_start_offset(self) -> int:
        return self._log_start_offset

    @property
    def log_end_offset(self) -> int:
        return self.local_log.log_end_offset

    @property
    def log_end_offset_metadata(self) -> LogOffsetMetadata:
        return self.local_log.log_end_offset_metadata

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @property
    def recovery_point(self) -> int:
        return self.local_log.recovery_point

    def active_producers(self) -> list[ActiveProducer]:
        """Every producer id with state in this log, read under the log lock so that each
        entry is one append's state, not parts of two."""
        with self.lock:
            return [ActiveProducer(producer_id, entry.producer_epoch, entry.last_seq, entry.last_timestamp,
                                   entry.coordinator_epoch,
                                   -1 if entry.current_txn_first_offset is None else entry.current_txn_first_offset)
                    for producer_id, entry in self.producer_state_manager.active_producers.items()]

    @property
    def last_stable_offset(self) -> int:
        fuo = self._first_unstable_offset
        return self._high_watermark if fuo is None else min(fuo, self._high_watermark)

    def last_stable_offset_lag(self) -> int:
        """HW - LSO, from one read of each (another thread may move them meanwhile): >= 0."""
        high_watermark, fuo = self._high_watermark, self._first_unstable_offset
        return 0 if fuo is None else high_watermark - min(fuo, high_watermark)

    @property
    def segments(self) -> LogSegments:
        return self.local_log.segments

    def number_of_segments(self) -> int:
        return len(self.local_log.segments)

    def size(self) -> int:
        return self.local_log.segments.size_in_bytes()

    def _check_invariants(self) -> None:
        assert self._log_start_offset <= self.last_stable_offset <= self._high_watermark <= self.log_end_offset, (
            f"{self.topic_partition}: logStartOffset={self._log_start_offset} lastStableOffset="
            f"{self.last_stable_offset} highWatermark={self._high_watermark} logEndOffset={self.log_end_offset}")

    def _update_first_unstable_offset(self) -> None:
        fuo = self.producer_state_manager.first_unstable_offset()
        if fuo is not None and fuo < self._log_start_offset:
            fuo = self._log_start_offset
        self._first_unstable_offset = fuo

    def update_high_watermark(self, high_watermark: int) -> int:
        """Set the high watermark, clamped to [log start, LEO] (may move back: truncation)."""
        with self.lock:
            new_hw = max(self._log_start_offset, min(high_watermark, self.log_end_offset))
            self._high_watermark = new_hw
            self.producer_state_manager.on_high_watermark_updated(new_hw)
            self._update_first_unstable_offset()
            self._check_invariants()
            return new_hw

    def maybe_increment_high_watermark(self, new_high_watermark: int) -> int | None:
        """Move the high watermark forward only; returns the old one if it moved."""
        with self.lock:
            if new_high_watermark > self.log_end_offset:
                raise ValueError(f"High watermark {new_high_watermark} update exceeds current log end offset "
                                 f"{self.log_end_offset}")
            old = self._high_watermark
            if new_high_watermark > old:
                self.update_high_watermark(new_high_watermark)
                return old
            return None

    @maybe_handle_io_error("Exception while increasing log start offset for {tp} in dir {dir}")
    def maybe_increment_log_start_offset(self, new_log_start_offset: int, reason: str = "") -> bool:
        with self.lock:
            if new_log_start_offset > self._high_watermark:
                raise OffsetOutOfRangeError(
                    f"Cannot increment the log start offset to {new_log_start_offset} of partition "
                    f"{self.topic_partition} since it is larger than the high watermark {self._high_watermark}")
            if new_log_start_offset <= self._log_start_offset:
                return False
            log.info("[UnifiedLog partition=%s, dir=%s] Incremented log start offset to %d due to %s",
                     self.topic_partition, self.dir.parent, new_log_start_offset, reason or "request")
            self._log_start_offset = new_log_start_offset
            self.leader_epoch_cache.truncate_from_start(new_log_start_offset)
            self.producer_state_manager.on_log_start_offset_incremented(new_log_start_offset)
            self._update_first_unstable_offset()
            self._check_invariants()
            return True

    def maybe_assign_epoch_start_offset(self, leader_epoch: int, start_offset: int) -> None:
        """Record that `leader_epoch` starts at `start_offset` (maybeAssignEpochStartOffset), when
        this node becomes the partition's leader (Partition.makeLeader), so that the checkpoint
        write and its fsync happen then and not on the first produce. As on the append path, only
        an epoch newer than the cache's latest is recorded."""
        with self.lock:
            self.leader_epoch_cache.assign_if_newer(leader_epoch, start_offset)

    # -- a disk error --------------------------------------------------------------------
    def take_offline(self) -> None:
        """Refuse every later call (KafkaStorageError) and leave the dir unclean at shutdown, so
        that the next start recovers this log from its files (LogManager.shutdown)."""
        if not self.offline:
            self.offline = True
            log.error("[UnifiedLog partition=%s, dir=%s] Taken offline after a disk error: every request "
                      "for it fails with KAFKA_STORAGE_ERROR until the broker restarts and recovers it",
                      self.topic_partition, self.dir.parent)
            if self.on_offline is not None:
                self.on_offline()

    def offline_error(self) -> KafkaStorageError:
        return KafkaStorageError(f"The log of {self.topic_partition} in dir {self.dir.parent} is offline due to "
                                 f"a previous IO exception.")

    # -- append --------------------------------------------------------------------------
    def append_as_leader(self, records: MemoryRecords, leader_epoch: int,
                         origin: AppendOrigin = AppendOrigin.CLIENT,
                         verification_guard: VerificationGuard = VerificationGuard.SENTINEL,
                         transaction_version: int = 0) -> LogAppendInfo:
        """Validate, assign offsets from the LEO, dedup idempotent retries, write.
        `verification_guard` is the guard a transaction verification handed out for the
        producer of a transactional batch that starts a transaction here;
        `transaction_version` that of a coordinator's transaction markers (2: the marker
        must carry an epoch above the producer's)."""
        # maybe_handle_io_error inline: on the produce path a wrapper's extra call was ~0.7 us
        # of the ~10 us an in-process 100-record append takes. A write refused before the log end
        # moved left nothing behind (the file is cut back), so the log stays online for a retry.
        if self.offline:
            raise self.offline_error()
        end_before = self.local_log._next_offset_metadata
        try:
            with self.lock:
                local_log = self.local_log
                # Under the lock close() takes: a log closed meanwhile (its topic deleted, moved to
                # another dir, shut down) gets nothing, where its freed descriptors may already be
                # another file's.
                local_log.check_if_memory_mapped_buffer_closed()
                now = self.time_ms()
                if origin is AppendOrigin.CLIENT:
                    if append_as_leader_common_case is not None:
                        # The steps below in one C call when they run to the end (the flush.messages
                        # check included): a LogAppendInfo. Otherwise its answer is
                        # assign_offsets_in_place's (franz/storage/_unified_log_fast.c).
                        stamped = append_as_leader_common_case(self, records, leader_epoch, now)
                        if type(stamped) is LogAppendInfo:
                            return stamped
                    else:
                        stamped = assign_offsets_in_place(records, local_log.log_end_offset, now, local_log.config,
                                                          leader_epoch, header_without_producer=False)
                    if stamped is not None:  # validated and stamped at the log end offset, not appended yet
                        header, last_offset, max_timestamp, shallow_offset_of_max, record_count = stamped
                        size = records.size_in_bytes  # C took the buffer as exactly one batch
                        info = _new_tuple(LogAppendInfo, (local_log.log_end_offset, last_offset, leader_epoch,
                                                          max_timestamp, shallow_offset_of_max, -1,
                                                          self._log_start_offset, record_count, size, False, None))
                        if header is None:  # no producer id
                            return self._append_without_producer(records, info, leader_epoch, now)
                        return self._append(records, [RecordBatch._trusted(records.buffer, 0, size)], [header], info,
                                            origin, leader_epoch, now, verification_guard)
                result = validate_messages_and_assign_offsets(
                    records, local_log.log_end_offset, now, local_log.config, leader_epoch,
                    is_from_client=origin == AppendOrigin.CLIENT, try_in_place=False)  # tried above
                validated = result.validated_records
                if result.messages_size_maybe_changed:  # recompressed to the topic's codec: it may have grown
                    for header in result.headers:
                        size = header.batch_length + 12
                        if size > local_log.config.max_message_bytes:
                            raise RecordValidationError(
                                MESSAGE_TOO_LARGE, f"Message batch size is {size} bytes in append to partition "
                                                   f"{self.topic_partition} which exceeds the maximum configured size "
                                                   f"of {local_log.config.max_message_bytes}.")
                info = LogAppendInfo(result.first_offset, result.last_offset, leader_epoch, result.max_timestamp_ms,
                                     result.shallow_offset_of_max_timestamp, result.log_append_time_ms,
                                     self._log_start_offset, result.num_messages, validated.size_in_bytes,
                                     record_validation_stats=result.record_validation_stats)
                return self._append(validated, result.batches, result.headers, info, origin, leader_epoch, now,
                                    verification_guard, transaction_version)
        except OSError as exc:
            # Nothing landed when the log end is where it was and still ends the active segment's
            # bytes (its position is the segment's size after every append and roll).
            end = self.local_log._next_offset_metadata
            landed = (end.message_offset != end_before.message_offset
                      or end.relative_position_in_segment != self.local_log.segments.active_segment.size())
            raise storage_error(self, APPEND_ERROR, exc, take_offline=landed) from exc

    @maybe_handle_io_error(APPEND_ERROR)
    def append_as_follower(self, records: MemoryRecords) -> LogAppendInfo:
        """Append batches whose offsets the leader already assigned."""
        with self.lock:
            self.local_log.check_if_memory_mapped_buffer_closed()
            batches, headers = analyze_and_validate(records, self.config, is_from_client=False, ignore_record_size=True)
            records = trim_invalid_bytes(records, batches)
            first, last = headers[0], headers[-1]
            if first.base_offset < self.log_end_offset:
                raise UnexpectedAppendOffsetError(
                    f"Unexpected offset in append to {self.topic_partition}. First offset "
                    f"{first.base_offset} is less than the next offset {self.log_end_offset}.")
            max_timestamp, shallow_offset_of_max = -1, -1
            for header in headers:
                if header.max_timestamp > max_timestamp:
                    max_timestamp = header.max_timestamp
                    shallow_offset_of_max = header.base_offset + header.last_offset_delta
            info = LogAppendInfo(first.base_offset, last.base_offset + last.last_offset_delta,
                                 last.partition_leader_epoch, max_timestamp, shallow_offset_of_max, -1,
                                 self._log_start_offset, sum(h.record_count for h in headers),
                                 records.size_in_bytes)
            return self._append(records, batches, headers, info, AppendOrigin.REPLICATION, None, self.time_ms())

    def _append(self, records: MemoryRecords, batches, headers, info: LogAppendInfo, origin: AppendOrigin,
                leader_epoch: int | None, now: int,
                verification_guard: VerificationGuard = VerificationGuard.SENTINEL,
                transaction_version: int = 0) -> LogAppendInfo:
        """Write validated batches and bring producer state and the epoch cache up to them.

        `leader_epoch` is the epoch the leader stamped on every batch; None for a
        follower's batches, which carry their own. Runs under the partition lock."""
        self._check_fits_a_segment(records)
        # Producer state: a retry of a batch already written is answered with its offsets.
        producers: dict = {}
        completed_txns = []
        segment_position = None
        for batch, header in zip(batches, headers):
            if header.producer_id >= 0:
                if origin == AppendOrigin.CLIENT:
                    entry = self.producer_state_manager.last_entry(header.producer_id)
                    duplicate = entry.find_duplicate_batch(batch) if entry is not None else None
                    if duplicate is not None:
                        # Kafka answers the retry with the cached batch's timestamp as its
                        # log append time, whatever the topic's timestamp type.
                        return info._replace(first_offset=duplicate.last_offset - duplicate.offset_delta,
                                             last_offset=duplicate.last_offset, max_timestamp=duplicate.timestamp,
                                             log_append_time_ms=duplicate.timestamp, duplicate=True)
                if (origin is AppendOrigin.CLIENT or origin is AppendOrigin.COORDINATOR) and batch.is_transactional:
                    self._check_transaction_verified(batch, verification_guard)
                if segment_position is None:
                    active = self.local_log.segments.active_segment
                    segment_position = LogOffsetMetadata(info.first_offset, active.base_offset, active.size())
                completed = update_producers(self.producer_state_manager, batch, producers, segment_position,
                                             origin, transaction_version)
                if completed is not None:
                    completed_txns.append(completed)

        # The LSO is tracked by offset; the position metadata given to producer
        # state above is informational only, so a roll here does not stale it.
        segment = self._roll_if_due_and_write(records, info, now)
        local_log = self.local_log

        epoch_cache = self.leader_epoch_cache
        if leader_epoch is None:
            for batch in batches:
                epoch_cache.assign_if_newer(batch.partition_leader_epoch, batch.base_offset)
        else:
            epoch_cache.assign_if_newer(leader_epoch, info.first_offset)
        producer_state = self.producer_state_manager
        if producers:
            for append_info in producers.values():
                producer_state.update(append_info)
            for completed in completed_txns:
                last_stable_offset = producer_state.last_stable_offset(completed)
                segment.update_txn_index(completed, last_stable_offset)
                producer_state.complete_txn(completed)
            self._update_first_unstable_offset()  # only batches with a producer id open or end transactions
        producer_state.update_map_end_offset(info.last_offset + 1)

        if info.last_offset + 1 - local_log.recovery_point >= local_log.config.flush_messages:
            self.flush(info.last_offset + 1)
        # No invariant check here: an append moves only the LEO, forward, and a
        # transaction it opens starts at or past the HW, so the LSO stays put.
        return info

    # -- transaction verification (KIP-890) ------------------------------------------------
    def has_ongoing_transaction(self, producer_id: int, producer_epoch: int) -> bool:
        """Whether this producer, at this epoch, has a transaction open in this log."""
        entry = self.producer_state_manager.last_entry(producer_id)
        return (entry is not None and entry.current_txn_first_offset is not None
                and entry.producer_epoch == producer_epoch)

    def maybe_start_transaction_verification(self, producer_id: int, sequence: int, epoch: int,
                                             supports_epoch_bump: bool = False) -> VerificationGuard:
        """UnifiedLog.maybeStartTransactionVerification: SENTINEL when the producer's
        transaction is already open here (nothing to verify), else the guard of its pending
        verification, made before the coordinator is asked so that a marker written meanwhile
        clears it. A batch from an epoch older than the log's is refused at once.
        `supports_epoch_bump`: the producer speaks transactions v2."""
        with self.lock:
            self._check_epoch_not_older(producer_id, epoch)
            if self.has_ongoing_transaction(producer_id, epoch):
                return VerificationGuard.SENTINEL
            return self.producer_state_manager.maybe_create_verification_state_entry(
                producer_id, sequence, epoch, supports_epoch_bump).verification_guard

    def verification_guard(self, producer_id: int) -> VerificationGuard:
        entry = self.producer_state_manager.verification_state_entry(producer_id)
        return entry.verification_guard if entry is not None else VerificationGuard.SENTINEL

    def _check_epoch_not_older(self, producer_id: int, epoch: int) -> None:
        entry = self.producer_state_manager.last_entry(producer_id)
        if entry is not None and epoch < entry.producer_epoch:
            raise InvalidProducerEpochError(
                f"Epoch of producer {producer_id} is {epoch}, which is smaller than the last seen epoch "
                f"{entry.producer_epoch}")

    def _check_transaction_verified(self, batch, verification_guard: VerificationGuard) -> None:
        """UnifiedLog.analyzeAndValidateProducerState: a transactional data batch that would
        open a transaction here must carry the guard its verification was given and that no
        marker has cleared since; otherwise it is a batch of a transaction the coordinator
        does not know (a hanging transaction), refused INVALID_TXN_STATE."""
        producer_id, epoch = batch.producer_id, batch.producer_epoch
        if self.has_ongoing_transaction(producer_id, epoch):
            return
        self._check_epoch_not_older(producer_id, epoch)
        if (self.producer_state_manager.config.transaction_verification_enabled and not batch.is_control_batch
                and not self.verification_guard(producer_id).verify(verification_guard)):
            raise InvalidTxnStateError("Record was not part of an ongoing transaction")

    def remove_expired_producers(self, current_time_ms: int) -> None:
        with self.lock:
            self.producer_state_manager.remove_expired_producers(current_time_ms)

    def _check_fits_a_segment(self, records: MemoryRecords) -> None:
        """What one append writes goes into one segment: never more than segment.bytes."""
        segment_bytes = self.local_log.config.segment_bytes
        if records.size_in_bytes > segment_bytes:
            raise RecordBatchTooLargeError(
                f"Message batch size is {records.size_in_bytes} bytes in append to partition {self.topic_partition}, "
                f"which exceeds the maximum configured segment size of {segment_bytes}.")

    def _append_without_producer(self, records: MemoryRecords, info: LogAppendInfo, leader_epoch: int,
                                 now: int) -> LogAppendInfo:
        """_append for a leader's batch without a producer id: nothing to dedup, no
        producer or transaction state to move. Runs under the partition lock."""
        self._check_fits_a_segment(records)
        self._roll_if_due_and_write(records, info, now)
        local_log = self.local_log
        last_offset = info.last_offset
        self.leader_epoch_cache.assign_if_newer(leader_epoch, info.first_offset)
        self.producer_state_manager.update_map_end_offset(last_offset + 1)
        if last_offset + 1 - local_log.recovery_point >= local_log.config.flush_messages:
            self.flush(last_offset + 1)
        return info

    def _roll_if_due_and_write(self, records: MemoryRecords, info: LogAppendInfo, now: int) -> LogSegment:
        """Roll first if the active segment must, then LocalLog.append: in one C call when no
        roll is due (franz/storage/_segment_fast.c). Returns the segment written to."""
        local_log = self.local_log
        if append_unless_roll_due(local_log, records.buffer, info.last_offset, info.max_timestamp,
                                  info.shallow_offset_of_max_timestamp, now):
            return local_log.segments.active_segment
        segment = self._maybe_roll(info.valid_bytes, info, now)
        local_log.append(info.last_offset, info.max_timestamp, info.shallow_offset_of_max_timestamp, records)
        return segment

    def _maybe_roll(self, messages_size: int, info: LogAppendInfo, now: int) -> LogSegment:
        segment = self.local_log.segments.active_segment
        config = self.local_log.config
        params = RollParams(config.segment_ms, config.segment_bytes, info.max_timestamp,
                            info.last_offset, messages_size, now)
        if segment.should_roll(params):
            log.info("[UnifiedLog partition=%s, dir=%s] Rolling new log segment (log_size = %d/%d}, "
                     "offset_index_size = %d/%d, time_index_size = %d/%d)", self.topic_partition, self.dir.parent,
                     segment.size(), self.config.segment_bytes, segment.offset_index.entries,
                     segment.offset_index.max_entries, segment.time_index.entries, segment.time_index.max_entries)
            return self.roll(info.first_offset)
        return segment

    @maybe_handle_io_error("Error while rolling log segment for {tp} in dir {dir}", keeps_online=True)
    def roll(self, expected_next_offset: int | None = None) -> LogSegment:
        """Start a new active segment, snapshot producer state at its base, and have the
        scheduler flush the segments before it.

        As in Kafka, neither the old segments nor the snapshot are fsynced here: the
        partition lock is held, and an fsync of a full segment would stall every append
        behind it. Until the "flush-log" task has run, the recovery point stays where it
        was, so a crash meanwhile recovers the rolled segments from their bytes."""
        with self.lock:
            local_log = self.local_log
            new_segment = local_log.roll(expected_next_offset)
            self.producer_state_manager.update_map_end_offset(new_segment.base_offset)
            snapshot = self.producer_state_manager.take_snapshot(sync=False)

            def flush_rolled() -> None:
                if local_log.is_memory_mapped_buffer_closed or self.offline:
                    return  # closed meanwhile (deleted, or shut down, which flushes everything itself)
                try:
                    if snapshot is not None:
                        flush_file_if_exists(snapshot)
                    self.flush(new_segment.base_offset)
                except OSError as exc:  # a scheduler task: logged, the log taken offline, nothing raised
                    storage_error(self, "Error while flushing log for {tp} in dir {dir}", exc, take_offline=True)
                except KafkaStorageError:
                    pass  # self.flush's own, logged already

            if local_log.scheduler is not None:
                local_log.scheduler.schedule_once("flush-log", flush_rolled)
            else:  # a log opened without a scheduler (tools, tests) flushes in place
                flush_rolled()
            return new_segment

    @maybe_handle_io_error("Error while flushing log for {tp} in dir {dir}")
    def flush(self, offset: int) -> None:
        """fsync everything below `offset` and move the recovery point to it.

        The fsync runs outside the partition lock (as Kafka's does), so that appends go on
        meanwhile; only moving the recovery point takes it. A caller already holding the
        lock (an append reaching flush.messages) keeps it throughout."""
        with self.lock:
            offset = min(offset, self.log_end_offset)
            if offset <= self.local_log.recovery_point or self.local_log.is_memory_mapped_buffer_closed:
                return  # nothing new, or closed: its closer flushed it or drops it, its descriptors are gone
        start = time.perf_counter()
        self.local_log.flush(offset)
        with self.lock:
            if self.offline:  # another flush of these files failed meanwhile: nothing is known flushed
                return
            self.local_log.mark_flushed(offset)
        log_flush_stats.record((time.perf_counter() - start) * 1000)

    # -- read ----------------------------------------------------------------------------
    def offset_metadata(self, offset: int) -> LogOffsetMetadata:
        """Where `offset` is in the log (segment and position). Raises OffsetOutOfRangeError."""
        leo = self.local_log.log_end_offset_metadata
        if offset == leo.message_offset:
            return leo
        return self.local_log.convert_to_offset_metadata_or_throw(offset)

    @maybe_handle_io_error("Exception while reading from {tp} in dir {dir}", keeps_online=True)
    def fetch_upper_bound(self, isolation: FetchIsolation) -> LogOffsetMetadata:
        """Where a fetch of this isolation stops: the log end, the HW, or the LSO."""
        return self._fetch_upper_bound(isolation)

    def _fetch_upper_bound(self, isolation: FetchIsolation) -> LogOffsetMetadata:
        """fetch_upper_bound for read(), already guarded: one wrapper per partition read, not two."""
        if isolation == FetchIsolation.LOG_END:
            return self.local_log.log_end_offset_metadata
        if isolation == FetchIsolation.HIGH_WATERMARK:
            return self.offset_metadata(self._high_watermark)
        return self.offset_metadata(self.last_stable_offset)

    @maybe_handle_io_error("Exception while reading from {tp} in dir {dir}", keeps_online=True)
    def read(self, start_offset: int, max_length: int, isolation: FetchIsolation,
             min_one_message: bool) -> FetchDataInfo:
        self.local_log.check_if_memory_mapped_buffer_closed()  # its descriptors may be another file's
        if start_offset < self._log_start_offset:
            raise OffsetOutOfRangeError(
                f"Received request for offset {start_offset} for partition {self.topic_partition}, but we only "
                f"have log segments starting from offset: {self._log_start_offset}.")
        bound = self._fetch_upper_bound(isolation)
        if start_offset == bound.message_offset:
            # A consumer caught up: LocalLog.read's answer, without looking up the segment. Not
            # below the log start offset (checked above) and at most the log end, so in range.
            return empty_fetch_data_info(bound, isolation == FetchIsolation.TXN_COMMITTED)
        return self.local_log.read(start_offset, max_length, min_one_message, bound,
                                   isolation == FetchIsolation.TXN_COMMITTED)

    def collect_aborted_transactions(self, start_offset: int, upper_bound_offset: int) -> list[AbortedTxn]:
        return self.local_log.collect_aborted_transactions(self._log_start_offset, start_offset,
                                                           upper_bound_offset)

    @maybe_handle_io_error("Error while fetching offset by timestamp for {tp} in dir {dir}", keeps_online=True)
    def fetch_offset_by_timestamp(self, target_timestamp: int) -> TimestampAndOffset | None:
        """ListOffsets: earliest (-2), latest (-1), max timestamp (-3), earliest local (-4), latest
        tiered (-5), earliest pending upload (-6), or by time (any other value, as Kafka's log:
        a negative one finds the first record; the broker refuses those before asking)."""
        if target_timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            return TimestampAndOffset(-1, self._log_start_offset,
                                      self.leader_epoch_cache.epoch_for_offset(self._log_start_offset))
        if target_timestamp == LATEST_TIMESTAMP:
            return TimestampAndOffset(-1, self.log_end_offset, self.leader_epoch_cache.latest_epoch())
        if target_timestamp in (LATEST_TIERED_TIMESTAMP, EARLIEST_PENDING_UPLOAD_TIMESTAMP):
            # Offsets of tiered storage, which franz does not have: Kafka answers these
            # for a log without remote storage with offset -1 and leader epoch -1.
            return TimestampAndOffset(-1, -1, -1)
        segments = self.local_log.segments.values()
        if target_timestamp == MAX_TIMESTAMP:
            best = max(segments, key=lambda s: s.max_timestamp_so_far(), default=None)
            if best is None or best.max_timestamp_so_far() < 0:
                return None
            wanted = best.max_timestamp_so_far()
            for batch in best.log.batches():
                if batch.max_timestamp == wanted:
                    for record in batch.records():
                        if record.timestamp == wanted:
                            epoch = batch.partition_leader_epoch
                            return TimestampAndOffset(wanted, record.offset, epoch if epoch >= 0 else None)
            return None
        for segment in segments:
            if segment.largest_timestamp() >= target_timestamp:
                found = segment.find_offset_by_timestamp(target_timestamp, self._log_start_offset)
                if found is not None:
                    return found
        return None

    # -- retention -----------------------------------------------------------------------
    def _deletable_segments(self, predicate) -> list[LogSegment]:
        values = self.local_log.segments.values()
        deletable = []
        for index, segment in enumerate(values):
            next_segment = values[index + 1] if index + 1 < len(values) else None
            upper_bound = next_segment.base_offset if next_segment is not None else self.log_end_offset
            is_last_and_empty = next_segment is None and segment.size() == 0
            # Never delete at or past the HW, so the log start can never pass it.
            if self._high_watermark >= upper_bound and predicate(segment, next_segment) and not is_last_and_empty:
                deletable.append(segment)
            else:
                break
        return deletable

    def _delete_segments(self, deletable: list[LogSegment], reason: str) -> int:
        if not deletable:
            return 0
        if len(deletable) == self.number_of_segments():
            self.roll()  # keep an active segment
        self.local_log.remove_and_delete_segments(deletable, async_delete=True, reason=reason)
        self._delete_producer_snapshots(deletable)
        first = self.local_log.segments.first_segment_base_offset()
        self.maybe_increment_log_start_offset(max(self._log_start_offset, first), reason)
        return len(deletable)

    @maybe_handle_io_error("Error while deleting segments for {tp} in dir {dir}")
    def delete_old_segments(self) -> int:
        """Retention: below the log start offset always; by time and size when cleanup.policy has delete."""
        with self.lock:
            deleted = self._delete_segments(self._deletable_segments(
                lambda segment, next_segment: next_segment is not None
                and next_segment.base_offset <= self._log_start_offset), "log start offset breach")
            if self.config.delete:
                deleted += self._delete_retention_ms_breached()
                deleted += self._delete_retention_size_breached()
            return deleted

    def _delete_retention_ms_breached(self) -> int:
        retention_ms = self.config.retention_ms
        if retention_ms < 0:
            return 0
        start_ms = self.time_ms()
        return self._delete_segments(self._deletable_segments(
            lambda segment, _next: start_ms - segment.largest_timestamp() > retention_ms),
            f"retention time {retention_ms}ms breach")

    def _delete_retention_size_breached(self) -> int:
        retention_size = self.config.retention_bytes
        size = self.size()
        if retention_size < 0 or size < retention_size:
            return 0
        excess = [size - retention_size]

        def should_delete(segment: LogSegment, _next) -> bool:
            if excess[0] - segment.size() >= 0:
                excess[0] -= segment.size()
                return True
            return False
        return self._delete_segments(self._deletable_segments(should_delete),
                                     f"retention size in bytes {retention_size} breach")

    def _delete_producer_snapshots(self, segments: list[LogSegment]) -> None:
        """The producer snapshots at deleted segments' base offsets go with them, renamed
        `.deleted` now and removed after file.delete.delay.ms (UnifiedLog.deleteProducerSnapshots)."""
        marked = [snapshot for snapshot in (self.producer_state_manager.remove_and_mark_snapshot_for_deletion(
            segment.base_offset) for segment in segments) if snapshot is not None]
        if marked:
            def delete_marked() -> None:
                for snapshot in marked:
                    snapshot.delete_if_exists()
            schedule_once(self.config.file_delete_delay_ms, delete_marked, self.local_log.scheduler)

    # -- cleaning ------------------------------------------------------------------------
    def log_segments(self, from_offset: int, to_offset: int) -> list[LogSegment]:
        """The segments that may hold offsets in [from_offset, to_offset)."""
        return self.local_log.segments.values(from_offset, to_offset)

    def non_active_log_segments_from(self, offset: int) -> list[LogSegment]:
        return self.local_log.segments.non_active_log_segments_from(offset)

    def last_records_of_active_producers(self) -> dict:
        with self.lock:
            return self.producer_state_manager.last_records_of_active_producers()

    # The cleaner's message: Kafka's cleanLog takes the dir offline on the IOException this raises.
    @maybe_handle_io_error("Failed to clean up log for {tp} in dir {dir} due to IOException")
    def replace_segments(self, new_segments: list[LogSegment], old_segments: list[LogSegment]) -> None:
        """Swap cleaned segments in for the ones they were cleaned from (UnifiedLog.replaceSegments).
        Old segments already gone (retention ran meanwhile) are skipped. A disk error part way
        leaves the files and the segment map apart, so it takes the log offline: the next start
        finishes or undoes the swap from the files (LogLoader), as after a crash."""
        with self.lock:
            self.local_log.check_if_memory_mapped_buffer_closed()
            deleted = replace_segments(self.local_log.segments, new_segments, old_segments, self.dir,
                                       self.topic_partition, self.config, self.local_log.scheduler)
            self._delete_producer_snapshots(deleted)

    # -- truncation ----------------------------------------------------------------------
    @maybe_handle_io_error("Error while truncating log for {tp} in dir {dir}")
    def truncate_to(self, target_offset: int) -> bool:
        if target_offset < 0:
            raise ValueError(f"Cannot truncate partition {self.topic_partition} to a negative offset "
                             f"({target_offset}).")
        with self.lock:
            if target_offset >= self.log_end_offset:
                return False
            log.info("[UnifiedLog partition=%s, dir=%s] Truncating to offset %d", self.topic_partition,
                     self.dir.parent, target_offset)
            if self.local_log.segments.first_segment_base_offset() > target_offset:
                self.truncate_fully_and_start_at(target_offset)
                return True
            self.local_log.truncate_to(target_offset)
            self.leader_epoch_cache.truncate_from_end(target_offset)
            self._log_start_offset = min(target_offset, self._log_start_offset)
            rebuild_producer_state(self.producer_state_manager, self.local_log.segments, self._log_start_offset,
                                   target_offset, self.time_ms)
            if self._high_watermark >= self.log_end_offset:
                self._high_watermark = self.log_end_offset
            self._update_first_unstable_offset()
            self._check_invariants()
            return True

    @maybe_handle_io_error("Error while truncating the entire log for {tp} in dir {dir}")
    def truncate_fully_and_start_at(self, new_offset: int) -> None:
        with self.lock:
            self.local_log.truncate_fully_and_start_at(new_offset)
            self.leader_epoch_cache.clear_and_flush()
            self.producer_state_manager.truncate_fully_and_start_at(new_offset)
            self._log_start_offset = new_offset
            self._high_watermark = new_offset
            self._update_first_unstable_offset()
            self._check_invariants()

    # -- lifecycle -----------------------------------------------------------------------
    def close(self) -> None:
        """Snapshot producer state at the LEO and close the segments (flush first for a clean stop).
        An offline log only lets go of its files: nothing of its state is written."""
        with self.lock:
            if self.offline:
                self.local_log.close_handlers()
                return
            try:
                self.producer_state_manager.update_map_end_offset(self.log_end_offset)
                self.producer_state_manager.take_snapshot()
                self.local_log.close()
            except OSError as exc:
                error = storage_error(self, "Error while closing log for {tp} in dir {dir}", exc, take_offline=True)
                self.local_log.close_handlers()
                raise error from exc

    def close_handlers(self) -> None:
        self.local_log.close_handlers()

    @maybe_handle_io_error("Error while deleting log for {tp} in dir {dir}", teardown=True)
    def delete(self) -> None:
        with self.lock:
            self.local_log.delete_all_segments()
            self.leader_epoch_cache.clear_and_flush()
            for path in self.dir.glob("*.snapshot"):
                path.unlink(missing_ok=True)

    @maybe_handle_io_error("Error while renaming dir for {tp} in dir {dir}", teardown=True)
    def rename_dir(self, name: str) -> None:
        with self.lock:
            self.local_log.rename_dir(name)
            self.producer_state_manager.update_parent_dir(self.local_log.dir)
            # Kafka re-points the epoch cache at the renamed dir (LeaderEpochFileCache.withCheckpoint).
            self.leader_epoch_cache = self.leader_epoch_cache.with_checkpoint(
                LeaderEpochCheckpointFile(self.local_log.dir / LEADER_EPOCH_CHECKPOINT_FILE))

    def __repr__(self) -> str:
        return (f"UnifiedLog(dir={self.dir}, topicId={self.topic_id}, logStartOffset={self._log_start_offset}, "
                f"highWatermark={self._high_watermark}, logEndOffset={self.log_end_offset})")


__all__ = ["EARLIEST_TIMESTAMP", "LATEST_TIMESTAMP", "MAX_TIMESTAMP", "FetchIsolation", "LogAppendInfo",
           "RecordValidationError", "UnifiedLog"]
