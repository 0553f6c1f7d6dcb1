"""Behaviours of Kafka's UnifiedLogTest, as franz's own tests."""

import errno
import logging
import os
import time

import pytest

from franz.records import ControlRecordType, MemoryRecords, SimpleRecord, build_batch, build_control_batch
from franz.storage import unified_log
from franz.storage.checkpoint import InconsistentTopicIdError, random_kafka_uuid
from franz.storage.local_log import KafkaStorageError, OffsetOutOfRangeError
from franz.storage.log_config import LogConfig
from franz.storage.producer_append_info import InvalidProducerEpochError, InvalidTxnStateError, VerificationGuard
from franz.storage.producer_state import AppendOrigin, OutOfOrderSequenceError
from franz.storage.scheduler import KafkaScheduler
from franz.storage.unified_log import (
    EARLIEST_PENDING_UPLOAD_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIERED_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    ActiveProducer,
    FetchIsolation,
    UnifiedLog,
)
from tests.support.failing_disk import file_size_limited
from tests.support.log_test_utils import WITHOUT_VERIFICATION


def make_log(tmp_path, **props):
    config = LogConfig.from_props({"file.delete.delay.ms": 0, "message.timestamp.after.max.ms": 2**62,
                                   "message.timestamp.before.max.ms": 2**62, **props})
    return UnifiedLog.create(tmp_path / "topic-0", config, producer_state_config=WITHOUT_VERIFICATION)


def produce(*values, timestamp=1000, producer_id=-1, epoch=-1, sequence=-1, transactional=False):
    return MemoryRecords(bytearray(build_batch(
        [SimpleRecord(v, timestamp=timestamp + i) for i, v in enumerate(values)], producer_id=producer_id,
        producer_epoch=epoch, base_sequence=sequence, is_transactional=transactional)))


def read_values(log, start, isolation=FetchIsolation.LOG_END, max_length=1 << 20):
    fetch = log.read(start, max_length, isolation, False)
    return [r.value for b in fetch.records.batches() for r in b.records()]


def test_appends_get_consecutive_offsets_and_read_back(tmp_path):
    log = make_log(tmp_path)
    first = log.append_as_leader(produce(b"a", b"b"), leader_epoch=0)
    second = log.append_as_leader(produce(b"c"), leader_epoch=0)
    assert (first.first_offset, first.last_offset, second.first_offset) == (0, 1, 2)
    assert log.log_end_offset == 3
    assert read_values(log, 0) == [b"a", b"b", b"c"]
    log.close()


def test_reads_under_the_high_watermark_see_only_committed_data(tmp_path):
    log = make_log(tmp_path)
    log.append_as_leader(produce(b"a"), 0)
    log.append_as_leader(produce(b"b"), 0)
    assert read_values(log, 0, FetchIsolation.HIGH_WATERMARK) == []
    log.maybe_increment_high_watermark(1)
    assert read_values(log, 0, FetchIsolation.HIGH_WATERMARK) == [b"a"]
    assert log.maybe_increment_high_watermark(0) is None  # never backwards
    with pytest.raises(ValueError):
        log.maybe_increment_high_watermark(5)  # never past the LEO
    log.close()


def test_a_read_at_its_isolation_bound_finds_nothing_and_stays_positioned_there(tmp_path):
    """A consumer that caught up: no records, and the bound's full position (segment and
    byte), which a DelayedFetch counts new bytes from."""
    log = make_log(tmp_path, **{"segment.bytes": 200})
    for i in range(12):
        log.append_as_leader(produce(b"value-%02d" % i), 0)
    log.maybe_increment_high_watermark(9)
    for isolation, bound, aborted in ((FetchIsolation.LOG_END, log.log_end_offset, None),
                                      (FetchIsolation.HIGH_WATERMARK, 9, None),
                                      (FetchIsolation.TXN_COMMITTED, 9, [])):
        fetch = log.read(bound, 1 << 20, isolation, True)
        assert fetch.records.size_in_bytes == 0
        assert fetch.aborted_transactions == aborted
        position = fetch.fetch_offset_metadata
        assert not position.message_offset_only
        assert position == log.local_log.convert_to_offset_metadata_or_throw(bound)
    log.close()


def test_segments_roll_at_segment_bytes_and_reads_cross_them(tmp_path):
    log = make_log(tmp_path, **{"segment.bytes": 200})
    for i in range(20):
        log.append_as_leader(produce(b"value-%02d" % i), 0)
    assert log.number_of_segments() > 3
    values = []
    offset = 0
    while offset < log.log_end_offset:
        fetch = log.read(offset, 1 << 20, FetchIsolation.LOG_END, False)
        batch_values = [(r.offset, r.value) for b in fetch.records.batches() for r in b.records()]
        values += [v for _, v in batch_values]
        offset = batch_values[-1][0] + 1
    assert values == [b"value-%02d" % i for i in range(20)]
    assert sorted(p.name for p in log.dir.glob("*.snapshot"))  # a producer snapshot per roll
    log.close()


def test_a_roll_leaves_the_flush_of_the_old_segments_to_the_scheduler(tmp_path):
    # Kafka's roll schedules "flush-log" instead of fsyncing under the partition lock. With
    # a scheduler that runs nothing (shut down), the recovery point must not move at the roll.
    scheduler = KafkaScheduler()
    scheduler.shutdown()
    config = LogConfig.from_props({"message.timestamp.after.max.ms": 2**62})
    log = UnifiedLog.create(tmp_path / "topic-0", config, scheduler=scheduler)
    log.append_as_leader(produce(b"a", b"b", b"c"), 0)
    new_segment = log.roll()
    assert new_segment.base_offset == 3
    assert log.recovery_point == 0
    assert (log.dir / "00000000000000000003.snapshot").exists()  # written, its fsync left to the task
    log.flush(log.log_end_offset)
    assert log.recovery_point == 3
    log.close()


def test_the_scheduled_flush_moves_the_recovery_point_to_the_new_segment(tmp_path):
    scheduler = KafkaScheduler()
    config = LogConfig.from_props({"message.timestamp.after.max.ms": 2**62})
    log = UnifiedLog.create(tmp_path / "topic-0", config, scheduler=scheduler)
    try:
        log.append_as_leader(produce(b"a", b"b"), 0)
        log.roll()
        log.append_as_leader(produce(b"c"), 0)  # appends go on whether or not the flush has run
        deadline = time.monotonic() + 10
        while log.recovery_point < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert log.recovery_point == 2
        assert log.log_end_offset == 3
    finally:
        scheduler.shutdown()
        log.close()


def test_an_idempotent_retry_gets_the_original_offsets_and_is_not_written_twice(tmp_path):
    log = make_log(tmp_path)
    log.append_as_leader(produce(b"x"), 0)
    first = log.append_as_leader(produce(b"a", b"b", producer_id=9, epoch=0, sequence=0), 0)
    retry = log.append_as_leader(produce(b"a", b"b", producer_id=9, epoch=0, sequence=0), 0)
    assert retry.duplicate and (retry.first_offset, retry.last_offset) == (first.first_offset, first.last_offset)
    assert log.log_end_offset == 3
    with pytest.raises(OutOfOrderSequenceError):
        log.append_as_leader(produce(b"c", producer_id=9, epoch=0, sequence=5), 0)
    log.close()


def test_an_open_transaction_holds_the_last_stable_offset_and_an_abort_is_indexed(tmp_path):
    log = make_log(tmp_path)
    log.append_as_leader(produce(b"t1", b"t2", producer_id=4, epoch=0, sequence=0, transactional=True), 0)
    log.maybe_increment_high_watermark(log.log_end_offset)
    assert log.last_stable_offset == 0
    assert read_values(log, 0, FetchIsolation.TXN_COMMITTED) == []
    marker = MemoryRecords(bytearray(build_control_batch(ControlRecordType.ABORT, producer_id=4, producer_epoch=0,
                                                         coordinator_epoch=0)))
    log.append_as_leader(marker, 0, origin=AppendOrigin.COORDINATOR)
    log.maybe_increment_high_watermark(log.log_end_offset)
    assert log.last_stable_offset == 3
    fetch = log.read(0, 1 << 20, FetchIsolation.TXN_COMMITTED, False)
    assert [(t.producer_id, t.first_offset, t.last_offset) for t in fetch.aborted_transactions] == [(4, 0, 2)]
    log.close()


def test_active_producers_report_each_producers_last_sequence_and_open_transaction(tmp_path):
    log = make_log(tmp_path)
    log.append_as_leader(produce(b"a", b"b", producer_id=9, epoch=0, sequence=0, timestamp=1000), 0)
    log.append_as_leader(produce(b"t1", producer_id=4, epoch=2, sequence=0, transactional=True, timestamp=2000), 0)
    assert sorted(log.active_producers()) == [
        ActiveProducer(producer_id=4, producer_epoch=2, last_sequence=0, last_timestamp=2000, coordinator_epoch=-1,
                       current_txn_start_offset=2),
        ActiveProducer(producer_id=9, producer_epoch=0, last_sequence=1, last_timestamp=1001, coordinator_epoch=-1,
                       current_txn_start_offset=-1)]
    marker = MemoryRecords(bytearray(build_control_batch(ControlRecordType.COMMIT, producer_id=4, producer_epoch=2,
                                                         coordinator_epoch=7)))
    log.append_as_leader(marker, 0, origin=AppendOrigin.COORDINATOR)
    committed = next(p for p in log.active_producers() if p.producer_id == 4)
    assert (committed.coordinator_epoch, committed.current_txn_start_offset) == (7, -1)
    log.close()


def test_log_start_offset_moves_only_up_to_the_high_watermark_and_reads_below_it_are_out_of_range(tmp_path):
    log = make_log(tmp_path)
    for value in (b"a", b"b", b"c"):
        log.append_as_leader(produce(value), 0)
    with pytest.raises(OffsetOutOfRangeError):
        log.maybe_increment_log_start_offset(2)
    log.maybe_increment_high_watermark(3)
    assert log.maybe_increment_log_start_offset(2, "delete records")
    with pytest.raises(OffsetOutOfRangeError):
        log.read(1, 100, FetchIsolation.LOG_END, False)
    assert read_values(log, 2) == [b"c"]
    log.close()


def test_retention_by_size_deletes_whole_old_segments_below_the_high_watermark(tmp_path):
    log = make_log(tmp_path, **{"segment.bytes": 200, "retention.bytes": 300})
    for i in range(20):
        log.append_as_leader(produce(b"value-%02d" % i), 0)
    assert log.delete_old_segments() == 0  # nothing is below the HW yet
    log.maybe_increment_high_watermark(log.log_end_offset)
    assert log.delete_old_segments() > 0
    assert log.size() <= 300 + 200
    assert log.log_start_offset == log.segments.first_segment_base_offset()
    log.close()


def test_retention_deletes_the_producer_snapshots_of_the_segments_it_deletes(tmp_path):
    log = make_log(tmp_path, **{"segment.bytes": 200, "retention.bytes": 300})
    for i in range(20):
        log.append_as_leader(produce(b"value-%02d" % i, producer_id=1, epoch=0, sequence=i), 0)
    log.maybe_increment_high_watermark(log.log_end_offset)
    snapshots_before = {p.name for p in log.dir.glob("*.snapshot")}
    assert len(snapshots_before) >= 3  # one per roll
    log.delete_old_segments()
    bases = set(log.segments.base_offsets())
    left = {int(p.name.split(".")[0]) for p in log.dir.glob("*.snapshot*")}
    assert left and left <= bases | {log.log_end_offset}  # none left at a deleted segment's base
    log.close()


def test_retention_by_time_uses_each_segments_largest_timestamp(tmp_path):
    log = make_log(tmp_path, **{"segment.bytes": 120, "retention.ms": 1000})
    for i in range(5):
        log.append_as_leader(produce(b"old-%d" % i, timestamp=1000), 0)
    log.maybe_increment_high_watermark(log.log_end_offset)
    log.time_ms = lambda: 10_000
    assert log.delete_old_segments() >= 4
    assert log.log_start_offset >= 4
    log.close()


def test_fetch_offset_by_timestamp(tmp_path):
    log = make_log(tmp_path)
    log.append_as_leader(produce(b"a", timestamp=100), 0)
    log.append_as_leader(produce(b"b", timestamp=500), 0)
    log.append_as_leader(produce(b"c", timestamp=300), 0)
    assert log.fetch_offset_by_timestamp(EARLIEST_TIMESTAMP).offset == 0
    assert log.fetch_offset_by_timestamp(LATEST_TIMESTAMP).offset == 3
    assert log.fetch_offset_by_timestamp(MAX_TIMESTAMP)[:2] == (500, 1)
    assert log.fetch_offset_by_timestamp(200).offset == 1
    assert log.fetch_offset_by_timestamp(1000) is None
    # No tiered storage: latest tiered and earliest pending upload are offset -1, epoch -1.
    assert log.fetch_offset_by_timestamp(LATEST_TIERED_TIMESTAMP) == (-1, -1, -1)
    assert log.fetch_offset_by_timestamp(EARLIEST_PENDING_UPLOAD_TIMESTAMP) == (-1, -1, -1)
    assert log.fetch_offset_by_timestamp(-7)[:2] == (100, 0)  # any other value searches by time
    log.close()


def test_truncate_to_drops_later_records_and_epochs(tmp_path):
    log = make_log(tmp_path)
    log.append_as_leader(produce(b"a"), 0)
    log.append_as_leader(produce(b"b"), 1)
    log.append_as_leader(produce(b"c"), 2)
    assert log.leader_epoch_cache.latest_epoch() == 2
    assert log.truncate_to(1)
    assert log.log_end_offset == 1 and log.leader_epoch_cache.latest_epoch() == 0
    log.append_as_leader(produce(b"d"), 3)
    assert read_values(log, 0) == [b"a", b"d"]
    log.close()


def test_a_new_leader_epoch_starts_at_the_given_offset_and_an_older_one_changes_nothing(tmp_path):
    log = make_log(tmp_path)
    log.maybe_assign_epoch_start_offset(0, 0)
    checkpoint = log.dir / "leader-epoch-checkpoint"
    assert checkpoint.read_text() == "0\n1\n0 0\n"  # written at once, before any append
    log.append_as_leader(produce(b"a", b"b"), 0)
    log.maybe_assign_epoch_start_offset(0, log.log_end_offset)  # the same epoch again: no new entry
    log.maybe_assign_epoch_start_offset(3, log.log_end_offset)
    log.maybe_assign_epoch_start_offset(1, log.log_end_offset)  # older than the latest: ignored
    assert [(e.epoch, e.start_offset) for e in log.leader_epoch_cache.epoch_entries()] == [(0, 0), (3, 2)]
    assert checkpoint.read_text() == "0\n2\n0 0\n3 2\n"
    log.close()


def test_clean_close_and_reopen_keeps_everything(tmp_path):
    # Real timestamps: producers whose last write is older than producer.id.expiration.ms
    # are expired on load, as in Kafka.
    now = int(time.time() * 1000)
    log = make_log(tmp_path, **{"segment.bytes": 200})
    for i in range(10):
        log.append_as_leader(produce(b"v%d" % i, producer_id=3, epoch=0, sequence=i, timestamp=now), 0)
    log.flush(log.log_end_offset)
    log.close()
    reopened = UnifiedLog.create(tmp_path / "topic-0", log.config, recovery_point=10, had_clean_shutdown=True)
    assert reopened.log_end_offset == 10
    assert reopened.producer_state_manager.last_entry(3).last_seq == 9
    retry = reopened.append_as_leader(produce(b"v9", producer_id=3, epoch=0, sequence=9, timestamp=now), 0)
    assert retry.duplicate and retry.last_offset == 9
    reopened.close()


def test_unclean_reopen_cuts_a_torn_tail(tmp_path):
    log = make_log(tmp_path)
    log.append_as_leader(produce(b"kept"), 0)
    log.append_as_leader(produce(b"torn"), 0)
    path = log.segments.active_segment.log_file
    log.close()
    data = path.read_bytes()
    path.write_bytes(data[:-5])
    reopened = UnifiedLog.create(tmp_path / "topic-0", log.config, had_clean_shutdown=False)
    assert reopened.log_end_offset == 1
    assert read_values(reopened, 0) == [b"kept"]
    reopened.close()


def test_a_partial_batch_after_the_last_whole_one_is_trimmed_on_both_append_paths(tmp_path):
    # UnifiedLog.trimInvalidBytes: the trailing bytes are dropped, the whole batches written.
    leader = make_log(tmp_path / "leader")
    tail = bytes(produce(b"lost").buffer)[:45]
    info = leader.append_as_leader(MemoryRecords(bytearray(produce(b"a", b"b").buffer) + tail), leader_epoch=0)
    assert (info.first_offset, info.last_offset, leader.log_end_offset) == (0, 1, 2)
    assert leader.size() == info.valid_bytes == produce(b"a", b"b").size_in_bytes
    follower = make_log(tmp_path / "follower")
    replicated = bytearray(build_batch([SimpleRecord(b"x"), SimpleRecord(b"y")], base_offset=0))
    info = follower.append_as_follower(MemoryRecords(replicated + tail))
    assert (info.last_offset, follower.log_end_offset, follower.size()) == (1, 2, len(replicated))
    assert read_values(follower, 0) == [b"x", b"y"]


def test_a_request_the_c_validator_declines_is_tried_in_c_once(tmp_path, monkeypatch):
    # A decline can come after the CRC and the whole record walk (here: a header max
    # timestamp that the records' disagree with, which the Python path rewrites), so the
    # append must not have the full path try the C one again: neither after the one-call
    # common case (franz/storage/_unified_log_fast.c) nor after the Python steps' own try.
    from franz.storage import unified_log, validator
    native, common_case = validator.assign_offsets_non_compressed, unified_log.append_as_leader_common_case
    assert native is not None and common_case is not None, "franz's C modules are not built"
    calls = []
    monkeypatch.setattr(validator, "assign_offsets_non_compressed",
                        lambda *args: calls.append("validator") or native(*args))
    monkeypatch.setattr(unified_log, "append_as_leader_common_case",
                        lambda *args: calls.append("common case") or common_case(*args))
    for with_common_case in (True, False):
        if not with_common_case:
            monkeypatch.setattr(unified_log, "append_as_leader_common_case", None)
        calls.clear()
        log = make_log(tmp_path / str(with_common_case))
        records = produce(b"a", b"b", timestamp=5_000)
        batch = next(records.batches())
        batch.stamp(base_offset=0, partition_leader_epoch=-1, max_timestamp=4_000,
                    timestamp_type=batch.timestamp_type)  # CRC recomputed: only the max is off
        info = log.append_as_leader(records, 0)
        assert calls == (["common case"] if with_common_case else ["validator"])
        assert info.max_timestamp == 5_001 and read_values(log, 0) == [b"a", b"b"]

def _abort_marker(producer_id: int, epoch: int) -> MemoryRecords:
    return MemoryRecords(bytearray(build_control_batch(ControlRecordType.ABORT, producer_id=producer_id,
                                                       producer_epoch=epoch, coordinator_epoch=0)))


def test_a_transactional_batch_opens_a_transaction_only_with_its_verification_guard(tmp_path):
    """UnifiedLog.analyzeAndValidateProducerState with verification on (the broker default): a
    transactional batch that would open a transaction needs the guard its verification was
    handed; once the transaction is open, later batches need none."""
    log = UnifiedLog.create(tmp_path / "topic-0", LogConfig.from_props({}))
    with pytest.raises(InvalidTxnStateError, match="not part of an ongoing transaction"):
        log.append_as_leader(produce(b"t", producer_id=4, epoch=0, sequence=0, transactional=True), 0)
    assert log.log_end_offset == 0
    guard = log.maybe_start_transaction_verification(4, 0, 0)
    assert guard is not VerificationGuard.SENTINEL
    assert log.maybe_start_transaction_verification(4, 0, 0) is guard  # a retry verifies the same guard
    log.append_as_leader(produce(b"t", producer_id=4, epoch=0, sequence=0, transactional=True), 0,
                         verification_guard=guard)
    assert log.maybe_start_transaction_verification(4, 1, 0) is VerificationGuard.SENTINEL  # open: no need
    log.append_as_leader(produce(b"u", producer_id=4, epoch=0, sequence=1, transactional=True), 0)
    assert log.log_end_offset == 2
    log.close()


def test_a_marker_between_verification_and_append_voids_the_guard(tmp_path):
    """The ABA KIP-890 guards against: verified, then the transaction is aborted (the marker
    clears the pending verification), then the stale append arrives: refused. An epoch older
    than the log's is refused before any verification starts."""
    log = UnifiedLog.create(tmp_path / "topic-0", LogConfig.from_props({}))
    guard = log.maybe_start_transaction_verification(4, 0, 0)
    log.append_as_leader(_abort_marker(4, 0), 0, origin=AppendOrigin.COORDINATOR)
    with pytest.raises(InvalidTxnStateError):
        log.append_as_leader(produce(b"stale", producer_id=4, epoch=0, sequence=0, transactional=True), 0,
                             verification_guard=guard)
    log.append_as_leader(_abort_marker(4, 3), 0, origin=AppendOrigin.COORDINATOR)  # bumped by a fencing abort
    with pytest.raises(InvalidProducerEpochError):
        log.maybe_start_transaction_verification(4, 0, 2)
    log.close()


def test_without_verification_a_transactional_batch_opens_a_transaction_unasked(tmp_path):
    log = make_log(tmp_path)  # transaction.partition.verification.enable=false
    log.append_as_leader(produce(b"t", producer_id=4, epoch=0, sequence=0, transactional=True), 0)
    assert log.has_ongoing_transaction(4, 0) and not log.has_ongoing_transaction(4, 1)
    log.close()


def test_a_closed_log_takes_no_append_and_serves_no_read(tmp_path):
    """Linux gives a closed descriptor's number to the next file opened: an append or a read let
    through after close() (a produce racing its topic's deletion) would write into, or send
    from, whatever file got it. Kafka's closed FileChannel throws; franz checks the flag."""
    log = make_log(tmp_path)
    log.append_as_leader(produce(b"kept"), leader_epoch=0)
    log.close()
    with open(tmp_path / "another-file", "wb+") as other:  # likely on a descriptor the log freed
        with pytest.raises(KafkaStorageError):
            log.append_as_leader(produce(b"lost?"), leader_epoch=0)
        with pytest.raises(KafkaStorageError):
            log.append_as_follower(produce(b"lost?"))
        with pytest.raises(KafkaStorageError):
            log.read(0, 1 << 20, FetchIsolation.LOG_END, True)
        log.flush(log.log_end_offset + 1)  # nothing to do on a closed log
        other.flush()
        assert (tmp_path / "another-file").stat().st_size == 0
    log.close()  # again, as a deletion and a shutdown may both close it


@pytest.mark.parametrize("path", ["c", "python"])
def test_a_disk_error_fails_the_append_with_kafka_storage_error_and_loses_nothing(tmp_path, monkeypatch, caplog, path):
    """A write the disk refuses (here EFBIG: a file size limit on this process, which Python
    lets fail instead of dying of SIGXFSZ) is Kafka's KafkaStorageException, logged once; the
    part of the batch that reached the file is cut off, the log stays online, and the next
    append takes the offset the failed one would have had, in the C append and in the Python
    one alike."""
    if path == "python":
        monkeypatch.setattr(unified_log, "append_as_leader_common_case", None)
        monkeypatch.setattr(unified_log, "append_unless_roll_due", lambda *args: False)
    log = make_log(tmp_path)
    log.append_as_leader(produce(b"kept"), leader_epoch=0)
    segment_file = log.local_log.segments.active_segment.log.path
    size = os.path.getsize(segment_file)
    caplog.set_level(logging.ERROR, logger="franz.storage.local_log")
    with file_size_limited(size + 2_000):  # half of the next batch fits
        with pytest.raises(KafkaStorageError, match=f"Error while appending records to topic-0 in dir {tmp_path}") \
                as failed:
            log.append_as_leader(produce(b"x" * 4_000), leader_epoch=0)
        with pytest.raises(KafkaStorageError):
            log.append_as_leader(produce(b"y" * 4_000), leader_epoch=0)
    assert failed.value.error_code == 56
    assert isinstance(failed.value.__cause__, OSError) and failed.value.__cause__.errno == errno.EFBIG
    assert os.path.getsize(segment_file) == size  # what reached the file was cut off
    assert log.log_end_offset == 1 and not log.offline  # nothing moved: the log stays online for a retry
    disk_errors = [r.getMessage() for r in caplog.records if "Error while appending" in r.getMessage()]
    assert len(disk_errors) == 1 and "File too large" in disk_errors[0]  # the second failure is counted, not logged
    assert log.append_as_leader(produce(b"after"), leader_epoch=0).first_offset == 1
    assert read_values(log, 0) == [b"kept", b"after"]
    log.close()
    reopened = make_log(tmp_path)
    assert read_values(reopened, 0) == [b"kept", b"after"] and reopened.log_end_offset == 2
    reopened.close()


def test_a_new_segment_whose_indexes_the_disk_refuses_keeps_the_log_online(tmp_path):
    """A roll's new segment maps its indexes at its first append, each preallocated to 10 MiB:
    past a file size limit (EFBIG) that append fails with KafkaStorageError. The indexes are
    made before the batch is written, so nothing reached the segment, the log stays online,
    and the next append, with room again, lands at the same offset."""
    log = make_log(tmp_path, **{"segment.bytes": 1_000})
    log.append_as_leader(produce(b"x" * 600), leader_epoch=0)
    with file_size_limited(1 << 20):
        with pytest.raises(KafkaStorageError, match="Error while appending records to topic-0"):
            log.append_as_leader(produce(b"y" * 600), leader_epoch=0)  # does not fit: a roll first
    assert not log.offline and log.log_end_offset == 1
    assert log.local_log.segments.active_segment.size() == 0
    assert log.append_as_leader(produce(b"y" * 600), leader_epoch=0).first_offset == 1
    assert read_values(log, 0) + read_values(log, 1) == [b"x" * 600, b"y" * 600]  # a read stays in one segment
    log.close()
    reopened = make_log(tmp_path, **{"segment.bytes": 1_000})
    assert read_values(reopened, 0) + read_values(reopened, 1) == [b"x" * 600, b"y" * 600]
    assert reopened.log_end_offset == 2
    reopened.close()


def test_a_log_is_not_opened_under_another_topic_id_than_its_directory_holds(tmp_path):
    """Kafka's initializeTopicId: partition.metadata's ID wins, and a different one is refused."""
    config = LogConfig.from_props({})
    first, second = random_kafka_uuid(), random_kafka_uuid()
    log = UnifiedLog.create(tmp_path / "topic-0", config, topic_id=first)
    log.append_as_leader(MemoryRecords.with_records([SimpleRecord(value=b"old")]), leader_epoch=0)
    log.close()
    with pytest.raises(InconsistentTopicIdError, match="but log already contained topic ID"):
        UnifiedLog.create(tmp_path / "topic-0", config, topic_id=second)
    for topic_id in (first, None):
        reopened = UnifiedLog.create(tmp_path / "topic-0", config, topic_id=topic_id)
        assert reopened.topic_id == first and reopened.log_end_offset == 1
        reopened.close()
