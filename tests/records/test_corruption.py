"""Malformed batches: every kind of damage raises CorruptRecordError or
InvalidRecordError with a position and a reason, never IndexError,
struct.error, a codec library's exception, or a hang."""

import random
import struct

import pytest

from franz.records import (
    CompressionType,
    CorruptRecordError,
    InvalidRecordError,
    MemoryRecords,
    RecordBatch,
    RecordsError,
    SimpleRecord,
    build_batch,
)
from franz.records.constants import RECORD_BATCH_OVERHEAD, RECORDS_COUNT_OFFSET


def good(codec=CompressionType.NONE, n=5, base_offset=0):
    return bytearray(build_batch(
        [SimpleRecord(b"value-%d" % i, b"k%d" % i, 1000 + i, (("h", b"x"),)) for i in range(n)],
        base_offset=base_offset, compression_type=codec))


def records_of(data, position=0):
    batch = RecordBatch(data, position)
    return list(batch.records())


def set_count(data, count):
    struct.pack_into(">i", data, RECORDS_COUNT_OFFSET, count)


def test_batch_shorter_than_header_is_corrupt():
    with pytest.raises(CorruptRecordError, match="truncated") as e:
        RecordBatch(good()[:RECORD_BATCH_OVERHEAD - 1])
    assert e.value.position == 0 and e.value.reason


def test_truncated_batch_body_is_corrupt_at_its_position():
    data = bytearray(b"\xee" * 3) + good()
    with pytest.raises(CorruptRecordError, match="runs past") as e:
        RecordBatch(data[:-1], 3)
    assert e.value.position == 3


def test_length_pointing_past_buffer_is_corrupt():
    data = good()
    struct.pack_into(">i", data, 8, 10**9)
    with pytest.raises(CorruptRecordError, match="runs past"):
        RecordBatch(data)
    with pytest.raises(CorruptRecordError):
        list(MemoryRecords(data).batches())


def test_negative_length_is_corrupt():
    data = good()
    struct.pack_into(">i", data, 8, -1)
    with pytest.raises(CorruptRecordError, match="smaller than the minimum"):
        RecordBatch(data)


def test_wrong_magic_is_corrupt():
    for magic in (0, 1, 3, 0xFF):
        data = good()
        data[16] = magic
        with pytest.raises(CorruptRecordError, match="magic"):
            RecordBatch(data)


def test_bad_crc_is_corrupt():
    data = good()
    data[40] ^= 0x01
    with pytest.raises(CorruptRecordError, match="crc") as e:
        RecordBatch(data).ensure_valid()
    assert e.value.error_code == 2


def test_negative_record_count_is_invalid():
    data = good()
    set_count(data, -1)
    with pytest.raises(InvalidRecordError, match="record count") as e:
        records_of(data)
    assert e.value.error_code == 87


@pytest.mark.parametrize("codec", list(CompressionType))
def test_record_count_larger_than_bytes_could_hold_is_invalid(codec):
    data = good(codec)
    set_count(data, 2**31 - 1)
    with pytest.raises(InvalidRecordError, match="impossible record count"):
        records_of(data)


def test_record_count_too_high_hits_premature_end():
    data = good(n=5)
    set_count(data, 6)
    with pytest.raises(InvalidRecordError) as e:
        records_of(data)
    assert e.value.position >= RECORD_BATCH_OVERHEAD


@pytest.mark.parametrize("codec", list(CompressionType))
def test_record_count_too_low_leaves_bytes_and_is_invalid(codec):
    data = good(codec, n=5)
    set_count(data, 4)
    with pytest.raises(InvalidRecordError, match="still remaining"):
        records_of(data)


def test_varint_overflow_in_record_is_invalid():
    data = good(n=1)
    # Replace the record's timestamp delta (after length and attributes) by an 11-byte varlong.
    body = data[RECORD_BATCH_OVERHEAD:]
    bad = bytearray([body[0], 0]) + b"\xff" * 11 + b"\x00" * 20
    data = data[:RECORD_BATCH_OVERHEAD] + bad
    struct.pack_into(">i", data, 8, len(data) - 12)
    with pytest.raises(InvalidRecordError, match="longer than") as e:
        records_of(data)
    assert e.value.position == RECORD_BATCH_OVERHEAD + 2  # where the varlong starts


def test_record_length_mismatch_is_invalid():
    data = good(n=1)
    data[RECORD_BATCH_OVERHEAD] -= 2  # the record claims one byte less than it has
    with pytest.raises(InvalidRecordError, match="record"):
        records_of(data)


def test_record_length_past_batch_end_is_invalid():
    data = good(n=1)
    data[RECORD_BATCH_OVERHEAD] += 20
    with pytest.raises(InvalidRecordError, match="Invalid record size") as e:
        records_of(data)
    assert e.value.position == RECORD_BATCH_OVERHEAD


@pytest.mark.parametrize("codec", [c for c in CompressionType if c])
def test_damaged_compressed_section_is_corrupt(codec):
    data = good(codec, n=50)
    data[RECORD_BATCH_OVERHEAD + 2] ^= 0xFF  # codec framing just after the header
    data[-3] ^= 0xFF
    with pytest.raises(RecordsError):
        records_of(data)


def test_errors_carry_position_and_reason():
    e = CorruptRecordError("why", 17)
    assert (e.position, e.reason) == (17, "why") and "17" in str(e)
    assert CorruptRecordError("why").position == -1


MUTATIONS = ("flip", "truncate", "int32", "zero-run")


def mutate(rng, data):
    data = bytearray(data)
    kind = rng.choice(MUTATIONS)
    if kind == "flip":
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif kind == "truncate":
        data = data[:rng.randrange(len(data))]
    elif kind == "int32":
        pos = rng.randrange(len(data) - 4)
        struct.pack_into(">i", data, pos, rng.choice([-1, 0, 1, 2**31 - 1, -(2**31), rng.getrandbits(31)]))
    else:
        pos = rng.randrange(len(data))
        data[pos:pos + rng.randint(1, 16)] = b"\x00" * len(data[pos:pos + 16])
    return data


def decode_everything(data):
    for batch in MemoryRecords(data).batches():
        batch.header()
        batch.is_valid()
        for record in batch.records(decompressed_size_bytes_max=1 << 20):
            assert record.size_in_bytes > 0


def test_random_damage_only_raises_record_errors():
    rng = random.Random(20240607)
    originals = [good(c, n=20, base_offset=i * 20) for i, c in enumerate(CompressionType)]
    clean = b"".join(originals)
    decode_everything(clean)
    for _ in range(1500):
        try:
            decode_everything(mutate(rng, clean))
        except RecordsError as e:
            assert e.reason
