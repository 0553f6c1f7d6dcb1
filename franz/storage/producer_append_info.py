"""Validation of one producer's appends (Kafka ProducerAppendInfo, AppendOrigin,
CompletedTxn, TxnMetadata, VerificationStateEntry, VerificationGuard) and the
errors an append answers with.

A ProducerAppendInfo works on a copy of the producer's ProducerStateEntry:
each batch is checked (epoch, then for CLIENT appends the sequence), then
recorded; the manager takes the copy only after the log append succeeded, so
a refused batch leaves no trace.

Rules (Kafka 4.x):
- epoch: older than the producer's -> INVALID_PRODUCER_EPOCH (REPLICATION:
  logged and accepted). A newer epoch must start at sequence 0, unless the
  producer has no epoch at all.
- sequence (CLIENT only): the next one after the last retained batch, with
  INT32_MAX followed by 0; anything accepted if no epoch is known (all the
  producer's data was deleted). A pending verification refuses sequences
  above the lowest one it saw.
- transactions: a transactional batch with none open begins one (its first
  offset is remembered); a non-transactional batch inside one ->
  INVALID_TXN_STATE.
- end markers: epoch as above, coordinator epoch older than the last seen ->
  TRANSACTION_COORDINATOR_FENCED (REPLICATION: logged); the marker clears
  the batches when it bumps the epoch, and closes the open transaction.
"""

from __future__ import annotations

import enum
import itertools
import logging
from dataclasses import dataclass
from typing import Any

from franz.records import (
    NO_PRODUCER_EPOCH,
    NO_SEQUENCE,
    ControlRecordType,
    EndTransactionMarker,
)
from franz.storage.producer_state_entry import INT32_MAX, ProducerStateEntry

INT16_MAX = 2**15 - 1  # Short.MaxValue: an epoch a buggy coordinator may have left a producer at

logger = logging.getLogger(__name__)


# ---- errors: Kafka's exceptions, carrying the protocol error code ------------
class ProducerStateError(Exception):
    """Base of the errors an append answers with (org.apache.kafka.common.errors)."""

    error_code: int = -1


class OutOfOrderSequenceError(ProducerStateError):
    """OUT_OF_ORDER_SEQUENCE_NUMBER: a gap or repeat in the producer's sequence."""

    error_code = 45


class DuplicateSequenceError(ProducerStateError):
    """DUPLICATE_SEQUENCE_NUMBER. Kafka 4.x brokers answer a duplicate of one of
    the last 5 batches with NONE and the original offsets instead
    (ProducerStateEntry.find_duplicate_batch); kept for callers that must
    refuse a duplicate they cannot answer."""

    error_code = 46


class InvalidProducerEpochError(ProducerStateError):
    """INVALID_PRODUCER_EPOCH: a batch or marker with an epoch older than the
    producer's (what a zombie producer gets since Kafka 2.7)."""

    error_code = 47


class InvalidTxnStateError(ProducerStateError):
    """INVALID_TXN_STATE: a non-transactional batch inside an open transaction,
    or a transactional batch the coordinator did not verify."""

    error_code = 48


class TransactionCoordinatorFencedError(ProducerStateError):
    """TRANSACTION_COORDINATOR_FENCED: a marker from an older coordinator epoch."""

    error_code = 52


class ProducerFencedError(ProducerStateError):
    """PRODUCER_FENCED: a newer producer with the same transactional id exists
    (raised by the transaction coordinator, not by appends)."""

    error_code = 90


class AppendOrigin(enum.Enum):
    """Where an append comes from; decides how much is validated."""

    REPLICATION = 0  # from the leader, or log recovery: trusted
    COORDINATOR = 1  # group/transaction coordinator: epochs checked, no sequences
    CLIENT = 2  # a producer: everything checked
    RAFT_LEADER = 3  # the raft leader: offsets already assigned


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    """A transaction ended by the marker at last_offset (inclusive)."""

    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool

    def aborted_txn_fields(self, last_stable_offset: int) -> tuple[int, int, int, int]:
        """(producer_id, first_offset, last_offset, last_stable_offset): the
        fields of the .txnindex entry (AbortedTxn) for an aborted transaction."""
        assert self.is_aborted, self
        return (self.producer_id, self.first_offset, self.last_offset, last_stable_offset)


@dataclass(slots=True)
class TxnMetadata:
    """An ongoing (last_offset None) or completed-but-unreplicated transaction.
    first_offset_metadata is the caller's position metadata for first_offset
    (Kafka LogOffsetMetadata), or None when only the offset is known."""

    producer_id: int
    first_offset: int
    last_offset: int | None = None
    first_offset_metadata: Any = None



class VerificationGuard:
    """Identifies one verification of an open transaction (unique per instance)."""

    __slots__ = ("value",)
    _ids = itertools.count(1)
    SENTINEL: VerificationGuard  # value 0: never verifies anything

    def __init__(self, value: int | None = None) -> None:
        self.value = next(self._ids) if value is None else value

    def verify(self, verifying_guard: VerificationGuard) -> bool:
        return verifying_guard.value != 0 and verifying_guard.value == self.value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, VerificationGuard) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)

    def __repr__(self) -> str:
        return f"VerificationGuard(value={self.value})"


VerificationGuard.SENTINEL = VerificationGuard(0)


class VerificationStateEntry:
    """A producer's pending transaction verification: its guard and the lowest
    sequence seen, which blocks higher sequences from being written first."""

    __slots__ = ("epoch", "lowest_sequence", "supports_epoch_bump", "timestamp", "verification_guard")

    def __init__(self, timestamp: int, sequence: int, epoch: int, supports_epoch_bump: bool = False) -> None:
        self.timestamp = timestamp
        self.verification_guard = VerificationGuard()
        self.lowest_sequence = sequence
        self.epoch = epoch
        # The verification came from a transactions-v2 producer (Produce v12+, TxnOffsetCommit
        # v5+), whose epoch goes up at every transaction end.
        self.supports_epoch_bump = supports_epoch_bump

    def maybe_update_lowest_sequence_and_epoch(self, sequence: int, epoch: int) -> None:
        if epoch == self.epoch and sequence < self.lowest_sequence:
            self.lowest_sequence = sequence
        if epoch > self.epoch:  # a bumped epoch resets the sequence
            self.epoch = epoch
            self.lowest_sequence = sequence


class ProducerAppendInfo:
    """Validates the batches one producer appends in one request (or one
    segment during recovery) against its state, on a copy of that state;
    collects the transactions the batches begin."""

    def __init__(self, topic_partition: str, producer_id: int, current_entry: ProducerStateEntry,
                 origin: AppendOrigin,
                 verification_state_entry: VerificationStateEntry | None = None) -> None:
        self.topic_partition = topic_partition
        self.producer_id = producer_id
        self.origin = origin
        self._current_entry = current_entry
        self._verification_state_entry = verification_state_entry
        self._transactions: list[TxnMetadata] = []
        self._updated_entry = current_entry.copy_without_batches()
        self._updated_entry.producer_id = producer_id

    def _check_producer_epoch(self, producer_epoch: int, offset: int, transaction_version: int = 0) -> None:
        """A batch may not come from an epoch older than the producer's; a transactions-v2
        marker (whose coordinator bumped the epoch to end the transaction) not from the same
        one either, unless it repeats a marker already written: the transaction is over and
        the coordinator is retrying or recovering (KAFKA-19999)."""
        current = self._updated_entry.producer_epoch
        if producer_epoch < current or (transaction_version >= 2 and producer_epoch == current):
            if transaction_version >= 2 and producer_epoch == current and (
                    self._updated_entry.current_txn_first_offset is None or producer_epoch == INT16_MAX):
                logger.info("Idempotent transaction marker retry detected for producer %d epoch %d. Transaction "
                            "already completed, allowing duplicate marker write.", self.producer_id, producer_epoch)
                return
            comparison = "<=" if transaction_version >= 2 else "<"
            message = (f"Epoch of producer {self.producer_id} at offset {offset} in "
                       f"{self.topic_partition} is {producer_epoch}, which is {comparison} the "
                       f"last seen epoch {current} (TV{transaction_version})")
            if self.origin is AppendOrigin.REPLICATION:
                logger.warning(message)
            else:
                # Kafka answers INVALID_PRODUCER_EPOCH, not PRODUCER_FENCED, since 2.7:
                # the producer may abort its transaction and carry on.
                raise InvalidProducerEpochError(message)

    def _check_sequence(self, producer_epoch: int, first_seq: int, offset: int) -> None:
        verification = self._verification_state_entry
        if (verification is not None and verification.supports_epoch_bump and first_seq != 0
                and self._current_entry.is_empty()):
            raise OutOfOrderSequenceError(
                f"Invalid sequence number for producer {self.producer_id} at offset {offset} in partition "
                f"{self.topic_partition}: {first_seq} (incoming seq. number). Expected sequence 0 for "
                "transactions v2 idempotent producer with no existing state.")
        if verification is not None and first_seq > verification.lowest_sequence:
            raise OutOfOrderSequenceError(
                f"Out of order sequence number for producer {self.producer_id} at offset {offset} "
                f"in partition {self.topic_partition}: {first_seq} (incoming seq. number), "
                f"{verification.lowest_sequence} (earliest seen sequence)")
        updated = self._updated_entry
        if producer_epoch != updated.producer_epoch:
            # A new epoch must start at sequence 0, unless there is no epoch at all.
            if first_seq != 0 and updated.producer_epoch != NO_PRODUCER_EPOCH:
                raise OutOfOrderSequenceError(
                    f"Invalid sequence number for new epoch of producer {self.producer_id} at "
                    f"offset {offset} in partition {self.topic_partition}: {producer_epoch} "
                    f"(request epoch), {first_seq} (seq. number), {updated.producer_epoch} "
                    "(current producer epoch)")
            return
        if not updated.is_empty():
            current_last_seq = updated.last_seq
        elif producer_epoch == self._current_entry.producer_epoch:
            current_last_seq = self._current_entry.last_seq
        else:
            current_last_seq = NO_SEQUENCE
        # With no epoch known (all of the producer's data deleted by retention or
        # DeleteRecords), any sequence is accepted.
        if self._current_entry.producer_epoch != NO_PRODUCER_EPOCH and not (
                first_seq == current_last_seq + 1 or (first_seq == 0 and current_last_seq == INT32_MAX)):
            raise OutOfOrderSequenceError(
                f"Out of order sequence number for producer {self.producer_id} at offset {offset} "
                f"in partition {self.topic_partition}: {first_seq} (incoming seq. number), "
                f"{current_last_seq} (current end sequence number)")

    def append(self, batch, first_offset_metadata: Any = None, transaction_version: int = 0) -> CompletedTxn | None:
        """Validate and record one batch (reads only its header, and the first
        record of a control batch). first_offset_metadata: the caller's position
        metadata of the batch's base offset, cached if the batch opens a transaction.
        transaction_version: that of the coordinator's marker (WriteTxnMarkers v2); 0 where
        unknown, the more lenient check."""
        if batch.is_control_batch:
            marker = read_end_txn_marker(batch)
            if marker is None:
                return None  # emptied by the cleaner: the transaction is gone from the log
            end_txn_marker, timestamp = marker
            return self.append_end_txn_marker(end_txn_marker, batch.producer_epoch,
                                              batch.base_offset, timestamp, transaction_version)
        self.append_data_batch(batch.producer_epoch, batch.base_sequence, batch.last_sequence,
                               batch.max_timestamp, batch.base_offset, batch.last_offset,
                               batch.is_transactional, first_offset_metadata)
        return None

    def append_data_batch(self, epoch: int, first_seq: int, last_seq: int, last_timestamp: int,
                          first_offset: int, last_offset: int, is_transactional: bool,
                          first_offset_metadata: Any = None) -> None:
        self._check_producer_epoch(epoch, first_offset)
        if self.origin is AppendOrigin.CLIENT:
            self._check_sequence(epoch, first_seq, first_offset)
        assert last_offset >= first_offset, (first_offset, last_offset)
        updated = self._updated_entry
        updated.add_batch(epoch, last_seq, last_offset, last_offset - first_offset, last_timestamp)
        if updated.current_txn_first_offset is not None and not is_transactional:
            raise InvalidTxnStateError(
                f"Expected transactional write from producer {self.producer_id} at offset "
                f"{first_offset} in partition {self.topic_partition}")
        if updated.current_txn_first_offset is None and is_transactional:
            updated.current_txn_first_offset = first_offset
            self._transactions.append(
                TxnMetadata(self.producer_id, first_offset, None, first_offset_metadata))

    def _check_coordinator_epoch(self, marker: EndTransactionMarker, offset: int) -> None:
        current = self._updated_entry.coordinator_epoch
        if current > marker.coordinator_epoch:
            if self.origin is AppendOrigin.REPLICATION:
                logger.info("Detected invalid coordinator epoch for producerId %d at offset %d in "
                            "partition %s: %d is older than previously known coordinator epoch %d",
                            self.producer_id, offset, self.topic_partition,
                            marker.coordinator_epoch, current)
            else:
                raise TransactionCoordinatorFencedError(
                    f"Invalid coordinator epoch for producerId {self.producer_id} at offset "
                    f"{offset} in partition {self.topic_partition}: {marker.coordinator_epoch} "
                    f"(zombie), {current} (current)")

    def append_end_txn_marker(self, marker: EndTransactionMarker, producer_epoch: int,
                              offset: int, timestamp: int, transaction_version: int = 0) -> CompletedTxn | None:
        """A COMMIT/ABORT at `offset`; its epoch may bump the producer's (sequences
        restart at 0). Returns a CompletedTxn only if a transaction was open: an
        empty transaction changes neither the LSO nor the .txnindex."""
        self._check_producer_epoch(producer_epoch, offset, transaction_version)
        self._check_coordinator_epoch(marker, offset)
        first_offset = self._updated_entry.current_txn_first_offset
        completed = None
        if first_offset is not None:
            completed = CompletedTxn(self.producer_id, first_offset, offset,
                                     marker.control_type == ControlRecordType.ABORT)
        self._updated_entry.update_for_marker(producer_epoch, marker.coordinator_epoch, timestamp)
        return completed

    def to_entry(self) -> ProducerStateEntry:
        return self._updated_entry

    @property
    def started_transactions(self) -> tuple[TxnMetadata, ...]:
        return tuple(self._transactions)

    def __repr__(self) -> str:
        e = self._updated_entry
        return (f"ProducerAppendInfo(producerId={self.producer_id}, producerEpoch={e.producer_epoch}, "
                f"firstSequence={e.first_seq}, lastSequence={e.last_seq}, "
                f"currentTxnFirstOffset={e.current_txn_first_offset}, "
                f"coordinatorEpoch={e.coordinator_epoch}, lastTimestamp={e.last_timestamp}, "
                f"startedTransactions={self._transactions})")


def read_end_txn_marker(batch) -> tuple[EndTransactionMarker, int] | None:
    """The end marker of a control batch and its record's timestamp; None if
    the batch has no records left. InvalidRecordError on a malformed record."""
    for record in batch.records():
        return EndTransactionMarker.deserialize(record), record.timestamp
    return None

