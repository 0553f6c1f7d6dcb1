"""Behaviours of Kafka's LogValidatorTest, as franz's own tests.

Every test runs three times: through the C module that takes the common case
(franz/storage/_validator_fast.c), through the Python path with only its record
walk in C, and through the Python path alone, which is what runs when the C
module declines or is not built."""

import pytest

from franz.records import (
    CompressionType,
    ControlRecordType,
    MemoryRecords,
    MemoryRecordsBuilder,
    SimpleRecord,
    TimestampType,
    build_batch,
    build_control_batch,
)
from franz.storage import validator
from franz.storage.log_config import LogConfig
from franz.storage.validator import (
    CORRUPT_MESSAGE,
    INVALID_RECORD,
    INVALID_TIMESTAMP,
    MESSAGE_TOO_LARGE,
    RecordValidationError,
    validate_messages_and_assign_offsets,
)

NOW = 1_700_000_000_000


@pytest.fixture(autouse=True, params=["native", "record-walk-only", "python"])
def validator_path(request, monkeypatch):
    assert validator.assign_offsets_non_compressed is not None, "franz.storage._validator_fast is not built"
    if request.param != "native":
        monkeypatch.setattr(validator, "assign_offsets_non_compressed", None)
    if request.param == "python":
        monkeypatch.setattr(validator, "walk_records", None)
    return request.param


def produce(*values, compression=CompressionType.NONE, timestamp=NOW, keys=None, base_offset=0):
    keys = keys or [None] * len(values)
    return MemoryRecords(bytearray(build_batch(
        [SimpleRecord(v, key=k, timestamp=timestamp) for v, k in zip(values, keys, strict=True)],
        base_offset=base_offset, compression_type=compression)))


def validate(records, config=None, next_offset=100, epoch=5):
    return validate_messages_and_assign_offsets(records, next_offset, NOW, config or LogConfig.from_props({}), epoch)


@pytest.mark.parametrize("codec", list(CompressionType))
def test_offsets_and_epoch_are_assigned_in_place_and_the_crc_stays_valid(codec):
    result = validate(produce(b"a", b"b", b"c", compression=codec))
    batch = next(result.validated_records.batches())
    assert (batch.base_offset, batch.last_offset, batch.partition_leader_epoch) == (100, 102, 5)
    assert batch.is_valid()
    assert [r.offset for r in batch.records()] == [100, 101, 102]
    assert (result.first_offset, result.last_offset, result.num_messages) == (100, 102, 3)


def test_log_append_time_stamps_now():
    config = LogConfig.from_props({"message.timestamp.type": "LogAppendTime"})
    result = validate(produce(b"a", timestamp=5), config)
    batch = next(result.validated_records.batches())
    assert batch.timestamp_type == TimestampType.LOG_APPEND_TIME
    assert batch.max_timestamp == NOW and result.log_append_time_ms == NOW and batch.is_valid()


def test_a_timestamp_outside_the_allowed_range_is_invalid():
    config = LogConfig.from_props({"message.timestamp.before.max.ms": "1000"})
    with pytest.raises(RecordValidationError) as info:
        validate(produce(b"old", timestamp=NOW - 5000), config)
    assert info.value.error_code == INVALID_TIMESTAMP
    with pytest.raises(RecordValidationError) as info:
        validate(produce(b"future", timestamp=NOW + 2 * 3_600_000))
    assert info.value.error_code == INVALID_TIMESTAMP


def test_a_batch_over_max_message_bytes_is_too_large():
    config = LogConfig.from_props({"max.message.bytes": "100"})
    with pytest.raises(RecordValidationError) as info:
        validate(produce(b"x" * 200), config)
    assert info.value.error_code == MESSAGE_TOO_LARGE


def test_record_validation_stats_count_decompressed_memory_and_rebuilt_records():
    """LogValidator's RecordValidationStats: none for uncompressed records kept so; a compressed
    batch's records decompressed (with a batch header); a rebuild's records, memory and time."""
    assert validate(produce(b"a", b"b")).record_validation_stats is None
    gzipped = produce(b"a" * 50, b"b" * 50, compression=CompressionType.GZIP)
    records_size = sum(record.size_in_bytes for record in next(gzipped.batches()).records())
    kept = validate(gzipped).record_validation_stats
    assert kept == (61 + records_size, 0, 0)
    plain = produce(b"a" * 50, b"b" * 50)
    rebuilt = validate(plain, LogConfig.from_props({"compression.type": "zstd"})).record_validation_stats
    assert rebuilt.temporary_memory_bytes == 2 * (61 + records_size)  # read, then written again
    assert rebuilt.num_records_converted == 2 and rebuilt.conversion_time_ns > 0


def test_a_bad_crc_is_corrupt():
    records = produce(b"a")
    records.buffer[-1] ^= 0xFF
    with pytest.raises(RecordValidationError) as info:
        validate(records)
    assert info.value.error_code == CORRUPT_MESSAGE
    assert info.value.all_topics_marks == (("InvalidMessageCrcRecordsPerSec", 1),)


def test_a_bad_crc_is_looked_at_after_the_base_offset_and_the_size():
    # UnifiedLog.analyzeAndValidateRecords' order: a client's base offset, the size, then the CRC.
    records = produce(b"a", base_offset=7)
    records.buffer[-1] ^= 0xFF
    error = _refused(records)
    assert error.error_code == INVALID_RECORD and error.all_topics_marks == ()
    records = produce(b"x" * 200)
    records.buffer[-1] ^= 0xFF
    error = _refused(records, LogConfig.from_props({"max.message.bytes": "100"}))
    assert error.error_code == MESSAGE_TOO_LARGE and error.all_topics_marks == ()


def test_a_nonzero_base_offset_from_a_client_is_invalid():
    with pytest.raises(RecordValidationError) as info:
        validate(produce(b"a", base_offset=7))
    assert info.value.error_code == INVALID_RECORD


def test_compacted_topics_require_keys_record_by_record():
    config = LogConfig.from_props({"cleanup.policy": "compact"})
    with pytest.raises(RecordValidationError) as info:
        validate(produce(b"a", b"b", keys=[b"k", None], compression=CompressionType.GZIP), config)
    assert info.value.error_code == INVALID_RECORD
    assert info.value.record_errors[0][:2] == (0, 1)
    validate(produce(b"a", keys=[b"k"]), config)


def test_the_topic_codec_recompresses_a_different_producer_codec():
    config = LogConfig.from_props({"compression.type": "zstd"})
    result = validate(produce(b"a", b"b", compression=CompressionType.GZIP), config)
    batch = next(result.validated_records.batches())
    assert batch.compression_type == CompressionType.ZSTD and batch.is_valid()
    assert [r.value for r in batch.records()] == [b"a", b"b"]
    assert [r.offset for r in batch.records()] == [100, 101]
    assert result.messages_size_maybe_changed


@pytest.mark.parametrize(("codec", "low", "high"), [("gzip", 1, 9), ("lz4", 1, 17), ("zstd", 1, 19)])
def test_a_rebuilt_batch_is_compressed_at_the_topics_level(codec, low, high):
    # Kafka's LogConfig.getCompression: compression.type=<codec> carries compression.<codec>.level
    # (KIP-390), and the validator compresses what it rebuilds at that level.
    values = [bytes(range(256)) * 4 + str(i).encode() * 300 for i in range(40)]
    sections = {}
    for level in (low, high):
        config = LogConfig.from_props({"compression.type": codec, f"compression.{codec}.level": level})
        batch = next(validate(produce(*values), config).validated_records.batches())
        expected = build_batch([SimpleRecord(v, timestamp=NOW) for v in values],
                               compression_type=CompressionType[codec.upper()], compression_level=level)
        sections[level] = bytes(batch.buffer[batch.position + 61:batch.position + batch.size_in_bytes])
        assert sections[level] == expected[61:]  # the compressed records, byte for byte
        assert [r.value for r in batch.records()] == values
    assert sections[low] != sections[high]


def test_a_rebuilt_batch_keeps_the_producer_fields_as_sent():
    # buildRecordsAndAssignOffsets copies the first batch's producer id, epoch and sequence,
    # whatever they are; without a producer id Kafka checks neither of the other two.
    records = produce(b"a", b"b")
    header = bytearray(records.buffer)
    header[51:53] = (5).to_bytes(2, "big")  # producer epoch, beside producer id -1
    header[53:57] = (9).to_bytes(4, "big")  # base sequence
    records = _resealed(MemoryRecords(header))
    batch = next(validate(records, LogConfig.from_props({"compression.type": "gzip"})).validated_records.batches())
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (-1, 5, 9)
    assert batch.compression_type == CompressionType.GZIP and batch.is_valid()


def _refused(records, config=None) -> RecordValidationError:
    with pytest.raises(RecordValidationError) as info:
        validate(records, config)
    return info.value


def _resealed(records) -> MemoryRecords:
    """`records` with its CRC recomputed after a header edit, so that only the edit is wrong."""
    batch = next(records.batches())
    batch.update_crc()
    return records


def test_a_control_batch_from_a_client_is_invalid():
    records = produce(b"a")
    records.buffer[22] |= 0x20  # attributes, low byte: the control bit
    error = _refused(_resealed(records))
    assert error.error_code == INVALID_RECORD and "control records" in str(error)
    assert error.all_topics_marks == (("InvalidOffsetOrSequenceRecordsPerSec", 1),)


def test_a_last_offset_delta_that_does_not_fit_the_record_count_is_invalid():
    records = produce(b"a", b"b")
    records.buffer[23:27] = (5).to_bytes(4, "big")  # lastOffsetDelta 5 for 2 records
    error = _refused(_resealed(records))
    assert error.error_code == INVALID_RECORD and "lastOffsetDelta 5" in str(error)
    assert error.all_topics_marks == (("InvalidOffsetOrSequenceRecordsPerSec", 1),)


def test_a_follower_takes_a_compacted_batch_whose_offset_range_outlives_its_records():
    """LogValidator checks the count against the offset range for clients only: a batch the
    cleaner compacted keeps its last offset with fewer records, and is copied as it is."""
    records = produce(b"a", b"b")
    records.buffer[23:27] = (5).to_bytes(4, "big")  # lastOffsetDelta 5 for 2 records
    batches, headers = validator.analyze_and_validate(_resealed(records), LogConfig.from_props({}, {}),
                                                       is_from_client=False)
    assert len(batches) == 1 and headers[0].last_offset_delta == 5 and headers[0].record_count == 2


def test_an_unknown_compression_codec_is_corrupt():
    records = produce(b"a")
    records.buffer[22] |= 0x06  # codec id 6: Kafka defines 0-4
    error = _refused(_resealed(records))
    assert error.error_code == CORRUPT_MESSAGE and "Unknown compression type id: 6" in str(error)


def test_a_log_append_time_bit_from_the_client_is_cleared_on_a_create_time_topic():
    records = MemoryRecords(bytearray(build_batch([SimpleRecord(b"a", timestamp=NOW - 10)],
                                                  timestamp_type=TimestampType.LOG_APPEND_TIME,
                                                  log_append_time=NOW - 5)))
    result = validate(records)
    batch = next(result.validated_records.batches())
    assert batch.timestamp_type == TimestampType.CREATE_TIME and batch.is_valid()
    assert result.log_append_time_ms == -1


def test_records_without_a_timestamp_pass_the_range_check():
    config = LogConfig.from_props({"message.timestamp.before.max.ms": "1000"})
    records = produce(b"a")
    records.buffer[27:43] = (-1).to_bytes(8, "big", signed=True) * 2  # base and max timestamp: NO_TIMESTAMP
    result = validate(_resealed(records), config)
    assert result.max_timestamp_ms == -1 and result.shallow_offset_of_max_timestamp == -1


def test_bytes_after_the_last_whole_batch_are_trimmed_not_refused():
    # UnifiedLog.trimInvalidBytes: a partial batch trailing the request is dropped.
    whole = produce(b"a", b"b")
    size = whole.size_in_bytes
    records = MemoryRecords(bytearray(whole.buffer) + bytes(produce(b"c").buffer)[:40])
    result = validate(records)
    assert result.validated_records.size_in_bytes == size
    assert [batch.last_offset for batch in result.validated_records.batches()] == [101]
    assert (result.first_offset, result.last_offset) == (100, 101)


def test_records_with_no_whole_batch_are_an_invalid_record():
    with pytest.raises(RecordValidationError) as info:
        validate(MemoryRecords(bytearray(produce(b"a").buffer)[:40]))
    assert info.value.error_code == INVALID_RECORD


def test_every_record_timestamp_is_checked_not_only_the_batch_max():
    # LogValidator.validateTimestamp runs per record: the header's max is in range here.
    config = LogConfig.from_props({"message.timestamp.before.max.ms": "1000"})
    records = MemoryRecords(bytearray(build_batch([SimpleRecord(b"old", timestamp=NOW - 5000),
                                                   SimpleRecord(b"new", timestamp=NOW)])))
    error = _refused(records, config)
    assert error.error_code == INVALID_TIMESTAMP
    assert [index for _batch, index, _message in error.record_errors] == [0]
    assert "One or more records have been rejected due to invalid timestamp" in str(error)


def test_a_header_max_timestamp_that_disagrees_with_the_records_is_rewritten():
    # setMaxTimestamp(CREATE_TIME, the records' max): the header's claim is not trusted.
    records = produce(b"a", b"b", timestamp=NOW - 10)
    records.buffer[35:43] = (NOW + 999).to_bytes(8, "big")  # maxTimestamp
    result = validate(_resealed(records))
    batch = next(result.validated_records.batches())
    assert batch.max_timestamp == NOW - 10 and batch.is_valid()
    assert (result.max_timestamp_ms, result.shallow_offset_of_max_timestamp) == (NOW - 10, 101)


def test_a_record_that_does_not_parse_is_an_invalid_record():
    # An uncompressed batch with a good CRC whose first record claims more bytes than the batch holds.
    records = produce(b"a", b"b")
    records.buffer[61] = 0x7E  # the first record's length varint: 63 bytes
    error = _refused(_resealed(records))
    assert error.error_code == INVALID_RECORD


def test_records_left_over_after_the_declared_count_are_an_invalid_record():
    records = produce(b"a", b"b")
    records.buffer[23:27] = (0).to_bytes(4, "big")  # lastOffsetDelta 0
    records.buffer[57:61] = (1).to_bytes(4, "big")  # recordCount 1, but two records follow
    error = _refused(_resealed(records))
    assert error.error_code == INVALID_RECORD


def test_a_producer_id_without_a_sequence_is_an_invalid_record():
    records = MemoryRecords(bytearray(build_batch([SimpleRecord(b"a", timestamp=NOW)], producer_id=7,
                                                  producer_epoch=0, base_sequence=0)))
    records.buffer[53:57] = (-1).to_bytes(4, "big", signed=True)  # baseSequence
    error = _refused(_resealed(records))
    assert error.error_code == INVALID_RECORD and "Invalid sequence number -1" in str(error)
    assert error.all_topics_marks == (("InvalidOffsetOrSequenceRecordsPerSec", 1),)


def test_uncompressed_compacted_records_need_keys_too():
    config = LogConfig.from_props({"cleanup.policy": "compact"})
    error = _refused(produce(b"a", b"b", None, keys=[b"k", None, None]), config)
    assert error.error_code == INVALID_RECORD
    assert [(batch, index) for batch, index, _message in error.record_errors] == [(0, 1), (0, 2)]
    assert error.all_topics_marks == (("NoKeyCompactedTopicRecordsPerSec", 2),)  # one per record


def test_more_than_one_batch_for_a_partition_is_an_invalid_record():
    # LogValidator.getFirstBatchAndMaybeValidateNoMoreBatches: v2 produces carry one batch.
    records = MemoryRecords(bytearray(produce(b"a").buffer) + bytearray(produce(b"b").buffer))
    error = _refused(records)
    assert error.error_code == INVALID_RECORD and "more than one batch" in str(error)


def test_a_compressed_batch_with_inner_offsets_out_of_sequence_is_rebuilt_not_refused():
    # "Some older clients do not implement the V1 internal offsets correctly": Kafka rewrites them.
    builder = MemoryRecordsBuilder(compression_type=CompressionType.GZIP, base_offset=0)
    for delta, value in ((0, b"a"), (5, b"b"), (9, b"c")):
        builder.append_with_offset(delta, NOW, None, value, ())
    records = MemoryRecords(bytearray(builder.build_bytes()))
    records.buffer[23:27] = (2).to_bytes(4, "big")  # lastOffsetDelta: three records
    result = validate(_resealed(records))
    batch = next(result.validated_records.batches())
    assert [r.offset for r in batch.records()] == [100, 101, 102]
    assert [r.value for r in batch.records()] == [b"a", b"b", b"c"]
    assert batch.compression_type == CompressionType.GZIP and batch.is_valid()
    assert result.messages_size_maybe_changed and (result.first_offset, result.last_offset) == (100, 102)


def test_a_transaction_marker_stays_an_uncompressed_control_batch_on_a_compressed_topic():
    # LogValidator: "do not compress control records unless they are written compressed".
    config = LogConfig.from_props({"compression.type": "zstd"})
    marker = MemoryRecords(bytearray(build_control_batch(ControlRecordType.COMMIT, producer_id=9,
                                                         producer_epoch=0, timestamp=NOW)))
    result = validate_messages_and_assign_offsets(marker, 100, NOW, config, 5, is_from_client=False)
    batch = next(result.validated_records.batches())
    assert batch.is_control_batch and batch.compression_type == CompressionType.NONE and batch.is_valid()
    assert not result.messages_size_maybe_changed and (batch.base_offset, batch.producer_id) == (100, 9)
