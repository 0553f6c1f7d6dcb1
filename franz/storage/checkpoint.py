"""Checkpoint files: the small text files Kafka rewrites whole and atomically.

    checkpoint := version "\\n" count "\\n" (entry "\\n"){count}

    recovery-point-offset-checkpoint,       entry := topic " " partition " " offset    (version 0)
    log-start-offset-checkpoint,
    replication-offset-checkpoint
    leader-epoch-checkpoint                 entry := epoch " " startOffset             (version 0)
    partition.metadata  := "version: 0\\ntopic_id: " base64url(16-byte uuid, no padding)   (no final newline)
    meta.properties     := java.util.Properties: "#\\n#<date>\\n" then cluster.id, directory.id,
                           node.id, version=1 (KRaft; version 0 has broker.id instead of node.id)

Writes go to `<file>.tmp`, are fsynced, renamed over the file, and the
directory is fsynced (Kafka's Utils.atomicMoveWithFallback), so a crash leaves
either the old or the new file whole.

Reads follow Kafka's parsers (BufferedReader.readLine line ends, Java's
`split("\\\\s+")`, Integer/Long.parseInt ranges), but every way a file can be
malformed raises CheckpointError naming the file and, for line formats, the
line. Kafka raises IOException (the log dir goes offline) for most of them and
lets NumberFormatException or IllegalArgumentException escape for a bad number
or topic id; franz's callers decide what to do with one error type: LogManager
resets an unreadable offset checkpoint to empty, UnifiedLog rebuilds an
unreadable leader-epoch-checkpoint from the batch headers.
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

from franz.storage.files import parse_java_long

T = TypeVar("T")

RECOVERY_POINT_CHECKPOINT_FILE = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT_FILE = "log-start-offset-checkpoint"
REPLICATION_OFFSET_CHECKPOINT_FILE = "replication-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT_FILE = "leader-epoch-checkpoint"
PARTITION_METADATA_FILE = "partition.metadata"
META_PROPERTIES_FILE = "meta.properties"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
CHECKPOINT_SIZE_BYTES_MAX = 64 * 1024 * 1024  # ~1M partitions of offsets; anything larger is garbage

_JAVA_WHITESPACE = re.compile(r"[ \t\n\x0b\f\r]+")  # Java's \s
_LINE_END = re.compile(r"\r\n|\r|\n")


class CheckpointError(OSError):
    """A checkpoint file that cannot be read; the message names the file (and the line)."""


# -- Java text helpers ----------------------------------------------------------------------

def java_read_lines(text: str) -> list[str]:
    """The lines BufferedReader.readLine returns: split at \\n, \\r or \\r\\n, no empty last line."""
    lines = _LINE_END.split(text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def java_split(pattern: re.Pattern, line: str) -> list[str]:
    """Java's String.split(regex): a leading empty field is kept, trailing empty fields are dropped."""
    parts = pattern.split(line)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return parts


def _read_text(path: Path, encoding: str = "utf-8") -> str:
    """The whole file, refusing one larger than CHECKPOINT_SIZE_BYTES_MAX or not in `encoding`."""
    with open(path, "rb") as handle:
        data = handle.read(CHECKPOINT_SIZE_BYTES_MAX + 1)
    if len(data) > CHECKPOINT_SIZE_BYTES_MAX:
        raise CheckpointError(f"Checkpoint file {path} is larger than {CHECKPOINT_SIZE_BYTES_MAX} bytes")
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise CheckpointError(f"Checkpoint file {path} is not {encoding} text: {exc}") from None


# -- atomic writes --------------------------------------------------------------------------

def flush_file_if_exists(path: Path | str) -> None:
    """fsync a file (or directory) unless it is gone (Kafka's Utils.flushFileIfExists)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def flush_dir(path: Path | str) -> None:
    """fsync a directory, so that a rename or create in it survives a crash."""
    flush_file_if_exists(path)


def write_atomically(path: Path | str, text: str, encoding: str = "utf-8") -> None:
    """Write `text` to `<path>.tmp`, fsync it, rename it over `path`, fsync the directory."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding=encoding, newline="") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    flush_dir(path.parent)


# -- CheckpointFile -------------------------------------------------------------------------

class CheckpointFile(Generic[T]):
    """Kafka's CheckpointFile: a versioned list of entries, one per line.

    `from_line` returns the entry, or None (or raises ValueError) for a line it
    cannot read. The file is created empty if missing, as Kafka does.
    """

    def __init__(self, path: Path | str, version: int, to_line: Callable[[T], str],
                 from_line: Callable[[str], T | None]) -> None:
        self.path = Path(path)
        self.version = version
        self._to_line = to_line
        self._from_line = from_line
        self._lock = threading.Lock()
        try:
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        except FileExistsError:
            pass

    def write(self, entries: Iterable[T]) -> None:
        entries = list(entries)
        lines = [str(self.version), str(len(entries))]
        for entry in entries:
            line = self._to_line(entry)
            assert "\n" not in line and "\r" not in line, line
            lines.append(line)
        with self._lock:
            write_atomically(self.path, "\n".join(lines) + "\n")

    def write_if_dir_exists(self, entries: Iterable[T]) -> bool:
        """`write`, except that a directory renamed or deleted meanwhile (a topic being deleted) is fine."""
        try:
            self.write(entries)
            return True
        except FileNotFoundError:
            return False

    def _malformed(self, line: str, number: int) -> CheckpointError:
        return CheckpointError(f"Malformed line in checkpoint file [{self.path}]: {line} (line {number})")

    def _int_line(self, line: str, number: int) -> int:
        try:
            return parse_java_long(line, bits=32)
        except ValueError:
            raise self._malformed(line, number) from None

    def read(self) -> list[T]:
        """The entries. Raises CheckpointError for a wrong version, a bad line or a wrong count."""
        with self._lock:
            lines = java_read_lines(_read_text(self.path))
        if not lines:
            return []
        read_version = self._int_line(lines[0], 1)
        if read_version != self.version:
            raise CheckpointError(f"Unrecognised version:{read_version}, expected version: {self.version} "
                                  f"in checkpoint file at: {self.path}")
        if len(lines) < 2:
            return []
        expected = self._int_line(lines[1], 2)
        entries = []
        for number, line in enumerate(lines[2:], start=3):
            try:
                entry = self._from_line(line)
            except ValueError:
                entry = None
            if entry is None:
                raise self._malformed(line, number)
            entries.append(entry)
        if len(entries) != expected:
            raise CheckpointError(f"Expected [{expected}] entries in checkpoint file [{self.path}], "
                                  f"but found only [{len(entries)}]")
        return entries


# -- offset checkpoints ---------------------------------------------------------------------

TopicPartition = tuple[str, int]


def _offset_line(entry: tuple[TopicPartition, int]) -> str:
    (topic, partition), offset = entry
    assert topic and _JAVA_WHITESPACE.search(topic) is None, topic  # Kafka topics never hold whitespace
    return f"{topic} {partition} {offset}"


def _parse_offset_line(line: str) -> tuple[TopicPartition, int] | None:
    parts = java_split(_JAVA_WHITESPACE, line)
    if len(parts) != 3:
        return None
    return (parts[0], parse_java_long(parts[1], bits=32)), parse_java_long(parts[2])


class OffsetCheckpointFile:
    """topic-partition -> offset, as the three log-dir checkpoint files hold (sorted when written)."""

    VERSION = 0

    def __init__(self, path: Path | str) -> None:
        self.checkpoint = CheckpointFile(path, self.VERSION, _offset_line, _parse_offset_line)

    @property
    def path(self) -> Path:
        return self.checkpoint.path

    def write(self, offsets: dict[TopicPartition, int]) -> None:
        self.checkpoint.write(sorted(offsets.items()))

    def read(self) -> dict[TopicPartition, int]:
        return dict(self.checkpoint.read())


# -- leader-epoch-checkpoint ----------------------------------------------------------------

class EpochEntry(NamedTuple):
    """Kafka's EpochEntry: leader `epoch` wrote its first record at `start_offset`."""

    epoch: int
    start_offset: int


def _parse_epoch_line(line: str) -> EpochEntry | None:
    parts = java_split(_JAVA_WHITESPACE, line)
    if len(parts) != 2:
        return None
    return EpochEntry(parse_java_long(parts[0], bits=32), parse_java_long(parts[1]))


class LeaderEpochCheckpointFile:
    VERSION = 0

    def __init__(self, path: Path | str) -> None:
        self.checkpoint = CheckpointFile(path, self.VERSION, lambda e: f"{e.epoch} {e.start_offset}",
                                         _parse_epoch_line)

    @staticmethod
    def new_file(directory: Path | str) -> Path:
        return Path(directory) / LEADER_EPOCH_CHECKPOINT_FILE

    @property
    def path(self) -> Path:
        return self.checkpoint.path

    def write(self, entries: Iterable[EpochEntry]) -> None:
        self.checkpoint.write(entries)

    def write_if_dir_exists(self, entries: Iterable[EpochEntry]) -> bool:
        return self.checkpoint.write_if_dir_exists(entries)

    def read(self) -> list[EpochEntry]:
        return self.checkpoint.read()


# -- Kafka's Uuid -----------------------------------------------------------------------------

ZERO_UUID = uuid.UUID(int=0)
ONE_UUID = uuid.UUID(int=1)
METADATA_TOPIC_ID = ONE_UUID
RESERVED_UUIDS = frozenset({ZERO_UUID, ONE_UUID})
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*={0,2}", re.ASCII)


def uuid_to_kafka_string(value: uuid.UUID) -> str:
    """Kafka's Uuid.toString(): URL-safe base64 of the 16 bytes, no padding (22 chars)."""
    return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode("ascii")


def uuid_from_kafka_string(text: str) -> uuid.UUID:
    """Kafka's Uuid.fromString: strict URL-safe base64 of exactly 16 bytes. Raises ValueError."""
    if len(text) > 24:
        raise ValueError(f"Input string with prefix `{text[:24]}` is too long to be decoded as a base64 UUID")
    if _BASE64URL.fullmatch(text) is None or len(text.rstrip("=")) % 4 == 1:
        raise ValueError(f"Input string `{text}` is not URL-safe base64")
    raw = base64.urlsafe_b64decode(text.rstrip("=") + "=" * (-len(text.rstrip("=")) % 4))
    if len(raw) != 16:
        raise ValueError(f"Input string `{text}` decoded as {len(raw)} bytes, which is not equal to the expected "
                         "16 bytes of a base64-encoded UUID")
    return uuid.UUID(bytes=raw)


def random_kafka_uuid() -> uuid.UUID:
    """Kafka's Uuid.randomUuid: never a reserved id, never one whose string starts with '-'
    (it would read as a command-line option)."""
    while True:
        value = uuid.uuid4()
        if value not in RESERVED_UUIDS and not uuid_to_kafka_string(value).startswith("-"):
            return value


# -- partition.metadata ---------------------------------------------------------------------

class InconsistentTopicIdError(Exception):
    """Kafka's InconsistentTopicIdException."""

    @classmethod
    def assigning(cls, topic_partition: str, topic_id: uuid.UUID, held: uuid.UUID) -> InconsistentTopicIdError:
        """A log holding topic ID `held` asked to take `topic_id` (Kafka's getOrCreateLog and
        initializeTopicId text)."""
        return cls(f"Tried to assign topic ID {uuid_to_kafka_string(topic_id)} to log for topic partition "
                   f"{topic_partition}, but log already contained topic ID {uuid_to_kafka_string(held)}")


class PartitionMetadata(NamedTuple):
    version: int
    topic_id: uuid.UUID

    def encode(self) -> str:
        return f"version: {self.version}\ntopic_id: {uuid_to_kafka_string(self.topic_id)}"


_COLON_WHITESPACE = re.compile(r":[ \t\n\x0b\f\r]+")


class PartitionMetadataFile:
    """`partition.metadata`: the topic id of the partition, written before its first data."""

    CURRENT_VERSION = 0

    def __init__(self, directory: Path | str) -> None:
        self.path = Path(directory) / PARTITION_METADATA_FILE
        self._lock = threading.Lock()
        self._dirty_topic_id: uuid.UUID | None = None

    @staticmethod
    def new_file(directory: Path | str) -> Path:
        return Path(directory) / PARTITION_METADATA_FILE

    def exists(self) -> bool:
        return self.path.exists()

    def record(self, topic_id: uuid.UUID) -> None:
        """Remember `topic_id` for the next `maybe_flush`; a different id than one recorded is refused."""
        dirty = self._dirty_topic_id
        if dirty is not None and dirty != topic_id:
            raise InconsistentTopicIdError(f"Tried to record topic ID {uuid_to_kafka_string(topic_id)} to file "
                                           f"but had already recorded {uuid_to_kafka_string(dirty)}")
        self._dirty_topic_id = topic_id

    def maybe_flush(self) -> None:
        """Write the recorded topic id, if any, atomically."""
        if self._dirty_topic_id is None:
            return
        with self._lock:
            topic_id = self._dirty_topic_id
            if topic_id is not None:
                write_atomically(self.path, PartitionMetadata(self.CURRENT_VERSION, topic_id).encode())
                self._dirty_topic_id = None

    def write(self, topic_id: uuid.UUID) -> None:
        self.record(topic_id)
        self.maybe_flush()

    def read_metadata(self) -> PartitionMetadata:
        with self._lock:
            lines = java_read_lines(_read_text(self.path))

        def malformed(number: int) -> CheckpointError:
            line = lines[number - 1] if number <= len(lines) else None
            return CheckpointError(f"Malformed line in checkpoint file [{self.path}]: {line} (line {number})")

        if not lines:
            raise malformed(1)
        version_parts = java_split(_COLON_WHITESPACE, lines[0])
        if len(version_parts) != 2:
            raise malformed(1)
        try:
            version = parse_java_long(version_parts[1], bits=32)
        except ValueError:
            raise malformed(1) from None
        # Any version from 0 up reads, so that a downgrade keeps working.
        if version < self.CURRENT_VERSION:
            raise CheckpointError(f"Unrecognized version of partition metadata file ({self.path}): {version}")
        if len(lines) < 2:
            raise malformed(2)
        id_parts = java_split(_COLON_WHITESPACE, lines[1])
        if len(id_parts) != 2:
            raise malformed(2)
        try:
            topic_id = uuid_from_kafka_string(id_parts[1])
        except ValueError as exc:
            raise CheckpointError(f"Invalid topic ID in partition metadata file ({self.path}): {exc}") from None
        if topic_id == ZERO_UUID:
            raise CheckpointError(f"Invalid topic ID in partition metadata file ({self.path})")
        return PartitionMetadata(version, topic_id)

    def read(self) -> uuid.UUID:
        """The topic id. Raises CheckpointError for a malformed file, FileNotFoundError for none."""
        return self.read_metadata().topic_id

    def delete(self) -> None:
        self.path.unlink()


# -- meta.properties ------------------------------------------------------------------------

_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_PROPERTY_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_SAVE_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f", "=": "\\=", ":": "\\:", "#": "\\#",
                 "!": "\\!", "\\": "\\\\"}


def java_date_string(seconds: float | None = None) -> str:
    """java.util.Date.toString(): `EEE MMM dd HH:mm:ss zzz yyyy` in local time, English names."""
    moment = time.localtime(seconds)
    return (f"{_WEEKDAYS[moment.tm_wday]} {_MONTHS[moment.tm_mon - 1]} {moment.tm_mday:02d} "
            f"{moment.tm_hour:02d}:{moment.tm_min:02d}:{moment.tm_sec:02d} {time.strftime('%Z', moment)} "
            f"{moment.tm_year}")


def _load_convert(text: str) -> str:
    out, i = [], 0
    while i < len(text):
        char = text[i]
        i += 1
        if char != "\\" or i == len(text):
            out.append(char)
            continue
        char = text[i]
        i += 1
        if char == "u":
            digits = text[i:i + 4]
            if len(digits) != 4 or re.fullmatch(r"[0-9a-fA-F]{4}", digits) is None:
                raise ValueError("Malformed \\uxxxx encoding.")
            out.append(chr(int(digits, 16)))
            i += 4
        else:
            out.append(_PROPERTY_ESCAPES.get(char, char))
    # Java strings are UTF-16: an escaped surrogate pair is one character.
    return "".join(out).encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def parse_java_properties(text: str) -> dict[str, str]:
    """java.util.Properties.load: comments (# !), continuations, `=`/`:`/space separators, escapes.

    Raises ValueError for a malformed \\uxxxx escape, as Java does.
    """
    props: dict[str, str] = {}
    natural = java_read_lines(text)
    i = 0
    while i < len(natural):
        line = natural[i].lstrip(" \t\f")
        i += 1
        if not line or line[0] in "#!":
            continue
        # A line ending in an odd number of backslashes continues on the next one.
        while (len(line) - len(line.rstrip("\\"))) % 2 == 1:
            line = line[:-1] + (natural[i].lstrip(" \t\f") if i < len(natural) else "")
            i += 1
        key_end, escaped = len(line), False
        for at, char in enumerate(line):
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char in "=: \t\f":
                key_end = at
                break
        rest = line[key_end:].lstrip(" \t\f")
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(" \t\f")
        props[_load_convert(line[:key_end])] = _load_convert(rest)
    return props


def _save_convert(text: str, escape_space: bool) -> str:
    out = []
    for at, char in enumerate(text):
        if char == " ":
            out.append("\\ " if at == 0 or escape_space else " ")
        elif char in _SAVE_ESCAPES:
            out.append(_SAVE_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) > 0x7E:
            # Escaped as Java escapes UTF-16 units, so Properties.load(InputStream) (ISO-8859-1) reads it back.
            units = char.encode("utf-16-be", "surrogatepass")
            out.extend(f"\\u{units[i]:02X}{units[i + 1]:02X}" for i in range(0, len(units), 2))
        else:
            out.append(char)
    return "".join(out)


class MetaProperties(NamedTuple):
    """A log dir's `meta.properties` (Kafka's MetaProperties).

    Version 1 (KRaft, what franz writes) requires node.id and cluster.id;
    version 0 (ZooKeeper era) has an optional broker.id instead. `directory_id`
    is Kafka's Uuid string. Absent values are None.
    """

    node_id: int | None
    cluster_id: str | None
    directory_id: str | None = None
    version: int = 1

    @classmethod
    def from_properties(cls, props: dict[str, str], source: Path | str = "meta.properties") -> MetaProperties:
        """Kafka's MetaProperties.Builder(Properties).build(). Raises CheckpointError naming `source`."""
        def fail(message: str) -> CheckpointError:
            return CheckpointError(f"{message} (in {source})")

        version_text = props.get("version", "0").strip()
        try:
            version = parse_java_long(version_text, bits=32)
        except ValueError:
            raise fail(f"Invalid meta.properties version string '{props.get('version')}'") from None
        if version not in (0, 1):
            raise fail(f"Unknown meta.properties version number {version}")
        id_key = "broker.id" if version == 0 else "node.id"
        node_id = None
        if id_key in props:
            try:
                node_id = parse_java_long(props[id_key], bits=32)
            except ValueError:
                raise fail(f"Unable to read {id_key} as a base-10 number.") from None
        elif version == 1:
            raise fail("Failed to find node.id")
        cluster_id = props.get("cluster.id")
        if version == 1 and cluster_id is None:
            raise fail("cluster.id was not found.")
        directory_id = props.get("directory.id")
        if directory_id is not None:
            try:
                uuid_from_kafka_string(directory_id)
            except ValueError as exc:
                raise fail(f"Unable to read directory.id as a Uuid: {exc}") from None
        return cls(node_id, cluster_id, directory_id, version)

    def to_properties(self) -> dict[str, str]:
        assert self.version in (0, 1), self.version
        props = {"version": str(self.version)}
        if self.cluster_id is not None:
            props["cluster.id"] = self.cluster_id
        if self.version == 0:
            if self.node_id is not None:
                props["broker.id"] = str(self.node_id)
        else:
            assert self.node_id is not None and self.cluster_id is not None, self
            props["node.id"] = str(self.node_id)
        if self.directory_id is not None:
            props["directory.id"] = self.directory_id
        return props

    @staticmethod
    def read(log_dir: Path | str) -> MetaProperties | None:
        """The log dir's meta.properties, or None if it has none. Raises CheckpointError if malformed."""
        path = Path(log_dir) / META_PROPERTIES_FILE
        try:
            text = _read_text(path, encoding="latin-1")  # Properties.load(InputStream) reads ISO-8859-1
        except FileNotFoundError:
            return None
        try:
            props = parse_java_properties(text)
        except ValueError as exc:
            raise CheckpointError(f"Malformed {path}: {exc}") from None
        return MetaProperties.from_properties(props, path)

    def write(self, log_dir: Path | str) -> None:
        """Write as Properties.store(writer, "") does on JDK 18+ (keys sorted), atomically, fsynced."""
        lines = ["#", "#" + java_date_string()]
        for key, value in sorted(self.to_properties().items()):
            lines.append(f"{_save_convert(key, True)}={_save_convert(value, False)}")
        write_atomically(Path(log_dir) / META_PROPERTIES_FILE, "\n".join(lines) + "\n", encoding="ascii")
