"""franz/records/byte_utils.py: zigzag varints as Kafka's ByteUtils writes them."""

import pytest

from franz.records.byte_utils import (
    read_varint,
    read_varlong,
    size_of_varint,
    size_of_varlong,
    write_varint,
    write_varlong,
)
from franz.records.errors import InvalidRecordError

# (value, encoding) pairs from Kafka's ByteUtilsTest.
VARINT_CASES = [
    (0, "00"), (-1, "01"), (1, "02"), (63, "7e"), (-64, "7f"), (64, "8001"), (-65, "8101"),
    (8191, "fe7f"), (-8192, "ff7f"), (8192, "808001"), (-8193, "818001"),
    (2**31 - 1, "feffffff0f"), (-(2**31), "ffffffff0f"),
]


@pytest.mark.parametrize("value,encoded", VARINT_CASES)
def test_varint_matches_kafka_encoding(value, encoded):
    out = bytearray()
    write_varint(out, value)
    assert out.hex() == encoded
    assert size_of_varint(value) == len(out)
    assert read_varint(bytes(out), 0, len(out)) == (value, len(out))


@pytest.mark.parametrize("value", [0, -1, 1, 2**31, -(2**31) - 1, 2**63 - 1, -(2**63)])
def test_varlong_round_trips_at_the_edges(value):
    out = bytearray()
    write_varlong(out, value)
    assert size_of_varlong(value) == len(out) <= 10
    assert read_varlong(bytes(out), 0, len(out)) == (value, len(out))


def test_varlong_extremes_use_ten_bytes():
    out = bytearray()
    write_varlong(out, -(2**63))
    assert out.hex() == "ffffffffffffffffff01"


def test_varint_longer_than_five_bytes_is_refused():
    with pytest.raises(InvalidRecordError) as e:
        read_varint(b"\xff\xff\xff\xff\xff\x01", 0, 6)
    assert e.value.position == 0


def test_varlong_longer_than_ten_bytes_is_refused():
    with pytest.raises(InvalidRecordError):
        read_varlong(b"\xff" * 10 + b"\x01", 0, 11)


def test_varint_running_past_end_is_refused():
    with pytest.raises(InvalidRecordError):
        read_varint(b"\x80\x80", 0, 2)
    with pytest.raises(InvalidRecordError):
        read_varint(b"\x02", 1, 1)
    with pytest.raises(InvalidRecordError):
        read_varlong(b"\x80", 0, 1)


def test_varint_reader_never_reads_at_or_past_end():
    # The byte at `end` would complete the varint; the reader must not look at it.
    with pytest.raises(InvalidRecordError):
        read_varint(b"\x80\x01", 0, 1)


def test_fifth_byte_high_bits_are_dropped_like_kafka():
    # Kafka's readVarint shifts the 5th byte into a 32-bit int: bits beyond 32 vanish.
    assert read_varint(b"\xfe\xff\xff\xff\x7f", 0, 5) == (2**31 - 1, 5)
