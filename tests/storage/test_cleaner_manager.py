"""Behaviours of Kafka's LogCleanerManagerTest: choosing the log to clean, its cleanable range, and
the cleaning states that keep the cleaner, retention and deletion apart."""

import threading

import pytest

from franz.records import ControlRecordType, MemoryRecords, SimpleRecord, build_batch, build_control_batch
from franz.storage.cleaner_manager import (
    ABORTED,
    IN_PROGRESS,
    LogCleanerManager,
    LogCleaningAbortedError,
    LogCleaningError,
    Paused,
    cleanable_offsets,
)
from franz.storage.log_config import LogConfig
from franz.storage.producer_state import AppendOrigin
from franz.storage.unified_log import UnifiedLog
from tests.support.log_test_utils import WITHOUT_VERIFICATION

NOW = 1_700_000_000_000


class Clock:
    def __init__(self):
        self.now = NOW

    def __call__(self):
        return self.now


def make_log(tmp_path, name="foo-0", clock=None, **props):
    config = LogConfig.from_props({"segment.bytes": 1024, "cleanup.policy": "compact", "file.delete.delay.ms": 0,
                                   "message.timestamp.after.max.ms": 2**62, "message.timestamp.before.max.ms": 2**62,
                                   **{k.replace("_", "."): v for k, v in props.items()}})
    return UnifiedLog.create(tmp_path / "data" / name, config, time_ms=clock or Clock(),
                             producer_state_config=WITHOUT_VERIFICATION)


def append(log, key, timestamp=NOW, **batch):
    log.append_as_leader(MemoryRecords(bytearray(build_batch(
        [SimpleRecord(b"value-%d" % key, key=b"%d" % key, timestamp=timestamp)], **batch))), 0)


def filthy_logs(tmp_path, count, start_batches=20, increment=5):
    """Logs foo-0.. with ever more dirty data: each later one has `increment` more duplicate batches."""
    logs = {}
    for partition in range(count):
        log = make_log(tmp_path, f"foo-{partition}")
        for i in range(start_batches + partition * increment):
            append(log, i % 3)
        log.roll()
        log.update_high_watermark(log.log_end_offset)
        logs[("foo", partition)] = log
    return logs


def manager_for(tmp_path, logs, clock=None):
    (tmp_path / "data").mkdir(exist_ok=True)
    return LogCleanerManager([tmp_path / "data"], lambda: logs, clock or Clock())


def test_the_filthiest_log_is_chosen_and_marked_in_progress(tmp_path):
    logs = filthy_logs(tmp_path, 3, start_batches=30, increment=15)
    manager = manager_for(tmp_path, logs)
    for tp in logs:  # each cleaned up to 5; the later ones have more dirty bytes past it
        manager.update_checkpoints(tmp_path / "data", (tp, 5))
    chosen = manager.grab_filthiest_compacted_log()
    assert chosen.topic_partition == ("foo", 2)
    assert manager.cleaning_state(("foo", 2)) == IN_PROGRESS
    assert manager.grab_filthiest_compacted_log().topic_partition == ("foo", 1)  # in-progress ones are skipped


def test_uncleanable_partitions_and_logs_below_the_dirty_ratio_are_skipped(tmp_path):
    logs = filthy_logs(tmp_path, 2)
    manager = manager_for(tmp_path, logs)
    manager.mark_partition_uncleanable(tmp_path / "data", ("foo", 1))
    assert manager.grab_filthiest_compacted_log().topic_partition == ("foo", 0)
    manager.done_cleaning(("foo", 0), tmp_path / "data", logs[("foo", 0)].log_end_offset)
    assert manager.grab_filthiest_compacted_log() is None  # foo-0 is now all clean
    assert manager.all_cleaner_checkpoints() == {("foo", 0): logs[("foo", 0)].log_end_offset}
    del logs[("foo", 1)]
    manager.maintain_uncleanable_partitions()
    assert manager.uncleanable_partitions(tmp_path / "data") == set()


def test_a_failing_log_raises_log_cleaning_error_naming_it(tmp_path):
    logs = filthy_logs(tmp_path, 1)
    log = logs[("foo", 0)]
    log.local_log.segments.clear()  # a log in a broken state
    with pytest.raises(LogCleaningError) as failure:
        manager_for(tmp_path, logs).grab_filthiest_compacted_log()
    assert failure.value.log is log


def test_the_cleaner_offset_checkpoint_is_kafkas_offset_checkpoint_file(tmp_path):
    logs = filthy_logs(tmp_path, 2)
    manager = manager_for(tmp_path, logs)
    manager.update_checkpoints(tmp_path / "data", (("foo", 1), 42))
    manager.update_checkpoints(tmp_path / "data", (("foo", 0), 7))
    text = (tmp_path / "data" / "cleaner-offset-checkpoint").read_text()
    assert text.splitlines()[:2] == ["0", "2"] and sorted(text.splitlines()[2:]) == ["foo 0 7", "foo 1 42"]
    manager.update_checkpoints(tmp_path / "data", remove=("foo", 1))
    assert manager.all_cleaner_checkpoints() == {("foo", 0): 7}
    manager.maybe_truncate_checkpoint(tmp_path / "data", ("foo", 0), 5)
    assert manager.all_cleaner_checkpoints() == {("foo", 0): 5}
    manager.maybe_truncate_checkpoint(tmp_path / "data", ("foo", 0), 9)  # only ever down
    assert manager.all_cleaner_checkpoints() == {("foo", 0): 5}


def test_a_checkpoint_outside_the_log_is_reset_to_the_log_start(tmp_path):
    logs = filthy_logs(tmp_path, 1)
    log = logs[("foo", 0)]
    log.maybe_increment_log_start_offset(10)
    assert not cleanable_offsets(log, 15, NOW).force_update_checkpoint
    log.maybe_increment_log_start_offset(20)
    reset = cleanable_offsets(log, 15, NOW)
    assert reset.force_update_checkpoint and reset.first_dirty_offset == 20
    assert cleanable_offsets(log, log.log_end_offset + 5, NOW).force_update_checkpoint
    manager = manager_for(tmp_path, logs)
    manager.update_checkpoints(tmp_path / "data", (("foo", 0), log.log_end_offset + 5))
    manager.grab_filthiest_compacted_log()
    assert manager.all_cleaner_checkpoints() == {("foo", 0): 20}  # written back even if nothing is chosen


def test_the_active_segment_is_never_cleanable(tmp_path):
    log = make_log(tmp_path)
    for i in range(30):
        append(log, i)
    log.update_high_watermark(log.log_end_offset)
    offsets = cleanable_offsets(log, 0, NOW)
    assert offsets.first_uncleanable_dirty_offset == log.segments.active_segment.base_offset
    assert cleanable_offsets(log, log.log_end_offset, NOW).first_uncleanable_dirty_offset == log.log_end_offset


def test_segments_younger_than_min_compaction_lag_are_not_cleanable(tmp_path):
    lag = 60 * 60 * 1000
    clock = Clock()
    log = make_log(tmp_path, clock=clock, min_compaction_lag_ms=lag)
    while log.number_of_segments() < 4:
        append(log, log.log_end_offset, timestamp=clock.now)
    active_at_t0 = log.segments.active_segment
    clock.now += lag + 1
    while log.number_of_segments() < 8:
        append(log, log.log_end_offset, timestamp=clock.now)
    log.update_high_watermark(log.log_end_offset)
    offsets = cleanable_offsets(log, 0, clock.now)
    assert (offsets.first_dirty_offset, offsets.first_uncleanable_dirty_offset) == (0, active_at_t0.base_offset)
    clock.now += lag + 1
    assert cleanable_offsets(log, 0, clock.now).first_uncleanable_dirty_offset == \
        log.segments.active_segment.base_offset


def test_undecided_transactional_data_is_not_cleanable(tmp_path):
    log = make_log(tmp_path)
    append(log, 1, producer_id=15, producer_epoch=0, base_sequence=0, is_transactional=True)
    append(log, 2, producer_id=15, producer_epoch=0, base_sequence=1, is_transactional=True)
    log.roll()
    log.update_high_watermark(2)
    assert cleanable_offsets(log, 0, NOW).first_uncleanable_dirty_offset == 0  # the LSO holds it
    log.append_as_leader(MemoryRecords(bytearray(build_control_batch(
        ControlRecordType.ABORT, producer_id=15, producer_epoch=0, timestamp=NOW))), 0,
        origin=AppendOrigin.COORDINATOR)
    log.roll()
    log.update_high_watermark(3)
    assert cleanable_offsets(log, 0, NOW).first_uncleanable_dirty_offset == 3


def test_max_compaction_lag_makes_a_log_below_the_dirty_ratio_cleanable(tmp_path):
    clock = Clock()
    log = make_log(tmp_path, clock=clock, max_compaction_lag_ms=1000, min_cleanable_dirty_ratio=0.99)
    logs = {("foo", 0): log}
    for i in range(30):
        append(log, i, timestamp=clock.now)
    log.roll()
    log.update_high_watermark(log.log_end_offset)
    manager = manager_for(tmp_path, logs, clock)
    manager.update_checkpoints(tmp_path / "data", (("foo", 0), 1))  # mostly clean: ratio below 0.99
    assert manager.grab_filthiest_compacted_log() is None
    clock.now += 1001
    chosen = manager.grab_filthiest_compacted_log()
    assert chosen is not None and chosen.need_compaction_now


def test_retention_and_the_cleaner_take_the_logs_of_their_policies(tmp_path):
    logs = {("compact", 0): make_log(tmp_path, "compact-0"),
            ("delete", 0): make_log(tmp_path, "delete-0", cleanup_policy="delete"),
            ("both", 0): make_log(tmp_path, "both-0", cleanup_policy="compact,delete")}
    manager = manager_for(tmp_path, logs)
    assert sorted(tp for tp, _ in manager.pause_cleaning_for_non_compacted_partitions()) == [("delete", 0)]
    assert manager.cleaning_state(("delete", 0)) == Paused(1)
    assert sorted(tp for tp, _ in manager.deletable_logs()) == [("both", 0), ("compact", 0)]
    assert manager.deletable_logs() == []  # both in progress now
    manager.done_deleting([("both", 0), ("compact", 0)])
    manager.resume_cleaning([("delete", 0)])
    assert manager.cleaning_state(("delete", 0)) is None


def test_abort_waits_for_the_cleaning_thread_to_notice_and_leaves_it_paused(tmp_path):
    logs = filthy_logs(tmp_path, 1)
    manager = manager_for(tmp_path, logs)
    tp = ("foo", 0)
    assert manager.grab_filthiest_compacted_log().topic_partition == tp
    aborted = threading.Event()

    def abort():
        manager.abort_and_pause_cleaning(tp)
        aborted.set()
    aborter = threading.Thread(target=abort)
    aborter.start()
    for _ in range(100):
        if manager.cleaning_state(tp) == ABORTED:
            break
        aborter.join(0.01)
    assert manager.cleaning_state(tp) == ABORTED and not aborted.is_set()
    with pytest.raises(LogCleaningAbortedError):
        manager.check_cleaning_aborted(tp)  # what the cleaning thread does between reads
    manager.done_cleaning(tp, tmp_path / "data", 99)
    aborter.join(10)
    assert aborted.is_set() and manager.cleaning_state(tp) == Paused(1)
    assert manager.all_cleaner_checkpoints() == {}  # an aborted pass records nothing
    assert manager.grab_filthiest_compacted_log() is None  # paused
    manager.resume_cleaning([tp])
    assert manager.grab_filthiest_compacted_log().topic_partition == tp


def test_pauses_nest_and_a_resume_of_an_unpaused_partition_is_refused(tmp_path):
    logs = filthy_logs(tmp_path, 1)
    manager = manager_for(tmp_path, logs)
    tp = ("foo", 0)
    manager.abort_and_pause_cleaning(tp)
    manager.abort_and_pause_cleaning(tp)
    assert manager.cleaning_state(tp) == Paused(2)
    manager.resume_cleaning([tp])
    assert manager.cleaning_state(tp) == Paused(1)
    manager.resume_cleaning([tp])
    with pytest.raises(RuntimeError, match="not paused"):
        manager.resume_cleaning([tp])
