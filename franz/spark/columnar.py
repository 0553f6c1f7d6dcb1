"""Records of a v2 batch decoded straight into column lists, for Arrow.

The general decoder (franz.records.record.read_record) builds one Record
object per record and calls a function per varint; on the Spark read path,
where every record becomes a row, that object and those calls are most of the
cost. This decoder walks the same bytes once, appends key, value, offset and
timestamp to lists, and reads one- and two-byte varints inline (lengths and
deltas of ordinary records are that short). The layout it reads, per record:

    length varint | attributes int8 | timestampDelta varlong | offsetDelta varint |
    keyLength varint | key | valueLength varint | value |
    headerCount varint | (headerKeyLength varint | key | headerValueLength varint | value)*

Bounds: every length is checked against the record's end; a record that does
not fit raises InvalidRecordError, as the general decoder does.
"""

from __future__ import annotations

from typing import Any

from franz.records.errors import InvalidRecordError


def _varint(buf: Any, pos: int) -> tuple[int, int]:
    """A zigzag varint of any length (up to 10 bytes), at pos."""
    value = 0
    shift = 0
    for _ in range(10):
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return (value >> 1) ^ -(value & 1), pos
        shift += 7
    raise InvalidRecordError("varint longer than 10 bytes", pos)


def decode_into(data: Any, count: int, base_offset: int, base_timestamp: int, log_append_time: int | None,
                low: int, high: int, columns: dict[str, list], with_headers: bool) -> int:
    """Append records with offsets in [low, high) to `columns`; returns how many were appended."""
    keys, values = columns["key"], columns["value"]
    offsets, stamps = columns["offset"], columns["timestamp"]
    headers = columns.get("headers")
    pos = 0
    end = len(data)
    appended = 0
    varint = _varint
    try:
        for _ in range(count):
            b = data[pos]
            if b < 0x80:
                length, pos = (b >> 1) ^ -(b & 1), pos + 1
            elif data[pos + 1] < 0x80:
                b = (b & 0x7F) | (data[pos + 1] << 7)
                length, pos = (b >> 1) ^ -(b & 1), pos + 2
            else:
                length, pos = varint(data, pos)
            record_end = pos + length
            if length <= 0 or record_end > end:
                raise InvalidRecordError(f"record of {length} bytes does not fit its batch", pos)
            pos += 1  # attributes: unused in v2
            b = data[pos]
            if b < 0x80:
                timestamp_delta, pos = (b >> 1) ^ -(b & 1), pos + 1
            elif data[pos + 1] < 0x80:
                b = (b & 0x7F) | (data[pos + 1] << 7)
                timestamp_delta, pos = (b >> 1) ^ -(b & 1), pos + 2
            else:
                timestamp_delta, pos = varint(data, pos)
            b = data[pos]
            if b < 0x80:
                offset_delta, pos = (b >> 1) ^ -(b & 1), pos + 1
            elif data[pos + 1] < 0x80:
                b = (b & 0x7F) | (data[pos + 1] << 7)
                offset_delta, pos = (b >> 1) ^ -(b & 1), pos + 2
            else:
                offset_delta, pos = varint(data, pos)
            b = data[pos]
            if b < 0x80:
                size, pos = (b >> 1) ^ -(b & 1), pos + 1
            elif data[pos + 1] < 0x80:
                b = (b & 0x7F) | (data[pos + 1] << 7)
                size, pos = (b >> 1) ^ -(b & 1), pos + 2
            else:
                size, pos = varint(data, pos)
            if size < 0:
                key = None
            else:
                key = bytes(data[pos:pos + size])
                pos += size
            b = data[pos]
            if b < 0x80:
                size, pos = (b >> 1) ^ -(b & 1), pos + 1
            elif data[pos + 1] < 0x80:
                b = (b & 0x7F) | (data[pos + 1] << 7)
                size, pos = (b >> 1) ^ -(b & 1), pos + 2
            else:
                size, pos = varint(data, pos)
            if size < 0:
                value = None
            else:
                value = bytes(data[pos:pos + size])
                pos += size
            if pos > record_end:
                raise InvalidRecordError("record fields run past the record's length", pos)
            offset = base_offset + offset_delta
            if low <= offset < high:
                keys.append(key)
                values.append(value)
                offsets.append(offset)
                stamps.append((log_append_time if log_append_time is not None
                               else base_timestamp + timestamp_delta) * 1000)
                if with_headers:
                    headers.append(_headers(data, pos, record_end))
                appended += 1
            pos = record_end
    except IndexError:
        raise InvalidRecordError("a record runs past the end of its batch", pos) from None
    return appended


def _headers(data: Any, pos: int, end: int) -> list[dict]:
    count, pos = _varint(data, pos)
    found = []
    for _ in range(count):
        size, pos = _varint(data, pos)
        if size < 0 or pos + size > end:
            raise InvalidRecordError("record header key runs past the record", pos)
        key = bytes(data[pos:pos + size]).decode("utf-8")
        pos += size
        size, pos = _varint(data, pos)
        value = None
        if size >= 0:
            if pos + size > end:
                raise InvalidRecordError("record header value runs past the record", pos)
            value = bytes(data[pos:pos + size])
            pos += size
        found.append({"key": key, "value": value})
    return found
