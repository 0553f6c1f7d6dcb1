"""Checkpoint files: small text files Kafka rewrites atomically.

    checkpoint := version "\n" count "\n" (entry "\n"){count}

    recovery-point-offset-checkpoint,        entry := topic " " partition " " offset
    log-start-offset-checkpoint,
    replication-offset-checkpoint             (version 0)
    leader-epoch-checkpoint                   entry := epoch " " startOffset   (version 0)
    partition.metadata   := "version: 0\ntopic_id: " base64url(16-byte uuid, no padding)
    meta.properties      := Java properties: version=1, node.id, directory.id, cluster.id

Writes go to `<file>.tmp`, are fsynced, renamed over the file and the
directory fsynced, so a crash leaves either the old or the new file whole.
A malformed file raises CheckpointError naming the file and the line.
"""

from __future__ import annotations

import base64
import os
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Generic, NamedTuple, TypeVar

T = TypeVar("T")
_WHITESPACE = re.compile(r"\s+")

RECOVERY_POINT_CHECKPOINT_FILE = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT_FILE = "log-start-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT_FILE = "replication-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT_FILE = "leader-epoch-checkpoint"
PARTITION_METADATA_FILE = "partition.metadata"
META_PROPERTIES_FILE = "meta.properties"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"


class CheckpointError(OSError):
    """A checkpoint file that cannot be read; the message names the file and the line."""


def flush_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    flush_dir(path.parent)


class CheckpointFile(Generic[T]):
    """Kafka's CheckpointFile: a versioned list of entries, one per line."""

    def __init__(self, path: Path | str, version: int, to_line: Callable[[T], str],
                 from_line: Callable[[str], T | None]) -> None:
        self.path = Path(path)
        self.version = version
        self._to_line = to_line
        self._from_line = from_line
        self._lock = threading.Lock()
        self.path.touch(exist_ok=True)

    def write(self, entries: Iterable[T]) -> None:
        entries = list(entries)
        lines = [str(self.version), str(len(entries)), *(self._to_line(e) for e in entries)]
        with self._lock:
            write_atomically(self.path, "\n".join(lines) + "\n")

    def _malformed(self, line: str) -> CheckpointError:
        return CheckpointError(f"Malformed line in checkpoint file ({self.path}): '{line}'")

    def _to_int(self, line: str) -> int:
        try:
            return int(line)
        except ValueError:
            raise self._malformed(line) from None

    def read(self) -> list[T]:
        with self._lock:
            try:
                lines = self.path.read_text(encoding="utf-8").splitlines()
            except UnicodeDecodeError as exc:
                raise CheckpointError(f"Checkpoint file {self.path} is not text: {exc}") from None
        if not lines:
            return []
        read_version = self._to_int(lines[0])
        if read_version != self.version:
            raise CheckpointError(f"Unrecognised version:{read_version}, expected version: {self.version} "
                                  f"in checkpoint file at: {self.path}")
        if len(lines) < 2:
            return []
        expected = self._to_int(lines[1])
        entries = []
        for line in lines[2:]:
            entry = self._from_line(line)
            if entry is None:
                raise self._malformed(line)
            entries.append(entry)
        if len(entries) != expected:
            raise CheckpointError(f"Expected [{expected}] entries in checkpoint file [{self.path}], "
                                  f"but found only [{len(entries)}]")
        return entries


def _offset_line(entry: tuple[tuple[str, int], int]) -> str:
    (topic, partition), offset = entry
    return f"{topic} {partition} {offset}"


def _parse_offset_line(line: str) -> tuple[tuple[str, int], int] | None:
    parts = _WHITESPACE.split(line.strip())
    if len(parts) != 3:
        return None
    try:
        return (parts[0], int(parts[1])), int(parts[2])
    except ValueError:
        return None


class OffsetCheckpointFile:
    """topic-partition -> offset, as the three log-dir checkpoint files hold."""

    VERSION = 0

    def __init__(self, path: Path | str) -> None:
        self.checkpoint = CheckpointFile(path, self.VERSION, _offset_line, _parse_offset_line)

    @property
    def path(self) -> Path:
        return self.checkpoint.path

    def write(self, offsets: dict[tuple[str, int], int]) -> None:
        self.checkpoint.write(sorted(offsets.items()))

    def read(self) -> dict[tuple[str, int], int]:
        return dict(self.checkpoint.read())


class EpochEntry(NamedTuple):
    epoch: int
    start_offset: int


def _parse_epoch_line(line: str) -> EpochEntry | None:
    parts = _WHITESPACE.split(line.strip())
    if len(parts) != 2:
        return None
    try:
        return EpochEntry(int(parts[0]), int(parts[1]))
    except ValueError:
        return None


class LeaderEpochCheckpointFile:
    VERSION = 0

    def __init__(self, path: Path | str) -> None:
        self.checkpoint = CheckpointFile(path, self.VERSION, lambda e: f"{e.epoch} {e.start_offset}",
                                         _parse_epoch_line)

    @property
    def path(self) -> Path:
        return self.checkpoint.path

    def write(self, entries: Iterable[EpochEntry]) -> None:
        self.checkpoint.write(entries)

    def read(self) -> list[EpochEntry]:
        return self.checkpoint.read()


def uuid_to_kafka_string(value: uuid.UUID) -> str:
    """Kafka's Uuid.toString(): URL-safe base64 of the 16 bytes, no padding."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")


def uuid_from_kafka_string(text: str) -> uuid.UUID:
    raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if len(raw) != 16:
        raise ValueError(f"Input string with prefix '{text[:10]}' is too long to be decoded as a base64 UUID")
    return uuid.UUID(bytes=raw)


class PartitionMetadataFile:
    """`partition.metadata`: the topic id of the partition, written before its first data."""

    CURRENT_VERSION = 0

    def __init__(self, directory: Path | str) -> None:
        self.path = Path(directory) / PARTITION_METADATA_FILE

    def exists(self) -> bool:
        return self.path.exists()

    def write(self, topic_id: uuid.UUID) -> None:
        write_atomically(self.path, f"version: {self.CURRENT_VERSION}\ntopic_id: {uuid_to_kafka_string(topic_id)}")

    def read(self) -> uuid.UUID:
        lines = self.path.read_text(encoding="utf-8").splitlines()
        try:
            version_parts = _WHITESPACE.split(lines[0].strip())
            if len(version_parts) != 2:
                raise CheckpointError(f"Malformed line in checkpoint file [{self.path}]: {lines[0]}")
            version = int(version_parts[1])
            if version < self.CURRENT_VERSION:
                raise CheckpointError(f"Unrecognized version of partition metadata file ({self.path}): {version}")
            id_parts = _WHITESPACE.split(lines[1].strip())
            if len(id_parts) != 2:
                raise CheckpointError(f"Malformed line in checkpoint file [{self.path}]: {lines[1]}")
            topic_id = uuid_from_kafka_string(id_parts[1])
        except (IndexError, ValueError) as exc:
            raise CheckpointError(f"Malformed partition metadata file {self.path}: {exc}") from None
        if topic_id.int == 0:
            raise CheckpointError(f"Invalid topic ID in partition metadata file ({self.path})")
        return topic_id


class MetaProperties(NamedTuple):
    node_id: int
    cluster_id: str
    directory_id: str
    version: int = 1

    @staticmethod
    def read(log_dir: Path | str) -> MetaProperties | None:
        path = Path(log_dir) / META_PROPERTIES_FILE
        if not path.exists():
            return None
        props = {}
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.strip()
            if not line or line[0] in "#!":
                continue
            key, _, value = line.partition("=")
            props[key.strip()] = value.strip()
        try:
            node_id = int(props.get("node.id", props.get("broker.id", "")))
            return MetaProperties(node_id, props.get("cluster.id", ""), props.get("directory.id", ""),
                                  int(props.get("version", "1")))
        except ValueError as exc:
            raise CheckpointError(f"Malformed {path}: {exc}") from None

    def write(self, log_dir: Path | str) -> None:
        # java.util.Properties.store writes a date comment first; keys as Kafka 4.x writes them.
        stamp = time.strftime("%a %b %d %H:%M:%S %Z %Y")
        text = (f"#\n#{stamp}\ncluster.id={self.cluster_id}\ndirectory.id={self.directory_id}\n"
                f"node.id={self.node_id}\nversion={self.version}\n")
        write_atomically(Path(log_dir) / META_PROPERTIES_FILE, text)
