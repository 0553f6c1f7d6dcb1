"""Errors raised by the record codec (org.apache.kafka.common.errors).

Every error says where it happened (`position`: a byte offset in the buffer or
file being read, or -1 when there is none) and why (`reason`), so the storage
engine can truncate at the right byte and the broker can answer with the
Kafka error code in `error_code`. Malformed input never escapes as
IndexError, struct.error or a hang: the codec turns it into one of these.
"""

from __future__ import annotations


class RecordsError(Exception):
    """Base of the record codec's errors."""

    error_code: int = -1  # Kafka's UNKNOWN_SERVER_ERROR

    def __init__(self, reason: str, position: int = -1) -> None:
        super().__init__(reason if position < 0 else f"{reason} (at position {position})")
        self.reason = reason
        self.position = position


class CorruptRecordError(RecordsError):
    """The bytes are damaged: bad CRC, impossible lengths, bad magic, a bomb
    (Kafka CorruptRecordException, error CORRUPT_MESSAGE)."""

    error_code = 2


class InvalidChecksumError(CorruptRecordError):
    """A batch whose CRC does not match its bytes (Kafka: a batch that is not isValid())."""


class InvalidRecordError(RecordsError):
    """The bytes parse but break the format's rules: a record count or a
    record length that disagrees with the data (Kafka InvalidRecordException,
    error INVALID_RECORD)."""

    error_code = 87


class RecordBatchTooLargeError(RecordsError):
    """A batch larger than the limit it must fit (Kafka
    RecordBatchTooLargeException, error RECORD_LIST_TOO_LARGE)."""

    error_code = 18
