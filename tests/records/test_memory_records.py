"""franz/records/memory_records.py: walking a buffer of batches."""

import struct

import pytest

from franz.records import (
    CompressionType,
    ControlRecordType,
    CorruptRecordError,
    MemoryRecords,
    SimpleRecord,
    build_batch,
)


def batches_buffer(n=3, per=2):
    out = bytearray()
    for i in range(n):
        out += build_batch([SimpleRecord(b"v%d" % j, timestamp=100 + j) for j in range(per)],
                           base_offset=i * per)
    return out


def test_batches_walks_every_batch_in_order():
    mr = MemoryRecords(batches_buffer())
    assert [b.base_offset for b in mr.batches()] == [0, 2, 4]
    assert [r.offset for r in mr.records()] == list(range(6))
    assert mr.size_in_bytes == len(mr.buffer) == mr.valid_bytes()


def test_empty_buffer_has_no_batches():
    assert list(MemoryRecords(b"").batches()) == []
    assert MemoryRecords.EMPTY.first_batch() is None


def test_truncated_trailing_batch_raises_with_its_position():
    buf = batches_buffer()
    first = MemoryRecords(buf).first_batch().size_in_bytes
    cut = bytes(buf[:-5])
    with pytest.raises(CorruptRecordError) as e:
        list(MemoryRecords(cut).batches())
    assert e.value.position == 2 * first


def test_truncated_trailing_batch_is_skipped_when_partial_allowed():
    buf = batches_buffer()
    mr = MemoryRecords(bytes(buf[:-5]))
    assert [b.base_offset for b in mr.batches(stop_at_partial_batch=True)] == [0, 2]
    assert mr.valid_bytes() == 2 * mr.first_batch().size_in_bytes


def test_fewer_bytes_than_log_overhead_is_truncated():
    buf = batches_buffer(1) + b"\x00" * 5
    with pytest.raises(CorruptRecordError):
        list(MemoryRecords(buf).batches())
    assert len(list(MemoryRecords(buf).batches(stop_at_partial_batch=True))) == 1


def test_length_smaller_than_header_is_corrupt_even_when_partial_allowed():
    buf = batches_buffer(1)
    struct.pack_into(">i", buf, 8, 10)
    with pytest.raises(CorruptRecordError, match="smaller than the minimum"):
        list(MemoryRecords(buf).batches(stop_at_partial_batch=True))


def test_wrong_magic_is_corrupt():
    buf = batches_buffer(2)
    second = MemoryRecords(buf).first_batch().size_in_bytes
    buf[second + 16] = 1
    with pytest.raises(CorruptRecordError, match="magic") as e:
        list(MemoryRecords(buf).batches())
    assert e.value.position == second


def test_with_records_builds_one_batch():
    mr = MemoryRecords.with_records([SimpleRecord(b"a", timestamp=5)], base_offset=9,
                                    compression_type=CompressionType.LZ4)
    (b,) = list(mr.batches())
    assert b.base_offset == 9 and b.is_valid() and b.compression_type is CompressionType.LZ4


def test_with_end_transaction_marker():
    mr = MemoryRecords.with_end_transaction_marker(
        ControlRecordType.ABORT, producer_id=3, producer_epoch=1, coordinator_epoch=4, timestamp=1)
    b = mr.first_batch()
    assert b.is_control_batch and b.is_transactional and b.producer_id == 3


def test_batches_over_memoryview_and_from_position():
    buf = batches_buffer()
    first = MemoryRecords(buf).first_batch().size_in_bytes
    mr = MemoryRecords(memoryview(buf))
    assert [b.base_offset for b in mr.batches(first)] == [2, 4]


def test_validate_batches_yields_positions_and_headers():
    buf = batches_buffer()
    mr = MemoryRecords(buf)
    got = list(mr.validate_batches())
    assert [(p, h) for p, h in got] == [(b.position, b.header()) for b in mr.batches()]
    assert [h.base_offset for _, h in got] == [0, 2, 4]


def test_validate_batches_raises_at_the_first_bad_crc():
    buf = batches_buffer()
    second = MemoryRecords(buf).first_batch().size_in_bytes
    buf[second + 70] ^= 0x10
    seen = []
    with pytest.raises(CorruptRecordError, match="crc") as e:
        for pos, _ in MemoryRecords(buf).validate_batches():
            seen.append(pos)
    assert seen == [0] and e.value.position == second


def test_validate_batches_reports_structure_like_batches():
    buf = batches_buffer()
    with pytest.raises(CorruptRecordError, match="runs past"):
        list(MemoryRecords(bytes(buf[:-5])).validate_batches())
    assert len(list(MemoryRecords(bytes(buf[:-5])).validate_batches(stop_at_partial_batch=True))) == 2
    assert len(list(MemoryRecords(bytes(buf) + b"\x00" * 5).validate_batches(stop_at_partial_batch=True))) == 3
    with pytest.raises(CorruptRecordError, match="truncated"):
        list(MemoryRecords(bytes(buf) + b"\x00" * 5).validate_batches())
    with pytest.raises(CorruptRecordError, match="smaller than the minimum"):  # Kafka: even if partial
        list(MemoryRecords(bytes(buf) + b"\x00" * 20).validate_batches(stop_at_partial_batch=True))
    bad = bytearray(buf)
    bad[16] = 1
    with pytest.raises(CorruptRecordError, match="magic"):
        list(MemoryRecords(bad).validate_batches())
