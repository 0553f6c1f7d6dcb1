"""Zigzag varints and varlongs as Kafka writes them (org.apache.kafka.common.utils.ByteUtils).

A varint is a 32-bit signed integer zigzag-mapped to unsigned ((n << 1) ^
(n >> 31)) and written 7 bits per byte, low groups first, with the high bit
set on every byte but the last: at most 5 bytes. A varlong is the same over
64 bits: at most 10 bytes.

Readers take (buffer, position, end) and return (value, next position); they
never read at or past `end` and raise InvalidRecordError (Kafka wraps its
IllegalArgumentException and BufferUnderflowException the same way) for a
value that runs past `end` or is longer than its maximum size. Like Kafka,
bits beyond 32 (64) in the last allowed byte are dropped, not refused.
"""

from __future__ import annotations

from franz.records.constants import VARINT_SIZE_BYTES_MAX, VARLONG_SIZE_BYTES_MAX
from franz.records.errors import InvalidRecordError

_MASK32 = 0xFFFFFFFF
_MASK64 = 0xFFFFFFFFFFFFFFFF


def read_varint(buf, pos: int, end: int) -> tuple[int, int]:
    """Decode one zigzag varint at buf[pos:end]. REQUIRES: 0 <= pos, end <= len(buf)."""
    if pos < end:
        b = buf[pos]
        if b < 0x80:  # one byte: the common case for lengths and deltas
            return (b >> 1) ^ -(b & 1), pos + 1
    return _read_multi_byte(buf, pos, end, 28, _MASK32, "varint", VARINT_SIZE_BYTES_MAX)


def read_varlong(buf, pos: int, end: int) -> tuple[int, int]:
    """Decode one zigzag varlong at buf[pos:end]. REQUIRES: 0 <= pos, end <= len(buf)."""
    if pos < end:
        b = buf[pos]
        if b < 0x80:
            return (b >> 1) ^ -(b & 1), pos + 1
    return _read_multi_byte(buf, pos, end, 63, _MASK64, "varlong", VARLONG_SIZE_BYTES_MAX)


def _read_multi_byte(buf, pos: int, end: int, shift_max: int, mask: int, what: str,
                     size_max: int) -> tuple[int, int]:
    start = pos
    value = 0
    shift = 0
    while True:
        if pos >= end:
            raise InvalidRecordError(f"{what} runs past the end of the data", start)
        b = buf[pos]
        pos += 1
        if b < 0x80:
            value = (value | (b << shift)) & mask
            return (value >> 1) ^ -(value & 1), pos
        value |= (b & 0x7F) << shift
        shift += 7
        if shift > shift_max:
            raise InvalidRecordError(f"{what} is longer than {size_max} bytes", start)


def _write_unsigned(out: bytearray, v: int) -> None:
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)


def write_varint(out: bytearray, value: int) -> None:
    """Append `value` (REQUIRES: a signed 32-bit int) as a zigzag varint."""
    assert -(2**31) <= value < 2**31, value
    _write_unsigned(out, ((value << 1) ^ (value >> 31)) & _MASK32)


def write_varlong(out: bytearray, value: int) -> None:
    """Append `value` (REQUIRES: a signed 64-bit int) as a zigzag varlong."""
    assert -(2**63) <= value < 2**63, value
    _write_unsigned(out, ((value << 1) ^ (value >> 63)) & _MASK64)


def _size_of_unsigned(v: int) -> int:
    size = 1
    while v >= 0x80:
        v >>= 7
        size += 1
    return size


def size_of_varint(value: int) -> int:
    """Bytes write_varint uses for `value` (1..5)."""
    return _size_of_unsigned(((value << 1) ^ (value >> 31)) & _MASK32)


def size_of_varlong(value: int) -> int:
    """Bytes write_varlong uses for `value` (1..10)."""
    return _size_of_unsigned(((value << 1) ^ (value >> 63)) & _MASK64)
