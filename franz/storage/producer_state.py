"""Producer state of one partition (Kafka's ProducerStateManager): idempotent
dedup, open transactions, the first unstable offset, producer expiry and the
`.snapshot` files. This module is the entry point; the pieces live in
producer_state_entry.py (ProducerStateEntry, BatchMetadata),
producer_append_info.py (ProducerAppendInfo, the errors, CompletedTxn,
TxnMetadata, AppendOrigin, verification) and producer_snapshot.py (the file
bytes, SnapshotFile), and are re-exported here.

Owns: producer id -> ProducerStateEntry; the ongoing transactions by first
offset (-> first undecided offset) and the completed ones whose marker is not
yet below the high watermark (together -> first unstable offset, from which
UnifiedLog derives the LSO); map_end_offset, the offset (exclusive) up to
which the log is reflected; the snapshot files of the partition directory.

An append (UnifiedLog): for each batch with a producer id, a CLIENT append
first asks `last_entry(pid).find_duplicate_batch(batch)` (a hit: answer with
that batch's offsets, append nothing); then `update_producers(...)` validates
it on a ProducerAppendInfo (raising the Kafka error the producer must see)
and may return a CompletedTxn for an end marker. Only once the records are in
the log: `update(info)` for each info; for each CompletedTxn
`last_stable_offset(txn)`, the .txnindex entry if aborted
(`txn.aborted_txn_fields(lso)`), then `complete_txn(txn)`; at last
`update_map_end_offset(last_offset + 1)`. A refused batch changes nothing.

Startup (LogLoader): `truncate_and_reload(log_start, target, now)` keeps the
snapshots in (log_start, target], loads the latest readable one (a corrupt
one is deleted with a WARN and the next older tried) and leaves
map_end_offset at its offset; the loader replays the segments from there to
target with `load_producers_from_batches`, then `update_map_end_offset(target)`
and `take_snapshot()`.

Invariants: every ongoing transaction is the open transaction of a producer
entry (same first offset); a producer with an open transaction never
expires; take_snapshot writes only at a map_end_offset beyond the last
snapshot it wrote; one writer at a time (the partition lock), while
has_late_transaction and producer_id_count may be read from any thread.
"""

from __future__ import annotations

import logging
import time as _time
from bisect import bisect_left, insort
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from franz.records import NO_PRODUCER_ID
from franz.storage.producer_append_info import (
    AppendOrigin,
    CompletedTxn,
    DuplicateSequenceError,
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
    ProducerAppendInfo,
    ProducerFencedError,
    ProducerStateError,
    TransactionCoordinatorFencedError,
    TxnMetadata,
    VerificationGuard,
    VerificationStateEntry,
    read_end_txn_marker,
)
from franz.storage.producer_snapshot import (
    CorruptSnapshotError,
    SnapshotEntry,
    SnapshotFile,
    delete_stale_tmp_files,
    list_snapshot_files,
    read_snapshot_file,
    snapshot_file_path,
    write_snapshot_file,
)
from franz.storage.producer_state_entry import (
    NUM_BATCHES_TO_RETAIN,
    BatchMetadata,
    ProducerStateEntry,
)

__all__ = [
    "LATE_TRANSACTION_BUFFER_MS", "NUM_BATCHES_TO_RETAIN", "PRODUCER_ID_EXPIRATION_MS_DEFAULT",
    "AppendOrigin", "BatchMetadata", "CompletedTxn", "CorruptSnapshotError",
    "DuplicateSequenceError", "InvalidProducerEpochError", "InvalidTxnStateError", "LastRecord",
    "OutOfOrderSequenceError", "ProducerAppendInfo", "ProducerFencedError", "ProducerStateEntry",
    "ProducerStateError", "ProducerStateManager", "ProducerStateManagerConfig", "SnapshotFile",
    "TransactionCoordinatorFencedError", "TxnMetadata", "VerificationGuard",
    "VerificationStateEntry", "load_producers_from_batches", "read_end_txn_marker",
    "update_producers",
]

logger = logging.getLogger(__name__)

LATE_TRANSACTION_BUFFER_MS: Final = 5 * 60 * 1000
PRODUCER_ID_EXPIRATION_MS_DEFAULT: Final = 86_400_000  # producer.id.expiration.ms (1 day)


@dataclass(slots=True)
class ProducerStateManagerConfig:
    """Changes take effect at once (Kafka: volatile fields, dynamic configs)."""

    producer_id_expiration_ms: int = PRODUCER_ID_EXPIRATION_MS_DEFAULT
    transaction_verification_enabled: bool = True  # transaction.partition.verification.enable


@dataclass(frozen=True, slots=True)
class LastRecord:
    """A producer's last data offset (None if only a marker is left) and epoch."""

    last_data_offset: int | None
    producer_epoch: int


class ProducerStateManager:
    """The producer state of one partition and its snapshot files.

    REQUIRES: one writer at a time (UnifiedLog's lock); the snapshot files in
    log_dir belong to this manager alone."""
    # The attributes the C append path reads and writes (SlotAttr in franz/storage/_fast_common.h).
    __slots__ = ("_last_map_offset", "__dict__")


    def __init__(self, topic_partition: str, log_dir: Path | str, max_transaction_timeout_ms: int,
                 config: ProducerStateManagerConfig | None = None,
                 clock_ms: Callable[[], int] | None = None) -> None:
        self.topic_partition = topic_partition
        self.log_dir = Path(log_dir)
        self.max_transaction_timeout_ms = max_transaction_timeout_ms
        self.config = config if config is not None else ProducerStateManagerConfig()
        self._clock_ms = clock_ms if clock_ms is not None else _wall_clock_ms
        self._log_prefix = f"[ProducerStateManager partition={topic_partition}] "
        self._producers: dict[int, ProducerStateEntry] = {}
        self._verification_states: dict[int, VerificationStateEntry] = {}
        self._ongoing_txns = _OffsetOrderedTxns()  # undecided, by first offset
        self._unreplicated_txns = _OffsetOrderedTxns()  # decided, marker at or above the HW
        # Last timestamp of the producer of the oldest open transaction (-1: none);
        # read without the lock by has_late_transaction.
        self._oldest_txn_last_timestamp = -1
        self._snapshots = self._load_snapshots()
        self._last_map_offset = 0
        self._last_snap_offset = 0

    # ---- state --------------------------------------------------------------
    @property
    def map_end_offset(self) -> int:
        """The offset (exclusive) up to which the log is reflected in this state."""
        return self._last_map_offset

    def update_map_end_offset(self, last_offset: int) -> None:
        self._last_map_offset = last_offset

    @property
    def producer_id_count(self) -> int:
        return len(self._producers)

    @property
    def active_producers(self) -> Mapping[int, ProducerStateEntry]:
        return MappingProxyType(self._producers)

    def is_empty(self) -> bool:
        return not self._producers and not len(self._unreplicated_txns)

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self._producers.get(producer_id)

    def last_records_of_active_producers(self) -> dict[int, LastRecord]:
        """What the log cleaner must keep per producer (UnifiedLog.lastRecordsOfActiveProducers)."""
        return {pid: LastRecord(e.last_data_offset if e.last_data_offset >= 0 else None,
                                e.producer_epoch)
                for pid, e in self._producers.items()}

    def has_late_transaction(self, current_time_ms: int) -> bool:
        """An open transaction idle past the maximum transaction timeout plus a buffer."""
        last = self._oldest_txn_last_timestamp
        return last > 0 and current_time_ms - last > (self.max_transaction_timeout_ms
                                                      + LATE_TRANSACTION_BUFFER_MS)

    # ---- transaction verification --------------------------------------------
    def maybe_create_verification_state_entry(self, producer_id: int, sequence: int, epoch: int,
                                              supports_epoch_bump: bool = False) -> VerificationStateEntry:
        entry = self._verification_states.get(producer_id)
        if entry is None:
            entry = VerificationStateEntry(self._clock_ms(), sequence, epoch, supports_epoch_bump)
            self._verification_states[producer_id] = entry
        entry.maybe_update_lowest_sequence_and_epoch(sequence, epoch)
        return entry

    def verification_state_entry(self, producer_id: int) -> VerificationStateEntry | None:
        return self._verification_states.get(producer_id)

    def clear_verification_state_entry(self, producer_id: int) -> None:
        self._verification_states.pop(producer_id, None)

    # ---- appends --------------------------------------------------------------
    def prepare_update(self, producer_id: int, origin: AppendOrigin) -> ProducerAppendInfo:
        current = self._producers.get(producer_id) or ProducerStateEntry.empty(producer_id)
        return ProducerAppendInfo(self.topic_partition, producer_id, current, origin,
                                  self._verification_states.get(producer_id))

    def update(self, append_info: ProducerAppendInfo) -> None:
        """Take on what append_info validated. REQUIRES: the batches are in the log."""
        producer_id = append_info.producer_id
        if producer_id == NO_PRODUCER_ID:
            raise ValueError(f"Invalid producer id {producer_id} passed to update for "
                             f"partition {self.topic_partition}")
        updated = append_info.to_entry()
        current = self._producers.get(producer_id)
        if current is not None:
            current.update(updated)
        else:
            self._producers[producer_id] = updated
        for txn in append_info.started_transactions:
            self._ongoing_txns.put(txn.first_offset, txn)
        self._update_oldest_txn_timestamp()

    def _update_oldest_txn_timestamp(self) -> None:
        oldest = self._ongoing_txns.first()
        entry = self._producers.get(oldest.producer_id) if oldest is not None else None
        self._oldest_txn_last_timestamp = entry.last_timestamp if entry is not None else -1

    # ---- transactions and the LSO ---------------------------------------------
    def first_unstable_offset(self) -> int | None:
        """The first offset of the earliest transaction that is undecided, or
        decided with its marker not yet below the high watermark; None if none."""
        txn = self._first_unstable_txn()
        return txn.first_offset if txn is not None else None

    def first_unstable_offset_metadata(self) -> Any:
        """The position metadata the append that began that transaction cached;
        None if there is none or only the offset is known (after a reload)."""
        txn = self._first_unstable_txn()
        return txn.first_offset_metadata if txn is not None else None

    def _first_unstable_txn(self) -> TxnMetadata | None:
        unreplicated = self._unreplicated_txns.first()
        undecided = self._ongoing_txns.first()
        if unreplicated is None:
            return undecided
        if undecided is None:
            return unreplicated
        return undecided if undecided.first_offset < unreplicated.first_offset else unreplicated

    def first_undecided_offset(self) -> int | None:
        """The first offset of the earliest open transaction (ignores replication)."""
        txn = self._ongoing_txns.first()
        return txn.first_offset if txn is not None else None

    def on_high_watermark_updated(self, high_watermark: int) -> None:
        """Transactions whose marker is now below the HW stop holding the LSO back."""
        self._remove_unreplicated_transactions(high_watermark)

    def _remove_unreplicated_transactions(self, offset: int) -> None:
        for txn in self._unreplicated_txns.values():
            if txn.last_offset is not None and txn.last_offset < offset:
                self._unreplicated_txns.pop(txn.first_offset)

    def last_stable_offset(self, completed_txn: CompletedTxn) -> int:
        """The LSO once completed_txn is done: the first offset of the earliest
        other producer's open transaction, else the marker's offset + 1. For the
        .txnindex entry; call before complete_txn."""
        for txn in self._ongoing_txns.values():
            if txn.producer_id != completed_txn.producer_id:
                return txn.first_offset
        return completed_txn.last_offset + 1

    def complete_txn(self, completed_txn: CompletedTxn) -> None:
        """Mark a transaction decided; it stays unstable until the HW passes its marker."""
        txn = self._ongoing_txns.pop(completed_txn.first_offset)
        if txn is None:
            raise ValueError(f"Attempted to complete transaction {completed_txn} on partition "
                             f"{self.topic_partition} which was not started")
        txn.last_offset = completed_txn.last_offset
        self._unreplicated_txns.put(completed_txn.first_offset, txn)
        self._update_oldest_txn_timestamp()

    # ---- expiration -----------------------------------------------------------
    def _is_producer_expired(self, current_time_ms: int, entry: ProducerStateEntry) -> bool:
        # A producer with an open transaction is kept: its marker is still to come.
        return (entry.current_txn_first_offset is None
                and current_time_ms - entry.last_timestamp >= self.config.producer_id_expiration_ms)

    def remove_expired_producers(self, current_time_ms: int) -> None:
        """Forget producers idle for producer.id.expiration.ms, and verification
        entries older than that."""
        expired = [pid for pid, e in self._producers.items()
                   if self._is_producer_expired(current_time_ms, e)]
        for pid in expired:
            del self._producers[pid]
        expiration_ms = self.config.producer_id_expiration_ms
        stale = [pid for pid, v in self._verification_states.items()
                 if current_time_ms - v.timestamp >= expiration_ms]
        for pid in stale:
            del self._verification_states[pid]

    # ---- loading and truncation -------------------------------------------------
    def load_producer_entry(self, entry: ProducerStateEntry) -> None:
        self._producers[entry.producer_id] = entry
        if entry.current_txn_first_offset is not None:
            self._ongoing_txns.put(entry.current_txn_first_offset,
                                   TxnMetadata(entry.producer_id, entry.current_txn_first_offset))

    def load_from_snapshot(self, log_start_offset: int, current_time_ms: int) -> None:
        """Load the latest readable snapshot (unexpired producers only) and set
        map_end_offset to its offset; a corrupt one is deleted and the next older
        tried. With none, start empty at log_start_offset. REQUIRES: empty state."""
        while True:
            latest = self._latest_snapshot_file()
            if latest is None:
                self._last_snap_offset = log_start_offset
                self._last_map_offset = log_start_offset
                return
            try:
                logger.info("%sLoading producer state from snapshot file '%s'",
                            self._log_prefix, latest)
                entries = self.read_snapshot(latest.path)
            except CorruptSnapshotError as e:
                logger.warning("%sFailed to load producer snapshot from '%s': %s",
                               self._log_prefix, latest.path, e)
                self._remove_and_delete_snapshot(latest.offset)
                continue
            for entry in entries:
                if not self._is_producer_expired(current_time_ms, entry):
                    self.load_producer_entry(entry)
            self._last_snap_offset = latest.offset
            self._last_map_offset = latest.offset
            self._update_oldest_txn_timestamp()
            return

    def truncate_and_reload(self, log_start_offset: int, log_end_offset: int,
                            current_time_ms: int) -> None:
        """Keep the snapshots in (log_start_offset, log_end_offset]; unless the
        state already ends at log_end_offset, reload from the latest of them, so
        the log needs replaying only from map_end_offset to log_end_offset.
        REQUIRES: log_end_offset <= the high watermark."""
        for snapshot in list(self._snapshots.values()):
            if snapshot.offset > log_end_offset or snapshot.offset <= log_start_offset:
                self._remove_and_delete_snapshot(snapshot.offset)
        if log_end_offset != self._last_map_offset:
            self._producers.clear()
            self._ongoing_txns.clear()
            self._update_oldest_txn_timestamp()
            # At or below the HW every completed transaction is replicated.
            self._unreplicated_txns.clear()
            self.load_from_snapshot(log_start_offset, current_time_ms)
        else:
            self.on_log_start_offset_incremented(log_start_offset)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Forget everything, delete every snapshot, and start at offset."""
        self._producers.clear()
        self._ongoing_txns.clear()
        self._unreplicated_txns.clear()
        for snapshot in list(self._snapshots.values()):
            self._remove_and_delete_snapshot(snapshot.offset)
        self._last_snap_offset = 0
        self._last_map_offset = offset
        self._update_oldest_txn_timestamp()

    def truncate_fully_and_reload_snapshots(self) -> None:
        logger.info("%sReloading the producer state snapshots", self._log_prefix)
        self.truncate_fully_and_start_at(0)
        self._snapshots = self._load_snapshots()

    def on_log_start_offset_incremented(self, log_start_offset: int) -> None:
        """Drop replicated-state below the new log start; move map_end_offset up to it."""
        self._remove_unreplicated_transactions(log_start_offset)
        self._last_map_offset = max(self._last_map_offset, log_start_offset)
        latest = self.latest_snapshot_offset()
        self._last_snap_offset = latest if latest is not None else log_start_offset

    # ---- snapshots --------------------------------------------------------------
    def _load_snapshots(self) -> dict[int, SnapshotFile]:
        delete_stale_tmp_files(self.log_dir)
        return {s.offset: s for s in list_snapshot_files(self.log_dir)}

    def take_snapshot(self, sync: bool = True) -> Path | None:
        """Write a snapshot at map_end_offset unless one was already written
        there or later; returns its path if written."""
        if self._last_map_offset <= self._last_snap_offset:
            return None
        snapshot = SnapshotFile(snapshot_file_path(self.log_dir, self._last_map_offset),
                                self._last_map_offset)
        start_ns = _time.monotonic_ns()
        self.write_snapshot(snapshot.path, self._producers, sync)
        logger.info("%sWrote producer snapshot at offset %d with %d producer ids in %d ms.",
                    self._log_prefix, self._last_map_offset, len(self._producers),
                    (_time.monotonic_ns() - start_ns) // 1_000_000)
        self._snapshots[snapshot.offset] = snapshot
        self._last_snap_offset = self._last_map_offset
        return snapshot.path

    def update_parent_dir(self, parent_dir: Path | str) -> None:
        """The partition directory was renamed (e.g. marked for deletion)."""
        self.log_dir = Path(parent_dir)
        for snapshot in self._snapshots.values():
            snapshot.update_parent_dir(parent_dir)

    def latest_snapshot_offset(self) -> int | None:
        latest = self._latest_snapshot_file()
        return latest.offset if latest is not None else None

    def oldest_snapshot_offset(self) -> int | None:
        return min(self._snapshots) if self._snapshots else None

    def _latest_snapshot_file(self) -> SnapshotFile | None:
        return self._snapshots[max(self._snapshots)] if self._snapshots else None

    def snapshot_file_for_offset(self, offset: int) -> SnapshotFile | None:
        return self._snapshots.get(offset)

    def fetch_snapshot(self, offset: int) -> Path | None:
        snapshot = self._snapshots.get(offset)
        return snapshot.path if snapshot is not None else None

    def snapshot_offsets(self) -> list[int]:
        return sorted(self._snapshots)

    def delete_snapshots_before(self, offset: int) -> None:
        """Delete the snapshots at offsets below `offset` (exclusive)."""
        for snapshot_offset in sorted(self._snapshots):
            if snapshot_offset >= offset:
                break
            self._remove_and_delete_snapshot(snapshot_offset)

    def _remove_and_delete_snapshot(self, snapshot_offset: int) -> None:
        snapshot = self._snapshots.pop(snapshot_offset, None)
        if snapshot is not None:
            snapshot.delete_if_exists()

    def remove_and_mark_snapshot_for_deletion(self, snapshot_offset: int) -> SnapshotFile | None:
        """Forget the snapshot and rename it `.deleted` for a delayed delete; None
        if it is unknown or already gone from disk."""
        snapshot = self._snapshots.pop(snapshot_offset, None)
        if snapshot is None:
            return None
        try:
            snapshot.rename_to_delete()
        except FileNotFoundError:
            # The intermediate manager LogLoader uses during recovery may have
            # deleted it already; the delete this was for is done.
            logger.info("%sFailed to rename producer state snapshot %s with deletion suffix "
                        "because it was already deleted", self._log_prefix, snapshot.path.absolute())
            return None
        return snapshot

    def remove_stray_snapshots(self, segment_base_offsets: Iterable[int]) -> None:
        """Delete the snapshots at offsets no segment starts at, except the
        largest of them if it lies beyond every segment base offset (the one a
        clean shutdown writes at the log end)."""
        base_offsets = set(segment_base_offsets)
        snapshots = self._load_snapshots()
        latest_stray: SnapshotFile | None = None
        for offset in sorted(snapshots):
            if offset in base_offsets:
                continue
            if latest_stray is not None:
                latest_stray.delete_if_exists()
                del snapshots[latest_stray.offset]
            latest_stray = snapshots[offset]
        if latest_stray is not None and base_offsets and latest_stray.offset < max(base_offsets):
            del snapshots[latest_stray.offset]
            latest_stray.delete_if_exists()
        self._snapshots = snapshots

    @staticmethod
    def read_snapshot(path: Path | str) -> list[ProducerStateEntry]:
        """The producer entries of a snapshot file; CorruptSnapshotError if damaged."""
        entries = []
        for row in read_snapshot_file(path):
            batch = (BatchMetadata(row.last_sequence, row.last_offset, row.offset_delta, row.timestamp)
                     if row.last_offset >= 0 else None)
            txn_first_offset = row.current_txn_first_offset if row.current_txn_first_offset >= 0 else None
            entries.append(ProducerStateEntry(row.producer_id, row.epoch, row.coordinator_epoch,
                                              row.timestamp, txn_first_offset, batch))
        return entries

    @staticmethod
    def write_snapshot(path: Path | str, entries: Mapping[int, ProducerStateEntry],
                       sync: bool = True) -> None:
        """Write entries (producer id -> state) as a snapshot; only each
        producer's last batch is kept, as in Kafka."""
        rows = [SnapshotEntry(pid, e.producer_epoch, e.last_seq, e.last_data_offset,
                              e.last_offset_delta, e.last_timestamp, e.coordinator_epoch,
                              -1 if e.current_txn_first_offset is None else e.current_txn_first_offset)
                for pid, e in sorted(entries.items())]
        write_snapshot_file(path, rows, sync)

    list_snapshot_files = staticmethod(list_snapshot_files)


def update_producers(manager: ProducerStateManager, batch, producers: dict[int, ProducerAppendInfo],
                     first_offset_metadata: Any, origin: AppendOrigin,
                     transaction_version: int = 0) -> CompletedTxn | None:
    """Validate one batch with a producer id into `producers` (one
    ProducerAppendInfo per producer id of the request) (UnifiedLog.updateProducers)."""
    producer_id = batch.producer_id
    info = producers.get(producer_id)
    if info is None:
        info = producers[producer_id] = manager.prepare_update(producer_id, origin)
    completed = info.append(batch, first_offset_metadata, transaction_version)
    # A data batch gave the transaction its first offset, a marker ended it: either way the
    # verification is no longer needed, unless it is a transactions-v2 producer's for its next
    # transaction, already begun at the epoch this marker's end bumped to.
    if batch.is_transactional:
        entry = manager.verification_state_entry(producer_id)
        if not (entry is not None and entry.supports_epoch_bump and batch.is_control_batch
                and batch.producer_epoch == entry.epoch):
            manager.clear_verification_state_entry(producer_id)
    return completed


def load_producers_from_batches(manager: ProducerStateManager, batches: Iterable) -> None:
    """Replay batches already in the log into the state, trusting them as
    replication does (UnifiedLog.loadProducersFromRecords, for recovery)."""
    producers: dict[int, ProducerAppendInfo] = {}
    completed_txns = []
    for batch in batches:
        if batch.producer_id > NO_PRODUCER_ID:
            completed = update_producers(manager, batch, producers, None, AppendOrigin.REPLICATION)
            if completed is not None:
                completed_txns.append(completed)
    for info in producers.values():
        manager.update(info)
    for txn in completed_txns:
        manager.complete_txn(txn)


class _OffsetOrderedTxns:
    """Transactions by first offset (Kafka's TreeMap<Long, TxnMetadata>)."""

    __slots__ = ("_keys", "_txns")

    def __init__(self) -> None:
        self._keys: list[int] = []
        self._txns: dict[int, TxnMetadata] = {}

    def put(self, first_offset: int, txn: TxnMetadata) -> None:
        if first_offset not in self._txns:
            insort(self._keys, first_offset)  # appends are in offset order: O(1) in practice
        self._txns[first_offset] = txn

    def pop(self, first_offset: int) -> TxnMetadata | None:
        txn = self._txns.pop(first_offset, None)
        if txn is not None:
            del self._keys[bisect_left(self._keys, first_offset)]
        return txn

    def first(self) -> TxnMetadata | None:
        return self._txns[self._keys[0]] if self._keys else None

    def values(self) -> Iterator[TxnMetadata]:
        return iter([self._txns[k] for k in self._keys])

    def clear(self) -> None:
        self._keys.clear()
        self._txns.clear()

    def __len__(self) -> int:
        return len(self._keys)


def _wall_clock_ms() -> int:
    return _time.time_ns() // 1_000_000

