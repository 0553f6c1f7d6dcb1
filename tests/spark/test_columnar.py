"""The columnar decoder of the Spark read path agrees with franz.records' general decoder."""

from __future__ import annotations

import pytest

from franz.records import CompressionType, MemoryRecords, SimpleRecord, TimestampType, build_batch
from franz.records.errors import InvalidRecordError
from franz.spark.columnar import decode_into


def _columns() -> dict[str, list]:
    return {"key": [], "value": [], "offset": [], "timestamp": [], "headers": []}


@pytest.mark.parametrize("compression", list(CompressionType)[:5])
def test_columns_equal_the_general_decoder(compression):
    records = [SimpleRecord(value=None if i % 17 == 0 else b"v" * (i % 300), key=None if i % 5 == 0 else b"k%d" % i,
                            timestamp=1_000_000 + i * 3, headers=[("h", b"x")] if i % 2 else [])
               for i in range(10_000)]  # offset deltas and lengths of one, two and three varint bytes
    batch = next(MemoryRecords(build_batch(records, base_offset=500, compression_type=compression)).batches())
    header = batch.header()
    data, _ = batch.records_data()
    columns = _columns()
    assert decode_into(data, header.record_count, header.base_offset, header.base_timestamp, None,
                       0, 1 << 62, columns, True) == 10_000
    expected = list(batch.records())
    assert columns["offset"] == [r.offset for r in expected]
    assert columns["key"] == [r.key for r in expected]
    assert columns["value"] == [r.value for r in expected]
    assert columns["timestamp"] == [r.timestamp * 1000 for r in expected]
    assert columns["headers"] == [[{"key": k, "value": v} for k, v in r.headers] for r in expected]


def test_the_range_bounds_and_log_append_time():
    batch = next(MemoryRecords(build_batch([SimpleRecord(value=b"%d" % i) for i in range(10)], base_offset=100,
                                           timestamp_type=TimestampType.LOG_APPEND_TIME,
                                           log_append_time=777)).batches())
    header = batch.header()
    columns = _columns()
    data, _ = batch.records_data()
    assert decode_into(data, header.record_count, header.base_offset, header.base_timestamp, 777, 103, 106,
                       columns, False) == 3
    assert columns["offset"] == [103, 104, 105] and columns["timestamp"] == [777_000] * 3


def test_a_truncated_record_raises_invalid_record():
    batch = next(MemoryRecords(build_batch([SimpleRecord(value=b"x" * 50)])).batches())
    data, _ = batch.records_data()
    with pytest.raises(InvalidRecordError):
        decode_into(bytes(data)[:20], 1, 0, 0, None, 0, 10, _columns(), False)
