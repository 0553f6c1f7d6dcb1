"""LeaderEpochFileCache: leader epoch -> the first offset written in it.

Backed by `leader-epoch-checkpoint` (format in checkpoint.py). It answers
OffsetsForLeaderEpoch (`end_offset_for`), finds the epoch of an offset, and is
truncated with the log at either end.

Invariants: entries are strictly increasing in both epoch and start offset. An
assignment that would break that (an equal or higher epoch, or an equal or
higher start offset, already present) first removes the conflicting tail, as
Kafka does, with a WARN when that drops real history. Re-assigning the latest
epoch at a later offset is ignored: an epoch's start offset never moves up
except by `truncate_from_start`.

Writes: `assign` and `clear_and_flush` rewrite the checkpoint at once (Kafka:
synchronously, so the file never misses an entry). The truncations also write
at once, where Kafka schedules the write; the file is tiny, and either way a
stale file after a crash is corrected by the loader's own truncations. The
truncations and `clear_and_flush` tolerate a directory renamed or deleted
meanwhile (Kafka's writeIfDirExists); `assign` does not.

Reads take no lock: every change installs a new list (copy on write), so a
reader always sees one consistent state.

Loading: a checkpoint that cannot be read, or holds a negative epoch or
offset, raises CheckpointError naming the file. Kafka 4.x fails the same way
(KafkaStorageException, the log dir goes offline); franz's UnifiedLog catches
it and rebuilds the cache from the batch headers instead.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import threading

from franz.storage.checkpoint import (
    CheckpointError,
    EpochEntry,
    LeaderEpochCheckpointFile,
)

log = logging.getLogger(__name__)

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1

__all__ = ["UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET", "EpochEntry", "LeaderEpochFileCache"]


def _truncated_from_start(entries: list[EpochEntry], start_offset: int) -> tuple[list[EpochEntry], list[EpochEntry]]:
    """(kept, removed): entries starting at or below start_offset go; the last of them moves up to it."""
    cut = bisect.bisect_right([e.start_offset for e in entries], start_offset)
    if cut == 0:
        return entries, []
    removed = entries[:cut]
    return [EpochEntry(removed[-1].epoch, start_offset)] + entries[cut:], removed


def _truncated_from_end(entries: list[EpochEntry], end_offset: int) -> tuple[list[EpochEntry], list[EpochEntry]]:
    """(kept, removed): entries starting at or after end_offset go; a negative end offset changes nothing."""
    if end_offset < 0 or not entries or entries[-1].start_offset < end_offset:
        return entries, []
    cut = bisect.bisect_left([e.start_offset for e in entries], end_offset)
    return entries[:cut], entries[cut:]


class LeaderEpochFileCache:
    # The attributes the C append path reads and writes (SlotAttr in franz/storage/_fast_common.h).
    __slots__ = ("_entries", "__dict__")

    def __init__(self, topic_partition: str, checkpoint: LeaderEpochCheckpointFile | None,
                 entries: list[EpochEntry] | None = None) -> None:
        """Load from `checkpoint`, or, given `entries` (Kafka's withCheckpoint), take them as they are."""
        self.topic_partition = topic_partition
        self.checkpoint = checkpoint
        self._lock = threading.RLock()
        self._entries: list[EpochEntry] = []
        if entries is not None:
            self._entries = list(entries)
        elif checkpoint is not None:
            for entry in checkpoint.read():
                try:
                    self._assign(entry)
                except ValueError as exc:
                    raise CheckpointError(f"Invalid entry in leader epoch checkpoint file {checkpoint.path}: "
                                          f"{exc}") from None
        self._check_invariants()

    def _check_invariants(self) -> None:
        entries = self._entries
        for before, after in itertools.pairwise(entries):
            assert before.epoch < after.epoch and before.start_offset < after.start_offset, entries

    # -- writes --------------------------------------------------------------------------
    def _is_update_needed(self, entry: EpochEntry) -> bool:
        latest = self.latest_entry()
        return latest is None or entry.epoch != latest.epoch or entry.start_offset < latest.start_offset

    def _assign(self, entry: EpochEntry) -> bool:
        if entry.epoch < 0 or entry.start_offset < 0:
            raise ValueError(f"Received invalid partition leader epoch entry {entry}")
        if not self._is_update_needed(entry):  # the common case, decided without the lock
            return False
        with self._lock:
            if not self._is_update_needed(entry):
                return False
            kept = list(self._entries)
            removed = []
            while kept and (kept[-1].epoch >= entry.epoch or kept[-1].start_offset >= entry.start_offset):
                removed.append(kept.pop())
            kept.append(entry)
            self._entries = kept
            if len(removed) > 1 or (removed and removed[0].start_offset != entry.start_offset):
                # A removal at the same start offset means nothing was written in the old epoch.
                log.warning("[LeaderEpochCache %s] New epoch entry %s caused truncation of conflicting entries "
                            "%s. Cache now contains %d entries.", self.topic_partition, entry, removed, len(kept))
            return True

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that `epoch` starts at `start_offset`, and write the checkpoint if that changed anything."""
        with self._lock:
            if self._assign(EpochEntry(epoch, start_offset)):
                self._check_invariants()
                self._write(if_dir_exists=False)

    def assign_if_newer(self, epoch: int, start_offset: int) -> None:
        """`assign` when `epoch` is an epoch (>= 0) above the latest one: how appends, recovery and a
        new leader record epochs. An older epoch changes nothing here, where `assign` would truncate
        the newer entries."""
        if epoch >= 0:
            entries = self._entries  # latest_epoch(), inlined: this runs on every append
            if not entries or epoch > entries[-1].epoch:
                self.assign(epoch, start_offset)

    def assign_all(self, entries: list[EpochEntry]) -> None:
        """`assign` each entry, then write once (Kafka's assign(List))."""
        with self._lock:
            for entry in entries:
                self._assign(entry)
            self._check_invariants()
            if entries:
                self._write(if_dir_exists=False)

    def truncate_from_end(self, end_offset: int) -> None:
        """Remove the entries starting at or after `end_offset` (the log was truncated to it)."""
        with self._lock:
            kept, removed = _truncated_from_end(self._entries, end_offset)
            if removed:
                self._entries = kept
                log.debug("[LeaderEpochCache %s] Cleared entries %s after truncating to end offset %d",
                          self.topic_partition, removed, end_offset)
                self._write(if_dir_exists=True)

    def truncate_from_start(self, start_offset: int) -> None:
        """Drop the entries wholly below `start_offset`; the last of them moves up to start at it.

        Exclusive: truncate_from_start(6) keeps an entry starting at 6.
        """
        with self._lock:
            kept, removed = _truncated_from_start(self._entries, start_offset)
            if removed and kept != self._entries:
                # Kafka rewrites the file even when the first entry only "moves" to where it
                # already was; skipping that fsync makes a clean start of 1,000 logs 3x faster.
                self._entries = kept
                log.debug("[LeaderEpochCache %s] Cleared entries %s and rewrote first entry %s after truncating "
                          "to start offset %d", self.topic_partition, removed, kept[0], start_offset)
                self._write(if_dir_exists=True)

    # Kafka's names: the writes are synchronous in franz (see the module docstring).
    truncate_from_end_async_flush = truncate_from_end
    truncate_from_start_async_flush = truncate_from_start

    def clear_and_flush(self) -> None:
        """Delete every entry and write the empty checkpoint."""
        with self._lock:
            self._entries = []
            self._write(if_dir_exists=True)

    def clear(self) -> None:
        """Delete every entry, leaving the file as it is (Kafka does this when the log is deleted)."""
        with self._lock:
            self._entries = []

    def write_to_file(self) -> None:
        with self._lock:
            self._write(if_dir_exists=True)

    def _write(self, if_dir_exists: bool) -> None:
        if self.checkpoint is None:
            return
        if if_dir_exists:
            if not self.checkpoint.write_if_dir_exists(self._entries):
                log.warning("Failed to write to checkpoint file %s. This is ok if the topic/partition is being "
                            "deleted", self.checkpoint.path)
        else:
            self.checkpoint.write(self._entries)

    def with_checkpoint(self, checkpoint: LeaderEpochCheckpointFile) -> LeaderEpochFileCache:
        """A cache with the same entries backed by another file (after the log dir is renamed)."""
        with self._lock:
            return LeaderEpochFileCache(self.topic_partition, checkpoint, self._entries)

    # -- reads ---------------------------------------------------------------------------
    def non_empty(self) -> bool:
        return bool(self._entries)

    def epoch_entries(self) -> list[EpochEntry]:
        return list(self._entries)

    def epoch_with_offsets(self) -> dict[int, int]:
        return {entry.epoch: entry.start_offset for entry in self._entries}

    def latest_entry(self) -> EpochEntry | None:
        entries = self._entries
        return entries[-1] if entries else None

    def latest_epoch(self) -> int | None:
        """The epoch of the latest entry (the current leader's, for a leader), or None."""
        entries = self._entries
        return entries[-1].epoch if entries else None

    def earliest_entry(self) -> EpochEntry | None:
        entries = self._entries
        return entries[0] if entries else None

    def previous_entry(self, epoch: int) -> EpochEntry | None:
        """The entry of the largest epoch below `epoch`."""
        entries = self._entries
        index = bisect.bisect_left([e.epoch for e in entries], epoch) - 1
        return entries[index] if index >= 0 else None

    def previous_epoch(self, epoch: int | None = None) -> int | None:
        """The largest epoch below `epoch`, or below the latest epoch when none is given."""
        if epoch is None:
            latest = self.latest_entry()
            if latest is None:
                return None
            epoch = latest.epoch
        entry = self.previous_entry(epoch)
        return None if entry is None else entry.epoch

    def next_epoch(self, epoch: int) -> int | None:
        """The smallest epoch above `epoch`."""
        entries = self._entries
        index = bisect.bisect_right([e.epoch for e in entries], epoch)
        return entries[index].epoch if index < len(entries) else None

    def epoch_entry(self, epoch: int) -> EpochEntry | None:
        entries = self._entries
        index = bisect.bisect_left([e.epoch for e in entries], epoch)
        return entries[index] if index < len(entries) and entries[index].epoch == epoch else None

    def epoch_for_offset(self, offset: int) -> int | None:
        """The epoch whose range holds `offset`: the last entry starting at or below it."""
        entries = self._entries
        index = bisect.bisect_right([e.start_offset for e in entries], offset) - 1
        return entries[index].epoch if index >= 0 else None

    def epoch_entries_in_range(self, start_offset: int, end_offset: int) -> list[EpochEntry]:
        """The entries covering [start_offset, end_offset), the first moved up to start_offset."""
        entries = self._entries
        if start_offset >= 0:
            entries, _ = _truncated_from_start(entries, start_offset)
        entries, _ = _truncated_from_end(entries, end_offset)
        return list(entries)

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(epoch, end offset) as OffsetsForLeaderEpoch answers it.

        The epoch is the largest known one <= requested_epoch; its end offset is
        the start offset of the next known epoch, or the log end offset for the
        latest epoch. An undefined or too-new epoch gives (-1, -1); an epoch older
        than everything known gives (requested_epoch, start of the first epoch).
        """
        entries = self._entries
        if requested_epoch == UNDEFINED_EPOCH:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        if entries and entries[-1].epoch == requested_epoch:
            return requested_epoch, log_end_offset
        higher_index = bisect.bisect_right([e.epoch for e in entries], requested_epoch)
        if higher_index >= len(entries):
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
        higher = entries[higher_index]
        if higher_index == 0:
            return requested_epoch, higher.start_offset
        return entries[higher_index - 1].epoch, higher.start_offset

    def __repr__(self) -> str:
        return f"LeaderEpochFileCache({self.topic_partition}, {self._entries})"
