"""LeaderEpochFileCache: leader epoch -> first offset written in it.

Backed by `leader-epoch-checkpoint` (see checkpoint.py). Invariants: entries
are strictly increasing in both epoch and start offset; an assignment that
conflicts (an equal or higher epoch, or an equal or higher start offset)
removes the conflicting tail first, as Kafka does, logging a WARN when that
drops real history. `end_offset_for` answers OffsetsForLeaderEpoch.

Difference from Kafka: truncations flush the checkpoint synchronously instead
of on a scheduler thread; the file is tiny, and a stale checkpoint after a
crash would be corrected by the loader's truncations anyway.
"""

from __future__ import annotations

import bisect
import logging
import threading

from franz.storage.checkpoint import EpochEntry, LeaderEpochCheckpointFile

log = logging.getLogger(__name__)

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class LeaderEpochFileCache:
    def __init__(self, topic_partition: str, checkpoint: LeaderEpochCheckpointFile | None) -> None:
        self.topic_partition = topic_partition
        self.checkpoint = checkpoint
        self._lock = threading.RLock()
        self._entries: list[EpochEntry] = []
        if checkpoint is not None:
            for entry in checkpoint.read():
                self._assign(entry)

    # -- writes --------------------------------------------------------------------------
    def _is_update_needed(self, entry: EpochEntry) -> bool:
        latest = self.latest_entry()
        return latest is None or entry.epoch != latest.epoch or entry.start_offset < latest.start_offset

    def _assign(self, entry: EpochEntry) -> bool:
        if entry.epoch < 0 or entry.start_offset < 0:
            raise ValueError(f"Received invalid partition leader epoch entry {entry}")
        with self._lock:
            if not self._is_update_needed(entry):
                return False
            removed = []
            while self._entries and (self._entries[-1].epoch >= entry.epoch
                                     or self._entries[-1].start_offset >= entry.start_offset):
                removed.append(self._entries.pop())
            if len(removed) > 1 or (removed and removed[0].start_offset != entry.start_offset):
                log.warning("[LeaderEpochCache %s] New epoch entry %s caused truncation of conflicting entries "
                            "%s. Cache now contains %d entries.", self.topic_partition, entry, removed,
                            len(self._entries))
            self._entries.append(entry)
            return True

    def assign(self, epoch: int, start_offset: int) -> None:
        if self._assign(EpochEntry(epoch, start_offset)):
            self.write_to_file()

    def assign_all(self, entries: list[EpochEntry]) -> None:
        for entry in entries:
            self._assign(entry)
        if entries:
            self.write_to_file()

    def truncate_from_end(self, end_offset: int) -> None:
        """Remove entries starting at or after end_offset (the log was truncated to it)."""
        with self._lock:
            if end_offset >= 0 and self._entries and self._entries[-1].start_offset >= end_offset:
                while self._entries and self._entries[-1].start_offset >= end_offset:
                    self._entries.pop()
                self.write_to_file()

    def truncate_from_start(self, start_offset: int) -> None:
        """Drop entries wholly below start_offset; the last of them moves up to start at it."""
        with self._lock:
            before = list(self._entries)
            removed = []
            while self._entries and self._entries[0].start_offset <= start_offset:
                removed.append(self._entries.pop(0))
            if removed:
                self._entries.insert(0, EpochEntry(removed[-1].epoch, start_offset))
            if self._entries != before:  # Kafka rewrites even an unchanged cache; skip that fsync
                self.write_to_file()

    def clear_and_flush(self) -> None:
        with self._lock:
            self._entries.clear()
            self.write_to_file()

    def write_to_file(self) -> None:
        if self.checkpoint is not None:
            with self._lock:
                entries = list(self._entries)
            if self.checkpoint.path.parent.exists():
                self.checkpoint.write(entries)

    # -- reads ---------------------------------------------------------------------------
    def non_empty(self) -> bool:
        return bool(self._entries)

    def epoch_entries(self) -> list[EpochEntry]:
        with self._lock:
            return list(self._entries)

    def latest_entry(self) -> EpochEntry | None:
        entries = self._entries
        return entries[-1] if entries else None

    def latest_epoch(self) -> int | None:
        entry = self.latest_entry()
        return None if entry is None else entry.epoch

    def earliest_entry(self) -> EpochEntry | None:
        entries = self._entries
        return entries[0] if entries else None

    def previous_epoch(self, epoch: int | None = None) -> int | None:
        with self._lock:
            epochs = [e.epoch for e in self._entries]
            if epoch is None:
                return epochs[-2] if len(epochs) >= 2 else None
            index = bisect.bisect_left(epochs, epoch) - 1
            return epochs[index] if index >= 0 else None

    def epoch_entry(self, epoch: int) -> EpochEntry | None:
        with self._lock:
            for entry in self._entries:
                if entry.epoch == epoch:
                    return entry
        return None

    def epoch_for_offset(self, offset: int) -> int | None:
        with self._lock:
            previous = None
            for epoch, start in self._entries:
                if start == offset:
                    return epoch
                if start > offset:
                    return previous
                previous = epoch
            return previous

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(epoch, end offset) as OffsetsForLeaderEpoch answers it."""
        with self._lock:
            if requested_epoch == UNDEFINED_EPOCH:
                return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
            latest = self.latest_epoch()
            if latest is not None and latest == requested_epoch:
                return requested_epoch, log_end_offset
            epochs = [e.epoch for e in self._entries]
            higher_index = bisect.bisect_right(epochs, requested_epoch)
            if higher_index >= len(epochs):
                return UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
            higher = self._entries[higher_index]
            floor_index = higher_index - 1
            if floor_index < 0:
                return requested_epoch, higher.start_offset
            return self._entries[floor_index].epoch, higher.start_offset
