"""franz/storage/_validator_fast.c against the Python path of franz/storage/validator.py.

The C module may only ever say "this is the common case, and here is what the Python
path would have done" or decline without writing a byte. These tests hold it to that
on the shapes real clients send and on seeded random damage to them."""

from __future__ import annotations

import random

import pytest

from franz.records import CompressionType, MemoryRecords, SimpleRecord, build_batch
from franz.storage import validator
from franz.storage.log_config import LogConfig
from franz.storage.validator import RecordValidationError, validate_messages_and_assign_offsets

NOW = 1_700_000_000_000
NEXT_OFFSET = 1_000
EPOCH = 3

native = validator.assign_offsets_non_compressed
native_walk = validator.walk_records


def test_the_native_module_is_built():
    # `pip install` builds it (setup.py); without it every produce takes the Python path.
    assert native is not None and native_walk is not None, \
        "franz.storage._validator_fast is not built: run `pip install -e .`"


def _random_records(rng: random.Random) -> list[SimpleRecord]:
    records = []
    for _ in range(rng.randint(1, 40)):
        key = None if rng.random() < 0.3 else rng.randbytes(rng.choice((0, 1, 20, 200)))
        value = None if rng.random() < 0.1 else rng.randbytes(rng.choice((0, 10, 100, 300, 5000)))
        headers = tuple((f"h{i}", None if rng.random() < 0.2 else rng.randbytes(rng.randint(0, 70)))
                        for i in range(rng.choice((0, 0, 1, 3))))
        timestamp = NOW + rng.randint(-100_000, 100_000)
        records.append(SimpleRecord(value, key=key, timestamp=timestamp, headers=headers))
    return records


def _random_request(rng: random.Random) -> bytearray:
    idempotent = rng.random() < 0.5
    return bytearray(build_batch(_random_records(rng), producer_id=rng.randint(0, 2**40) if idempotent else -1,
                                 producer_epoch=rng.randint(0, 5) if idempotent else -1,
                                 base_sequence=rng.randint(0, 2**31 - 1000) if idempotent else -1,
                                 is_transactional=idempotent and rng.random() < 0.3))


def _random_config(rng: random.Random) -> LogConfig:
    props = {}
    if rng.random() < 0.3:
        props["cleanup.policy"] = "compact"
    if rng.random() < 0.3:
        props["message.timestamp.before.max.ms"] = str(rng.randint(0, 200_000))
    if rng.random() < 0.3:
        props["message.timestamp.after.max.ms"] = str(rng.randint(0, 200_000))
    elif rng.random() < 0.2:  # NOW + this overflows int64: the window saturates, in C as in Python
        props["message.timestamp.after.max.ms"] = str(2**63 - 1)
    if rng.random() < 0.2:
        props["max.message.bytes"] = str(rng.randint(100, 200_000))
    return LogConfig.from_props(props)


def _damage(rng: random.Random, buffer: bytearray) -> None:
    """Flip one byte, then reseal every batch's CRC so that the damage reaches the
    checks after it (half the time; otherwise the CRC check must catch it)."""
    buffer[rng.randrange(len(buffer))] ^= 1 << rng.randrange(8)
    if rng.random() < 0.5:
        try:
            for batch in MemoryRecords(buffer).batches():
                batch.update_crc()
        except Exception:  # noqa: BLE001 - damage that breaks the framing: leave it as it is
            pass


def _python_path(buffer: bytearray, config: LogConfig, monkeypatch):
    with monkeypatch.context() as patch:
        patch.setattr(validator, "assign_offsets_non_compressed", None)
        patch.setattr(validator, "walk_records", None)
        try:
            return validate_messages_and_assign_offsets(MemoryRecords(buffer), NEXT_OFFSET, NOW, config, EPOCH)
        except RecordValidationError as error:
            return error


def _native(buffer: bytearray, config: LogConfig, header_without_producer: bool = True):
    return native(buffer, NEXT_OFFSET, EPOCH, NOW, config.message_timestamp_before_max_ms,
                  config.message_timestamp_after_max_ms, config.max_message_bytes, config.compact,
                  header_without_producer)


def _check_agreement(request: bytearray, config: LogConfig, monkeypatch) -> bool:
    """True when the C module took the request; asserts it did what the Python path does."""
    by_native, by_python = bytearray(request), bytearray(request)
    fast = _native(by_native, config)
    python = _python_path(by_python, config, monkeypatch)
    if fast is None:
        assert by_native == request, "declined after writing to the buffer"
        return False
    assert not isinstance(python, RecordValidationError), f"C accepted what Python refuses: {python}"
    header, last_offset, max_timestamp, shallow_offset_of_max, record_count = fast
    assert by_native == by_python
    assert (last_offset, max_timestamp, shallow_offset_of_max, record_count) == (
        python.last_offset, python.max_timestamp_ms, python.shallow_offset_of_max_timestamp, python.num_messages)
    assert [header] == python.headers and type(header) is type(python.headers[0])
    # The append path's call: the same, with no header for a batch without a producer id.
    without = _native(bytearray(request), config, header_without_producer=False)
    expected_header = header if header.producer_id >= 0 else None
    assert without == (expected_header, last_offset, max_timestamp, shallow_offset_of_max, record_count)
    return True


def test_the_common_shapes_take_the_native_path_with_the_python_result(monkeypatch):
    rng = random.Random(20261126)
    taken = 0
    for _ in range(300):
        taken += _check_agreement(_random_request(rng), LogConfig.from_props({}), monkeypatch)
    assert taken == 300  # nothing in these is anything but the common case


@pytest.mark.parametrize("window", [{"message.timestamp.before.max.ms": str(2**63 - 1)},
                                    {"message.timestamp.after.max.ms": str(2**63 - 1)}])
def test_a_window_past_the_int64_range_saturates_and_still_takes_the_common_case(window, monkeypatch):
    rng = random.Random(7)
    config = LogConfig.from_props(window)
    assert all(_check_agreement(_random_request(rng), config, monkeypatch) for _ in range(20))


def test_damaged_requests_are_declined_or_handled_as_python_handles_them(monkeypatch):
    rng = random.Random(4)
    taken = declined = 0
    for _ in range(3000):
        request = _random_request(rng)
        _damage(rng, request)
        if _check_agreement(request, _random_config(rng), monkeypatch):
            taken += 1
        else:
            declined += 1
    assert taken > 100 and declined > 100  # both sides of the split were exercised


def test_every_other_case_is_declined_untouched():
    config = LogConfig.from_props({})
    cases = {
        "compressed": build_batch([SimpleRecord(b"v", timestamp=NOW)], compression_type=CompressionType.LZ4),
        "base offset not 0": build_batch([SimpleRecord(b"v", timestamp=NOW)], base_offset=5),
        "trailing partial batch": build_batch([SimpleRecord(b"v", timestamp=NOW)]) + b"\0" * 30,
        "two batches": build_batch([SimpleRecord(b"v", timestamp=NOW)]) * 2,
        "empty": b"",
        "future timestamp": build_batch([SimpleRecord(b"v", timestamp=NOW + 2 * 3_600_000)]),
    }
    for name, request in cases.items():
        buffer = bytearray(request)
        assert _native(buffer, config) is None, name
        assert buffer == request, name


@pytest.mark.parametrize("value_size", [0, 63, 64, 8191, 8192, 70_000])
def test_varint_boundaries_are_read_as_python_reads_them(value_size, monkeypatch):
    # One- to three-byte length varints, at the zig-zag boundaries.
    request = bytearray(build_batch([SimpleRecord(b"x" * value_size, key=b"k" * (value_size % 70),
                                                  timestamp=NOW - 1)] * 3))
    assert _native(bytearray(request), LogConfig.from_props({"max.message.bytes": "1000000"})) is not None
    assert _check_agreement(request, LogConfig.from_props({"max.message.bytes": "1000000"}), monkeypatch)


def _records_verdict(batch, config: LogConfig, log_append: bool, monkeypatch, walk) -> object:
    with monkeypatch.context() as patch:
        patch.setattr(validator, "walk_records", walk)
        try:
            return validator._validate_records(0, batch, config, NOW, log_append)[:2]  # not the records' bytes
        except RecordValidationError as error:
            return error.error_code, str(error), error.record_errors


@pytest.mark.parametrize("codec", list(CompressionType))
def test_the_record_walk_in_c_gives_the_python_walk_result(codec, monkeypatch):
    # Compressed batches, LogAppendTime topics and damaged records: the walk in C must
    # answer as the Python walk does (or decline, and the Python walk answers).
    rng = random.Random(int(codec))
    walked_in_c = 0
    for _ in range(150):
        records = _random_records(rng)
        buffer = bytearray(build_batch(records, compression_type=codec))
        if codec == CompressionType.NONE and rng.random() < 0.5:
            buffer[61 + rng.randrange(len(buffer) - 61)] ^= 1 << rng.randrange(8)
        batch = next(MemoryRecords(buffer).batches())
        config, log_append = _random_config(rng), rng.random() < 0.2
        expected = _records_verdict(batch, config, log_append, monkeypatch, None)
        assert _records_verdict(batch, config, log_append, monkeypatch, validator.walk_records) == expected
        data, _position = batch.records_data()
        walked_in_c += native_walk(data, batch.record_count, batch.base_timestamp, -(2**63), 2**63 - 1,
                                   config.compact) is not None
    assert walked_in_c > 30  # the C walk took a good share, not only declined



@pytest.mark.parametrize("walker", ["assign_offsets_non_compressed", "walk_records"])
def test_a_large_walk_lets_other_threads_run(walker):
    # The broker's network thread must go on while the append thread walks a big batch.
    # With a switch interval far longer than the test, another thread gets the GIL back
    # only if a walk releases it; so the bounded loop below ends with the reader having
    # run only when the walk lets go of the GIL.
    import os
    import sys
    import threading

    batch = build_batch([SimpleRecord(b"v" * 100, timestamp=1_000)] * 20_000)  # ~2.4 MB of records
    read_fd, write_fd = os.pipe()
    woke: list[bytes] = []
    reader = threading.Thread(target=lambda: woke.append(os.read(read_fd, 1)))
    reader.start()
    old_interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        os.write(write_fd, b"x")
        for _ in range(200):
            buffer = bytearray(batch)
            if walker == "walk_records":
                result = native_walk(memoryview(buffer)[61:], 20_000, 1_000, 0, 2**62, False)
            else:
                result = native(buffer, 0, 0, 0, 0, 2**62, 2**31 - 1, False, True)
            assert result is not None
            if woke:
                break
        ran_during_walks = bool(woke)
    finally:
        sys.setswitchinterval(old_interval)
        reader.join(timeout=10)
        os.close(read_fd)
        os.close(write_fd)
    assert ran_during_walks, "the walk held the GIL throughout"


def _varint(value: int, padding: int = 0) -> bytes:
    """A zig-zag varint, with `padding` redundant bytes (0x80 ... 0x00) when asked: a
    non-minimal encoding that still decodes to `value`."""
    raw = (value << 1) ^ (value >> 63)
    out = bytearray()
    while True:
        if raw < 0x80 and not padding:
            out.append(raw)
            return bytes(out)
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
        if raw == 0 and padding:
            out += b"\x80" * (padding - 1) + b"\x00"
            return bytes(out)


def _wide_varint(value: int, width: int = 32) -> bytes:
    """`value` as a varint of the longest form (5 bytes, or 10 for a varlong: width 64) whose
    last byte also sets bit `width`, which Java's readers drop: they read `value`, and write it
    back in fewer bytes."""
    raw = (((value << 1) ^ (value >> 63)) & (2**64 - 1)) | (1 << width)
    length = 5 if width == 32 else 10
    return bytes([(raw >> (7 * i)) & 0x7F | (0x80 if i < length - 1 else 0) for i in range(length)])


def _record(index: int, timestamp_delta: int, key, value, headers=(), attributes: int = 0,
            pad_field: str | None = None, wide_field: str | None = None) -> bytes:
    """One record as DefaultRecord.writeTo writes it, except where asked otherwise."""
    def field(name: str, number: int) -> bytes:
        if wide_field == name:
            return _wide_varint(number, 64 if name == "timestamp" else 32)
        return _varint(number, 1 if pad_field == name else 0)
    body = bytes([attributes]) + field("timestamp", timestamp_delta) + field("offset", index)
    body += field("key", -1) if key is None else field("key", len(key)) + key
    body += field("value", -1) if value is None else field("value", len(value)) + value
    body += field("headers", len(headers))
    for header_key, header_value in headers:
        body += field("header_key", len(header_key)) + header_key
        body += field("header_value", -1) if header_value is None else field("header_value", len(header_value)) + header_value
    return field("size", len(body)) + body


def _handmade_batch(records: list[bytes], base_timestamp: int, codec: CompressionType, producer_id: int = -1):
    from franz.records import compute_attributes, encode_batch
    from franz.records.compression import compress
    from franz.records.constants import TimestampType
    section = b"".join(records)
    return MemoryRecords(encode_batch(
        compress(codec, section), base_offset=0, last_offset_delta=len(records) - 1, record_count=len(records),
        attributes=compute_attributes(codec, TimestampType.CREATE_TIME, False, False, False),
        base_timestamp=base_timestamp, max_timestamp=base_timestamp + 10, producer_id=producer_id,
        producer_epoch=0 if producer_id >= 0 else -1, base_sequence=0 if producer_id >= 0 else -1))


def _rebuilt_both_ways(batch, target: CompressionType, log_append: bool) -> tuple[bytes, bytes, bool]:
    """(_rebuild record by record, _rebuild given the records' bytes, whether the latter took them as they are)."""
    slow = validator._rebuild(batch, target, None, log_append, NOW)
    records_max, _in_sequence, data, _size = validator._validate_records(0, batch, LogConfig.from_props({}), NOW,
                                                                         log_append)
    assert data is not None, "the C walk declined these records"
    taken = validator.canonical_records(data, batch.record_count, batch.base_timestamp) is not None
    return slow, validator._rebuild(batch, target, None, log_append, NOW, data, records_max), taken


@pytest.mark.parametrize("source", list(CompressionType))
def test_a_rebuild_from_the_records_bytes_is_the_record_by_record_rebuild(source):
    # A topic codec other than the producer's: canonical records go to the new codec as
    # they are; the batch must be byte for byte the one a record-by-record rebuild writes.
    rng = random.Random(100 + int(source))
    taken = 0
    for _ in range(120):
        records = _random_records(rng)
        idempotent = rng.random() < 0.5
        buffer = bytearray(build_batch(records, compression_type=source,
                                       producer_id=rng.randint(0, 2**40) if idempotent else -1,
                                       producer_epoch=rng.randint(0, 5) if idempotent else -1,
                                       base_sequence=rng.randint(0, 2**31 - 1000) if idempotent else -1,
                                       is_transactional=idempotent and rng.random() < 0.3))
        batch = next(MemoryRecords(buffer).batches())
        target = rng.choice([codec for codec in CompressionType if codec != source])
        slow, fast, took = _rebuilt_both_ways(batch, target, log_append=rng.random() < 0.2)
        assert fast == slow
        taken += took
    assert taken > 100  # build_batch writes canonical records, except where a header key is not ASCII


_FIELDS = ("size", "timestamp", "offset", "key", "value", "headers", "header_key", "header_value")


@pytest.mark.parametrize(("shape", "field"), [("non-minimal varint", field) for field in _FIELDS] + [
    ("varint bits past their width", field) for field in ("timestamp", "key", "value", "headers")] + [
    (shape, None) for shape in ("record attributes", "base below the first timestamp", "UTF-8 header key",
                                "invalid UTF-8 header key", "negative timestamp", "offsets out of sequence")])
def test_records_a_rebuild_would_write_differently_are_rebuilt_record_by_record(shape, field):
    header_key = {"UTF-8 header key": "clé".encode(), "invalid UTF-8 header key": b"k\xff"}.get(shape, b"trace")
    base = 10 if shape == "negative timestamp" else NOW - 5
    deltas = {"base below the first timestamp": [2, 3, 4], "negative timestamp": [0, -60, 2]}.get(shape, [0, 1, 2])
    offsets = [0, 5, 2] if shape == "offsets out of sequence" else [0, 1, 2]
    records = [_record(offsets[i], deltas[i], b"k%d" % i, b"v" * (60 + i), headers=[(header_key, b"h")],
                       attributes=1 if shape == "record attributes" and i == 1 else 0,
                       pad_field=field if shape == "non-minimal varint" and i == 1 else None,
                       wide_field=field if shape == "varint bits past their width" and i == 1 else None)
               for i in range(3)]
    batch = next(_handmade_batch(records, base, CompressionType.LZ4).batches())
    records_max, _in_sequence, data, _size = validator._validate_records(0, batch, LogConfig.from_props({}), NOW, False)
    assert data is not None
    assert validator.canonical_records(data, batch.record_count, batch.base_timestamp) is None
    try:
        slow = validator._rebuild(batch, CompressionType.ZSTD, None, False, NOW)
    except ValueError:  # the builder refuses a negative timestamp: the other path must too
        with pytest.raises(ValueError):
            validator._rebuild(batch, CompressionType.ZSTD, None, False, NOW, data, records_max)
        return
    assert validator._rebuild(batch, CompressionType.ZSTD, None, False, NOW, data, records_max) == slow


def test_handmade_canonical_records_are_taken_as_they_are():
    # The control case of the test above: the same records written canonically are taken.
    records = [_record(i, i, b"k%d" % i, b"v" * (60 + i), headers=[(b"trace", b"h")]) for i in range(3)]
    batch = next(_handmade_batch(records, NOW - 5, CompressionType.LZ4).batches())
    slow, fast, took = _rebuilt_both_ways(batch, CompressionType.ZSTD, log_append=False)
    assert took and fast == slow
