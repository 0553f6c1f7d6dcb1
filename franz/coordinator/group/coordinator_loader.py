"""Reading and writing the partitions of `__consumer_offsets` (CoordinatorLoaderImpl, CoordinatorPartitionWriter).

The log is the source of truth for groups and offsets. Writes: the records of
one coordinator operation form one batch (no compression, no producer id, as
Kafka's coordinator runtime writes them) appended through the ReplicaManager
on its append thread; the operation's answer is given only once the append
returned (the HW moves with the append on one node). Reads: `load_partition`
replays a partition from its log start to its HW, batch by batch, into a
callback taking (key bytes, value bytes or None for a tombstone, offset);
control batches (transaction markers) carry no group records and are skipped.
`load_partition_transactional` also says which records came in a
transactional batch (their producer id) and replays the COMMIT/ABORT markers,
for the offsets of transactions (TxnOffsetCommit), whose records are written
by `append` as one transactional batch with the producer's id and epoch and
base sequence 0 (AppendOrigin.COORDINATOR: epochs checked, as Kafka's coordinator
runtime writes them).

Limits: a read asks for LOAD_BUFFER_BYTES at a time (one batch larger than
that is still read whole: min-one-message); records that do not decode are
logged and skipped, so one bad record cannot keep a coordinator down.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

from franz.protocol.errors import Errors
from franz.records import CompressionType, ControlRecordType
from franz.records.builder import NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE, SimpleRecord, build_batch, now_ms
from franz.records.errors import InvalidRecordError
from franz.server.replica_manager import ReplicaManager
from franz.storage.producer_append_info import AppendOrigin, ProducerStateError, VerificationGuard
from franz.storage.unified_log import FetchIsolation, UnifiedLog

logger = logging.getLogger(__name__)

OFFSETS_TOPIC: Final = "__consumer_offsets"
LOAD_BUFFER_BYTES: Final = 5 * 1024 * 1024  # offsets.load.buffer.size
BATCH_RECORDS_MAX: Final = 10_000


class CoordinatorWriteError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def build_records(entries: list[tuple[bytes, bytes | None]], timestamp_ms: int | None = None,
                  producer_id: int = NO_PRODUCER_ID, producer_epoch: int = NO_PRODUCER_EPOCH,
                  compression: CompressionType = CompressionType.NONE) -> bytes:
    """One batch of (key, value) records; a None value is a tombstone. With a producer
    id, a transactional batch of that producer with base sequence 0, as Kafka's
    coordinator runtime writes it (the coordinator's appends check no sequences)."""
    assert 0 < len(entries) <= BATCH_RECORDS_MAX
    stamp = now_ms() if timestamp_ms is None else timestamp_ms
    transactional = producer_id != NO_PRODUCER_ID
    return build_batch([SimpleRecord(value, key, stamp) for key, value in entries], producer_id=producer_id,
                       producer_epoch=producer_epoch, is_transactional=transactional,
                       base_sequence=0 if transactional else NO_SEQUENCE, compression_type=compression)


class CoordinatorPartitionWriter:
    def __init__(self, replica_manager: ReplicaManager, topic: str = OFFSETS_TOPIC,
                 compression: CompressionType = CompressionType.NONE) -> None:
        self.replica_manager = replica_manager
        self.topic = topic
        self.compression = compression  # of every batch written (offsets.topic.compression.codec)

    def maybe_start_transaction_verification(self, partition: int, producer_id: int, producer_epoch: int,
                                             supports_epoch_bump: bool = False) -> VerificationGuard:
        """CoordinatorPartitionWriter.maybeStartTransactionVerification: the guard a transactional
        offset commit must carry to open its transaction in `__consumer_offsets-partition`,
        made before the transaction coordinator is asked (SENTINEL when that transaction is
        open there already, or verification is off). Raises CoordinatorWriteError."""
        rm = self.replica_manager
        log_partition = rm.get_partition(self.topic, partition)
        if log_partition is None:
            raise CoordinatorWriteError(Errors.NOT_COORDINATOR, f"{self.topic}-{partition} is not here")
        if not rm.log_manager.producer_state_config.transaction_verification_enabled and not supports_epoch_bump:
            return VerificationGuard.SENTINEL
        try:
            return log_partition.log.maybe_start_transaction_verification(producer_id, NO_SEQUENCE, producer_epoch,
                                                                          supports_epoch_bump)
        except ProducerStateError as exc:
            raise CoordinatorWriteError(Errors(exc.error_code), str(exc)) from None

    async def append(self, partition: int, entries: list[tuple[bytes, bytes | None]],
                     producer_id: int = NO_PRODUCER_ID, producer_epoch: int = NO_PRODUCER_EPOCH,
                     verification_guard: VerificationGuard = VerificationGuard.SENTINEL) -> int:
        """Append the records as one batch to the topic's partition (a transactional
        one with a producer id, which opens its transaction there only with the guard of a
        verification); the offset after them. Raises CoordinatorWriteError with the Kafka
        error code."""
        if not entries:
            return -1
        key = (self.topic, partition)
        payload = build_records(entries, producer_id=producer_id, producer_epoch=producer_epoch,
                                compression=self.compression)
        rm = self.replica_manager
        results = await rm.run_on_append_thread(rm.append_records, -1, {key: payload}, AppendOrigin.COORDINATOR,
                                                {key: verification_guard})
        result = results[key]
        code = result["error_code"]
        if code != Errors.NONE:
            # Kafka's coordinator maps storage errors for its clients (CoordinatorRuntime).
            if code in (Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_ENOUGH_REPLICAS,
                        Errors.REQUEST_TIMED_OUT, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND):
                mapped = Errors.COORDINATOR_NOT_AVAILABLE
            elif code in (Errors.NOT_LEADER_OR_FOLLOWER, Errors.KAFKA_STORAGE_ERROR):
                mapped = Errors.NOT_COORDINATOR
            elif code in (Errors.MESSAGE_TOO_LARGE, Errors.RECORD_LIST_TOO_LARGE, Errors.INVALID_FETCH_SIZE):
                mapped = Errors.UNKNOWN_SERVER_ERROR
            else:
                mapped = code
            raise CoordinatorWriteError(mapped, result.get("error_message") or Errors(code).name)
        rm.on_appended([key])
        return result["last_offset"] + 1


def load_partition(log: UnifiedLog, replay: Callable[[bytes, bytes | None, int], None]) -> int:
    """Replay every record of the log below its HW; the number of records replayed."""
    return load_partition_transactional(log, lambda key, value, offset, _producer_id: replay(key, value, offset))


def load_partition_transactional(log: UnifiedLog, replay: Callable[[bytes, bytes | None, int, int], None],
                                 replay_marker: Callable[[int, bool, int], None] | None = None) -> int:
    """Replay every record of the log below its HW with the producer id of its batch
    when that is transactional (else NO_PRODUCER_ID), and every COMMIT/ABORT marker
    as (producer id, committed, offset); the number of records replayed."""
    offset = log.log_start_offset
    count = 0
    while offset < log.high_watermark:
        info = log.read(offset, LOAD_BUFFER_BYTES, FetchIsolation.HIGH_WATERMARK, True)
        progressed = False
        for batch in info.records.batches():
            if batch.next_offset <= offset:
                continue
            progressed = True
            next_offset = batch.next_offset
            if batch.is_control_batch:
                if replay_marker is not None:
                    for record in batch.records():
                        try:
                            control = ControlRecordType.parse(None if record.key is None else bytes(record.key))
                        except InvalidRecordError as exc:
                            logger.warning("Skipping a control record of %s at offset %d: %s",
                                           log.topic_partition, record.offset, exc)
                            continue
                        if control in (ControlRecordType.COMMIT, ControlRecordType.ABORT):
                            replay_marker(batch.producer_id, control is ControlRecordType.COMMIT, record.offset)
            else:
                producer_id = batch.producer_id if batch.is_transactional else NO_PRODUCER_ID
                for record in batch.records():
                    if record.offset < offset or record.key is None:
                        continue
                    try:
                        replay(bytes(record.key), None if record.value is None else bytes(record.value),
                               record.offset, producer_id)
                        count += 1
                    except ValueError as exc:
                        logger.warning("Skipping a record of %s at offset %d that does not decode: %s",
                                       log.topic_partition, record.offset, exc)
            offset = next_offset
        if not progressed:
            break  # nothing readable below the HW: stop rather than spin
    return count
