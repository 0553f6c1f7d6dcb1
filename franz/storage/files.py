"""LogFileUtils: the names of a log's files, as Kafka 4.x writes them.

Every segment file is named for its base offset, zero-padded to 20 digits
(the width of Long.MAX_VALUE), so that lexical order is offset order:

    00000000000000000000.log         the record batches
    00000000000000000000.index       offset index (OffsetIndex)
    00000000000000000000.timeindex   time index (TimeIndex)
    00000000000000000000.txnindex    aborted transactions (TransactionIndex)
    00000000000000000123.snapshot    producer state as of offset 123

Transient suffixes are appended to a full name: `.deleted` (scheduled for
deletion), `.cleaned` (compaction output being written), `.swap` (compaction
output ready to replace the originals). A partition's directory is
`<topic>-<partition>`; a deleted one is renamed `<topic>-<partition>.<uuid>-delete`.
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
INDEX_SUFFIXES = (INDEX_FILE_SUFFIX, TIME_INDEX_FILE_SUFFIX, TXN_INDEX_FILE_SUFFIX)

_DELETE_DIR_RE = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)\.(?P<uid>[0-9a-f]{32})" + DELETE_DIR_SUFFIX + "$")
_PARTITION_DIR_RE = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")


def filename_prefix_from_offset(offset: int) -> str:
    """`offset` zero-padded to 20 digits. REQUIRES: 0 <= offset < 2**63."""
    assert 0 <= offset < 2**63, offset
    return f"{offset:020d}"


def offset_from_file_name(file_name: str) -> int:
    """The base offset a segment or snapshot file is named for."""
    return int(file_name.split(".", 1)[0])


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


def producer_snapshot_file(directory: Path | str, offset: int) -> Path:
    return _file(directory, offset, PRODUCER_SNAPSHOT_FILE_SUFFIX, "")


def is_log_file(path: Path | str) -> bool:
    return Path(path).name.endswith(LOG_FILE_SUFFIX)


def is_index_file(path: Path | str) -> bool:
    return Path(path).name.endswith(INDEX_SUFFIXES)


def is_snapshot_file(path: Path | str) -> bool:
    return Path(path).name.endswith(PRODUCER_SNAPSHOT_FILE_SUFFIX)


def has_suffix(path: Path | str, suffix: str) -> bool:
    return Path(path).name.endswith(suffix)


def strip_suffix(path: Path | str, suffix: str) -> Path:
    """`path` without the trailing transient `suffix` (e.g. `.swap`)."""
    path = Path(path)
    assert path.name.endswith(suffix), (path, suffix)
    return path.with_name(path.name[: -len(suffix)])


def partition_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def parse_topic_partition_name(dir_name: str) -> tuple[str, int]:
    """(topic, partition) of a partition directory, including `-delete`/`-future` ones.

    Raises ValueError for a name that is not a partition directory, as Kafka's
    UnifiedLog.parseTopicPartitionName does with a KafkaException.
    """
    match = _DELETE_DIR_RE.match(dir_name)
    if match is None:
        name = dir_name
        for tail in (FUTURE_DIR_SUFFIX, STRAY_DIR_SUFFIX):
            if name.endswith(tail) and "." in name:
                name = name.rsplit(".", 1)[0]
        match = _PARTITION_DIR_RE.match(name)
    if match is None or not match["topic"]:
        raise ValueError(f"Found directory {dir_name}, '{dir_name}' is not in the form of "
                         "topic-partition or topic-partition.uniqueId-delete (if marked for deletion)")
    return match["topic"], int(match["partition"])


def delete_dir_name(topic: str, partition: int) -> str:
    """The name a partition directory is renamed to when the log is deleted."""
    return f"{partition_dir_name(topic, partition)}.{uuid.uuid4().hex}{DELETE_DIR_SUFFIX}"


def is_delete_dir(dir_name: str) -> bool:
    return _DELETE_DIR_RE.match(dir_name) is not None
