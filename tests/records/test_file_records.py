"""franz/records/file_records.py: a file of batches, its slices and searches."""

import os
import socket
import struct

import pytest

from franz.records import (
    CorruptRecordError,
    FileRecords,
    LogOffsetPosition,
    MemoryRecords,
    RecordsError,
    SimpleRecord,
    TimestampAndOffset,
    build_batch,
)


def batch(base_offset, timestamps, epoch=-1):
    return build_batch([SimpleRecord(b"v%d" % i, timestamp=t) for i, t in enumerate(timestamps)],
                       base_offset=base_offset, partition_leader_epoch=epoch)


@pytest.fixture
def fr(tmp_path):
    f = FileRecords.open(tmp_path / "00000000000000000000.log")
    yield f
    f.close()


def fill(fr):
    parts = [batch(0, [10, 30]), batch(2, [20, 25], epoch=1), batch(4, [50], epoch=2)]
    for p in parts:
        assert fr.append(MemoryRecords(p)) == len(p)
    return parts


def test_append_grows_size_and_batches_read_back(fr):
    parts = fill(fr)
    assert fr.size_in_bytes == sum(map(len, parts))
    bs = list(fr.batches())
    assert [b.base_offset for b in bs] == [0, 2, 4]
    assert [b.position for b in bs] == [0, len(parts[0]), len(parts[0]) + len(parts[1])]
    assert all(b.is_valid() for b in bs)
    assert [r.offset for r in fr.records()] == [0, 1, 2, 3, 4]
    assert bs[1].to_bytes() == parts[1] and bs[1].last_offset == 3 and bs[1].partition_leader_epoch == 1


def test_batches_from_a_position(fr):
    parts = fill(fr)
    assert [b.base_offset for b in fr.batches(len(parts[0]))] == [2, 4]


def test_truncated_trailing_batch_is_cut(fr):
    parts = fill(fr)
    os.ftruncate(fr.fd, fr.size_in_bytes - 3)
    reopened = FileRecords.open(fr.path)
    try:
        assert [b.base_offset for b in reopened.batches()] == [0, 2]
        valid = sum(b.size_in_bytes for b in reopened.batches())
        assert reopened.truncate_to(valid) == len(parts[2]) - 3
        assert reopened.size_in_bytes == valid == os.path.getsize(fr.path)
    finally:
        reopened.close()


def test_corrupt_length_raises_with_position(fr):
    parts = fill(fr)
    os.pwrite(fr.fd, struct.pack(">i", 3), len(parts[0]) + 8)
    with pytest.raises(CorruptRecordError) as e:
        list(fr.batches())
    assert e.value.position == len(parts[0])


def test_flipped_byte_fails_crc_of_that_batch_only(fr):
    parts = fill(fr)
    os.pwrite(fr.fd, b"\xff", len(parts[0]) + 70)
    assert [b.is_valid() for b in fr.batches()] == [True, False, True]
    with pytest.raises(CorruptRecordError) as e:
        for b in fr.batches():
            b.ensure_valid()
    assert e.value.position == len(parts[0])


def test_search_for_offset_with_size(fr):
    parts = fill(fr)
    assert fr.search_for_offset_with_size(3, 0) == LogOffsetPosition(3, len(parts[0]), len(parts[1]))
    assert fr.search_for_offset_with_size(0, 0) == LogOffsetPosition(1, 0, len(parts[0]))
    assert fr.search_for_offset_with_size(5, 0) is None


def test_search_for_timestamp_finds_first_record_at_or_after(fr):
    fill(fr)
    assert fr.search_for_timestamp(25, 0, 0) == TimestampAndOffset(30, 1, None)
    assert fr.search_for_timestamp(25, 0, 2) == TimestampAndOffset(25, 3, 1)
    assert fr.search_for_timestamp(51, 0, 0) is None


def test_largest_timestamp_after(fr):
    parts = fill(fr)
    assert fr.largest_timestamp_after(0) == TimestampAndOffset(50, 4, 2)
    fr2 = FileRecords.open(fr.path)
    try:
        fr2.truncate_to(len(parts[0]) + len(parts[1]))
        assert fr2.largest_timestamp_after(0) == TimestampAndOffset(30, 1, None)
    finally:
        fr2.close()


def test_slice_sees_only_its_region(fr):
    parts = fill(fr)
    s = fr.slice(len(parts[0]), len(parts[1]))
    assert s.size_in_bytes == len(parts[1]) and s.start == len(parts[0])
    assert [b.base_offset for b in s.batches()] == [2]
    assert s.read_bytes(0, 10**6) == parts[1]
    assert fr.slice(len(parts[0]), 10**9).size_in_bytes == len(parts[1]) + len(parts[2])
    with pytest.raises(ValueError):
        fr.slice(fr.size_in_bytes + 1, 1)
    s.close()  # a slice never closes the shared descriptor
    assert fr.read_bytes(0, 5) == parts[0][:5]


def test_read_into_fills_buffer(fr):
    parts = fill(fr)
    buf = bytearray(len(parts[0]))
    assert fr.read_into(buf, 0) == len(parts[0]) and buf == parts[0]


def test_preallocated_file_starts_empty_and_trims_on_close(tmp_path):
    path = tmp_path / "p.log"
    f = FileRecords.open(path, preallocate_bytes=4096)
    assert f.size_in_bytes == 0 and os.path.getsize(path) == 4096
    data = batch(0, [1])
    f.append(data)
    f.close()
    assert os.path.getsize(path) == len(data)


def test_truncate_to_refuses_growth(fr):
    fill(fr)
    with pytest.raises(RecordsError):
        fr.truncate_to(fr.size_in_bytes + 1)


def test_write_to_sends_file_bytes_over_a_socket(fr):
    parts = fill(fr)
    a, b = socket.socketpair()
    try:
        sent = fr.write_to(a.fileno(), len(parts[0]), len(parts[1]))
        assert sent == len(parts[1])
        got = b""
        while len(got) < sent:
            got += b.recv(65536)
        assert got == parts[1]
    finally:
        a.close()
        b.close()


def test_rename_and_delete(fr, tmp_path):
    fill(fr)
    new = tmp_path / "renamed.log"
    fr.rename_to(new)
    assert fr.path == str(new) and new.exists()
    assert fr.delete_if_exists() and not new.exists()
    assert not fr.delete_if_exists()


def test_read_only_open(fr):
    fill(fr)
    fr.flush()
    ro = FileRecords.open(fr.path, mutable=False)
    try:
        assert [b.base_offset for b in ro.batches()] == [0, 2, 4]
    finally:
        ro.close()
