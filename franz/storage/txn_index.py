"""TransactionIndex and AbortedTxn: the aborted transactions of one segment.

    txnindex := abortedTxn*
    abortedTxn := version:int16(=0) producerId:int64 firstOffset:int64
                  lastOffset:int64 lastStableOffset:int64          (34 bytes, big-endian)

Invariants:
- The file exists only once an abort has been recorded in the segment (Kafka
  creates it lazily), so most segments have no .txnindex.
- Entries are appended in strictly increasing `last_offset` order.
- A READ_COMMITTED fetch asks `collect_aborted_txns(fetch_offset, upper_bound)`
  for every transaction that overlaps [fetch_offset, upper_bound); the search
  is complete once an entry's lastStableOffset reaches the upper bound.

Difference from Kafka: a torn trailing partial entry (a crash mid-append) is
cut when the file is opened, with a WARN, so that later appends stay aligned;
Kafka leaves it and relies on segment recovery to rebuild the index.
"""

from __future__ import annotations

import logging
import os
import struct
from pathlib import Path
from typing import NamedTuple

from franz.storage.index import CorruptIndexError

log = logging.getLogger(__name__)

ABORTED_TXN = struct.Struct(">hqqqq")
ABORTED_TXN_SIZE = ABORTED_TXN.size  # 34
CURRENT_VERSION = 0
assert ABORTED_TXN_SIZE == 34


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
    is_complete: bool


class TransactionIndex:
    def __init__(self, start_offset: int, file: Path | str) -> None:
        self.start_offset = start_offset
        self.file = Path(file)
        self._fd = -1
        self._size = 0
        self.last_offset: int | None = None
        if self.file.exists():
            self._open()
            if self._size:
                # Read the last entry raw: a bad version is reported by reads and sanity_check.
                self.last_offset = AbortedTxn.from_bytes(
                    os.pread(self._fd, ABORTED_TXN_SIZE, self._size - ABORTED_TXN_SIZE)).last_offset

    # -- file handle ---------------------------------------------------------------------
    def _open(self) -> int:
        if self._fd < 0:
            self._fd = os.open(self.file, os.O_RDWR | os.O_CREAT, 0o644)
            self._size = os.fstat(self._fd).st_size
            torn = self._size % ABORTED_TXN_SIZE
            if torn:
                log.warning("Transaction index %s ends with %d bytes of a torn entry; cutting them",
                            self.file, torn)
                self._size -= torn
                os.ftruncate(self._fd, self._size)
        return self._fd

    def _read_all(self) -> bytes:
        if self._fd < 0:
            return b""
        return os.pread(self._fd, self._size, 0)

    # -- operations ----------------------------------------------------------------------
    def append(self, aborted_txn: AbortedTxn) -> None:
        if self.last_offset is not None and self.last_offset >= aborted_txn.last_offset:
            raise ValueError(
                "The last offset of appended transactions must increase sequentially, but "
                f"{aborted_txn.last_offset} is not greater than current last offset {self.last_offset} "
                f"of index {self.file}")
        fd = self._open()
        data = aborted_txn.to_bytes()
        written = os.pwrite(fd, data, self._size)
        assert written == len(data)
        self._size += written
        self.last_offset = aborted_txn.last_offset

    def _entries_with_positions(self) -> list[tuple[AbortedTxn, int]]:
        data = self._read_all()
        result = []
        for position in range(0, len(data) - ABORTED_TXN_SIZE + 1, ABORTED_TXN_SIZE):
            txn = AbortedTxn.from_bytes(data, position)
            if txn.version > CURRENT_VERSION:
                raise CorruptIndexError(
                    f"Unexpected aborted transaction version {txn.version} in transaction index {self.file}, "
                    f"current version is {CURRENT_VERSION}")
            result.append((txn, position))
        return result

    def all_aborted_txns(self) -> list[AbortedTxn]:
        return [txn for txn, _ in self._entries_with_positions()]

    def collect_aborted_txns(self, fetch_offset: int, upper_bound_offset: int) -> TxnIndexSearchResult:
        aborted = []
        for txn, _ in self._entries_with_positions():
            if txn.last_offset >= fetch_offset and txn.first_offset < upper_bound_offset:
                aborted.append(txn)
            if txn.last_stable_offset >= upper_bound_offset:
                return TxnIndexSearchResult(aborted, True)
        return TxnIndexSearchResult(aborted, False)

    def truncate_to(self, offset: int) -> None:
        """Drop every entry whose last offset is >= `offset`."""
        new_last_offset = None
        for txn, position in self._entries_with_positions():
            if txn.last_offset >= offset:
                os.ftruncate(self._fd, position)
                self._size = position
                self.last_offset = new_last_offset
                return
            new_last_offset = txn.last_offset

    def reset(self) -> None:
        if self._fd >= 0:
            os.ftruncate(self._fd, 0)
            self._size = 0
        self.last_offset = None

    def sanity_check(self) -> None:
        for txn, _ in self._entries_with_positions():
            if txn.last_offset < self.start_offset:
                raise CorruptIndexError(
                    f"Last offset of aborted transaction {txn} in index {self.file} is less than start offset "
                    f"{self.start_offset}")

    def flush(self) -> None:
        if self._fd >= 0:
            os.fsync(self._fd)

    def close(self) -> None:
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
