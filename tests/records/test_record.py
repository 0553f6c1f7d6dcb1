"""franz/records/record.py: one record's encoding (DefaultRecord)."""

import pytest

from franz.records.constants import INT32_MAX, NO_SEQUENCE
from franz.records.errors import InvalidRecordError
from franz.records.record import (
    decrement_sequence,
    increment_sequence,
    read_record,
    record_size_in_bytes,
    write_record,
)


def encode(offset_delta=0, ts_delta=0, key=b"k", value=b"v", headers=()):
    out = bytearray()
    n = write_record(out, offset_delta, ts_delta, key, value, headers)
    assert n == len(out)
    return bytes(out)


def test_record_layout_matches_kafka():
    # length=8 attrs=0 tsDelta=1(zigzag 2) offDelta=2(4) key len 1 'k' value len 1 'v' 0 headers
    assert encode(2, 1).hex() == "10" + "00" + "02" + "04" + "02" + "6b" + "02" + "76" + "00"


def test_null_key_and_value_are_length_minus_one():
    data = encode(key=None, value=None)
    assert data.hex() == "0c0000000101" + "00"  # len 6, attrs, ts 0, off 0, -1, -1, 0 headers
    rec, end = read_record(data, 0, len(data), 10, 1000, -1, None)
    assert rec.key is None and rec.value is None and rec.key_size == -1 and end == len(data)


def test_record_fields_are_relative_to_the_batch():
    data = encode(3, 7, b"key", b"value", (("h1", b"x"), ("h2", None)))
    rec, _ = read_record(data, 0, len(data), 100, 5000, 10, None)
    assert (rec.offset, rec.timestamp, rec.sequence) == (103, 5007, 13)
    assert rec.headers == (("h1", b"x"), ("h2", None))
    assert rec.size_in_bytes == len(data)
    assert record_size_in_bytes(3, 7, 3, 5, (("h1", b"x"), ("h2", None))) == len(data)


def test_log_append_time_overrides_record_timestamp():
    data = encode(0, 7)
    rec, _ = read_record(data, 0, len(data), 0, 5000, -1, 9999)
    assert rec.timestamp == 9999 and rec.sequence == NO_SEQUENCE


def test_sequence_wraps_past_int32_max():
    assert increment_sequence(INT32_MAX, 1) == 0
    assert increment_sequence(INT32_MAX - 1, 3) == 1
    assert decrement_sequence(1, 3) == INT32_MAX - 1


def test_record_length_past_buffer_is_refused():
    data = encode()
    with pytest.raises(InvalidRecordError):
        read_record(data[:-1], 0, len(data) - 1, 0, 0, -1, None)


def test_record_with_bytes_left_over_is_refused():
    data = bytearray(encode())
    data[0] += 2  # declare 1 more byte in the body
    data += b"\x00"
    with pytest.raises(InvalidRecordError, match="expected to read"):
        read_record(bytes(data), 0, len(data), 0, 0, -1, None)


def test_key_longer_than_record_is_refused():
    data = bytearray(encode())
    data[4] = 0x20  # key length 16
    with pytest.raises(InvalidRecordError):
        read_record(bytes(data), 0, len(data), 0, 0, -1, None)


def test_negative_header_count_is_refused():
    data = bytearray(encode())
    data[-1] = 0x01  # -1 headers
    with pytest.raises(InvalidRecordError, match="headers"):
        read_record(bytes(data), 0, len(data), 0, 0, -1, None)


def test_negative_header_key_size_is_refused():
    data = bytearray(encode(headers=(("a", b"b"),)))
    i = data.index(b"a") - 1
    data[i] = 0x01
    with pytest.raises(InvalidRecordError):
        read_record(bytes(data), 0, len(data), 0, 0, -1, None)


def test_negative_record_length_is_refused():
    with pytest.raises(InvalidRecordError):
        read_record(b"\x01\x00\x00", 0, 3, 0, 0, -1, None)


def test_null_header_key_cannot_be_written():
    with pytest.raises(ValueError):
        write_record(bytearray(), 0, 0, None, None, ((None, b"x"),))
