"""franz/storage/_segment_fast.c against the Python path it stands in for: UnifiedLog's roll
check (LogSegment.should_roll) and LogSegment.append.

The C module may only ever append exactly what LogSegment.append would have appended, to
a segment that would not have rolled, or decline with nothing done. These tests hold it to
that on seeded random appends, on every reason it declines, and on a write that fails."""

from __future__ import annotations

import os
import random
import threading
from pathlib import Path

import pytest

from franz.records import MemoryRecords, SimpleRecord, build_batch
from franz.records.file_records import FileRecords
from franz.storage import local_log
from franz.storage.log_config import LogConfig
from franz.storage.segment import UNKNOWN_TIMESTAMP_OFFSET, LogSegment, RollParams
from franz.storage.segment import LogOffsetMetadata
from franz.storage.unified_log import UnifiedLog

try:
    from franz.storage._segment_fast import segment_append_unless_roll_due as native
except ImportError:  # test_the_native_module_is_built says so
    native = None

NO_TIMESTAMP = -1
# _segment_fast.c's RESERVE_FROM_APPEND_BYTES, RESERVE_AHEAD_APPENDS and RESERVE_AHEAD_BYTES_MAX
RESERVE_FROM_APPEND_BYTES = 64 * 1024
RESERVE_AHEAD_APPENDS = 4
RESERVE_AHEAD_BYTES_MAX = 4 * 1024 * 1024
SEGMENT_MS = 10_000
SEGMENT_BYTES = 1_000_000


def test_the_native_module_is_built():
    # `pip install` builds it (setup.py); without it every append takes the Python path.
    assert native is not None and local_log.NATIVE_APPEND, \
        "franz.storage._segment_fast is not built: run `pip install -e .`"


def _batch(base_offset: int, count: int, timestamps: list[int], value_bytes: int = 30) -> MemoryRecords:
    return MemoryRecords(bytearray(build_batch(
        [SimpleRecord(b"v" * value_bytes, timestamp=timestamps[i]) for i in range(count)], base_offset=base_offset)))


def _state(segment: LogSegment) -> dict:
    """Everything LogSegment.append and the roll check read or move, and the files' bytes."""
    offset_index, time_index = segment.offset_index, segment.time_index
    return {
        "log": Path(segment.log.path).read_bytes(),
        "index": offset_index.file.read_bytes(),
        "timeindex": time_index.file.read_bytes(),
        "size": segment.log._size,
        "since": segment.bytes_since_last_index_entry,
        "so_far": segment._max_timestamp_and_offset_so_far,
        "rolling": segment.rolling_based_timestamp,
        "offset_entries": (offset_index.entries, offset_index._last_offset if offset_index.entries else None),
        "time_entries": (time_index.entries, time_index._last_entry),
    }


def _python_append(segment: LogSegment, params: RollParams, records: MemoryRecords, shallow: int) -> bool:
    """The reference: True when it appended, False when the segment would roll first."""
    if segment.should_roll(params):
        return False
    segment.append(params.max_offset_in_messages, params.max_timestamp_in_messages, shallow, records)
    return True


def _open(directory: Path, props: dict) -> LogSegment:
    directory.mkdir()
    return LogSegment.open(directory, 100, LogConfig.from_props(props))


@pytest.mark.parametrize("seed", range(12))
def test_appends_and_roll_decisions_match_the_python_path(tmp_path, seed):
    rng = random.Random(seed)
    config = {"index.interval.bytes": rng.choice((0, 100, 700, 4096, 50_000)),
              "segment.index.bytes": rng.choice((48, 120, 10_000))}
    by_c, by_python = _open(tmp_path / "c", config), _open(tmp_path / "python", config)
    next_offset, now, took = 100, 5_000_000, 0
    max_segment_bytes = rng.choice((3_000, 20_000, SEGMENT_BYTES))
    for _ in range(rng.randint(20, 80)):
        count = rng.randint(1, 6)
        kind = rng.random()
        if kind < 0.15:
            timestamps = [NO_TIMESTAMP] * count
        elif kind < 0.25:  # the max so far again: it keeps the offset that first carried it
            timestamps = [by_python._max_timestamp_and_offset_so_far.timestamp] * count
        elif kind < 0.4:  # an older timestamp than the ones before: the max so far stays
            timestamps = [now - rng.randint(0, 50_000) for _ in range(count)]
        else:
            timestamps = [now + rng.randint(0, 2_000) for _ in range(count)]
        now += rng.randint(0, 3_000)
        max_timestamp = max(timestamps)
        shallow = next_offset + count - 1 if max_timestamp > NO_TIMESTAMP else -1
        records = _batch(next_offset, count, timestamps, rng.choice((0, 30, 400)))
        params = RollParams(SEGMENT_MS, max_segment_bytes, max_timestamp, next_offset + count - 1,
                            records.size_in_bytes, now)
        appended_by_python = _python_append(by_python, params, records, shallow)
        before = _state(by_c)
        appended_by_c = native(by_c, records.buffer, params.max_offset_in_messages, max_timestamp, shallow,
                               max_segment_bytes, SEGMENT_MS, now)
        if not appended_by_c:  # declined: nothing done, and the caller's Python path runs, as UnifiedLog's does
            assert _state(by_c) == before
            appended_by_c = _python_append(by_c, params, records, shallow)
        else:
            took += 1
        assert appended_by_c == appended_by_python
        assert _state(by_c) == _state(by_python)
        if not appended_by_python:
            break  # a roll is due: a new segment would take the next batch
        next_offset += count
    assert took > 0, "the C module declined every append"
    for segment in (by_c, by_python):
        segment.close()
    for name in ("index", "timeindex", "log"):
        assert (tmp_path / "c" / f"{100:020d}.{name}").read_bytes() == \
            (tmp_path / "python" / f"{100:020d}.{name}").read_bytes()


def _segment_with_one_batch(tmp_path: Path, **config) -> LogSegment:
    segment = LogSegment.open(tmp_path, 100, LogConfig.from_props(
        {"index.interval.bytes": 0, "segment.index.bytes": 10_000, **config}))
    # A new segment's max timestamp so far is read from its time index, by Python: the
    # first append takes the Python path.
    _assert_declines(segment, _batch(100, 2, [1_000, 1_001]), 101, 1_001)
    segment.append(101, 1_001, 101, _batch(100, 2, [1_000, 1_001]))
    return segment


def _assert_declines(segment: LogSegment, records: MemoryRecords, last_offset: int, max_timestamp: int,
                     max_segment_bytes: int = SEGMENT_BYTES, now: int = 0) -> None:
    before = _state(segment)
    assert not native(segment, records.buffer, last_offset, max_timestamp, last_offset, max_segment_bytes,
                      SEGMENT_MS, now)
    assert _state(segment) == before, "declined after changing the segment"


def test_declines_when_a_roll_is_due_for_each_of_should_roll_reasons(tmp_path):
    segment = _segment_with_one_batch(tmp_path)
    records = _batch(102, 1, [1_002])
    # Size: no room for the batch.
    _assert_declines(segment, records, 102, 1_002, max_segment_bytes=segment.size() + records.size_in_bytes - 1)
    # Time: SEGMENT_MS past the first batch's max timestamp, then the same within the roll jitter.
    _assert_declines(segment, _batch(102, 1, [1_001 + SEGMENT_MS + 1]), 102, 1_001 + SEGMENT_MS + 1)
    segment.roll_jitter_ms = 5
    _assert_declines(segment, _batch(102, 1, [1_001 + SEGMENT_MS - 4]), 102, 1_001 + SEGMENT_MS - 4)
    # An offset that does not fit an int32 relative to the base offset.
    _assert_declines(segment, records, 100 + 2**31, 1_002)
    # A full index (the time index keeps its last slot for the roll entry).
    segment.offset_index.max_entries = segment.offset_index.entries
    _assert_declines(segment, records, 102, 1_002)
    segment.offset_index.max_entries = 1_000
    segment.time_index.max_entries = segment.time_index.entries + 1
    _assert_declines(segment, records, 102, 1_002)
    segment.time_index.max_entries = 800
    assert native(segment, records.buffer, 102, 1_002, 102, SEGMENT_BYTES, SEGMENT_MS, 0)
    segment.close()


def test_a_segment_without_a_timestamp_uses_its_creation_time_to_roll(tmp_path):
    segment = LogSegment.open(tmp_path, 100, LogConfig.from_props({}), time_ms=lambda: 50_000)
    segment.append(100, NO_TIMESTAMP, -1, _batch(100, 1, [NO_TIMESTAMP]))
    records = _batch(101, 1, [NO_TIMESTAMP])
    _assert_declines(segment, records, 101, NO_TIMESTAMP, now=50_000 + SEGMENT_MS + 1)
    assert native(segment, records.buffer, 101, NO_TIMESTAMP, -1, SEGMENT_BYTES, SEGMENT_MS, 50_000 + SEGMENT_MS)
    segment.close()


def test_declines_what_only_the_python_path_knows_how_to_load(tmp_path):
    segment = _segment_with_one_batch(tmp_path)
    segment.close()
    reopened = LogSegment.open(tmp_path, 100, LogConfig.from_props({"index.interval.bytes": 0}),
                               file_already_exists=True)
    assert reopened.rolling_based_timestamp is None  # read from the first batch, by Python
    _assert_declines(reopened, _batch(102, 1, [1_002]), 102, 1_002)
    reopened.rolling_based_timestamp = 1_000
    assert reopened._max_timestamp_and_offset_so_far is UNKNOWN_TIMESTAMP_OFFSET  # read from the time index
    _assert_declines(reopened, _batch(102, 1, [1_002]), 102, 1_002)
    reopened.close()
    # Indexes are mapped on first use, by Python (LogSegment.offset_index).
    unmapped = LogSegment.open(tmp_path, 100, LogConfig.from_props({"index.interval.bytes": 0}),
                               file_already_exists=True)
    unmapped.rolling_based_timestamp = 1_000
    unmapped._max_timestamp_and_offset_so_far = type(UNKNOWN_TIMESTAMP_OFFSET)(1_001, 101)
    size = unmapped.log._size
    assert unmapped._offset_index is None and unmapped._time_index is None
    assert not native(unmapped, _batch(102, 1, [1_002]).buffer, 102, 1_002, 102, SEGMENT_BYTES, SEGMENT_MS, 0)
    assert unmapped._offset_index is None and unmapped._time_index is None and unmapped.log._size == size
    unmapped.close()


def test_declines_an_index_entry_the_python_would_refuse(tmp_path):
    segment = _segment_with_one_batch(tmp_path)
    assert native(segment, _batch(102, 1, [1_002]).buffer, 102, 1_002, 102, SEGMENT_BYTES, SEGMENT_MS, 0)
    assert segment.offset_index.entries == 1 and segment.bytes_since_last_index_entry > 0  # the next is due
    # OffsetIndex.append refuses an offset not above its last one ...
    records = _batch(102, 1, [1_003])
    _assert_declines(segment, records, 102, 1_003)
    with pytest.raises(Exception, match="no larger than the last offset"):
        segment.append(102, 1_003, 102, records)
    # ... and TimeIndex.maybe_append a timestamp below its last one.
    segment.time_index._last_entry = type(segment.time_index._last_entry)(5_000, 102)
    _assert_declines(segment, _batch(103, 1, [1_003]), 103, 1_003)
    segment.close()


def test_declines_while_another_thread_holds_an_index_lock(tmp_path):
    segment = _segment_with_one_batch(tmp_path)
    records = _batch(102, 1, [1_002])
    segment.bytes_since_last_index_entry = 1
    for index in (segment.offset_index, segment.time_index):
        held, done = threading.Event(), threading.Event()

        def hold(lock=index.lock):
            with lock:
                held.set()
                done.wait(10)

        holder = threading.Thread(target=hold)
        holder.start()
        try:
            assert held.wait(10)
            _assert_declines(segment, records, 102, 1_002)
        finally:
            done.set()
            holder.join(10)
        assert index.lock.acquire(blocking=False), "the declining call kept the lock"
        index.lock.release()
    assert native(segment, records.buffer, 102, 1_002, 102, SEGMENT_BYTES, SEGMENT_MS, 0)
    segment.close()


class _CountingFileRecords(FileRecords):
    """FileRecords whose size goes through a property: the C module must not read or write
    the slot beneath it (SlotAttr in _fast_common.h reads a slot only where it is what
    attribute access finds)."""
    __slots__ = ()
    touched: list[str] = []

    @property
    def _size(self) -> int:
        self.touched.append("read")
        return FileRecords._size.__get__(self)

    @_size.setter
    def _size(self, value: int) -> None:
        self.touched.append("write")
        FileRecords._size.__set__(self, value)


def test_an_attribute_behind_a_property_goes_through_the_property(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "counting").mkdir()
    plain, counting = _segment_with_one_batch(tmp_path / "plain"), _segment_with_one_batch(tmp_path / "counting")
    for offset in range(102, 106):  # plain first, so the module has bound FileRecords' slot
        for segment in (plain, counting):
            if segment is counting:
                segment.log.__class__ = _CountingFileRecords
                _CountingFileRecords.touched.clear()
            assert native(segment, _batch(offset, 1, [offset * 10]).buffer, offset, offset * 10, offset,
                          SEGMENT_BYTES, SEGMENT_MS, 0)
            if segment is counting:
                assert _CountingFileRecords.touched == ["read", "write"]
                segment.log.__class__ = FileRecords
        assert _state(plain) == _state(counting)
    plain.close()
    counting.close()


def test_a_failed_write_raises_and_moves_nothing(tmp_path):
    segment = _segment_with_one_batch(tmp_path)
    before = _state(segment)
    real_fd = segment.log.fd
    segment.log.fd = 10_000  # not open
    with pytest.raises(OSError):
        native(segment, _batch(102, 1, [1_002]).buffer, 102, 1_002, 102, SEGMENT_BYTES, SEGMENT_MS, 0)
    segment.log.fd = real_fd
    assert _state(segment) == before
    segment.close()


def test_the_log_level_call_moves_the_log_end_offset_as_local_log_append_does(tmp_path):
    by_c, by_python = (UnifiedLog.create(tmp_path / name, LogConfig.from_props({})) for name in ("c-0", "python-0"))
    for offset in range(3):
        records = _batch(offset, 1, [1_000 + offset])
        appended = local_log.append_unless_roll_due(by_c.local_log, bytearray(records.buffer), offset, 1_000 + offset,
                                                    offset, 0)
        assert appended == (offset > 0)  # a new segment's first batch: Python reads its max timestamp first
        if not appended:
            by_c.local_log.append(offset, 1_000 + offset, offset, records)
        by_python.local_log.append(offset, 1_000 + offset, offset, _batch(offset, 1, [1_000 + offset]))
        assert by_c.local_log.log_end_offset_metadata == by_python.local_log.log_end_offset_metadata
        assert type(by_c.local_log.log_end_offset_metadata) is LogOffsetMetadata
    active_size = by_c.local_log.segments.active_segment.size()
    assert by_c.local_log.log_end_offset_metadata == LogOffsetMetadata(3, 0, active_size)
    # A recovery point past the new log end is for update_log_end_offset to move: Python's.
    by_c.local_log.recovery_point = 10
    before = by_c.local_log.log_end_offset_metadata
    assert not local_log.append_unless_roll_due(by_c.local_log, _batch(3, 1, [1_003]).buffer, 3, 1_003, 3, 0)
    assert by_c.local_log.log_end_offset_metadata == before
    by_c.close()
    by_python.close()


def _allocated_bytes(path: str) -> int:
    return os.stat(path).st_blocks * 512


def test_a_large_append_reserves_disk_blocks_ahead_without_changing_the_file(tmp_path):
    """FileRecords' module docstring: a large append reserves blocks past the end (the file's
    size and bytes unchanged); a small one reserves nothing; trim() frees the reservation,
    and so does it for one a crashed process left (the next trim of that file)."""
    segment = _segment_with_one_batch(tmp_path)
    path, small_end = segment.log.path, segment.log._size
    large = _batch(102, 200, [1_002] * 200, value_bytes=400)
    ahead = RESERVE_AHEAD_APPENDS * len(large.buffer)
    assert RESERVE_FROM_APPEND_BYTES <= len(large.buffer) and ahead < RESERVE_AHEAD_BYTES_MAX
    assert _allocated_bytes(path) < ahead and segment.log._reserved_end == 0
    assert native(segment, large.buffer, 301, 1_002, 301, 100_000_000, SEGMENT_MS, 0)
    if segment.log._reserved_end == -1:
        pytest.skip("this filesystem refuses fallocate(FALLOC_FL_KEEP_SIZE)")
    end = small_end + len(large.buffer)
    assert segment.log._reserved_end == small_end + ahead
    assert os.stat(path).st_size == end == segment.log._size
    assert Path(path).read_bytes()[small_end:] == bytes(large.buffer)
    assert _allocated_bytes(path) >= small_end + ahead
    # Appends within the reservation reserve nothing more.
    assert native(segment, _batch(302, 200, [1_003] * 200, value_bytes=400).buffer, 501, 1_003, 501, 100_000_000,
                  SEGMENT_MS, 0)
    assert segment.log._reserved_end == small_end + ahead
    # A process that dies leaves the reservation: the next FileRecords of the file frees it on trim.
    segment.log.close_handlers()
    reopened = FileRecords.open(path)
    assert reopened.size_in_bytes == os.stat(path).st_size and _allocated_bytes(path) >= small_end + ahead
    reopened.trim()
    assert os.stat(path).st_size == reopened.size_in_bytes
    assert _allocated_bytes(path) < reopened.size_in_bytes + 64 * 1024
    reopened.close()


def test_a_small_append_reserves_nothing_and_trim_frees_a_reservation(tmp_path):
    segment = _segment_with_one_batch(tmp_path)
    assert native(segment, _batch(102, 1, [1_002]).buffer, 102, 1_002, 102, SEGMENT_BYTES, SEGMENT_MS, 0)
    assert segment.log._reserved_end == 0
    assert native(segment, _batch(103, 200, [1_003] * 200, value_bytes=400).buffer, 302, 1_003, 302,
                  100_000_000, SEGMENT_MS, 0)
    if segment.log._reserved_end == -1:
        pytest.skip("this filesystem refuses fallocate(FALLOC_FL_KEEP_SIZE)")
    segment.on_become_inactive_segment()  # a roll trims the segment it leaves
    assert segment.log._reserved_end == 0
    assert _allocated_bytes(segment.log.path) < segment.log.size_in_bytes + 64 * 1024
    segment.close()
