"""The columnar decoder of the Spark read path agrees with franz.records' general decoder."""

from __future__ import annotations

import pyarrow as pa
import pytest

from franz.records import CompressionType, MemoryRecords, SimpleRecord, TimestampType, build_batch
from franz.records.errors import InvalidRecordError
from franz.spark.columnar import Segment, decode


def _segment(batch) -> Segment:
    header = batch.header()
    data, _ = batch.records_data()
    timestamp_type = int(batch.timestamp_type)
    return Segment(data, header.record_count, header.base_offset, header.base_timestamp,
                   header.max_timestamp if timestamp_type == 1 else None, timestamp_type)


def _batches(data: bytes) -> list:
    return list(MemoryRecords(data).batches())


def _assert_equal_to_general_decoder(columns: dict[str, pa.Array], batches: list, low: int = 0,
                                     high: int = 1 << 62) -> None:
    expected = [(r, int(b.timestamp_type)) for b in batches for r in b.records() if low <= r.offset < high]
    assert columns["offset"].to_pylist() == [r.offset for r, _ in expected]
    assert columns["key"].to_pylist() == [r.key for r, _ in expected]
    assert columns["value"].to_pylist() == [r.value for r, _ in expected]
    assert columns["timestamp"].cast(pa.int64()).to_pylist() == [r.timestamp * 1000 for r, _ in expected]
    assert columns["timestampType"].to_pylist() == [t for _, t in expected]
    if "headers" in columns:
        assert columns["headers"].to_pylist() == [[{"key": k, "value": v} for k, v in r.headers]
                                                  for r, _ in expected]
    for name in ("key", "value"):
        assert columns[name].type == pa.binary()
        columns[name].validate(full=True)


def _records(count: int) -> list[SimpleRecord]:
    """Null keys and values, empty ones, headers or none, and lengths, offset and timestamp
    deltas of one, two and three varint bytes (up to 10,000 records, values up to 20,000 bytes)."""
    return [SimpleRecord(value=None if i % 17 == 0 else b"" if i % 13 == 0 else bytes([i % 251]) * (i * 7 % 20_000),
                         key=None if i % 5 == 0 else b"" if i % 7 == 0 else b"k%d" % i,
                         timestamp=1_000_000 + i * 301 - (i % 3) * 100_000,
                         headers=[("h", b"x"), ("empty", b""), ("null", None)] if i % 2 else [])
            for i in range(count)]


@pytest.mark.parametrize("compression", list(CompressionType)[:5])
def test_columns_equal_the_general_decoder(compression):
    batches = _batches(build_batch(_records(3_000), base_offset=500, compression_type=compression))
    columns = decode([_segment(b) for b in batches], 0, 1 << 62, True)
    assert len(columns["offset"]) == 3_000
    _assert_equal_to_general_decoder(columns, batches)


def test_several_batches_decoded_at_once_keep_their_own_offsets_and_timestamp_types():
    records = _records(400)
    data = b"".join([
        build_batch(records[:100], base_offset=0),
        build_batch(records[100:101], base_offset=100, compression_type=CompressionType.LZ4),
        build_batch(records[101:300], base_offset=150, timestamp_type=TimestampType.LOG_APPEND_TIME,
                    log_append_time=555),
        build_batch(records[300:], base_offset=10_000, compression_type=CompressionType.ZSTD),
    ])
    batches = _batches(data)
    columns = decode([_segment(b) for b in batches], 0, 1 << 62, True)
    _assert_equal_to_general_decoder(columns, batches)
    assert columns["timestamp"].cast(pa.int64()).to_pylist()[101:300] == [555_000] * 199
    without = decode([_segment(b) for b in batches], 0, 1 << 62, False)
    assert "headers" not in without and without["value"].equals(columns["value"])


def test_the_range_bounds_cut_the_first_and_last_batches():
    data = b"".join(build_batch(_records(50), base_offset=base) for base in (100, 150, 200))
    batches = _batches(data)
    columns = decode([_segment(b) for b in batches], 120, 230, True)
    assert columns["offset"].to_pylist() == list(range(120, 230))
    _assert_equal_to_general_decoder(columns, batches, 120, 230)
    assert len(decode([_segment(b) for b in batches], 0, 100, False)["key"]) == 0


def test_the_range_bounds_and_log_append_time():
    batch = _batches(build_batch([SimpleRecord(value=b"%d" % i) for i in range(10)], base_offset=100,
                                 timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=777))[0]
    columns = decode([_segment(batch)], 103, 106, False)
    assert columns["offset"].to_pylist() == [103, 104, 105]
    assert columns["timestamp"].cast(pa.int64()).to_pylist() == [777_000] * 3
    assert columns["key"].to_pylist() == [None] * 3 and columns["value"].to_pylist() == [b"3", b"4", b"5"]


def test_large_and_negative_timestamp_deltas_and_long_varints():
    records = [SimpleRecord(value=b"v" * 70_000, key=b"k", timestamp=2_000_000_000_000),
               SimpleRecord(value=b"w", timestamp=1),  # delta far below the base: a 6-byte negative varint
               SimpleRecord(value=None, key=b"z" * 300, timestamp=4_102_444_800_000)]
    batches = _batches(build_batch(records, base_offset=7))
    _assert_equal_to_general_decoder(decode([_segment(b) for b in batches], 0, 1 << 62, False), batches)


def _decode_bytes(records_data: bytes, count: int) -> None:
    decode([Segment(records_data, count, 0, 0, None, 0)], 0, 1 << 62, False)


def test_a_truncated_record_raises_invalid_record():
    data, _ = _batches(build_batch([SimpleRecord(value=b"x" * 50)]))[0].records_data()
    for cut in (0, 1, 2, 20, len(data) - 1):
        with pytest.raises(InvalidRecordError):
            _decode_bytes(bytes(data)[:cut], 1)


def test_a_record_whose_fields_run_past_its_length_raises_invalid_record():
    # length 4, attributes, timestamp delta 0, offset delta 0, key length 5 (zigzag 10): the key passes the end
    with pytest.raises(InvalidRecordError):
        _decode_bytes(bytes([8, 0, 0, 0, 10, 1, 1, 1, 1, 1, 1]), 1)
    # a value length pointing past the record (it would land inside the next record)
    two = build_batch([SimpleRecord(value=b"ab"), SimpleRecord(value=b"cd")])
    data = bytearray(_batches(two)[0].records_data()[0])
    assert data[5] == 4  # first record: length, attributes, ts delta, offset delta, key -1, value length 2
    data[5] = 8
    with pytest.raises(InvalidRecordError):
        _decode_bytes(bytes(data), 2)


def test_non_positive_record_lengths_raise_invalid_record():
    for first in (0, 1, 3):  # zigzag 0, -1, -2
        with pytest.raises(InvalidRecordError):
            _decode_bytes(bytes([first]) + b"\x00" * 20, 1)
    with pytest.raises(InvalidRecordError):
        _decode_bytes(b"\xff" * 11 + b"\x00" * 10, 1)  # a varint longer than 10 bytes


def _blocks(sizes: list[int], value_bytes: list[int]) -> list[SimpleRecord]:
    """Blocks of records of one length each: sizes[i] records with values of value_bytes[i]."""
    records = []
    for block, (size, length) in enumerate(zip(sizes, value_bytes)):
        records += [SimpleRecord(value=bytes([block % 256]) * length, key=b"k%02d" % (block % 100),
                                 timestamp=5_000 + len(records) + i) for i in range(size)]
    return records


@pytest.mark.parametrize("compression", [CompressionType.NONE, CompressionType.GZIP])
def test_runs_of_equal_lengths_between_varied_records(compression):
    # Runs shorter and longer than the kernels' minimum, one- and two-byte length varints, single records
    # between runs, and a run that reaches the end of its batch followed by a batch of the same length.
    sizes = [1, 2, 63, 64, 65, 300, 1, 1, 1, 700, 5, 1_000, 1]
    lengths = [10, 10, 11, 200, 11, 30, 9_000, 20, 21, 40, 40, 7, 7]
    records = _blocks(sizes, lengths)
    varied = _records(600)
    data = b"".join([build_batch(records, base_offset=0, compression_type=compression),
                     build_batch(records[-300:], base_offset=5_000, compression_type=compression),
                     build_batch(varied, base_offset=6_000, compression_type=compression),
                     build_batch(records, base_offset=7_000, compression_type=compression)])
    batches = _batches(data)
    _assert_equal_to_general_decoder(decode([_segment(b) for b in batches], 0, 1 << 62, True), batches)


@pytest.mark.parametrize("change", [+1, -1, +40])
def test_a_wrong_length_inside_a_run_raises_like_the_general_decoder(change):
    records = [SimpleRecord(value=b"v" * 30, key=b"k", timestamp=9_000) for _ in range(300)]
    batch = _batches(build_batch(records))[0]
    data = bytearray(batch.records_data()[0])
    starts = [0]
    for _ in range(299):  # every length fits one varint byte (below 64): start + 1 + length
        starts.append(starts[-1] + 1 + data[starts[-1]] // 2)
    assert data[starts[150]] == data[starts[149]]  # inside a run of one length (offset deltas of two bytes)
    data[starts[150]] += 2 * change  # zigzag: 2 per unit of length
    with pytest.raises(InvalidRecordError):
        list(_batches(bytes(batch.buffer[:61]) + bytes(data))[0].records())
    with pytest.raises(InvalidRecordError):
        _decode_bytes(bytes(data), 300)


def test_a_count_above_the_records_raises_invalid_record():
    batch = _batches(build_batch(_blocks([300], [50]), base_offset=0))[0]
    data = bytes(batch.records_data()[0])
    _decode_bytes(data, 300)
    with pytest.raises(InvalidRecordError):
        _decode_bytes(data, 301)
