"""One producer id's state (Kafka ProducerStateEntry, BatchMetadata).

Owns the producer's epoch, coordinator epoch, last timestamp, the first offset
of its open transaction, and the metadata of its last NUM_BATCHES_TO_RETAIN
data batches: enough to recognise a retried batch (same epoch, same sequence
range) and answer it with the offsets it was first written at.

Invariants: the batches are in sequence order, all of the current epoch
(a new epoch clears them), at most NUM_BATCHES_TO_RETAIN of them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from franz.records import NO_PRODUCER_EPOCH, NO_SEQUENCE, NO_TIMESTAMP

NUM_BATCHES_TO_RETAIN: Final = 5
INT32_MAX: Final = 2**31 - 1


def decrement_sequence(sequence: int, decrement: int) -> int:
    """sequence - decrement, wrapping below 0 to INT32_MAX (DefaultRecordBatch)."""
    if sequence < decrement:
        return INT32_MAX - (decrement - sequence) + 1
    return sequence - decrement


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    """What is kept of one appended data batch of a producer."""

    last_seq: int
    last_offset: int
    offset_delta: int  # last_offset - first offset
    timestamp: int

    @property
    def first_seq(self) -> int:
        return decrement_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


class ProducerStateEntry:
    """The state of one producer id. The batch queue runs from the lowest to the
    highest sequence and holds at most NUM_BATCHES_TO_RETAIN batches."""

    __slots__ = (
        "_batches",
        "coordinator_epoch",
        "current_txn_first_offset",
        "last_timestamp",
        "producer_epoch",
        "producer_id",
    )

    def __init__(self, producer_id: int, producer_epoch: int = NO_PRODUCER_EPOCH,
                 coordinator_epoch: int = -1, last_timestamp: int = NO_TIMESTAMP,
                 current_txn_first_offset: int | None = None,
                 first_batch: BatchMetadata | None = None) -> None:
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.coordinator_epoch = coordinator_epoch
        self.last_timestamp = last_timestamp
        self.current_txn_first_offset = current_txn_first_offset
        self._batches: deque[BatchMetadata] = deque()
        if first_batch is not None:
            self._batches.append(first_batch)

    @classmethod
    def empty(cls, producer_id: int) -> ProducerStateEntry:
        return cls(producer_id)

    @property
    def first_seq(self) -> int:
        return self._batches[0].first_seq if self._batches else NO_SEQUENCE

    @property
    def last_seq(self) -> int:
        return self._batches[-1].last_seq if self._batches else NO_SEQUENCE

    @property
    def first_data_offset(self) -> int:
        return self._batches[0].first_offset if self._batches else -1

    @property
    def last_data_offset(self) -> int:
        return self._batches[-1].last_offset if self._batches else -1

    @property
    def last_offset_delta(self) -> int:
        return self._batches[-1].offset_delta if self._batches else 0

    @property
    def batch_metadata(self) -> tuple[BatchMetadata, ...]:
        return tuple(self._batches)

    def is_empty(self) -> bool:
        return not self._batches

    def copy_without_batches(self) -> ProducerStateEntry:
        """Same epochs, timestamp and open transaction, no batches
        (Kafka withProducerIdAndBatchMetadata(producerId, empty))."""
        return ProducerStateEntry(self.producer_id, self.producer_epoch, self.coordinator_epoch,
                                  self.last_timestamp, self.current_txn_first_offset)

    def add_batch(self, producer_epoch: int, last_seq: int, last_offset: int,
                  offset_delta: int, timestamp: int) -> None:
        self.maybe_update_producer_epoch(producer_epoch)
        self._add_batch_metadata(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def maybe_update_producer_epoch(self, producer_epoch: int) -> bool:
        """A new epoch forgets the batches of the old one (sequences restart)."""
        if self.producer_epoch == producer_epoch:
            return False
        self._batches.clear()
        self.producer_epoch = producer_epoch
        return True

    def _add_batch_metadata(self, batch: BatchMetadata) -> None:
        if len(self._batches) == NUM_BATCHES_TO_RETAIN:
            self._batches.popleft()
        self._batches.append(batch)

    def update(self, next_entry: ProducerStateEntry) -> None:
        """Take on next_entry's state, its batches appended after ours."""
        self._update(next_entry.producer_epoch, next_entry.coordinator_epoch,
                     next_entry.last_timestamp, next_entry._batches,
                     next_entry.current_txn_first_offset)

    def update_for_marker(self, producer_epoch: int, coordinator_epoch: int, last_timestamp: int) -> None:
        """An end marker: no batches, no open transaction (Kafka update(short, int, long))."""
        self._update(producer_epoch, coordinator_epoch, last_timestamp, (), None)

    def _update(self, producer_epoch: int, coordinator_epoch: int, last_timestamp: int,
                batches: Iterable[BatchMetadata], current_txn_first_offset: int | None) -> None:
        self.maybe_update_producer_epoch(producer_epoch)
        for batch in batches:
            self._add_batch_metadata(batch)
        self.coordinator_epoch = coordinator_epoch
        self.current_txn_first_offset = current_txn_first_offset
        self.last_timestamp = last_timestamp

    def find_duplicate_batch(self, batch) -> BatchMetadata | None:
        """The retained batch with `batch`'s epoch and exact sequence range: the
        append is a retry, answer it with this batch's offsets."""
        if batch.producer_epoch != self.producer_epoch:
            return None
        return self.batch_with_sequence_range(batch.base_sequence, batch.last_sequence)

    def batch_with_sequence_range(self, first_seq: int, last_seq: int) -> BatchMetadata | None:
        for metadata in self._batches:
            if metadata.first_seq == first_seq and metadata.last_seq == last_seq:
                return metadata
        return None

    def __repr__(self) -> str:
        return (f"ProducerStateEntry(producerId={self.producer_id}, producerEpoch={self.producer_epoch}, "
                f"currentTxnFirstOffset={self.current_txn_first_offset}, "
                f"coordinatorEpoch={self.coordinator_epoch}, lastTimestamp={self.last_timestamp}, "
                f"batchMetadata={list(self._batches)})")

