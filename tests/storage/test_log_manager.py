"""Behaviours of Kafka's LogManagerTest and LogLoaderTest, on real directories and files."""

import logging
import os
import threading
import time

import pytest

from franz.records import MemoryRecords, SimpleRecord, build_batch
from franz.storage.checkpoint import InconsistentTopicIdError, random_kafka_uuid
from franz.storage.local_log import KafkaStorageError
from franz.storage.log_config import LogConfig
from franz.storage.log_manager import LogManager
from franz.storage.producer_state import ProducerStateManagerConfig
from franz.storage.unified_log import FetchIsolation
from tests.support.failing_disk import descriptor_swapped, immutable_dir


def config(**props):
    return LogConfig.from_props({"segment.bytes": 300, "file.delete.delay.ms": 0,
                                 "message.timestamp.after.max.ms": 2**62, **props})


def manager(tmp_path, **kwargs):
    result = LogManager([tmp_path / "data"], config(), initial_task_delay_ms=0, **kwargs)
    result.startup(start_background_tasks=False)
    return result


def produce(value: bytes):
    return MemoryRecords(bytearray(build_batch([SimpleRecord(value, timestamp=int(time.time() * 1000))])))


def fill(log_manager, topic="t", partition=0, count=20):
    partition_log = log_manager.get_or_create_log(topic, partition)
    for i in range(count):
        partition_log.append_as_leader(produce(b"value-%03d" % i), 0)
    partition_log.maybe_increment_high_watermark(partition_log.log_end_offset)
    return partition_log


def values(partition_log):
    result, offset = [], partition_log.log_start_offset
    while offset < partition_log.log_end_offset:
        fetch = partition_log.read(offset, 1 << 20, FetchIsolation.LOG_END, True)
        records = [r for b in fetch.records.batches() for r in b.records()]
        result += [r.value for r in records]
        offset = records[-1].offset + 1
    return result


def test_first_start_writes_meta_properties_and_a_clean_stop_writes_the_marker_and_checkpoints(tmp_path):
    log_manager = manager(tmp_path)
    fill(log_manager)
    log_manager.shutdown()
    data = tmp_path / "data"
    assert (data / "meta.properties").exists()
    assert (data / ".kafka_cleanshutdown").read_text() == '{"version":0,"brokerEpoch":0}'
    assert (data / "recovery-point-offset-checkpoint").read_text() == "0\n1\nt 0 20\n"
    assert (data / "log-start-offset-checkpoint").read_text() == "0\n1\nt 0 0\n"
    assert (data / "replication-offset-checkpoint").read_text() == "0\n1\nt 0 20\n"


def test_clean_restart_loses_nothing_and_removes_the_marker(tmp_path):
    log_manager = manager(tmp_path)
    fill(log_manager)
    log_manager.shutdown()
    restarted = manager(tmp_path)
    assert restarted.had_clean_shutdown[(tmp_path / "data").resolve()]
    assert not (tmp_path / "data" / ".kafka_cleanshutdown").exists()
    partition_log = restarted.get_log("t", 0)
    assert values(partition_log) == [b"value-%03d" % i for i in range(20)]
    assert partition_log.high_watermark == 20
    restarted.shutdown()


def test_the_clean_shutdown_marker_is_gone_before_logs_load_so_a_crash_while_loading_means_recovery(
        tmp_path, monkeypatch):
    """KAFKA-10471: LogManager deletes the marker once it has read it, before loading; left until
    after, a crash mid-load would have the next start trust logs it never finished loading."""
    from franz.storage import log_manager as log_manager_module

    log_manager = manager(tmp_path)
    fill(log_manager)
    log_manager.shutdown()
    marker = tmp_path / "data" / ".kafka_cleanshutdown"
    assert marker.exists()

    def crash(*args, **kwargs):
        assert not marker.exists()
        raise OSError("the broker died while loading")

    monkeypatch.setattr(log_manager_module.UnifiedLog, "create", crash)
    with pytest.raises(OSError, match="died while loading"):
        manager(tmp_path)
    monkeypatch.undo()
    restarted = manager(tmp_path)
    assert not restarted.had_clean_shutdown[(tmp_path / "data").resolve()]
    assert values(restarted.get_log("t", 0)) == [b"value-%03d" % i for i in range(20)]
    restarted.shutdown()


def test_unclean_restart_recovers_from_the_recovery_point_and_cuts_a_torn_tail(tmp_path, caplog):
    log_manager = manager(tmp_path)
    partition_log = fill(log_manager)
    partition_log.flush(partition_log.log_end_offset)
    log_manager.checkpoint_log_recovery_offsets()
    active = partition_log.segments.active_segment.log_file
    log_manager.scheduler.shutdown()
    partition_log.close()
    # No shutdown(): no marker. Tear the last batch.
    data = active.read_bytes()
    active.write_bytes(data[:-7])
    with caplog.at_level(logging.WARNING):
        restarted = manager(tmp_path)
    recovered = restarted.get_log("t", 0)
    assert recovered.log_end_offset == 19
    assert values(recovered) == [b"value-%03d" % i for i in range(19)]
    assert any("Truncating" in r.getMessage() and str(active.name) in r.getMessage() for r in caplog.records)
    restarted.shutdown()


def test_a_log_start_checkpoint_beyond_the_log_end_restarts_the_log_there(tmp_path):
    log_manager = manager(tmp_path)
    fill(log_manager, count=5)
    log_manager.shutdown()
    (tmp_path / "data" / "log-start-offset-checkpoint").write_text("0\n1\nt 0 100\n")
    restarted = manager(tmp_path)
    partition_log = restarted.get_log("t", 0)
    assert partition_log.log_start_offset == 100 and partition_log.log_end_offset == 100
    restarted.shutdown()


def test_a_deleted_index_is_rebuilt_and_an_orphan_index_removed(tmp_path):
    log_manager = manager(tmp_path)
    fill(log_manager)
    log_manager.shutdown()
    partition_dir = tmp_path / "data" / "t-0"
    first_index = sorted(partition_dir.glob("*.index"))[0]
    first_index.unlink()
    orphan = partition_dir / "00000000000000099999.index"
    orphan.write_bytes(b"\x00" * 8)
    restarted = manager(tmp_path)
    assert first_index.exists() and not orphan.exists()
    assert values(restarted.get_log("t", 0)) == [b"value-%03d" % i for i in range(20)]
    restarted.shutdown()


def test_a_swap_left_by_a_crash_is_rolled_forward(tmp_path):
    log_manager = manager(tmp_path)
    fill(log_manager)
    log_manager.shutdown()
    partition_dir = tmp_path / "data" / "t-0"
    logs = sorted(partition_dir.glob("*.log"))
    # A compaction that produced a copy of the first segment and crashed before swapping it in.
    swap = logs[0].with_name(logs[0].name + ".swap")
    swap.write_bytes(logs[0].read_bytes())
    (partition_dir / (logs[1].name + ".cleaned")).write_bytes(b"junk")
    (partition_dir / (logs[1].name + ".deleted")).write_bytes(b"junk")
    restarted = manager(tmp_path)
    assert not list(partition_dir.glob("*.swap")) and not list(partition_dir.glob("*.cleaned"))
    assert not list(partition_dir.glob("*.deleted"))
    assert values(restarted.get_log("t", 0)) == [b"value-%03d" % i for i in range(20)]
    restarted.shutdown()


def test_garbage_checkpoints_are_tolerated(tmp_path):
    log_manager = manager(tmp_path)
    fill(log_manager)
    log_manager.shutdown()
    (tmp_path / "data" / "recovery-point-offset-checkpoint").write_text("garbage\n")
    restarted = manager(tmp_path)
    assert restarted.get_log("t", 0).log_end_offset == 20
    restarted.shutdown()


def test_garbage_leader_epoch_checkpoint_is_rebuilt_from_the_batches_with_a_warning(tmp_path, caplog):
    log_manager = manager(tmp_path)
    partition_log = log_manager.get_or_create_log("t", 0)
    for epoch in (0, 0, 3, 3, 7):
        partition_log.append_as_leader(produce(b"e%d" % epoch), epoch)
    expected = partition_log.leader_epoch_cache.epoch_entries()
    log_manager.shutdown()
    checkpoint = tmp_path / "data" / "t-0" / "leader-epoch-checkpoint"
    checkpoint.write_text("0\n1\nnot an entry\n")
    with caplog.at_level(logging.WARNING):
        restarted = manager(tmp_path)
    assert restarted.get_log("t", 0).leader_epoch_cache.epoch_entries() == expected
    assert any("leader-epoch-checkpoint" in r.getMessage() for r in caplog.records)
    assert checkpoint.read_text() == "0\n3\n0 0\n3 2\n7 4\n"
    restarted.shutdown()


def test_retention_task_deletes_old_segments(tmp_path):
    log_manager = LogManager([tmp_path / "data"], config(**{"retention.bytes": 400}), initial_task_delay_ms=0)
    log_manager.startup(start_background_tasks=False)
    partition_log = fill(log_manager, count=40)
    before = partition_log.number_of_segments()
    assert log_manager.cleanup_logs() > 0
    assert partition_log.number_of_segments() < before
    log_manager.shutdown()


def test_delete_log_renames_the_dir_then_removes_it(tmp_path):
    log_manager = manager(tmp_path)
    fill(log_manager)
    log_manager.delete_log("t", 0)
    deadline = time.monotonic() + 5
    while list((tmp_path / "data").glob("t-0*")) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not list((tmp_path / "data").glob("t-0*"))
    assert log_manager.get_log("t", 0) is None
    log_manager.shutdown()


def test_deleting_many_logs_queues_their_deletion_on_the_background_threads(tmp_path):
    log_manager = LogManager([tmp_path / "data"], config(**{"file.delete.delay.ms": 60_000}),
                             initial_task_delay_ms=0, background_threads=4)
    log_manager.startup(start_background_tasks=False)
    before = threading.active_count()
    for partition in range(200):
        log_manager.get_or_create_log("t", partition)
        log_manager.delete_log("t", partition)
    assert log_manager.scheduler.pending_tasks == 200
    assert threading.active_count() - before <= 4
    assert len(list((tmp_path / "data").glob("t-*-delete"))) == 200
    log_manager.shutdown()


def _loading_threads(caplog) -> set[str]:
    return {r.threadName for r in caplog.records if r.getMessage().startswith("Completed load of")}


def test_after_an_unclean_stop_partitions_recover_on_the_recovery_threads(tmp_path, caplog):
    log_manager = manager(tmp_path)
    for partition in range(30):
        fill(log_manager, partition=partition, count=2)
    log_manager.scheduler.shutdown()
    for partition_log in log_manager.all_logs():
        partition_log.close()  # no shutdown(): no clean-shutdown marker, so every log recovers
    caplog.set_level(logging.INFO, logger="franz.storage.log_manager")
    restarted = manager(tmp_path, num_recovery_threads_per_data_dir=3)
    assert len(restarted.logs) == 30
    assert all(values(restarted.get_log("t", p)) == [b"value-000", b"value-001"] for p in range(30))
    loading = _loading_threads(caplog)
    assert loading and all(name.startswith("log-recovery-") for name in loading)
    restarted.shutdown()


def test_after_a_clean_stop_partitions_load_on_the_starting_thread(tmp_path, caplog):
    log_manager = manager(tmp_path)
    for partition in range(30):
        fill(log_manager, partition=partition, count=2)
    log_manager.shutdown()
    caplog.set_level(logging.INFO, logger="franz.storage.log_manager")
    restarted = manager(tmp_path, num_recovery_threads_per_data_dir=3)
    assert len(restarted.logs) == 30
    assert _loading_threads(caplog) == {threading.current_thread().name}
    restarted.shutdown()


def test_a_truncated_index_and_an_index_pointing_past_the_log_are_rebuilt(tmp_path, caplog):
    def manager(tmp_path):  # dense indexes: an entry for every batch after the first
        result = LogManager([tmp_path / "data"], config(**{"index.interval.bytes": 1}), initial_task_delay_ms=0)
        result.startup(start_background_tasks=False)
        return result

    log_manager = manager(tmp_path)
    fill(log_manager)
    log_manager.shutdown()
    partition_dir = tmp_path / "data" / "t-0"
    first, second = sorted(partition_dir.glob("*.index"))[:2]
    good_first, good_second = first.read_bytes(), second.read_bytes()
    assert len(good_first) >= 8 and len(good_second) >= 8
    first.write_bytes(good_first[:-3])  # not a whole number of entries
    second.write_bytes(good_second[:-4] + (10**6).to_bytes(4, "big"))  # last entry past the .log
    with caplog.at_level(logging.WARNING):  # Kafka 4.3 warns of a corrupted index (LogLoader.loadSegmentFiles)
        restarted = manager(tmp_path)
    assert values(restarted.get_log("t", 0)) == [b"value-%03d" % i for i in range(20)]
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert first.name.replace(".index", ".log") in messages and second.name.replace(".index", ".log") in messages
    restarted.shutdown()
    assert first.read_bytes() == good_first and second.read_bytes() == good_second


def test_checkpoints_written_from_several_threads_at_once_never_fail(tmp_path):
    # A topic deletion writes the log-dir checkpoints on the request thread while
    # the scheduler's checkpoint tasks may be writing the same files: both go
    # through one `<file>.tmp`, so unserialised writers rename it from under
    # each other (FileNotFoundError, the request's connection closed).
    import threading

    log_manager = manager(tmp_path)
    partition_log = fill(log_manager, count=3)
    partition_log.flush(partition_log.log_end_offset)
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def writer():
        start.wait()
        try:
            for _ in range(100):
                log_manager.checkpoint_log_recovery_offsets()
                log_manager.checkpoint_log_start_offsets()
        except BaseException as exc:  # noqa: BLE001 - collected for the assertion
            errors.append(exc)

    threads = [threading.Thread(target=writer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert (tmp_path / "data" / "recovery-point-offset-checkpoint").read_text() == "0\n1\nt 0 3\n"
    log_manager.shutdown()


def test_the_periodic_expiration_check_forgets_idle_producers_in_every_log(tmp_path):
    """producer.id.expiration.ms, applied every producer.id.expiration.check.interval.ms
    (UnifiedLog's PeriodicProducerExpirationCheck): a producer idle that long is forgotten."""
    now = [1_000_000]
    log_manager = LogManager([tmp_path / "data"], config(), initial_task_delay_ms=0, time_ms=lambda: now[0],
                             producer_state_config=ProducerStateManagerConfig(producer_id_expiration_ms=60_000))
    log_manager.startup(start_background_tasks=False)
    log = log_manager.get_or_create_log("expiring", 0)
    log.append_as_leader(MemoryRecords(bytearray(build_batch([SimpleRecord(b"v", timestamp=now[0])], producer_id=7,
                                                             producer_epoch=0, base_sequence=0))), 0)
    log_manager.remove_expired_producers()
    assert [p.producer_id for p in log.active_producers()] == [7]
    now[0] += 60_000
    log_manager.remove_expired_producers()
    assert log.active_producers() == []
    log_manager.shutdown()


def test_a_log_whose_flush_fails_leaves_the_next_logs_flushed(tmp_path):
    """A disk error in one log's flush (here fsync's EINVAL: the active segment's descriptor made
    /dev/null's) is that log's KafkaStorageError, logged where it happened; the flusher goes on
    to the logs after it, as Kafka's flushDirtyLogs catches per log."""
    log_manager = LogManager([tmp_path / "data"], config(**{"flush.ms": 0}), initial_task_delay_ms=0)
    log_manager.startup(start_background_tasks=False)
    failing, healthy = fill(log_manager, "failing"), fill(log_manager, "healthy")
    assert list(log_manager.all_logs())[0] is failing
    with descriptor_swapped(failing.local_log.segments.active_segment.log.fd, os.devnull):
        log_manager.flush_dirty_logs()
    assert failing.local_log.recovery_point < failing.log_end_offset
    assert healthy.local_log.recovery_point == healthy.log_end_offset
    log_manager.shutdown()


def test_a_log_flushed_partway_while_the_flusher_runs_is_still_flushed_to_its_end(tmp_path, monkeypatch):
    """The flusher reads the clock for each log, as Kafka's flushDirtyLogs does: a log whose
    roll task flushed it partway while the logs before it were being flushed (its last flush
    time then later than the flusher's start) is still due, not skipped until the next round."""
    clock = [1_000]
    log_manager = LogManager([tmp_path / "data"], config(**{"flush.ms": 0, "segment.bytes": 1 << 20}),
                             initial_task_delay_ms=0, time_ms=lambda: clock[0])
    log_manager.startup(start_background_tasks=False)
    first, second = fill(log_manager, "first"), fill(log_manager, "second")
    assert list(log_manager.all_logs())[0] is first
    flush_first = first.flush

    def flush_while_the_second_log_rolls(offset):
        clock[0] += 5
        second.flush(second.log_end_offset - 5)  # its "flush-log" task, on the scheduler's thread
        flush_first(offset)

    monkeypatch.setattr(first, "flush", flush_while_the_second_log_rolls)
    log_manager.flush_dirty_logs()
    assert first.local_log.recovery_point == first.log_end_offset
    assert second.local_log.recovery_point == second.log_end_offset
    log_manager.shutdown()


def test_a_disk_error_after_the_write_takes_the_log_offline_and_a_restart_recovers_it(tmp_path):
    """An abort marker reaches the segment, then its transaction index entry fails (the index's
    path is a directory: EISDIR). Answered KAFKA_STORAGE_ERROR with the log end already past
    the marker, the log's state and files disagree, so the log goes offline as Kafka takes the
    dir: every later call refused, the dir left unclean at shutdown. The next start recovers
    it, and the aborted records stay aborted (kept online and shut down cleanly, a
    read_committed consumer read them as committed)."""
    from franz.records import ControlRecordType, build_control_batch
    from franz.storage.producer_state import AppendOrigin
    from tests.support.log_test_utils import WITHOUT_VERIFICATION

    def open_manager():
        result = LogManager([tmp_path / "data"], config(**{"segment.bytes": 1 << 20}), initial_task_delay_ms=0,
                            producer_state_config=WITHOUT_VERIFICATION)
        result.startup(start_background_tasks=False)
        return result

    log_manager = open_manager()
    partition_log = log_manager.get_or_create_log("t", 0)
    partition_log.append_as_leader(produce(b"committed"), 0)
    partition_log.append_as_leader(MemoryRecords(bytearray(build_batch(
        [SimpleRecord(b"t1"), SimpleRecord(b"t2")], producer_id=4, producer_epoch=0, base_sequence=0,
        is_transactional=True))), 0)
    partition_log.flush(partition_log.log_end_offset)
    assert partition_log.recovery_point == 3
    txn_index = partition_log.dir / "00000000000000000000.txnindex"
    txn_index.mkdir()
    marker = MemoryRecords(bytearray(build_control_batch(ControlRecordType.ABORT, producer_id=4, producer_epoch=0,
                                                         coordinator_epoch=0)))
    with pytest.raises(KafkaStorageError, match="Error while appending records to t-0"):
        partition_log.append_as_leader(marker, 0, origin=AppendOrigin.COORDINATOR)
    assert partition_log.offline and partition_log.log_end_offset == 4  # the marker landed
    with pytest.raises(KafkaStorageError, match="offline due to a previous IO exception"):
        partition_log.append_as_leader(produce(b"more"), 0)
    with pytest.raises(KafkaStorageError, match="offline"):
        partition_log.read(0, 1 << 20, FetchIsolation.LOG_END, True)
    log_manager.shutdown()
    assert not (tmp_path / "data" / ".kafka_cleanshutdown").exists()
    assert "t 0 0" in (tmp_path / "data" / "recovery-point-offset-checkpoint").read_text().splitlines()  # all of it

    txn_index.rmdir()  # the disk repaired
    restarted = open_manager()
    recovered = restarted.get_log("t", 0)
    recovered.maybe_increment_high_watermark(recovered.log_end_offset)
    assert not recovered.offline and recovered.last_stable_offset == recovered.log_end_offset == 4
    fetch = recovered.read(0, 1 << 20, FetchIsolation.TXN_COMMITTED, False)
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in fetch.aborted_transactions] == [(4, 1, 3)]
    restarted.shutdown()


def test_retention_goes_on_past_a_log_gone_offline(tmp_path):
    log_manager = LogManager([tmp_path / "data"], config(**{"retention.bytes": 400}), initial_task_delay_ms=0)
    log_manager.startup(start_background_tasks=False)
    offline, healthy = fill(log_manager, "offline", count=40), fill(log_manager, "healthy", count=40)
    assert list(log_manager.all_logs())[0] is offline
    with descriptor_swapped(offline.local_log.segments.active_segment.log.fd, os.devnull):
        with pytest.raises(KafkaStorageError):
            offline.flush(offline.log_end_offset)  # fsync's EINVAL after the writes: offline
    before = healthy.number_of_segments()
    assert offline.offline and log_manager.cleanup_logs() > 0
    assert healthy.number_of_segments() < before
    log_manager.shutdown()
    assert not (tmp_path / "data" / ".kafka_cleanshutdown").exists()


def test_a_log_is_not_handed_to_another_topic_id_than_its_own(tmp_path):
    """Kafka's getOrCreateLog: a loaded log of a deleted topic is not a new topic's of its name."""
    log_manager = manager(tmp_path)
    try:
        old, new = random_kafka_uuid(), random_kafka_uuid()
        partition_log = log_manager.get_or_create_log("t", 0, old)
        with pytest.raises(InconsistentTopicIdError, match="but log already contained topic ID"):
            log_manager.get_or_create_log("t", 0, new)
        assert log_manager.get_or_create_log("t", 0, old) is partition_log
        assert log_manager.get_or_create_log("t", 0) is partition_log
    finally:
        log_manager.shutdown()


def test_a_deleted_log_leaves_even_when_its_future_log_cannot_be_renamed(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    log_manager = LogManager([first, second], config(), initial_task_delay_ms=0)
    log_manager.startup(start_background_tasks=False)
    try:
        log_manager.get_or_create_log("t", 0, random_kafka_uuid())
        assert (first / "t-0").is_dir()
        log_manager.create_future_log("t", 0, second)
        # The future log's rename fails (and so do the checkpoints written in its dir after the
        # current log's rename): the error that comes out is the last one.
        with immutable_dir(second), pytest.raises((KafkaStorageError, OSError)):
            log_manager.delete_log("t", 0)
        assert log_manager.get_log("t", 0) is None and ("t", 0) not in log_manager.future_logs
        assert not (first / "t-0").exists()  # renamed for deletion all the same
    finally:
        log_manager.shutdown()
