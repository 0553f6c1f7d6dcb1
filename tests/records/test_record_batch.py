"""franz/records/record_batch.py: header view, CRC, records, in-place stamping."""

import struct

import pytest
from crc32c import crc32c

from franz.records import (
    RECORD_BATCH_OVERHEAD,
    CompressionType,
    CorruptRecordError,
    InvalidRecordError,
    MemoryRecords,
    RecordBatch,
    SimpleRecord,
    TimestampType,
    build_batch,
)
from franz.records.constants import ATTRIBUTES_OFFSET, CRC_OFFSET, HEADER_STRUCT


def sample(**kw):
    records = kw.pop("records", None) or [
        SimpleRecord(b"v1", b"k1", 1000, (("h", b"x"),)),
        SimpleRecord(None, None, 1010),
        SimpleRecord(b"v3", b"k3", 1005),
    ]
    kw.setdefault("base_offset", 42)
    return bytearray(build_batch(records, **kw))


def test_header_fields_sit_at_kafka_offsets():
    data = sample(producer_id=7, producer_epoch=3, base_sequence=11, partition_leader_epoch=5)
    fields = HEADER_STRUCT.unpack_from(data, 0)
    assert fields[0] == 42 and fields[1] == len(data) - 12 and fields[2] == 5 and fields[3] == 2
    b = RecordBatch(data)
    assert b.base_offset == 42 and b.last_offset_delta == 2 and b.last_offset == 44
    assert b.next_offset == 45 and b.size_in_bytes == len(data) and b.batch_length == len(data) - 12
    assert b.partition_leader_epoch == 5 and b.magic == 2
    assert b.base_timestamp == 1000 and b.max_timestamp == 1010
    assert (b.producer_id, b.producer_epoch, b.base_sequence, b.last_sequence) == (7, 3, 11, 13)
    assert b.record_count == 3 and b.attributes == 0
    assert b.compression_type is CompressionType.NONE and b.timestamp_type is TimestampType.CREATE_TIME
    assert not (b.is_transactional or b.is_control_batch or b.has_delete_horizon)
    assert b.delete_horizon_ms is None
    assert b.header().crc == b.checksum == crc32c(bytes(data[ATTRIBUTES_OFFSET:]))


def test_records_decode_with_offsets_timestamps_and_sequences():
    b = RecordBatch(sample(producer_id=7, producer_epoch=3, base_sequence=11))
    recs = list(b.records())
    assert [(r.offset, r.timestamp, r.sequence) for r in recs] == [(42, 1000, 11), (43, 1010, 12), (44, 1005, 13)]
    assert recs[0].key == b"k1" and recs[0].headers == (("h", b"x"),)
    assert recs[1].key is None and recs[1].value is None


def test_crc_mismatch_is_detected_and_reported_with_position():
    data = bytearray(b"\x00" * 7) + sample()
    data[-1] ^= 0xFF
    b = RecordBatch(data, 7)
    assert not b.is_valid()
    with pytest.raises(CorruptRecordError) as e:
        b.ensure_valid()
    assert e.value.position == 7 and "crc" in e.value.reason


def test_fields_outside_crc_do_not_invalidate():
    data = sample()
    b = RecordBatch(data)
    b.set_base_offset(10**12)
    b.set_partition_leader_epoch(99)
    assert b.is_valid() and b.base_offset == 10**12 and b.partition_leader_epoch == 99


def test_stamp_recomputes_crc_once_for_max_timestamp_and_type():
    data = sample()
    b = RecordBatch(data)
    b.stamp(base_offset=1000, partition_leader_epoch=4, max_timestamp=5555,
            timestamp_type=TimestampType.LOG_APPEND_TIME)
    assert b.is_valid()
    assert (b.base_offset, b.partition_leader_epoch, b.max_timestamp) == (1000, 4, 5555)
    assert b.timestamp_type is TimestampType.LOG_APPEND_TIME
    assert [r.timestamp for r in b.records()] == [5555] * 3
    assert [r.offset for r in b.records()] == [1000, 1001, 1002]


def test_stamped_batch_equals_fresh_build_with_same_values():
    stamped = sample()
    RecordBatch(stamped).stamp(base_offset=7, partition_leader_epoch=2, max_timestamp=9000,
                               timestamp_type=TimestampType.LOG_APPEND_TIME)
    fresh = sample(base_offset=7, partition_leader_epoch=2,
                   timestamp_type=TimestampType.LOG_APPEND_TIME, log_append_time=9000)
    assert stamped == fresh


def test_set_max_timestamp_unchanged_is_a_no_op():
    data = sample()
    before = bytes(data)
    assert RecordBatch(data).set_max_timestamp(TimestampType.CREATE_TIME, 1010) is False
    assert bytes(data) == before


def test_set_max_timestamp_refuses_no_timestamp_type():
    with pytest.raises(ValueError):
        RecordBatch(sample()).set_max_timestamp(TimestampType.NO_TIMESTAMP_TYPE, 1)


def test_stamping_clears_unused_attribute_bits_like_kafka():
    data = sample(is_transactional=True, producer_id=1, producer_epoch=0, base_sequence=0)
    struct.pack_into(">h", data, ATTRIBUTES_OFFSET, 0x0110 | 0x10)
    b = RecordBatch(data)
    b.update_crc()
    b.set_max_timestamp(TimestampType.LOG_APPEND_TIME, 1)
    assert b.attributes == 0x18 and b.is_transactional and b.is_valid()


def test_stamping_a_read_only_buffer_fails():
    b = RecordBatch(bytes(sample()))
    with pytest.raises(TypeError):
        b.set_base_offset(1)


def test_attribute_bits_decode():
    b = RecordBatch(sample(compression_type=CompressionType.GZIP, timestamp_type=TimestampType.LOG_APPEND_TIME,
                           is_transactional=True, producer_id=1, producer_epoch=0, base_sequence=0,
                           delete_horizon_ms=77, log_append_time=2000))
    assert b.attributes == 0x01 | 0x08 | 0x10 | 0x40
    assert b.compression_type is CompressionType.GZIP and b.is_compressed
    assert b.has_delete_horizon and b.delete_horizon_ms == 77 == b.base_timestamp
    assert b.max_timestamp == 2000


def test_unknown_compression_id_is_corrupt():
    data = sample()
    data[ATTRIBUTES_OFFSET + 1] = 0x07
    b = RecordBatch(data)
    b.update_crc()
    with pytest.raises(CorruptRecordError):
        list(b.records())


def test_view_at_position_inside_larger_buffer():
    a, c = sample(base_offset=0), sample(base_offset=3)
    buf = a + c
    b = RecordBatch(buf, len(a))
    assert b.position == len(a) and b.base_offset == 3 and b.is_valid()
    assert b.to_bytes() == bytes(c)
    assert [r.offset for r in b.records()] == [3, 4, 5]


def test_empty_batch_has_no_records():
    data = sample()
    struct.pack_into(">i", data, 57, 0)
    b = RecordBatch(data)
    assert list(b.records()) == []


def test_header_view_reads_fields_but_not_records():
    data = sample()
    h = RecordBatch.header_view(bytes(data[:RECORD_BATCH_OVERHEAD]))
    assert h.base_offset == 42 and h.size_in_bytes == len(data) and h.record_count == 3
    with pytest.raises(ValueError):
        h.is_valid()


def test_repr_names_offsets_and_crc():
    assert "offsets=[42, 44]" in repr(RecordBatch(sample()))


def test_equal_batches_compare_equal():
    assert RecordBatch(sample()) == RecordBatch(bytes(sample()))
    assert RecordBatch(sample()) != RecordBatch(sample(base_offset=1))


def test_crc_covers_attributes_to_end():
    data = sample()
    assert struct.unpack_from(">I", data, CRC_OFFSET)[0] == crc32c(bytes(data[21:]))


def test_stamp_timestamp_type_alone_keeps_max_timestamp():
    data = sample()
    b = RecordBatch(data)
    b.stamp(timestamp_type=TimestampType.LOG_APPEND_TIME)
    assert b.max_timestamp == 1010 and b.timestamp_type is TimestampType.LOG_APPEND_TIME and b.is_valid()


def test_stamp_max_timestamp_alone_keeps_timestamp_type():
    data = sample()
    b = RecordBatch(data)
    b.stamp(max_timestamp=2020)
    assert b.max_timestamp == 2020 and b.timestamp_type is TimestampType.CREATE_TIME and b.is_valid()


def test_stamp_with_unchanged_timestamp_leaves_crc_bytes_alone():
    data = sample()
    crc = bytes(data[17:21])
    RecordBatch(data).stamp(base_offset=3, max_timestamp=1010, timestamp_type=TimestampType.CREATE_TIME)
    assert bytes(data[17:21]) == crc


def test_stamp_equals_the_set_methods():
    a, b = sample(), sample()
    RecordBatch(a).stamp(base_offset=9, partition_leader_epoch=1, max_timestamp=77,
                         timestamp_type=TimestampType.LOG_APPEND_TIME)
    vb = RecordBatch(b)
    vb.set_base_offset(9)
    vb.set_partition_leader_epoch(1)
    vb.set_max_timestamp(TimestampType.LOG_APPEND_TIME, 77)
    assert a == b


def test_set_last_offset_moves_base_offset():
    b = RecordBatch(sample())
    b.set_last_offset(100)
    assert (b.base_offset, b.last_offset) == (98, 100)


@pytest.mark.parametrize("codec", list(CompressionType))
def test_record_keys_agree_with_the_full_decoder(codec):
    """Keys and values across the 1-, 2- and 3-byte varint lengths, null keys and values,
    offset deltas past 63 and 8191, headers: the lean scan sees what records() sees."""
    records = [SimpleRecord(None if i % 5 == 0 else b"v" * (i * 37 % 9000), key=None if i % 7 == 0 else
                            b"k" * (i * 13 % 200), headers=(("h", b"x" * (i % 3)),) if i % 2 else ())
               for i in range(9000)]
    batch = next(MemoryRecords(build_batch(records, base_offset=500, compression_type=codec)).batches())
    assert [tuple(k) for k in batch.record_keys()] == [(r.offset, r.key, r.value is not None) for r in batch.records()]


def test_record_keys_refuse_a_record_that_runs_past_its_batch():
    data = bytearray(build_batch([SimpleRecord(b"value", key=b"key")]))
    data[RECORD_BATCH_OVERHEAD] = 0x7E  # the record's length varint: 63 bytes, more than the batch holds
    with pytest.raises(InvalidRecordError):
        next(MemoryRecords(data).batches()).record_keys()
