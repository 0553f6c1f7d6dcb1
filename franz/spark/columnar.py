"""Records of v2 batches decoded straight into Arrow arrays, for the Spark read path.

Every record becomes a row there, so per-record Python work is the cost. The
layout of one record is

    length varint | attributes int8 | timestampDelta varlong | offsetDelta varint |
    keyLength varint | key | valueLength varint | value |
    headerCount varint | (headerKeyLength varint | key | headerValueLength varint | value)*

and only the record lengths chain one record to the next: a record's start is
known only once the previous length is read. So decoding runs in two steps:

1. a Python loop per record that reads just the length varint and steps to
   the next record (`_record_starts`), collecting each record's start;
2. everything else done on whole arrays by Arrow compute kernels: the varints
   at those starts (`_varints`: one vectorized step per varint byte, at most
   10), field positions, offsets and timestamps, and the key and value
   columns as one copy of their byte ranges out of the records' bytes
   (`_slices`), with no Python bytes object per record.

Several batches (segments) are decoded at once, their records' bytes joined,
so that the fixed cost of the Arrow calls is paid per group of batches, not
per batch (a producer with small batches would otherwise pay it per record).

Bounds: every length is checked against its record's end, and every record's
end against its batch's records; a record that does not fit raises
InvalidRecordError, as the general decoder (franz.records) does.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

from franz.records.errors import InvalidRecordError

VARINT_BYTES_MAX = 10  # a 64-bit zigzag varlong

# Arrow scalars for the constants of the kernels below: a Python int argument is
# converted on every call, and that conversion tries imports (pandas, dateutil)
# that fail when those are not installed, each time, which costs more than the
# kernel on arrays of a few thousand rows.
_I64 = {k: pa.scalar(k, pa.int64()) for k in (0, 1, 2, 1000)}
_U64 = {k: pa.scalar(k, pa.uint64()) for k in (1, 0x7F)}
_U64_SHIFT = {k: pa.scalar(7 * k, pa.uint64()) for k in range(1, VARINT_BYTES_MAX)}
_U8_HIGH = pa.scalar(0x80, pa.uint8())
_U8_ZERO = pa.scalar(0, pa.uint8())
_NULL_I64 = pa.scalar(None, pa.int64())

# Record starts: a run search costs about a microsecond of Python plus C-speed
# byte slicing; after a run shorter than RUN_RECORDS_MIN the Python walk (~0.2 µs
# a record) goes on for WALK_RECORDS_MIN records, doubling up to WALK_RECORDS_MAX
# while runs stay short. Runs are checked in windows from RUN_WINDOW_MIN records,
# doubling while the run fills them.
RUN_RECORDS_MIN = 8
RUN_WINDOW_MIN = 256
WALK_RECORDS_MIN = 16
WALK_RECORDS_MAX = 1024


class Segment(NamedTuple):
    """The records' bytes of one data batch (decompressed) and the header fields rows need."""

    data: Any  # bytes-like: the records section, after the 61-byte header
    count: int
    base_offset: int
    base_timestamp: int
    log_append_time: int | None  # the batch's max timestamp when its timestamp type is LogAppendTime
    timestamp_type: int


def _varint(buf: Any, pos: int) -> tuple[int, int]:
    """A zigzag varint of any length (up to 10 bytes), at pos."""
    value = 0
    shift = 0
    for _ in range(VARINT_BYTES_MAX):
        byte = buf[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return (value >> 1) ^ -(value & 1), pos
        shift += 7
    raise InvalidRecordError("varint longer than 10 bytes", pos)


class Runs:
    """Record starts as runs: records k = 0 .. count - 1 of a run start at start + k * stride."""

    __slots__ = ("starts", "strides", "counts")

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.strides: list[int] = []
        self.counts: list[int] = []

    def add(self, start: int, stride: int, count: int) -> None:
        self.starts.append(start)
        self.strides.append(stride)
        self.counts.append(count)

    def positions(self) -> pa.Array:
        """Every record's start (int64), from the runs with a few kernels: start_r + stride_r * (i - first_r)."""
        firsts, total = [], 0
        for count in self.counts:
            firsts.append(total)
            total += count
        start = _per_row(self.starts, self.counts, pa.int64())
        stride = _per_row(self.strides, self.counts, pa.int64())
        first = _per_row(firsts, self.counts, pa.int64())
        return pc.add(start, pc.multiply(stride, pc.subtract(_index(total), first)))


def _record_starts(data: bytes, pos: int, end: int, count: int, runs: Runs) -> None:
    """Add the starts of `count` records from data[pos:end] to `runs`.

    Two ways, both exact: runs of records of one length are found by comparing
    their length bytes with byte slicing (_equal_length_run); the rest is
    walked in Python (_walk). After a short run the walk takes the next
    records, twice as many each time (up to WALK_RECORDS_MAX) while runs stay
    short, so records of varied lengths cost little more than the walk alone.
    """
    walk = WALK_RECORDS_MIN
    while count:
        found, stride = _equal_length_run(data, pos, end, count)
        if found:
            runs.add(pos, stride, found)
            pos += found * stride
            count -= found
        if found >= RUN_RECORDS_MIN:
            walk = WALK_RECORDS_MIN
            continue
        walked = min(walk, count)
        if walked:
            pos = _walk(data, pos, walked, runs)
            count -= walked
        walk = min(2 * walk, WALK_RECORDS_MAX)
    # Every step moves forward, so the last record's end bounds all of them.
    if pos > end:
        raise InvalidRecordError("a record runs past the end of its batch", end)


def _walk(data: bytes, pos: int, count: int, runs: Runs) -> int:
    """Add the starts of `count` records at data[pos:] to `runs`; return the end of the last.

    The decoder's per-record Python loop: it reads the length varint and jumps
    over the record (neighbours of one length join one run). A length that is
    not positive raises InvalidRecordError, as does a read past the bytes (the
    caller checks the end against its batch's).
    """
    run_start, run_stride, run_count = pos, 0, 0
    try:
        for _ in range(count):
            b = data[pos]
            # One-byte zigzag varint of a positive length: even and non-zero below 0x80.
            if b < 0x80 and b and not b & 1:
                stride = 1 + (b >> 1)
            elif b >= 0x80 and data[pos + 1] < 0x80 and not b & 1:  # two bytes: 64 to 8191
                stride = 2 + (((b & 0x7F) | (data[pos + 1] << 7)) >> 1)
            else:
                length, after = _varint(data, pos)
                if length <= 0:
                    raise InvalidRecordError(f"record of {length} bytes does not fit its batch", pos)
                stride = after - pos + length
            if stride == run_stride:
                run_count += 1
            else:
                if run_count:
                    runs.add(run_start, run_stride, run_count)
                run_start, run_stride, run_count = pos, stride, 1
            pos += stride
    except IndexError:
        raise InvalidRecordError("a record runs past the end of its batch", pos) from None
    if run_count:
        runs.add(run_start, run_stride, run_count)
    return pos


def _equal_length_run(data: bytes, pos: int, end: int, count: int) -> tuple[int, int]:
    """(n, stride): the records from `pos` on that have the first one's length; n = 0 when not
    tried (a length of over two varint bytes, or room for fewer than two records).

    Exact by induction: record 0 starts at pos; if the length bytes at
    pos + k * stride equal record 0's, record k has its length, so record k + 1
    starts at pos + (k + 1) * stride. The run ends before the first candidate
    whose bytes differ (that record starts there but has another length), and
    candidates are only taken where a whole record of that length fits before
    `end`, so every record of the run lies inside its batch. The bytes at the
    candidates are one extended slice (data[pos::stride]); the run is how many
    of them lstrip removes.
    """
    first = data[pos] if pos < end else 0
    if first < 0x80:
        width, encoded = 1, first
    elif pos + 1 < end and data[pos + 1] < 0x80:
        width, encoded = 2, (first & 0x7F) | (data[pos + 1] << 7)
    else:
        return 0, 0
    length = (encoded >> 1) ^ -(encoded & 1)
    if length <= 0:
        return 0, 0  # the walk raises for it
    stride = width + length
    room = min(count, (end - pos) // stride)
    if room < 2:
        return 0, 0
    strip_first = bytes((first,))
    strip_second = bytes((data[pos + 1],)) if width == 2 else b""
    found, window = 0, RUN_WINDOW_MIN
    while found < room:
        size = min(window, room - found)
        at = pos + found * stride
        bytes_at = data[at:at + size * stride:stride]
        same = size - len(bytes_at.lstrip(strip_first))
        if width == 2:
            second_at = data[at + 1:at + 1 + size * stride:stride]
            same = min(same, size - len(second_at.lstrip(strip_second)))
        found += same
        if same < size:
            break
        window *= 2
    return found, stride


def _varints(u8: pa.Array, positions: pa.Array) -> tuple[pa.Array, pa.Array]:
    """The zigzag varints at `positions` (int64) of `u8` (the bytes as uint8): (values int64,
    positions after them).

    Step k reads byte k of the varints still going on (byte k-1 had its high
    bit set); the others read a harmless position 0 and add nothing. A read
    past the bytes raises InvalidRecordError (Arrow's take checks indices).
    """
    try:
        byte = pc.take(u8, positions)
        value = pc.bit_wise_and(byte.cast(pa.uint64()), _U64[0x7F])
        going = pc.greater_equal(byte, _U8_HIGH)
        after = pc.add(positions, _I64[1])
        for k in range(1, VARINT_BYTES_MAX + 1):
            if not pc.any(going).as_py():
                break
            if k == VARINT_BYTES_MAX:
                raise InvalidRecordError("varint longer than 10 bytes", -1)
            step = pa.scalar(k, pa.int64())
            byte = pc.if_else(going, pc.take(u8, pc.if_else(going, pc.add(positions, step), _I64[0])), _U8_ZERO)
            value = pc.bit_wise_or(value, pc.shift_left(pc.bit_wise_and(byte.cast(pa.uint64()), _U64[0x7F]),
                                                        _U64_SHIFT[k]))
            after = pc.add(after, going.cast(pa.int64()))
            going = pc.and_(going, pc.greater_equal(byte, _U8_HIGH))
    except IndexError:
        raise InvalidRecordError("a record runs past the end of its batch", -1) from None
    # zigzag: (v >>> 1) ^ -(v & 1), on the 64-bit pattern (a 10-byte varint fills all 64 bits)
    half = pc.shift_right(value, _U64[1]).cast(pa.int64(), safe=False)
    sign = pc.negate(pc.bit_wise_and(value, _U64[1]).cast(pa.int64()))
    return pc.bit_wise_xor(half, sign), after


def _slices(data_buffer: pa.Buffer, starts: pa.Array, sizes: pa.Array) -> pa.Array:
    """A binary column of data[start:start + size] per row, null where size < 0.

    REQUIRES: the ranges are in order and do not overlap (start[i] + size[i] <=
    start[i+1]), which holds for the key or the value of successive records.
    Then the interleaved offsets start0, end0, start1, end1, ... are ascending
    and describe a valid large_binary array whose even elements are the wanted
    slices and odd ones the bytes between them; taking the even elements copies
    the slices out (nulls come from null take indices).
    """
    n = len(starts)
    if n == 0:
        return pa.array([], pa.binary())
    ends = pc.add(starts, pc.max_element_wise(sizes, _I64[0]))
    both = pa.concat_arrays([starts, ends])
    # order: start0, end0, start1, end1, ... = both[i // 2 + (i % 2) * n]
    index = _index(2 * n)
    order = pc.add(pc.shift_right(index, _I64[1]), pc.multiply(pc.bit_wise_and(index, _I64[1]), pa.scalar(n, pa.int64())))
    offsets = pc.take(both, order)
    spans = pa.Array.from_buffers(pa.large_binary(), 2 * n - 1, [None, offsets.buffers()[1], data_buffer])
    valid = pc.greater_equal(sizes, _I64[0])
    evens = pc.if_else(valid, pc.multiply(index.slice(0, n), _I64[2]), _NULL_I64)
    return pc.take(spans, evens).cast(pa.binary())


_INDEX = pa.array([], pa.int64())


def _index(n: int) -> pa.Array:
    """0, 1, ..., n - 1 (int64): slices of one cached array, grown by doubling."""
    global _INDEX
    if len(_INDEX) < n:
        _INDEX = pa.array(range(max(n, 2 * len(_INDEX))), pa.int64())
    return _INDEX.slice(0, n)


def _per_row(values: list, counts: list[int], type_: pa.DataType) -> pa.Array:
    """values[j] repeated counts[j] times (one value per segment, to its rows): the decoded form of
    a run-end encoded array (built from buffers, which converts no Python value per call)."""
    ends, total = [], 0
    for count in counts:
        total += count
        ends.append(total)
    encoded = pa.RunEndEncodedArray.from_buffers(pa.run_end_encoded(pa.int32(), type_), total, [None], 0, 0,
                                                 [pa.array(ends, pa.int32()), pa.array(values, type_)])
    return pc.run_end_decode(encoded)


def decode(segments: list[Segment], low: int, high: int, with_headers: bool) -> dict[str, pa.Array]:
    """The records of `segments` with offsets in [low, high), as columns key, value, offset,
    timestamp (µs), timestampType and, when with_headers, headers."""
    segments = [s for s in segments if s.count > 0]
    if not segments:
        return _empty_columns(with_headers)
    data = bytes(segments[0].data) if len(segments) == 1 else b"".join(s.data for s in segments)
    data_buffer = pa.py_buffer(data)
    u8 = pa.Array.from_buffers(pa.uint8(), len(data), [None, data_buffer])
    runs = Runs()
    pos = 0
    for segment in segments:
        end = pos + len(segment.data)
        _record_starts(data, pos, end, segment.count, runs)
        pos = end
    record_start = runs.positions()
    length, body = _varints(u8, record_start)
    record_end = pc.add(body, length)
    timestamp_delta, after = _varints(u8, pc.add(body, _I64[1]))  # + 1: the attributes byte, unused in v2
    offset_delta, after = _varints(u8, after)
    key_size, key_start = _varints(u8, after)
    value_size, value_start = _varints(u8, pc.add(key_start, pc.max_element_wise(key_size, _I64[0])))
    value_end = pc.add(value_start, pc.max_element_wise(value_size, _I64[0]))
    if not pc.all(pc.less_equal(value_end, record_end)).as_py():
        raise InvalidRecordError("record fields run past the record's length", -1)

    counts = [s.count for s in segments]
    offset = pc.add(_per_row([s.base_offset for s in segments], counts, pa.int64()), offset_delta)
    # timestamp = base + delta (CreateTime) or the batch's log append time: base + delta * 0
    base = _per_row([s.base_timestamp if s.log_append_time is None else s.log_append_time for s in segments],
                    counts, pa.int64())
    scale = _per_row([1 if s.log_append_time is None else 0 for s in segments], counts, pa.int64())
    millis = pc.add_checked(base, pc.multiply_checked(timestamp_delta, scale))
    columns = {
        "key": _slices(data_buffer, key_start, key_size),
        "value": _slices(data_buffer, value_start, value_size),
        "offset": offset,
        "timestamp": pc.multiply_checked(millis, _I64[1000]).cast(pa.timestamp("us", tz="UTC")),
        "timestampType": _per_row([s.timestamp_type for s in segments], counts, pa.int32()),
    }
    if with_headers:
        columns["headers"] = pa.array([_headers(data, p, e) for p, e in zip(value_end.to_pylist(),
                                                                            record_end.to_pylist())],
                                      HEADERS_ARROW_TYPE)
    wanted = pc.and_(pc.greater_equal(offset, pa.scalar(low, pa.int64())), pc.less(offset, pa.scalar(high, pa.int64())))
    if not pc.all(wanted).as_py():
        columns = {name: pc.filter(column, wanted) for name, column in columns.items()}
    return columns


def _empty_columns(with_headers: bool) -> dict[str, pa.Array]:
    columns = {"key": pa.array([], pa.binary()), "value": pa.array([], pa.binary()),
               "offset": pa.array([], pa.int64()), "timestamp": pa.array([], pa.timestamp("us", tz="UTC")),
               "timestampType": pa.array([], pa.int32())}
    if with_headers:
        columns["headers"] = pa.array([], HEADERS_ARROW_TYPE)
    return columns


HEADERS_ARROW_TYPE = pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())]))


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
