"""Interop with real clients' record codecs: batches franz builds are read by
kafka-python and aiokafka (C and pure-Python), and batches they build are
read by franz, for every codec."""

import pytest

pytest.importorskip("kafka")
pytest.importorskip("aiokafka")

import aiokafka.record.default_records as aio
import kafka.record.default_records as kp
from kafka.record.memory_records import MemoryRecords as KafkaPythonMemoryRecords

from franz.records import (
    CompressionType,
    ControlRecordType,
    MemoryRecords,
    RecordBatch,
    SimpleRecord,
    TimestampType,
    build_batch,
    build_control_batch,
)

pytestmark = pytest.mark.interop

CODECS = list(CompressionType)
RECORDS = [
    SimpleRecord(b"value %d " % i * 20 if i % 7 else None, b"key-%d" % i if i % 5 else None,
                 1_700_000_000_000 + i * 3, (("trace", b"%d" % i), ("empty", None)) if i % 2 else ())
    for i in range(60)
]

READERS = {
    "kafka-python": kp.DefaultRecordBatch,
    "aiokafka-c": aio.DefaultRecordBatch,
    "aiokafka-py": aio._DefaultRecordBatchPy,
}
BUILDERS = {
    "kafka-python": kp.DefaultRecordBatchBuilder,
    "aiokafka-c": aio.DefaultRecordBatchBuilder,
    "aiokafka-py": aio._DefaultRecordBatchBuilderPy,
}


def as_tuples(records):
    return [(r.offset, r.timestamp, r.key, r.value, tuple(tuple(h) for h in r.headers)) for r in records]


def expected(base_offset, records, log_append_time=None):
    return [(base_offset + i, log_append_time if log_append_time is not None else r.timestamp,
             r.key, r.value, r.headers) for i, r in enumerate(records)]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("codec", CODECS)
def test_clients_read_batches_franz_builds(reader, codec):
    data = build_batch(RECORDS, base_offset=1000, compression_type=codec, producer_id=77,
                       producer_epoch=3, base_sequence=500, is_transactional=True,
                       partition_leader_epoch=9)
    batch = READERS[reader](bytes(data))
    assert batch.validate_crc()
    assert batch.compression_type == codec
    assert (batch.base_offset, batch.last_offset_delta, batch.next_offset) == (1000, 59, 1060)
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (77, 3, 500)
    assert batch.is_transactional and not batch.is_control_batch
    assert batch.timestamp_type == 0 and batch.max_timestamp == RECORDS[-1].timestamp
    assert as_tuples(batch) == expected(1000, RECORDS)


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("codec", CODECS)
def test_clients_read_batches_franz_stamped(reader, codec):
    buf = bytearray(build_batch(RECORDS, compression_type=codec))
    RecordBatch(buf).stamp(base_offset=5, partition_leader_epoch=2, max_timestamp=1234,
                           timestamp_type=TimestampType.LOG_APPEND_TIME)
    batch = READERS[reader](bytes(buf))
    assert batch.validate_crc() and batch.timestamp_type == 1 and batch.base_offset == 5
    assert as_tuples(batch) == expected(5, RECORDS, log_append_time=1234)


def test_kafka_python_reads_franz_control_batch():
    data = build_control_batch(ControlRecordType.COMMIT, producer_id=4, producer_epoch=1,
                               coordinator_epoch=6, base_offset=50, timestamp=99)
    batch = KafkaPythonMemoryRecords(bytes(data)).next_batch()
    assert batch.validate_crc() and batch.is_control_batch and batch.is_transactional
    (record,) = list(batch)
    assert record.offset == 50 and record.key == b"\x00\x00\x00\x01"


def test_kafka_python_walks_many_franz_batches():
    data = b"".join(build_batch(RECORDS[:10], base_offset=i * 10, compression_type=c)
                    for i, c in enumerate(CODECS))
    records = KafkaPythonMemoryRecords(data)
    offsets = []
    while records.has_next():
        batch = records.next_batch()
        assert batch.validate_crc()
        offsets.extend(r.offset for r in batch)
    assert offsets == list(range(10 * len(CODECS)))


@pytest.mark.parametrize("builder", BUILDERS)
@pytest.mark.parametrize("codec", CODECS)
def test_franz_reads_batches_clients_build(builder, codec):
    b = BUILDERS[builder](magic=2, compression_type=int(codec), is_transactional=0,
                          producer_id=12, producer_epoch=1, base_sequence=40, batch_size=1 << 20)
    for i, r in enumerate(RECORDS):
        b.append(i, timestamp=r.timestamp, key=r.key, value=r.value, headers=list(r.headers))
    data = bytes(b.build())
    (batch,) = list(MemoryRecords(data).batches())
    batch.ensure_valid()
    assert batch.compression_type == codec  # RECORDS compress, so the client kept the codec
    assert (batch.producer_id, batch.producer_epoch, batch.base_sequence) == (12, 1, 40)
    assert batch.last_offset_delta == len(RECORDS) - 1
    assert batch.max_timestamp == RECORDS[-1].timestamp
    assert as_tuples(batch.records()) == expected(0, RECORDS)
    assert [r.sequence for r in batch.records()] == list(range(40, 40 + len(RECORDS)))


@pytest.mark.parametrize("builder", BUILDERS)
@pytest.mark.parametrize("codec", CODECS)
def test_franz_stamps_client_batches_in_place(builder, codec):
    b = BUILDERS[builder](magic=2, compression_type=int(codec), is_transactional=0,
                          producer_id=-1, producer_epoch=-1, base_sequence=-1, batch_size=1 << 20)
    for i, r in enumerate(RECORDS):
        b.append(i, timestamp=r.timestamp, key=r.key, value=r.value, headers=list(r.headers))
    buf = bytearray(b.build())
    batch = RecordBatch(buf)
    batch.stamp(base_offset=10**10, partition_leader_epoch=3, max_timestamp=42,
                timestamp_type=TimestampType.LOG_APPEND_TIME)
    assert batch.is_valid()
    assert READERS["kafka-python"](bytes(buf)).validate_crc()
    assert as_tuples(READERS["aiokafka-c"](bytes(buf))) == expected(10**10, RECORDS, 42)
