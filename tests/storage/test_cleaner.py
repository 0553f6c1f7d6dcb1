"""Behaviours of Kafka's LogCleanerTest: one cleaning pass at a time over a real log on disk."""

import dataclasses
import threading
import time

import pytest

from franz.records import ControlRecordType, MemoryRecords, SimpleRecord, build_batch, build_control_batch
from franz.storage import files
from franz.storage.cleaner import Cleaner, CleanerConfig, CleanerThread, group_segments_by_size
from franz.storage.cleaner_manager import LogCleaningAbortedError, LogToClean
from franz.storage.log_config import LogConfig
from franz.storage.log_manager import LogManager
from franz.storage.offset_map import SkimpyOffsetMap
from franz.storage.producer_state import AppendOrigin
from franz.storage.throttler import Throttler
from franz.storage.unified_log import UnifiedLog
from tests.support.log_test_utils import WITHOUT_VERIFICATION

NOW = 1_700_000_000_000
LARGE_TIMESTAMP = NOW + 10**9  # past any delete horizon stamped at NOW
TP = ("test", 0)
DELETE_RETENTION_MS = 86_400_000  # delete.retention.ms's default


def make_log(tmp_path, name="test-0", **props):
    """A compacted log; props are topic configs with `_` for `.` (segment_bytes=...)."""
    config = LogConfig.from_props({"segment.bytes": 1024, "cleanup.policy": "compact", "file.delete.delay.ms": 0,
                                   "message.timestamp.after.max.ms": 2**62, "message.timestamp.before.max.ms": 2**62,
                                   **{k.replace("_", "."): v for k, v in props.items()}})
    return UnifiedLog.create(tmp_path / name, config, time_ms=lambda: NOW, producer_state_config=WITHOUT_VERIFICATION)


def make_cleaner(capacity=2**31 - 1, checks=None, max_message_size=64 * 1024):
    """A cleaner whose map holds `capacity` keys (a load factor of 1), as makeCleaner does."""
    def check_done(tp):
        if checks is not None:
            checks(tp)
    return Cleaner(0, SkimpyOffsetMap(capacity * 24), 64 * 1024, max_message_size, 1.0,
                   Throttler(float("inf")), lambda: NOW, check_done)


def key(k):
    return str(k).encode()


def append(log, *keys, value=b"v", producer_id=-1, epoch=-1, sequence=-1, transactional=False, timestamp=NOW):
    batch = build_batch([SimpleRecord(None if value is None else value, key=key(k), timestamp=timestamp)
                         for k in keys], producer_id=producer_id, producer_epoch=epoch, base_sequence=sequence,
                        is_transactional=transactional)
    return log.append_as_leader(MemoryRecords(bytearray(batch)), 0)


class Producer:
    """An idempotent or transactional producer appending keyed batches with its next sequence."""

    def __init__(self, log, producer_id, epoch=0, transactional=False):
        self.log, self.producer_id, self.epoch, self.transactional = log, producer_id, epoch, transactional
        self.sequence = 0

    def __call__(self, keys):
        info = append(self.log, *keys, producer_id=self.producer_id, epoch=self.epoch, sequence=self.sequence,
                      transactional=self.transactional)
        self.sequence += len(keys)
        return info

    def marker(self, control_type):
        batch = build_control_batch(control_type, producer_id=self.producer_id, producer_epoch=self.epoch,
                                    timestamp=NOW)
        self.log.append_as_leader(MemoryRecords(bytearray(batch)), 0, origin=AppendOrigin.COORDINATOR)


def clean(cleaner, log, first_dirty=0, current_time=NOW):
    log.update_high_watermark(log.log_end_offset)
    return cleaner.do_clean(LogToClean(TP, log, first_dirty, log.segments.active_segment.base_offset), current_time)[0]


def batches(log):
    return [b for s in log.segments.values() for b in s.log.batches()]


def keys_in_log(log):
    return [int(r.key) for b in batches(log) if not b.is_control_batch for r in b.records() if r.value is not None]


def offsets_in_log(log):
    return [r.offset for b in batches(log) for r in b.records()]


def last_offsets_per_batch(log):
    return [b.last_offset for b in batches(log)]


def last_sequences(log):
    return {b.producer_id: b.last_sequence for b in batches(log) if b.producer_id >= 0 and not b.is_control_batch}


def test_only_the_latest_record_of_each_key_survives_and_offsets_do_not_change(tmp_path):
    log = make_log(tmp_path)
    for i in range(60):
        append(log, i % 6, value=b"value-%d" % i)
    log.roll()
    end = clean(make_cleaner(), log)
    assert end == 60
    assert keys_in_log(log) == [0, 1, 2, 3, 4, 5]
    assert offsets_in_log(log) == list(range(54, 60))
    assert [r.value for b in batches(log) for r in b.records()] == [b"value-%d" % i for i in range(54, 60)]
    assert log.log_end_offset == 60
    assert not list(log.dir.glob("*.cleaned")) and not list(log.dir.glob("*.swap"))


def test_records_past_the_first_uncleanable_offset_stay(tmp_path):
    log = make_log(tmp_path)
    for i in range(20):
        append(log, i % 2)
    log.roll()
    uncleanable = log.log_end_offset
    for i in range(20):
        append(log, i % 2)
    log.roll()
    log.update_high_watermark(log.log_end_offset)
    # LogToClean's uncleanable offset (testCleaningWithUncleanableSection): only [0, 20) is cleaned.
    Cleaner.do_clean(make_cleaner(), LogToClean(TP, log, 0, uncleanable), NOW)
    assert offsets_in_log(log) == [18, 19] + list(range(20, 40))


def test_duplicate_detection_survives_cleaning_and_a_reload(tmp_path):
    log = make_log(tmp_path, segment_bytes=2048)
    p1, p2, p3 = Producer(log, 1), Producer(log, 2), Producer(log, 3)
    p1([1, 2, 3])
    p2([3, 1, 4])
    p3([1, 4])
    log.roll()
    clean(make_cleaner(), log)
    assert last_offsets_per_batch(log) == [2, 5, 7]
    assert last_sequences(log) == {1: 2, 2: 2, 3: 1}
    assert keys_in_log(log) == [2, 3, 1, 4]
    assert offsets_in_log(log) == [1, 3, 6, 7]

    log.close()
    log = make_log(tmp_path, segment_bytes=2048)
    for producer, first, last in ((Producer(log, 1), 0, 2), (Producer(log, 3), 6, 7), (Producer(log, 2), 3, 5)):
        info = producer([1, 2, 3] if producer.producer_id == 1 else [1, 4] if producer.producer_id == 3
                        else [3, 1, 4])
        assert (info.first_offset, info.last_offset, info.duplicate) == (first, last, True)


def test_a_producers_last_batch_stays_even_when_all_its_records_go(tmp_path):
    log = make_log(tmp_path)
    append(log, 0)  # offset 0
    append(log, 0, producer_id=1, epoch=0, sequence=0)  # 1
    append(log, 0, producer_id=2, epoch=0, sequence=0)  # 2
    append(log, 0, producer_id=3, epoch=0, sequence=0)  # 3
    append(log, 1, producer_id=2, epoch=0, sequence=1)  # 4
    log.roll()
    clean(make_cleaner(), log)
    assert last_offsets_per_batch(log) == [1, 3, 4]
    assert last_sequences(log) == {1: 0, 2: 1, 3: 0}
    assert keys_in_log(log) == [0, 1]
    assert offsets_in_log(log) == [3, 4]
    empty = batches(log)[0]
    assert (empty.record_count, empty.size_in_bytes, empty.producer_id, empty.base_sequence) == (0, 61, 1, 0)
    assert empty.is_valid()


def test_an_aborted_producers_last_sequence_survives_until_it_writes_again(tmp_path):
    log = make_log(tmp_path)
    producer = Producer(log, 1, transactional=True)
    producer([1])
    producer([2, 3])
    producer.marker(ControlRecordType.ABORT)
    log.roll()
    clean(make_cleaner(), log)
    assert last_offsets_per_batch(log) == [2, 3]
    assert last_sequences(log) == {1: 2}
    assert keys_in_log(log) == []
    assert offsets_in_log(log) == [3]

    producer([1, 5])
    log.roll()
    clean(make_cleaner(), log)
    assert last_offsets_per_batch(log) == [3, 5]
    assert last_sequences(log) == {1: 4}
    assert keys_in_log(log) == [1, 5]
    assert offsets_in_log(log) == [3, 4, 5]


def test_aborted_transactions_go_and_the_transaction_index_is_kept(tmp_path):
    log = make_log(tmp_path, segment_bytes=2048)
    p1, p2 = Producer(log, 1, transactional=True), Producer(log, 2, transactional=True)
    p1([1, 2])
    p2([2, 3])
    p1([3, 4])
    p1.marker(ControlRecordType.ABORT)
    p2.marker(ControlRecordType.COMMIT)
    p1([2])
    p1.marker(ControlRecordType.COMMIT)
    aborted = log.collect_aborted_transactions(log.log_start_offset, log.log_end_offset)
    assert len(aborted) == 1
    log.roll()
    clean(make_cleaner(), log)
    assert keys_in_log(log) == [3, 2]
    assert offsets_in_log(log) == [3, 6, 7, 8, 9]
    assert log.collect_aborted_transactions(log.log_start_offset, log.log_end_offset) == aborted


def test_a_commit_marker_goes_only_after_its_records_and_its_delete_horizon(tmp_path):
    log = make_log(tmp_path, segment_bytes=256)
    producer = Producer(log, 1, transactional=True)
    cleaner = make_cleaner()
    producer([1])
    producer([2, 3])
    producer.marker(ControlRecordType.COMMIT)
    producer([2])
    producer.marker(ControlRecordType.COMMIT)
    log.roll()
    dirty = clean(cleaner, log, 0, LARGE_TIMESTAMP)  # records of the transaction remain: the marker stays
    assert keys_in_log(log) == [1, 3, 2]
    assert offsets_in_log(log) == [0, 2, 3, 4, 5]

    producer([1, 3])
    producer.marker(ControlRecordType.COMMIT)
    log.roll()
    dirty = clean(cleaner, log, dirty, LARGE_TIMESTAMP)  # the marker at 3 gets a delete horizon
    assert keys_in_log(log) == [2, 1, 3]
    assert offsets_in_log(log) == [3, 4, 5, 6, 7, 8]
    # An empty dirty range makes no pass (the map ends before it begins): re-map from 0.
    clean(cleaner, log, 0, LARGE_TIMESTAMP)  # not before the horizon
    assert offsets_in_log(log) == [3, 4, 5, 6, 7, 8]
    clean(cleaner, log, 0, 2**63 - 1)
    assert keys_in_log(log) == [2, 1, 3]
    assert offsets_in_log(log) == [4, 5, 6, 7, 8]


def test_an_abort_marker_goes_once_its_transaction_is_gone(tmp_path):
    log = make_log(tmp_path, segment_bytes=256)
    producer = Producer(log, 1, transactional=True)
    cleaner = make_cleaner()
    producer([1])
    producer([2, 3])
    producer.marker(ControlRecordType.ABORT)
    producer([3])
    producer.marker(ControlRecordType.COMMIT)
    log.roll()
    dirty = clean(cleaner, log, 0, LARGE_TIMESTAMP)  # the aborted data goes; the marker stays with it this pass
    assert keys_in_log(log) == [3]
    assert offsets_in_log(log) == [3, 4, 5]
    assert len(log.collect_aborted_transactions(0, log.log_end_offset)) == 1  # re-indexed in the cleaned segment
    assert clean(cleaner, log, dirty, LARGE_TIMESTAMP) == 0  # nothing dirty: no pass
    clean(cleaner, log, 0, LARGE_TIMESTAMP)  # its data gone: the marker gets a delete horizon
    assert offsets_in_log(log) == [3, 4, 5]
    clean(cleaner, log, 0, LARGE_TIMESTAMP + DELETE_RETENTION_MS + 1)
    assert keys_in_log(log) == [3]
    assert offsets_in_log(log) == [4, 5]
    assert log.collect_aborted_transactions(0, log.log_end_offset) == []


def test_a_tombstone_stays_until_the_delete_horizon_its_first_pass_stamped(tmp_path):
    log = make_log(tmp_path, delete_retention_ms=1000)
    cleaner = make_cleaner()
    append(log, 0, value=b"x")
    append(log, 0, value=None)  # a tombstone for key 0
    append(log, 1, value=b"y")
    log.roll()
    clean(cleaner, log, 0, NOW)
    assert offsets_in_log(log) == [1, 2]
    tombstone_batch = batches(log)[0]
    assert tombstone_batch.delete_horizon_ms == NOW + 1000 and tombstone_batch.is_valid()
    clean(cleaner, log, 0, NOW + 999)
    assert offsets_in_log(log) == [1, 2]
    assert batches(log)[0].delete_horizon_ms == NOW + 1000  # a later pass keeps the first horizon
    clean(cleaner, log, 0, NOW + 1000)
    assert offsets_in_log(log) == [2]


def test_records_without_a_key_are_dropped(tmp_path):
    log = make_log(tmp_path, cleanup_policy="delete")  # compaction rejects keyless appends; write as delete
    log.append_as_leader(MemoryRecords(bytearray(build_batch([SimpleRecord(b"no key", timestamp=NOW)]))), 0)
    append(log, 1)
    append(log, 2)
    log.roll()
    clean(make_cleaner(), log)
    assert offsets_in_log(log) == [1, 2]


def test_a_full_offset_map_cleans_as_far_as_it_reaches(tmp_path):
    log = make_log(tmp_path)
    for i in range(40):
        append(log, i)  # 40 distinct keys
    for i in range(40):
        append(log, i)
    log.roll()
    cleaner = make_cleaner(capacity=30)
    end = clean(cleaner, log)
    assert end == 30  # the map filled at key 30 and holds only first occurrences: nothing goes yet
    assert offsets_in_log(log) == list(range(80))
    end = clean(cleaner, log, end)
    assert end == 60  # keys 30-39 and 0-19 mapped: the first 0-19 go
    assert offsets_in_log(log) == list(range(20, 80))
    end = clean(cleaner, log, end)
    assert end == 80
    assert offsets_in_log(log) == list(range(40, 80))


def test_the_last_batch_of_a_pass_stays_so_the_log_end_offset_survives(tmp_path):
    log = make_log(tmp_path)
    append(log, 1)
    append(log, 1, value=None)
    log.roll()
    log.truncate_to(2)  # nothing after the pass's last batch
    clean(make_cleaner(), log, 0, 2**62)
    assert last_offsets_per_batch(log) == [1]
    assert log.log_end_offset == 2


def test_a_cleaned_log_reloads_after_a_clean_and_an_unclean_stop(tmp_path):
    log = make_log(tmp_path)
    for i in range(50):
        append(log, i % 5)
    log.roll()
    clean(make_cleaner(), log)
    expected = offsets_in_log(log)
    log.close()
    assert offsets_in_log(make_log(tmp_path)) == expected
    reopened = UnifiedLog.create(tmp_path / "test-0", make_log(tmp_path / "other").config, had_clean_shutdown=False,
                                 time_ms=lambda: NOW)
    assert offsets_in_log(reopened) == expected and reopened.log_end_offset == 50


def test_an_aborted_pass_leaves_the_log_as_it_was_and_no_cleaned_files(tmp_path):
    log = make_log(tmp_path)
    for i in range(50):
        append(log, i % 5)
    log.roll()
    before = offsets_in_log(log)
    calls = []

    def abort_on_second_segment(tp):
        calls.append(tp)
        if len(calls) > 6:
            raise LogCleaningAbortedError()
    with pytest.raises(LogCleaningAbortedError):
        clean(make_cleaner(checks=abort_on_second_segment), log)
    assert set(calls) == {TP}
    assert not list(log.dir.glob("*" + files.CLEANED_FILE_SUFFIX))
    assert offsets_in_log(log)[-5:] == before[-5:]
    assert log.log_end_offset == 50


def test_a_batch_larger_than_the_read_buffer_grows_it(tmp_path):
    log = make_log(tmp_path, segment_bytes=1 << 20)
    big = b"x" * 200_000
    append(log, 1, value=big)
    append(log, 1, value=big)
    log.roll()
    cleaner = Cleaner(0, SkimpyOffsetMap(1 << 20), 1024, 1 << 20, 0.9, Throttler(float("inf")), lambda: NOW,
                      lambda tp: None)
    clean(cleaner, log)
    assert offsets_in_log(log) == [1]
    assert cleaner._read_size == 1024  # back to its configured size after the segment


def test_an_io_buffer_of_zero_bytes_still_cleans(tmp_path):
    log = make_log(tmp_path)
    for i in range(10):
        append(log, i % 2)
    log.roll()
    cleaner = Cleaner(0, SkimpyOffsetMap(1 << 16), 0, 1 << 20, 0.9, Throttler(float("inf")), lambda: NOW,
                      lambda tp: None)
    clean(cleaner, log)
    assert offsets_in_log(log) == [8, 9]


def test_segments_group_up_to_the_segment_size_and_an_int32_of_offsets(tmp_path):
    log = make_log(tmp_path, segment_bytes=300)
    for i in range(40):
        append(log, i)
    log.roll()
    segments = log.segments.values()[:-1]
    sizes = [s.size() for s in segments]
    groups = group_segments_by_size(segments, 2 * max(sizes), 2**31 - 1, log.log_end_offset)
    assert [s for g in groups for s in g] == segments
    assert all(sum(s.size() for s in g) <= 2 * max(sizes) for g in groups)
    assert all(len(g) == 2 for g in groups[:-1])
    assert group_segments_by_size(segments, 2**31 - 1, 2**31 - 1, log.log_end_offset) == [segments]
    assert [len(g) for g in group_segments_by_size(segments, 1, 2**31 - 1, log.log_end_offset)] == [1] * len(segments)
    # Offsets that would not fit an int32 above a group's base split it.
    first, third = segments[0], segments[2]
    third_base, third.base_offset = third.base_offset, first.base_offset + 2**31 + 1
    try:
        groups = group_segments_by_size(segments[:3], 2**31 - 1, 2**31 - 1, log.log_end_offset)
        assert groups[0] == [first]  # the second one may end at first + 2**31: it starts a group
    finally:
        third.base_offset = third_base


def test_timestamps_and_headers_of_rebuilt_batches_are_kept(tmp_path):
    log = make_log(tmp_path)
    records = [SimpleRecord(b"a", key=b"1", timestamp=NOW - 5, headers=(("h", b"1"),)),
               SimpleRecord(b"b", key=b"2", timestamp=NOW - 3),
               SimpleRecord(b"c", key=b"1", timestamp=NOW - 1, headers=(("h", b"2"),))]
    log.append_as_leader(MemoryRecords(bytearray(build_batch(records, compression_type=1))), 0)
    log.roll()
    clean(make_cleaner(), log)
    (batch,) = batches(log)
    assert batch.is_valid() and batch.compression_type == 1
    assert (batch.base_offset, batch.last_offset, batch.max_timestamp) == (0, 2, NOW - 1)
    assert [(r.offset, r.key, r.value, r.timestamp, r.headers) for r in batch.records()] == [
        (1, b"2", b"b", NOW - 3, ()), (2, b"1", b"c", NOW - 1, (("h", b"2"),))]
    assert log.fetch_offset_by_timestamp(NOW - 2).offset == 2


def test_a_cleaning_pass_reads_its_segments_at_the_wall_clock_of_the_cleaner(tmp_path):
    # Cleaner.clean uses its clock for the delete horizon (doClean(cleanable, time.milliseconds)).
    log = make_log(tmp_path, delete_retention_ms=10)
    append(log, 1, value=None)
    append(log, 2)
    log.roll()
    log.update_high_watermark(log.log_end_offset)
    clock = [NOW]
    cleaner = Cleaner(0, SkimpyOffsetMap(1 << 16), 4096, 1 << 20, 0.9, Throttler(float("inf")), lambda: clock[0],
                      lambda tp: None)
    cleaner.clean(LogToClean(TP, log, 0, log.segments.active_segment.base_offset))
    assert batches(log)[0].delete_horizon_ms == NOW + 10
    clock[0] = NOW + 10
    cleaner.clean(LogToClean(TP, log, 0, log.segments.active_segment.base_offset))
    assert offsets_in_log(log) == [1]


# -- the cleaner threads on a LogManager (LogCleanerIntegrationTest, LogManagerTest) ----------------------


def cleaning_manager(tmp_path, threads=1, **topic_props):
    props = {"segment.bytes": 1024, "file.delete.delay.ms": 0, "message.timestamp.after.max.ms": 2**62,
             "message.timestamp.before.max.ms": 2**62}
    config = LogConfig.from_props(props)
    # Any dirty byte makes the log cleanable: the writes race the cleaner thread, and a pass that
    # lands mid-write must not leave a tail below the default 0.5 dirty ratio behind.
    topic_config = LogConfig.from_props({**props, "min.cleanable.dirty.ratio": 0.01,
                                         **{k.replace("_", "."): v for k, v in topic_props.items()}})
    manager = LogManager([tmp_path / "data"], config, initial_task_delay_ms=0, retention_check_ms=60_000,
                         topic_config=lambda topic: topic_config if topic.startswith("compacted") else config,
                         cleaner_config=CleanerConfig(num_threads=threads, backoff_ms=20,
                                                      dedupe_buffer_size=1 << 20))
    manager.startup()
    return manager


def write_keys(log, rounds, keys=10):
    for r in range(rounds):
        for k in range(keys):
            log.append_as_leader(MemoryRecords(bytearray(build_batch(
                [SimpleRecord(b"round-%d" % r, key=b"key-%d" % k, timestamp=int(time.time() * 1000))]))), 0)
    log.update_high_watermark(log.log_end_offset)


def test_the_cleaner_thread_compacts_a_compacted_log_and_checkpoints_how_far(tmp_path):
    manager = cleaning_manager(tmp_path, cleanup_policy="compact")
    try:
        log = manager.get_or_create_log("compacted", 0)
        write_keys(log, 20)
        size_before = log.size()
        log.roll()
        assert manager.cleaner.await_cleaned(("compacted", 0), 200, max_wait_ms=30_000)
        values = {r.key: r.value for b in batches(log) for r in b.records()}
        assert values == {b"key-%d" % k: b"round-19" for k in range(10)}
        assert offsets_in_log(log) == list(range(190, 200))
        assert log.size() < size_before / 5
        text = (tmp_path / "data" / "cleaner-offset-checkpoint").read_text()
        assert text == "0\n1\ncompacted 0 200\n"
    finally:
        manager.shutdown()
    assert not [t for t in threading.enumerate() if t.name.startswith("kafka-log-cleaner-thread")]


def test_logs_that_are_not_compacted_are_left_to_retention(tmp_path):
    manager = cleaning_manager(tmp_path, cleanup_policy="compact")
    try:
        plain = manager.get_or_create_log("plain", 0)
        write_keys(plain, 5)
        plain.roll()
        compacted = manager.get_or_create_log("compacted", 0)
        write_keys(compacted, 5)
        compacted.roll()
        assert manager.cleaner.await_cleaned(("compacted", 0), 50, max_wait_ms=30_000)
        assert offsets_in_log(plain) == list(range(50))
        assert manager.cleaner.cleaner_manager.all_cleaner_checkpoints().keys() == {("compacted", 0)}
    finally:
        manager.shutdown()


def test_compact_delete_logs_get_their_retention_from_the_cleaner_thread(tmp_path):
    manager = cleaning_manager(tmp_path, cleanup_policy="compact,delete", retention_ms=1)
    try:
        log = manager.get_or_create_log("compacted", 0)
        write_keys(log, 5)
        log.roll()
        assert manager.cleanup_logs() == 0  # LogManager's retention leaves compacted logs alone
        for _ in range(300):
            if log.log_start_offset == 50:
                break
            time.sleep(0.05)
        assert log.log_start_offset == 50 and log.number_of_segments() == 1
    finally:
        manager.shutdown()


def test_deleting_a_log_aborts_its_cleaning_and_forgets_its_checkpoint(tmp_path):
    manager = cleaning_manager(tmp_path, cleanup_policy="compact")
    try:
        log = manager.get_or_create_log("compacted", 0)
        write_keys(log, 20)
        log.roll()
        assert manager.cleaner.await_cleaned(("compacted", 0), 200, max_wait_ms=30_000)
        manager.delete_log("compacted", 0)
        assert manager.cleaner.cleaner_manager.cleaning_state(("compacted", 0)) is None
        assert "compacted" not in (tmp_path / "data" / "cleaner-offset-checkpoint").read_text()
        log = manager.get_or_create_log("compacted", 0)  # the same name again starts dirty from 0
        write_keys(log, 2)
        log.roll()
        assert manager.cleaner.await_cleaned(("compacted", 0), 20, max_wait_ms=30_000)
        assert offsets_in_log(log) == list(range(10, 20))
    finally:
        manager.shutdown()


def test_a_cleaned_log_survives_a_restart_with_its_checkpoint(tmp_path):
    manager = cleaning_manager(tmp_path, cleanup_policy="compact")
    log = manager.get_or_create_log("compacted", 0)
    write_keys(log, 20)
    log.roll()
    assert manager.cleaner.await_cleaned(("compacted", 0), 200, max_wait_ms=30_000)
    manager.shutdown()
    manager = cleaning_manager(tmp_path, cleanup_policy="compact")
    try:
        log = manager.get_log("compacted", 0)
        assert offsets_in_log(log) == list(range(190, 200)) and log.log_end_offset == 200
        assert manager.cleaner.cleaner_manager.all_cleaner_checkpoints() == {("compacted", 0): 200}
    finally:
        manager.shutdown()


def test_a_corrupt_segment_makes_its_partition_uncleanable_and_is_left_as_it_was(tmp_path, caplog):
    manager = cleaning_manager(tmp_path, threads=0, cleanup_policy="compact")  # no thread yet: write first
    log = manager.get_or_create_log("compacted", 0)
    write_keys(log, 20)
    log.roll()
    manager.shutdown()
    victim = sorted((tmp_path / "data" / "compacted-0").glob("*.log"))[2]
    with open(victim, "r+b") as handle:
        handle.seek(16)  # the first batch's magic byte
        handle.write(b"\x07")
    before = {p.name: p.read_bytes() for p in (tmp_path / "data" / "compacted-0").glob("*.log")}
    manager = cleaning_manager(tmp_path, cleanup_policy="compact")
    try:
        cleaner_manager = manager.cleaner.cleaner_manager
        deadline = time.monotonic() + 30
        while ("compacted", 0) not in cleaner_manager.uncleanable_partitions(manager.log_dirs[0]):
            assert time.monotonic() < deadline, "the corrupt partition was never marked uncleanable"
            time.sleep(0.02)
        assert any("Marking its partition" in r.getMessage() and "uncleanable" in r.getMessage()
                   for r in caplog.records)
        directory = tmp_path / "data" / "compacted-0"
        assert not list(directory.glob("*.cleaned")) and not list(directory.glob("*.swap"))
        assert {p.name: p.read_bytes() for p in directory.glob("*.log")} == before
        assert cleaner_manager.grab_filthiest_compacted_log() is None  # skipped from now on
    finally:
        manager.shutdown()


def test_a_disk_error_in_the_swap_takes_the_log_offline_and_the_next_start_recovers_it(tmp_path, caplog):
    """Kafka's cleanLog takes the dir offline on an IOException; franz takes the log offline, not
    marking it uncleanable. The error is real: a directory holds the `.swap` name the cleaned
    segment is renamed to (EISDIR)."""
    manager = cleaning_manager(tmp_path, threads=0, cleanup_policy="compact")  # one pass, run here
    directory = tmp_path / "data" / "compacted-0"
    blocker = directory / "00000000000000000000.log.swap"
    try:
        log = manager.get_or_create_log("compacted", 0)
        write_keys(log, 20)
        log.roll()
        before = offsets_in_log(log)
        blocker.mkdir()
        (blocker / "taken").write_bytes(b"")
        # The pass a cleaner thread makes, run here (a thread would race the writes above).
        manager.cleaner.config = dataclasses.replace(manager.cleaner.config, num_threads=1)
        assert CleanerThread(manager.cleaner, 0)._try_clean_filthiest_log()
        assert log.offline and ("compacted", 0) in manager.offline_logs
        assert ("compacted", 0) not in manager.cleaner.cleaner_manager.uncleanable_partitions(manager.log_dirs[0])
        assert any("Failed to clean up log for compacted-0" in r.getMessage() for r in caplog.records)
    finally:
        manager.shutdown()
    (blocker / "taken").unlink()
    blocker.rmdir()
    manager = cleaning_manager(tmp_path, threads=0, cleanup_policy="compact")
    try:
        log = manager.get_log("compacted", 0)
        assert not log.offline and not list(directory.glob("*.cleaned"))
        assert offsets_in_log(log) == before  # the swap never began: the old segments stand
    finally:
        manager.shutdown()


class _Crash(BaseException):
    """A crash at a chosen point of the swap: nothing after it runs."""


@pytest.mark.parametrize("crash_at", ["before the swap", "after the swap rename"])
def test_a_crash_inside_the_swap_recovers_either_the_old_segments_or_the_cleaned_one(tmp_path, monkeypatch,
                                                                                      crash_at):
    log = make_log(tmp_path, segment_bytes=300)
    for i in range(60):
        append(log, i % 4)
    log.roll()
    before = offsets_in_log(log)
    from franz.storage import local_log, unified_log  # noqa: PLC0415 - patched for the crash

    def crash(*args, **kwargs):
        raise _Crash()
    if crash_at == "before the swap":
        monkeypatch.setattr(unified_log, "replace_segments", crash)
    else:  # the new segment is `.swap` (the commit point); the old ones are not yet renamed
        monkeypatch.setattr(local_log, "delete_segment_files", crash)
    cleaner = Cleaner(0, SkimpyOffsetMap(1 << 16), 64 * 1024, 1 << 20, 1.0, Throttler(float("inf")), lambda: NOW,
                      lambda tp: None)
    with pytest.raises(_Crash):
        clean(cleaner, log)
    monkeypatch.undo()
    left = {p.suffix for p in log.dir.iterdir()}
    assert (".cleaned" if crash_at == "before the swap" else ".swap") in left  # what the crash left
    log.close_handlers()  # the process died: no flush, no snapshot, no clean-shutdown marker
    reopened = UnifiedLog.create(tmp_path / "test-0", log.config, had_clean_shutdown=False, time_ms=lambda: NOW)
    names = [p.name for p in reopened.dir.iterdir()]
    assert not [n for n in names if n.endswith((".swap", ".cleaned"))], names
    if crash_at == "before the swap":
        assert offsets_in_log(reopened) == before  # nothing was committed: the old segments stand
    else:
        # The group's cleaned segment replaced its old ones; groups after it were not reached.
        first_group_end = reopened.segments.values()[1].base_offset
        offsets = offsets_in_log(reopened)
        assert [o for o in offsets if o >= first_group_end] == [o for o in before if o >= first_group_end]
        assert len([o for o in offsets if o < first_group_end]) <= 4  # one record per key at most
    assert reopened.log_end_offset == 60
    reopened.close()
