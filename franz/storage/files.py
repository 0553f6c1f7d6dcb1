"""LogFileUtils: the names of a log's files and directories, as Kafka 4.x writes them.

Every segment file is named for its base offset, zero-padded to 20 digits
(the width of Long.MAX_VALUE), so that lexical order is offset order:

    00000000000000000000.log         the record batches
    00000000000000000000.index       offset index (OffsetIndex)
    00000000000000000000.timeindex   time index (TimeIndex)
    00000000000000000000.txnindex    aborted transactions (TransactionIndex)
    00000000000000000123.snapshot    producer state as of offset 123

Transient suffixes are appended to a full name: `.deleted` (scheduled for
deletion), `.cleaned` (compaction output being written), `.swap` (compaction
output ready to replace the originals).

A partition's directory is `<topic>-<partition>`. Kafka renames it to
`<topic>-<partition>.<uuid>-delete` when the log is deleted (and uses
`-future` / `-stray` the same way); the delete and stray names are capped at
255 characters by cutting the topic, as LocalLog.logDirNameWithSuffixCappedLength
does, so parsing such a name gives the cut topic, exactly as in Kafka.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

LOG_FILE_SUFFIX = ".log"
INDEX_FILE_SUFFIX = ".index"
TIME_INDEX_FILE_SUFFIX = ".timeindex"
TXN_INDEX_FILE_SUFFIX = ".txnindex"
PRODUCER_SNAPSHOT_FILE_SUFFIX = ".snapshot"
DELETED_FILE_SUFFIX = ".deleted"
CLEANED_FILE_SUFFIX = ".cleaned"
SWAP_FILE_SUFFIX = ".swap"
DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"
STRAY_DIR_SUFFIX = "-stray"

OFFSET_NAME_DIGITS = 20
DIR_NAME_LENGTH_MAX = 255  # a file name on every file system Kafka supports
INDEX_SUFFIXES = (INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX)
_INT64_MAX = 2**63 - 1

# Kafka's LocalLog patterns: `^(\S+)-(\S+)\.(\S+)<suffix>` (Java's \S is ASCII-only).
_SUFFIXED_DIR_RES = {
    suffix: re.compile(r"^(\S+)-(\S+)\.(\S+)" + re.escape(suffix) + "$", re.ASCII)
    for suffix in (DELETE_DIR_SUFFIX, FUTURE_DIR_SUFFIX, STRAY_DIR_SUFFIX)
}
# Java's Long.parseLong / Integer.parseInt: an optional sign, then digits only.
_JAVA_INTEGER_RE = re.compile(r"[+-]?[0-9]+", re.ASCII)


def parse_java_long(text: str, bits: int = 64) -> int:
    """`text` as Java's Long.parseLong (bits=64) or Integer.parseInt (bits=32) reads it.

    Stricter than int(): no whitespace, no underscores, no non-ASCII digits, and
    the value must fit the Java type. Raises ValueError otherwise.
    """
    if _JAVA_INTEGER_RE.fullmatch(text) is None:
        raise ValueError(f'For input string: "{text}"')
    value = int(text)
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise ValueError(f'For input string: "{text}" (out of range for a {bits}-bit integer)')
    return value


def filename_prefix_from_offset(offset: int) -> str:
    """`offset` zero-padded to 20 digits. REQUIRES: 0 <= offset <= Long.MAX_VALUE."""
    assert 0 <= offset <= _INT64_MAX, offset
    return f"{offset:020d}"


def offset_from_file_name(file_name: str) -> int:
    """The offset a segment or snapshot file is named for: the digits before the first dot.

    Raises ValueError for a name that is not `<number>.<suffix>`.
    """
    dot = file_name.find(".")
    if dot < 0:
        raise ValueError(f"File name {file_name!r} is not of the form <offset>.<suffix>")
    return parse_java_long(file_name[:dot])


def offset_from_file(path: Path | str) -> int:
    return offset_from_file_name(Path(path).name)


def _file(directory: Path | str, offset: int, kind_suffix: str, suffix: str) -> Path:
    return Path(directory) / (filename_prefix_from_offset(offset) + kind_suffix + suffix)


def log_file(directory: Path | str, offset: int, suffix: str = "") -> Path:
    return _file(directory, offset, LOG_FILE_SUFFIX, suffix)


def offset_index_file(directory: Path | str, offset: int, suffix: str = "") -> Path:
    return _file(directory, offset, INDEX_FILE_SUFFIX, suffix)


def time_index_file(directory: Path | str, offset: int, suffix: str = "") -> Path:
    return _file(directory, offset, TIME_INDEX_FILE_SUFFIX, suffix)


def transaction_index_file(directory: Path | str, offset: int, suffix: str = "") -> Path:
    return _file(directory, offset, TXN_INDEX_FILE_SUFFIX, suffix)


def producer_snapshot_file(directory: Path | str, offset: int, suffix: str = "") -> Path:
    """`<offset>.snapshot`: producer state up to `offset` (exclusive)."""
    return _file(directory, offset, PRODUCER_SNAPSHOT_FILE_SUFFIX, suffix)


def is_log_file(path: Path | str) -> bool:
    return str(path).endswith(LOG_FILE_SUFFIX)


def is_index_file(path: Path | str) -> bool:
    """Any of the three segment indexes (.index, .timeindex, .txnindex), without a transient suffix."""
    return Path(path).name.endswith(INDEX_SUFFIXES)


def is_offset_index_file(path: Path | str) -> bool:
    return Path(path).name.endswith(INDEX_FILE_SUFFIX)


def is_time_index_file(path: Path | str) -> bool:
    return Path(path).name.endswith(TIME_INDEX_FILE_SUFFIX)


def is_txn_index_file(path: Path | str) -> bool:
    return Path(path).name.endswith(TXN_INDEX_FILE_SUFFIX)


def is_snapshot_file(path: Path | str) -> bool:
    return Path(path).name.endswith(PRODUCER_SNAPSHOT_FILE_SUFFIX)


def has_suffix(path: Path | str, suffix: str) -> bool:
    return Path(path).name.endswith(suffix)


def strip_suffix(path: Path | str, suffix: str) -> Path:
    """`path` without the trailing transient `suffix` (e.g. `.swap`). REQUIRES: the name ends with it."""
    path = Path(path)
    assert suffix and path.name.endswith(suffix), (path, suffix)
    return path.with_name(path.name[: -len(suffix)])


# -- partition directories ------------------------------------------------------------------

def partition_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def _unique_id() -> str:
    return uuid.uuid4().hex  # Kafka: java.util.UUID.randomUUID with the dashes removed


def _dir_name_with_suffix_capped_length(topic: str, partition: int, suffix: str) -> str:
    full_suffix = f"-{partition}.{_unique_id()}{suffix}"
    return topic[: min(len(topic), DIR_NAME_LENGTH_MAX - len(full_suffix))] + full_suffix


def delete_dir_name(topic: str, partition: int) -> str:
    """The name a partition directory is renamed to when its log is deleted (<= 255 chars)."""
    return _dir_name_with_suffix_capped_length(topic, partition, DELETE_DIR_SUFFIX)


def stray_dir_name(topic: str, partition: int) -> str:
    """The name a stray partition directory (not in the metadata) is renamed to (<= 255 chars)."""
    return _dir_name_with_suffix_capped_length(topic, partition, STRAY_DIR_SUFFIX)


def future_dir_name(topic: str, partition: int) -> str:
    """The directory a replica being moved between log dirs is written to."""
    return f"{partition_dir_name(topic, partition)}.{_unique_id()}{FUTURE_DIR_SUFFIX}"


def is_delete_dir(dir_name: str) -> bool:
    return _SUFFIXED_DIR_RES[DELETE_DIR_SUFFIX].match(dir_name) is not None


def is_future_dir(dir_name: str) -> bool:
    return _SUFFIXED_DIR_RES[FUTURE_DIR_SUFFIX].match(dir_name) is not None


def is_stray_dir(dir_name: str) -> bool:
    return _SUFFIXED_DIR_RES[STRAY_DIR_SUFFIX].match(dir_name) is not None


def parse_topic_partition_name(dir_name: str) -> tuple[str, int]:
    """(topic, partition) of a partition directory name, including `-delete`/`-future`/`-stray` ones.

    Kafka's LocalLog.parseTopicPartitionName: the partition is after the last
    dash (of the name without `.<uuid><suffix>`). Raises ValueError, as Kafka
    raises KafkaException, for a name that is not a partition directory.
    """
    def error() -> ValueError:
        return ValueError(f"Found directory {dir_name}, '{dir_name}' is not in the form of topic-partition or "
                          "topic-partition.uniqueId-delete (if marked for deletion).\n"
                          "Kafka's log directories (and children) should only contain Kafka topic data.")

    if not dir_name or "-" not in dir_name:
        raise error()
    name = dir_name
    for suffix, pattern in _SUFFIXED_DIR_RES.items():
        if dir_name.endswith(suffix):
            if pattern.match(dir_name) is None:
                raise error()
            name = dir_name[: dir_name.rindex(".")]
            break
    dash = name.rfind("-")
    topic, partition_text = name[:dash], name[dash + 1:]
    if not topic or not partition_text:
        raise error()
    try:
        partition = parse_java_long(partition_text, bits=32)
    except ValueError:
        raise error() from None
    return topic, partition
