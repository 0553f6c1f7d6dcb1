"""One record inside a v2 batch (org.apache.kafka.common.record.DefaultRecord).

Owns the record grammar of constants.py: decoding one record from a buffer
(`read_record`) and encoding one (`write_record`, `record_size_in_bytes`).

Invariants of a decoded Record:
- offset = batch base offset + offset delta; timestamp = base timestamp +
  timestamp delta, or the batch's max timestamp when the batch is
  LOG_APPEND_TIME; sequence = base sequence + offset delta (wrapping at
  2**31 - 1 like Kafka) or NO_SEQUENCE.
- key/value are None exactly when their length was -1; header values too.
  Header keys are never None.
- A record is read from exactly its declared length: fields running past it,
  or bytes left over inside it, raise InvalidRecordError.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

from franz.records.byte_utils import (
    read_varint,
    read_varlong,
    size_of_varint,
    size_of_varlong,
    write_varint,
    write_varlong,
)
from franz.records.constants import INT32_MAX, NO_SEQUENCE
from franz.records.errors import InvalidRecordError

Header = tuple[str, bytes | None]
EMPTY_HEADERS: tuple[Header, ...] = ()


@dataclass(frozen=True, slots=True)
class Record:
    """A decoded record. `size_in_bytes` counts its length varint too."""

    offset: int
    timestamp: int
    sequence: int
    key: bytes | None
    value: bytes | None
    headers: tuple[Header, ...] = EMPTY_HEADERS
    size_in_bytes: int = 0
    is_control: bool = False
    attributes: int = 0

    @property
    def has_key(self) -> bool:
        return self.key is not None

    @property
    def has_value(self) -> bool:
        return self.value is not None

    @property
    def key_size(self) -> int:
        """Bytes in the key, -1 for a null key (Kafka Record.keySize)."""
        return -1 if self.key is None else len(self.key)

    @property
    def value_size(self) -> int:
        """Bytes in the value, -1 for a null value (Kafka Record.valueSize)."""
        return -1 if self.value is None else len(self.value)


def increment_sequence(sequence: int, increment: int) -> int:
    """sequence + increment, wrapping past INT32_MAX to 0 (DefaultRecordBatch.incrementSequence)."""
    if sequence > INT32_MAX - increment:
        return increment - (INT32_MAX - sequence) - 1
    return sequence + increment


def decrement_sequence(sequence: int, decrement: int) -> int:
    """Inverse of increment_sequence."""
    if sequence < decrement:
        return INT32_MAX - (decrement - sequence) + 1
    return sequence - decrement


def _read_nullable_bytes(buf, pos: int, end: int, record_start: int,
                         what: str) -> tuple[bytes | None, int]:
    """A varint length then that many bytes; length -1 (any negative, like Kafka) is None."""
    size, pos = read_varint(buf, pos, end)
    if size < 0:
        return None, pos
    if pos + size > end:
        raise InvalidRecordError(f"Invalid {what} size {size}: past the record's end", record_start)
    return bytes(buf[pos:pos + size]), pos + size


def read_record(buf, pos: int, end: int, base_offset: int, base_timestamp: int,
                base_sequence: int, log_append_time: int | None,
                is_control: bool = False) -> tuple[Record, int]:
    """Decode the record at buf[pos:end]; return it and the position after it.

    REQUIRES: 0 <= pos <= end <= len(buf). Raises InvalidRecordError (with the
    record's position) when the bytes do not form one well-sized record.
    """
    start = pos
    body_size, pos = read_varint(buf, pos, end)
    if body_size < 0:
        raise InvalidRecordError(f"Invalid record size {body_size}", start)
    rec_end = pos + body_size
    if rec_end > end:
        raise InvalidRecordError(
            f"Invalid record size: expected {body_size} bytes in record payload, "
            f"but only {end - pos} bytes remain", start)
    if body_size == 0:
        raise InvalidRecordError("Invalid record size: an empty record body", start)
    attributes = buf[pos]
    if attributes > 127:
        attributes -= 256
    timestamp_delta, pos = read_varlong(buf, pos + 1, rec_end)
    offset_delta, pos = read_varint(buf, pos, rec_end)

    key, pos = _read_nullable_bytes(buf, pos, rec_end, start, "key")
    value, pos = _read_nullable_bytes(buf, pos, rec_end, start, "value")

    header_count, pos = read_varint(buf, pos, rec_end)
    if header_count < 0:
        raise InvalidRecordError(f"Found invalid number of record headers {header_count}", start)
    if header_count == 0:
        headers = EMPTY_HEADERS
    else:
        if header_count > rec_end - pos:
            raise InvalidRecordError(
                f"Found invalid number of record headers. {header_count} is larger than "
                f"the remaining size of the record", start)
        hs = []
        for _ in range(header_count):
            hk_size, pos = read_varint(buf, pos, rec_end)
            if hk_size < 0:
                raise InvalidRecordError(f"Invalid negative header key size {hk_size}", start)
            if pos + hk_size > rec_end:
                raise InvalidRecordError(f"Invalid header key size {hk_size}: past the record's end", start)
            # Kafka decodes header keys as UTF-8 with replacement of bad bytes.
            hk = bytes(buf[pos:pos + hk_size]).decode("utf-8", "replace")
            pos += hk_size
            hv, pos = _read_nullable_bytes(buf, pos, rec_end, start, "header value")
            hs.append((hk, hv))
        headers = tuple(hs)

    if pos != rec_end:
        raise InvalidRecordError(
            f"Invalid record size: expected to read {body_size} bytes in record payload, "
            f"but instead read {pos - (rec_end - body_size)}", start)

    timestamp = log_append_time if log_append_time is not None else base_timestamp + timestamp_delta
    sequence = (increment_sequence(base_sequence, offset_delta)
                if base_sequence >= 0 else NO_SEQUENCE)
    record = Record(base_offset + offset_delta, timestamp, sequence, key, value, headers,
                    rec_end - start, is_control, attributes)
    return record, rec_end


class RecordKey(NamedTuple):
    """What compaction asks of a record: its offset, its key, whether it has a value."""

    offset: int
    key: bytes | None
    has_value: bool


def scan_record_keys(buf, pos: int, end: int, count: int, base_offset: int) -> list[RecordKey]:
    """The offset, key and value presence of each of the `count` records at buf[pos:end], without
    decoding their timestamps, values or headers (the log cleaner reads every record of a log this way).

    Raises InvalidRecordError for records whose lengths do not fit their bytes, as read_record does.
    """
    out: list[RecordKey] = []
    append = out.append
    new = tuple.__new__  # RecordKey(...) without its Python-level __new__: this runs once per record
    start = pos
    try:
        for _ in range(count):
            start = pos
            # Varints of one and two bytes decoded inline: lengths up to 8191 take no call.
            b = buf[pos]
            if b < 0x80:
                size, pos = (b >> 1) ^ -(b & 1), pos + 1
            elif buf[pos + 1] < 0x80:
                raw = (b & 0x7F) | (buf[pos + 1] << 7)
                size, pos = (raw >> 1) ^ -(raw & 1), pos + 2
            else:
                size, pos = read_varint(buf, pos, end)
            record_end = pos + size
            if size <= 0 or record_end > end:
                raise InvalidRecordError(f"Invalid record size {size}", start)
            p = pos + 1  # past the attributes
            while buf[p] >= 0x80:  # the timestamp delta, skipped
                p += 1
            p += 1
            b = buf[p]
            if b < 0x80:
                offset_delta, p = (b >> 1) ^ -(b & 1), p + 1
            elif buf[p + 1] < 0x80:
                raw = (b & 0x7F) | (buf[p + 1] << 7)
                offset_delta, p = (raw >> 1) ^ -(raw & 1), p + 2
            else:
                offset_delta, p = read_varint(buf, p, record_end)
            b = buf[p]
            if b < 0x80:
                key_size, p = (b >> 1) ^ -(b & 1), p + 1
            else:
                key_size, p = read_varint(buf, p, record_end)
            if key_size < 0:
                key = None
            else:
                key = bytes(buf[p:p + key_size])
                p += key_size
            b = buf[p]
            if b < 0x80:
                value_size, p = (b >> 1) ^ -(b & 1), p + 1
            elif buf[p + 1] < 0x80:
                raw = (b & 0x7F) | (buf[p + 1] << 7)
                value_size, p = (raw >> 1) ^ -(raw & 1), p + 2
            else:
                value_size, p = read_varint(buf, p, record_end)
            if p > record_end or (value_size > 0 and p + value_size > record_end):
                raise InvalidRecordError("Invalid key or value size: past the record's end", start)
            append(new(RecordKey, (base_offset + offset_delta, key, value_size >= 0)))
            pos = record_end
    except IndexError:
        raise InvalidRecordError("Record runs past the end of the data", start) from None
    if pos != end:
        raise InvalidRecordError("Incorrect declared batch size, records still remaining in file", pos)
    return out


def _encode_header_key(k) -> bytes:
    if k is None:
        raise ValueError("Invalid null header key found in headers")
    return k.encode("utf-8") if isinstance(k, str) else bytes(k)


def write_record(out: bytearray, offset_delta: int, timestamp_delta: int,
                 key: bytes | None, value: bytes | None,
                 headers: Iterable[Header] = EMPTY_HEADERS) -> int:
    """Append one record to `out`; return its size in bytes (DefaultRecord.writeTo).

    REQUIRES: offset_delta fits an int32, timestamp_delta an int64; header
    keys are str (UTF-8 encoded) or bytes, never None.
    """
    body = bytearray(b"\x00")  # attributes: no record attribute is used
    write_varlong(body, timestamp_delta)
    write_varint(body, offset_delta)
    if key is None:
        body.append(0x01)  # varint -1
    else:
        write_varint(body, len(key))
        body += key
    if value is None:
        body.append(0x01)
    else:
        write_varint(body, len(value))
        body += value
    headers = tuple(headers)
    write_varint(body, len(headers))
    for hk, hv in headers:
        hk_bytes = _encode_header_key(hk)
        write_varint(body, len(hk_bytes))
        body += hk_bytes
        if hv is None:
            body.append(0x01)
        else:
            write_varint(body, len(hv))
            body += hv
    before = len(out)
    write_varint(out, len(body))
    out += body
    return len(out) - before


def record_size_in_bytes(offset_delta: int, timestamp_delta: int, key_size: int,
                         value_size: int, headers: Iterable[Header] = EMPTY_HEADERS) -> int:
    """Encoded size of a record, length varint included (DefaultRecord.sizeInBytes).
    A size of -1 stands for a null key or value."""
    size = 1 + size_of_varint(offset_delta) + size_of_varlong(timestamp_delta)
    size += 1 if key_size < 0 else size_of_varint(key_size) + key_size
    size += 1 if value_size < 0 else size_of_varint(value_size) + value_size
    headers = tuple(headers)
    size += size_of_varint(len(headers))
    for hk, hv in headers:
        n = len(_encode_header_key(hk))
        size += size_of_varint(n) + n
        size += 1 if hv is None else size_of_varint(len(hv)) + len(hv)
    return size + size_of_varint(size)
