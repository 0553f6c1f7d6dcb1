"""TransactionIndex and AbortedTxn: the aborted transactions of one segment.

    txnindex   := abortedTxn*
    abortedTxn := version:int16(=0) producerId:int64 firstOffset:int64
                  lastOffset:int64 lastStableOffset:int64          (34 bytes, big-endian)

An entry is written for each transaction whose ABORT marker lands in the
segment; a transaction may start in an earlier segment, so rebuilding the
index means replaying producer state from before the segment (the loader does).

Invariants:
- The file is created by the first append (Kafka opens it lazily), so most
  segments have no .txnindex. Opening never writes to the file.
- Entries are appended in strictly increasing `last_offset` order, checked
  against the last entry on disk too (Kafka checks only entries appended since
  the index was opened; franz's check is stricter and equal otherwise).
- A READ_COMMITTED fetch asks `collect_aborted_txns(fetch_offset, upper_bound)`
  for every transaction overlapping [fetch_offset, upper_bound); the search is
  complete once an entry's lastStableOffset reaches the upper bound, otherwise
  the caller goes on to the next segment.
- Reads go in chunks of at most READ_CHUNK_ENTRIES entries, never the whole file.

A torn tail (a crash mid-append leaves fewer than 34 bytes at the end): reads
ignore it, as Kafka's iterator does. Unlike Kafka, `sanity_check` reports it
(CorruptIndexError, so recovery rebuilds the index from the log) and the next
append first cuts it, so that entries stay aligned; Kafka would append after it.

An unknown version raises CorruptIndexError. (Kafka reads the version as the
first byte only and throws KafkaException; franz checks the whole int16.)
"""

from __future__ import annotations

import logging
import os
import struct
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from franz.storage.index import CorruptIndexError

log = logging.getLogger(__name__)

ABORTED_TXN = struct.Struct(">hqqqq")
ABORTED_TXN_SIZE = ABORTED_TXN.size
assert ABORTED_TXN_SIZE == 34
CURRENT_VERSION = 0
READ_CHUNK_ENTRIES = 1024  # 34 KiB per read


class AbortedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int
    version: int = CURRENT_VERSION

    def to_bytes(self) -> bytes:
        return ABORTED_TXN.pack(self.version, self.producer_id, self.first_offset,
                                self.last_offset, self.last_stable_offset)

    @classmethod
    def from_bytes(cls, buffer: bytes | memoryview, position: int = 0) -> AbortedTxn:
        version, producer_id, first, last, lso = ABORTED_TXN.unpack_from(buffer, position)
        return cls(producer_id, first, last, lso, version)


class TxnIndexSearchResult(NamedTuple):
    aborted_transactions: list[AbortedTxn]
    is_complete: bool  # True: no later segment can hold a transaction overlapping the range


class TransactionIndex:
    def __init__(self, start_offset: int, file: Path | str) -> None:
        self.start_offset = start_offset
        self.file = Path(file)
        self._fd = -1
        self._size = 0  # bytes in the file, a torn tail included
        self._lock = threading.Lock()  # orders appends, truncations and resets; reads take none
        self.last_offset: int | None = None
        if self.file.exists():
            self._open()
            valid = self._valid_size()
            if valid:
                last = AbortedTxn.from_bytes(os.pread(self._fd, ABORTED_TXN_SIZE, valid - ABORTED_TXN_SIZE))
                self.last_offset = last.last_offset

    # -- file handle ---------------------------------------------------------------------
    def _open(self) -> int:
        if self._fd < 0:
            self._fd = os.open(self.file, os.O_RDWR | os.O_CREAT, 0o644)
            self._size = os.fstat(self._fd).st_size
        return self._fd

    def _valid_size(self) -> int:
        return self._size - self._size % ABORTED_TXN_SIZE

    # -- reads -----------------------------------------------------------------------------
    def _entries_with_positions(self) -> Iterator[tuple[AbortedTxn, int]]:
        """Each whole entry with its byte position, read in bounded chunks.

        Sees the entries present when it starts; a concurrent truncation only
        ends it early.
        """
        fd, end = self._fd, self._valid_size()
        position = 0
        while fd >= 0 and position < end:
            chunk = os.pread(fd, min(end - position, READ_CHUNK_ENTRIES * ABORTED_TXN_SIZE), position)
            whole = len(chunk) - len(chunk) % ABORTED_TXN_SIZE
            if whole == 0:
                return
            for at in range(0, whole, ABORTED_TXN_SIZE):
                txn = AbortedTxn.from_bytes(chunk, at)
                if txn.version > CURRENT_VERSION:
                    raise CorruptIndexError(
                        f"Unexpected aborted transaction version {txn.version} in transaction index "
                        f"{self.file.absolute()}, current version is {CURRENT_VERSION}")
                yield txn, position + at
            position += whole

    def iter_aborted_txns(self) -> Iterator[AbortedTxn]:
        """Every entry, in order (a dump tool prints these)."""
        for txn, _ in self._entries_with_positions():
            yield txn

    def all_aborted_txns(self) -> list[AbortedTxn]:
        return list(self.iter_aborted_txns())

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        """The aborted transactions overlapping [fetch_offset, upper_bound_offset)."""
        aborted = []
        for txn in self.iter_aborted_txns():
            if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound_offset:
                aborted.append(txn)
            if txn.last_stable_offset >= upper_bound_offset:
                return TxnIndexSearchResult(aborted, True)
        return TxnIndexSearchResult(aborted, False)

    def sanity_check(self) -> None:
        """Raise CorruptIndexError for an entry ending before the segment, a bad version or a torn tail."""
        for txn in self.iter_aborted_txns():
            if txn.last_offset < self.start_offset:
                raise CorruptIndexError(
                    f"Last offset of aborted transaction {txn} in index {self.file.absolute()} is less than start "
                    f"offset {self.start_offset}")
        torn = self._size % ABORTED_TXN_SIZE
        if torn:
            raise CorruptIndexError(f"Transaction index {self.file.absolute()} ends with {torn} bytes of a torn "
                                    f"entry ({self._size} bytes is not a multiple of {ABORTED_TXN_SIZE})")

    # -- writes ----------------------------------------------------------------------------
    def append(self, aborted_txn: AbortedTxn) -> None:
        """Append an entry, creating the file if needed. REQUIRES: last_offset above the last entry's."""
        with self._lock:
            if self.last_offset is not None and self.last_offset >= aborted_txn.last_offset:
                raise ValueError(
                    "The last offset of appended transactions must increase sequentially, but "
                    f"{aborted_txn.last_offset} is not greater than current last offset {self.last_offset} "
                    f"of index {self.file.absolute()}")
            data = aborted_txn.to_bytes()
            fd = self._open()
            if self._size % ABORTED_TXN_SIZE:
                log.warning("Transaction index %s ends with %d bytes of a torn entry; cutting them before "
                            "appending", self.file, self._size % ABORTED_TXN_SIZE)
                self._size = self._valid_size()
                os.ftruncate(fd, self._size)
            written = os.pwrite(fd, data, self._size)
            assert written == len(data), (written, len(data))
            self._size += written  # after the bytes, so readers only ever see whole entries
            self.last_offset = aborted_txn.last_offset

    def truncate_to(self, offset: int) -> None:
        """Drop every entry whose last offset is >= `offset`; nothing changes if there is none."""
        with self._lock:
            new_last_offset = None
            for txn, position in self._entries_with_positions():
                if txn.last_offset >= offset:
                    os.ftruncate(self._fd, position)
                    self._size = position
                    self.last_offset = new_last_offset
                    return
                new_last_offset = txn.last_offset

    def reset(self) -> None:
        """Remove every entry. Unlike the mmap'd indexes, this one is not pre-allocated."""
        with self._lock:
            if self._fd >= 0:
                os.ftruncate(self._fd, 0)
                self._size = 0
            self.last_offset = None

    def flush(self) -> None:
        if self._fd >= 0:
            os.fsync(self._fd)

    def close(self) -> None:
        """Close the file; reads return nothing until the next append reopens it, as in Kafka."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def delete_if_exists(self) -> bool:
        self.close()
        try:
            self.file.unlink()
            return True
        except FileNotFoundError:
            return False

    def rename_to(self, new_file: Path | str) -> None:
        """Rename the file if it exists; an open handle follows it."""
        new_file = Path(new_file)
        try:
            if self.file.exists():
                os.replace(self.file, new_file)
        finally:
            self.file = new_file

    def update_parent_dir(self, parent_dir: Path | str) -> None:
        self.file = Path(parent_dir) / self.file.name

    def size_in_bytes(self) -> int:
        return self._size

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"TransactionIndex({self.file}, start_offset={self.start_offset}, size={self._size})"
