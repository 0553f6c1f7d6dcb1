"""Producer state snapshot files: `<20-digit offset>.snapshot` (Kafka's
ProducerStateManager.readSnapshot/writeSnapshot, SnapshotFile, and the
ProducerSnapshot message of storage/src/main/resources/message/ProducerSnapshot.json).

Owns the bytes of one snapshot file and the file's life (write, read, list,
delete, rename for deletion). It knows nothing of producers' semantics: an
entry is eight numbers; franz.storage.producer_state turns them into state.

Layout (version 1, the only one; big-endian, not flexible, so the array
length is a plain int32):

    snapshot := version:int16 (= 1)                      #  0
                crc:uint32                               #  2  CRC32C of bytes [6, end)
                entry_count:int32                        #  6
                entry{entry_count}                       # 10
    entry    := producer_id:int64                        # +0
                epoch:int16                              # +8
                last_sequence:int32                      # +10
                last_offset:int64                        # +14  -1: no data batch retained
                offset_delta:int32                       # +22  last_offset - first offset of that batch
                timestamp:int64                          # +26  the producer's last timestamp
                coordinator_epoch:int32                  # +34
                current_txn_first_offset:int64           # +38  -1: no open transaction
                                                         # +46 = ENTRY_SIZE_BYTES

The file name's offset is the map end offset (exclusive) the snapshot covers.

Invariants: a file is written whole or not at all (a `.snapshot.tmp` sibling
is fsynced, then renamed over the final name, then the directory is
fsynced), so a crash leaves either the old state or the new file. A reader
accepts exactly the bytes above: a wrong version, a short or overlong body or
a CRC mismatch raise CorruptSnapshotError, which the manager answers by
deleting the file and falling back to an older snapshot.
"""

from __future__ import annotations

import logging
import os
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import crc32c

logger = logging.getLogger(__name__)

PRODUCER_SNAPSHOT_FILE_SUFFIX: Final = ".snapshot"
DELETED_FILE_SUFFIX: Final = ".deleted"
TMP_FILE_SUFFIX: Final = ".tmp"  # `<offset>.snapshot.tmp` while being written

SNAPSHOT_VERSION: Final = 1
VERSION_OFFSET: Final = 0
CRC_OFFSET: Final = VERSION_OFFSET + 2  # 2
PRODUCER_ENTRIES_OFFSET: Final = CRC_OFFSET + 4  # 6: the CRC covers [6, end)
ENTRIES_OFFSET: Final = PRODUCER_ENTRIES_OFFSET + 4  # 10: after the array length

_HEADER: Final = struct.Struct(">hIi")  # version, crc, entry count
_ENTRY: Final = struct.Struct(">qhiqiqiq")
ENTRY_SIZE_BYTES: Final = _ENTRY.size
assert _HEADER.size == ENTRIES_OFFSET == 10
assert ENTRY_SIZE_BYTES == 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8 == 46

# A partition with this many live producer ids is far past anything a broker
# keeps (producer ids expire after producer.id.expiration.ms); a file that
# claims more is refused instead of allocated.
SNAPSHOT_ENTRIES_MAX: Final = 16 * 1024 * 1024


class CorruptSnapshotError(Exception):
    """A snapshot file that cannot be trusted (Kafka CorruptSnapshotException).
    Never sent to a client; `error_code` is UNKNOWN_SERVER_ERROR."""

    error_code: int = -1


@dataclass(frozen=True, slots=True)
class SnapshotEntry:
    """One row of a snapshot, as stored (ProducerSnapshot.ProducerEntry)."""

    producer_id: int
    epoch: int
    last_sequence: int
    last_offset: int
    offset_delta: int
    timestamp: int
    coordinator_epoch: int
    current_txn_first_offset: int


def encode_snapshot(entries: Iterable[SnapshotEntry]) -> bytes:
    """The bytes of a snapshot holding `entries`, in the order given."""
    rows = list(entries)
    assert len(rows) <= SNAPSHOT_ENTRIES_MAX, len(rows)
    out = bytearray(ENTRIES_OFFSET + ENTRY_SIZE_BYTES * len(rows))
    for i, e in enumerate(rows):
        _ENTRY.pack_into(out, ENTRIES_OFFSET + i * ENTRY_SIZE_BYTES, e.producer_id, e.epoch,
                         e.last_sequence, e.last_offset, e.offset_delta, e.timestamp,
                         e.coordinator_epoch, e.current_txn_first_offset)
    struct.pack_into(">i", out, PRODUCER_ENTRIES_OFFSET, len(rows))
    crc = crc32c.crc32c(memoryview(out)[PRODUCER_ENTRIES_OFFSET:])
    _HEADER.pack_into(out, 0, SNAPSHOT_VERSION, crc, len(rows))
    return bytes(out)


def decode_snapshot(data: bytes) -> list[SnapshotEntry]:
    """The entries of a snapshot; CorruptSnapshotError unless `data` is
    exactly a version-1 snapshot with a matching CRC."""
    if len(data) < ENTRIES_OFFSET:
        raise CorruptSnapshotError(f"Snapshot failed schema validation: {len(data)} bytes is "
                                   f"shorter than the {ENTRIES_OFFSET}-byte header")
    version, stored_crc, count = _HEADER.unpack_from(data, 0)
    if version != SNAPSHOT_VERSION:
        raise CorruptSnapshotError(f"Snapshot contained an unknown file version {version}")
    if not 0 <= count <= SNAPSHOT_ENTRIES_MAX:
        raise CorruptSnapshotError(f"Snapshot failed schema validation: entry count {count}")
    expected_size = ENTRIES_OFFSET + count * ENTRY_SIZE_BYTES
    if len(data) != expected_size:
        raise CorruptSnapshotError(f"Snapshot failed schema validation: {count} entries need "
                                   f"{expected_size} bytes, the file has {len(data)}")
    computed_crc = crc32c.crc32c(memoryview(data)[PRODUCER_ENTRIES_OFFSET:])
    if stored_crc != computed_crc:
        raise CorruptSnapshotError(f"Snapshot is corrupt (CRC is no longer valid). Stored crc: "
                                   f"{stored_crc}. Computed crc: {computed_crc}")
    return [SnapshotEntry(*row) for row in _ENTRY.iter_unpack(memoryview(data)[ENTRIES_OFFSET:])]


def read_snapshot_file(path: Path | str) -> list[SnapshotEntry]:
    """The entries of the snapshot at `path` (OSError if it cannot be read)."""
    with open(path, "rb") as f:
        # The header says how much to expect; never read more than that (+1 to
        # see a too-long file), whatever the file's size.
        head = f.read(ENTRIES_OFFSET)
        if len(head) == ENTRIES_OFFSET:
            count = struct.unpack_from(">i", head, PRODUCER_ENTRIES_OFFSET)[0]
            if 0 <= count <= SNAPSHOT_ENTRIES_MAX:
                head += f.read(count * ENTRY_SIZE_BYTES + 1)
    return decode_snapshot(head)


def write_snapshot_file(path: Path | str, entries: Iterable[SnapshotEntry], sync: bool = True) -> None:
    """Write a snapshot atomically: tmp file, (fsync), rename, (fsync dir).
    With sync=False the data reaches the device later (Kafka defers the fsync
    of the snapshot taken at a segment roll to flush_snapshot_file)."""
    path = Path(path)
    data = encode_snapshot(entries)
    tmp = path.with_name(path.name + TMP_FILE_SUFFIX)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    if sync:
        _fsync_dir(path.parent)


def flush_snapshot_file(path: Path | str) -> None:
    """fsync a snapshot written with sync=False, if it still exists
    (Kafka UnifiedLog.flushProducerStateSnapshot -> Utils.flushFileIfExists)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    _fsync_dir(Path(path).parent)


def _fsync_dir(directory: Path) -> None:
    # Makes a rename or unlink durable; not possible on every platform.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def filename_prefix_from_offset(offset: int) -> str:
    """20 digits, zero padded, so `ls` sorts files numerically (LogFileUtils)."""
    assert offset >= 0, offset
    return f"{offset:020d}"


def snapshot_file_path(log_dir: Path | str, offset: int) -> Path:
    """`<log_dir>/<20-digit offset>.snapshot` (LogFileUtils.producerSnapshotFile)."""
    return Path(log_dir) / (filename_prefix_from_offset(offset) + PRODUCER_SNAPSHOT_FILE_SUFFIX)


def offset_from_file_name(name: str) -> int:
    """The number before the first '.' (LogFileUtils.offsetFromFileName)."""
    return int(name[: name.index(".")])


class SnapshotFile:
    """A snapshot file on disk and the offset its name carries (Kafka SnapshotFile)."""

    __slots__ = ("offset", "path")

    def __init__(self, path: Path | str, offset: int | None = None) -> None:
        self.path = Path(path)
        self.offset = offset_from_file_name(self.path.name) if offset is None else offset

    def delete_if_exists(self) -> bool:
        """Delete the file; False if it was already gone."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            logger.info("Failed to delete producer state snapshot %s because it does not exist.",
                        self.path.absolute())
            return False
        logger.info("Deleted producer state snapshot %s", self.path.absolute())
        return True

    def update_parent_dir(self, parent_dir: Path | str) -> None:
        self.path = Path(parent_dir) / self.path.name

    def rename_to_delete(self) -> None:
        """Rename to `<name>.deleted` for a delayed delete; FileNotFoundError if
        it is gone. The new name is kept either way, as Kafka does."""
        renamed = self.path.with_name(self.path.name + DELETED_FILE_SUFFIX)
        try:
            os.replace(self.path, renamed)
        finally:
            self.path = renamed

    def __repr__(self) -> str:
        return f"SnapshotFile(offset={self.offset}, file={self.path})"


def list_snapshot_files(log_dir: Path | str) -> list[SnapshotFile]:
    """The regular files in `log_dir` named `<digits>.snapshot`, by offset
    (ProducerStateManager.listSnapshotFiles); [] if the directory is missing."""
    directory = Path(log_dir)
    if not directory.is_dir():
        return []
    found = []
    for entry in os.scandir(directory):
        name = entry.name
        if not name.endswith(PRODUCER_SNAPSHOT_FILE_SUFFIX) or not entry.is_file():
            continue
        prefix = name[: name.index(".")]
        if prefix.isdigit():  # Kafka would fail on such a name; franz skips it
            found.append(SnapshotFile(entry.path, int(prefix)))
    found.sort(key=lambda s: s.offset)
    return found


def delete_stale_tmp_files(log_dir: Path | str) -> None:
    """Remove `*.snapshot.tmp` left by a crash in the middle of a write."""
    directory = Path(log_dir)
    if not directory.is_dir():
        return
    for entry in os.scandir(directory):
        if entry.name.endswith(PRODUCER_SNAPSHOT_FILE_SUFFIX + TMP_FILE_SUFFIX) and entry.is_file():
            logger.info("Deleting unfinished producer state snapshot %s", entry.path)
            Path(entry.path).unlink(missing_ok=True)
