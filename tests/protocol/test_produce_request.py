"""ProduceRequest.validateRecords: what each partition of a Produce request may carry; and
RequestUtils.hasTransactionalRecords, the walk over every partition's first batch."""

import struct

import pytest

from franz.protocol.errors import Errors
from franz.protocol.produce_request import InvalidProduceRecordsError, has_transactional_records, validate_records
from franz.records import CompressionType, SimpleRecord, build_batch


def one_batch(*values: bytes, compression: CompressionType = CompressionType.NONE) -> bytes:
    return bytes(build_batch([SimpleRecord(v) for v in values], compression_type=compression))


def refused(version: int, records: bytes) -> InvalidProduceRecordsError:
    with pytest.raises(InvalidProduceRecordsError) as info:
        validate_records(version, records)
    return info.value


@pytest.mark.parametrize("version", [3, 9, 12])
def test_one_whole_v2_batch_is_accepted(version):
    validate_records(version, one_batch(b"a", b"b"))


def test_two_batches_in_one_partition_are_an_invalid_record():
    error = refused(9, one_batch(b"a") + one_batch(b"b"))
    assert error.error_code == Errors.INVALID_RECORD
    assert "exactly one record batch per partition" in str(error)


@pytest.mark.parametrize("records", [b"", b"\x00" * 11, one_batch(b"a")[:40]], ids=["empty", "short", "cut"])
def test_records_without_a_whole_batch_are_an_invalid_record(records):
    error = refused(9, records)
    assert error.error_code == Errors.INVALID_RECORD
    assert "at least one record batch per partition" in str(error)


def test_bytes_after_the_batch_that_make_no_whole_batch_pass_as_in_kafka():
    # The log trims them (UnifiedLog.trimInvalidBytes); the request check does not see a second batch.
    batch = one_batch(b"a")
    validate_records(9, batch + batch[:30])
    validate_records(9, batch + b"\x00" * 5)


def test_an_old_magic_is_an_invalid_record():
    records = bytearray(one_batch(b"a"))
    records[16] = 1
    error = refused(9, bytes(records))
    assert error.error_code == Errors.INVALID_RECORD
    assert "magic version 2" in str(error)


@pytest.mark.parametrize("magic", [3, 0xFF])
def test_an_unknown_magic_is_a_corrupt_record(magic):
    records = bytearray(one_batch(b"a"))
    records[16] = magic
    error = refused(9, bytes(records))
    assert error.error_code == Errors.CORRUPT_MESSAGE
    assert "Invalid magic found in record" in str(error)


def test_a_size_below_the_smallest_record_is_a_corrupt_record():
    records = bytearray(one_batch(b"a"))
    struct.pack_into(">i", records, 8, 13)
    error = refused(9, bytes(records))
    assert error.error_code == Errors.CORRUPT_MESSAGE
    assert "Record size 13 is less than the minimum record overhead (14)" in str(error)


def test_a_second_batch_with_a_corrupt_size_is_a_corrupt_record():
    tail = bytearray(one_batch(b"b"))
    struct.pack_into(">i", tail, 8, 2)
    assert refused(9, one_batch(b"a") + bytes(tail)).error_code == Errors.CORRUPT_MESSAGE


def test_zstd_needs_produce_v7():
    records = one_batch(b"a", compression=CompressionType.ZSTD)
    error = refused(6, records)
    assert error.error_code == Errors.UNSUPPORTED_COMPRESSION_TYPE
    assert "ZStandard" in str(error)
    validate_records(7, records)


def test_versions_below_three_are_not_checked():
    validate_records(2, one_batch(b"a") + one_batch(b"b"))


def _topic_data(*records) -> list[dict]:
    return [{"name": "t", "partition_data": [{"index": i, "records": r} for i, r in enumerate(records)]}]


def _transactional(*values: bytes) -> bytes:
    return bytes(build_batch([SimpleRecord(v) for v in values], producer_id=7, producer_epoch=0, base_sequence=0,
                             is_transactional=True))


def test_a_transactional_first_batch_in_any_partition_is_found():
    assert not has_transactional_records(_topic_data(one_batch(b"a"), None, b"", one_batch(b"b")))
    assert has_transactional_records(_topic_data(one_batch(b"a"), _transactional(b"t")))
    assert not has_transactional_records(_topic_data(_transactional(b"t")[:-1]))  # not a whole batch


@pytest.mark.parametrize("corrupt, message", [
    (struct.pack(">qi", 0, 13) + bytes(8), "Record size 13 is less than the minimum record overhead (14)"),
    (struct.pack(">qii", 0, 60, 0) + b"\x03" + bytes(60), "Invalid magic found in record: 3"),
], ids=["size", "magic"])
def test_a_corrupt_first_batch_fails_the_walk_unless_a_transactional_one_came_first(corrupt, message):
    with pytest.raises(InvalidProduceRecordsError) as info:
        has_transactional_records(_topic_data(one_batch(b"a"), corrupt))
    assert info.value.error_code == Errors.CORRUPT_MESSAGE and message in str(info.value)
    assert has_transactional_records(_topic_data(_transactional(b"t"), corrupt))
