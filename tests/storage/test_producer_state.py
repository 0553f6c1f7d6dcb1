"""ProducerStateManager and friends, behaviour by behaviour as Kafka's
ProducerStateManagerTest, plus the snapshot bytes and real record batches."""

from __future__ import annotations

import logging
import os
import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from franz.records import (
    NO_SEQUENCE,
    ControlRecordType,
    EndTransactionMarker,
    MemoryRecords,
    RecordBatch,
    SimpleRecord,
    build_batch,
    build_control_batch,
)
from franz.storage.producer_snapshot import (
    ENTRY_SIZE_BYTES,
    CorruptSnapshotError,
    SnapshotEntry,
    decode_snapshot,
    encode_snapshot,
    list_snapshot_files,
    snapshot_file_path,
)
from franz.storage.producer_state import (
    LATE_TRANSACTION_BUFFER_MS,
    NUM_BATCHES_TO_RETAIN,
    AppendOrigin,
    BatchMetadata,
    CompletedTxn,
    DuplicateSequenceError,
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceError,
    ProducerAppendInfo,
    ProducerFencedError,
    ProducerStateEntry,
    ProducerStateManager,
    ProducerStateManagerConfig,
    TransactionCoordinatorFencedError,
    TxnMetadata,
    load_producers_from_batches,
    update_producers,
)

TP = "test-0"
PID = 1
EPOCH = 0
MAX_TXN_TIMEOUT_MS = 5 * 60 * 1000
LATE_TXN_TIMEOUT_MS = MAX_TXN_TIMEOUT_MS + LATE_TRANSACTION_BUFFER_MS
COMMIT, ABORT = ControlRecordType.COMMIT, ControlRecordType.ABORT


class MockTime:
    def __init__(self) -> None:
        self.ms = 1_700_000_000_000

    def milliseconds(self) -> int:
        return self.ms

    def sleep(self, ms: int) -> None:
        self.ms += ms


@pytest.fixture
def clock():
    return MockTime()


@pytest.fixture
def config():
    return ProducerStateManagerConfig()


@pytest.fixture
def new_manager(tmp_path, clock, config):
    return lambda: ProducerStateManager(TP, tmp_path, MAX_TXN_TIMEOUT_MS, config, clock.milliseconds)


@pytest.fixture
def manager(new_manager):
    return new_manager()


def append_entry(m, pid, epoch, seq, offset, ts, origin, txn=False):
    info = m.prepare_update(pid, origin)
    info.append_data_batch(epoch, seq, seq, ts, offset, offset, txn)
    m.update(info)
    m.update_map_end_offset(offset + 1)


def append_client(m, clock, pid, epoch, seq, offset, txn=False, ts=None):
    append_entry(m, pid, epoch, seq, offset, clock.ms if ts is None else ts, AppendOrigin.CLIENT, txn)


def append_replication(m, clock, epoch, seq, offset, ts=None):
    append_entry(m, PID, epoch, seq, offset, clock.ms if ts is None else ts, AppendOrigin.REPLICATION)


def append_end_marker(m, clock, pid, epoch, control_type, offset, coordinator_epoch=0, ts=None):
    info = m.prepare_update(pid, AppendOrigin.COORDINATOR)
    completed = info.append_end_txn_marker(EndTransactionMarker(control_type, coordinator_epoch),
                                           epoch, offset, clock.ms if ts is None else ts)
    m.update(info)
    if completed is not None:
        m.complete_txn(completed)
    m.update_map_end_offset(offset + 1)


def snapshot_offsets_on_disk(directory):
    return {s.offset for s in list_snapshot_files(directory)}


def data_batch(base_offset, base_sequence, count=1, pid=PID, epoch=EPOCH, txn=False, ts=1000):
    records = [SimpleRecord(b"v%d" % i, timestamp=ts) for i in range(count)]
    return RecordBatch(build_batch(records, base_offset=base_offset, producer_id=pid,
                                   producer_epoch=epoch, base_sequence=base_sequence,
                                   is_transactional=txn))


def marker_batch(control_type, base_offset, pid=PID, epoch=EPOCH, coordinator_epoch=0, ts=2000):
    return RecordBatch(build_control_batch(control_type, producer_id=pid, producer_epoch=epoch,
                                           coordinator_epoch=coordinator_epoch,
                                           base_offset=base_offset, timestamp=ts))


# ---- sequences, epochs, duplicates ---------------------------------------------
def test_basic_id_mapping(manager, clock):
    append_client(manager, clock, PID, EPOCH, 0, 0)
    append_client(manager, clock, PID, EPOCH, 1, 1)
    # Duplicates are detected by the caller; appended again they are out of order.
    with pytest.raises(OutOfOrderSequenceError):
        append_client(manager, clock, PID, EPOCH, 1, 1)
    with pytest.raises(OutOfOrderSequenceError):
        append_client(manager, clock, PID, EPOCH, 5, 2)
    append_client(manager, clock, PID, EPOCH + 1, 0, 3)
    with pytest.raises(InvalidProducerEpochError):
        append_client(manager, clock, PID, EPOCH, 0, 4)


def test_duplicate_of_any_of_the_last_five_batches_returns_its_original_metadata(manager):
    infos = {}
    for i in range(7):  # batches of 2 records: sequences 2i..2i+1 at offsets 10+2i..
        update_producers(manager, data_batch(10 + 2 * i, 2 * i, count=2), infos, None, AppendOrigin.CLIENT)
    manager.update(infos[PID])
    entry = manager.last_entry(PID)
    assert len(entry.batch_metadata) == NUM_BATCHES_TO_RETAIN
    for i in range(2, 7):
        retry = data_batch(999, 2 * i, count=2)
        assert entry.find_duplicate_batch(retry) == BatchMetadata(2 * i + 1, 11 + 2 * i, 1, 1000)
        assert entry.find_duplicate_batch(retry).first_offset == 10 + 2 * i
    # The sixth-newest batch is forgotten, and so is a retry with another epoch or range.
    assert entry.find_duplicate_batch(data_batch(999, 2, count=2)) is None
    assert entry.find_duplicate_batch(data_batch(999, 12, count=2, epoch=EPOCH + 1)) is None
    assert entry.find_duplicate_batch(data_batch(999, 12, count=1)) is None


def test_append_txn_marker_with_no_producer_state(manager, clock):
    epoch = 2
    append_end_marker(manager, clock, PID, epoch, COMMIT, 27)
    entry = manager.last_entry(PID)
    assert (entry.producer_epoch, entry.producer_id, entry.last_seq) == (epoch, PID, NO_SEQUENCE)
    # Fencing works even if the marker is all that is left.
    with pytest.raises(InvalidProducerEpochError):
        append_client(manager, clock, PID, 0, 0, 4)
    # A non-zero sequence makes the producer reset its state ...
    with pytest.raises(OutOfOrderSequenceError):
        append_client(manager, clock, PID, epoch, 17, 4)
    # ... and sequence 0 is accepted.
    append_client(manager, clock, PID, epoch, 0, 4, ts=39)
    entry = manager.last_entry(PID)
    assert (entry.producer_epoch, entry.last_seq) == (epoch, 0)


def test_producer_sequence_wraps_around_to_zero(manager, clock):
    append_replication(manager, clock, 15, 2**31 - 1, 735)
    append_client(manager, clock, PID, 15, 0, 735 + 500)
    entry = manager.last_entry(PID)
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq) == (15, 2**31 - 1, 0)


def test_batch_spanning_the_sequence_wrap_keeps_its_first_sequence(manager, clock):
    info = manager.prepare_update(PID, AppendOrigin.REPLICATION)
    info.append_data_batch(15, 2**31 - 11, 9, clock.ms, 2000, 2020, False)
    assert manager.last_entry(PID) is None
    manager.update(info)
    entry = manager.last_entry(PID)
    assert (entry.first_seq, entry.last_seq) == (2**31 - 11, 9)
    assert (entry.first_data_offset, entry.last_data_offset) == (2000, 2020)


def test_sequence_after_wrap_must_be_zero(manager, clock):
    append_replication(manager, clock, 15, 2**31 - 1, 735)
    with pytest.raises(OutOfOrderSequenceError):
        append_client(manager, clock, PID, 15, 1, 735 + 500)


def test_no_validation_on_first_entry_when_loading_log(manager, clock):
    append_replication(manager, clock, 5, 16, 735)
    entry = manager.last_entry(PID)
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq) == (5, 16, 16)
    assert (entry.first_data_offset, entry.last_data_offset) == (735, 735)


def test_control_record_bumps_producer_epoch(manager, clock):
    append_client(manager, clock, PID, EPOCH, 0, 0)
    append_end_marker(manager, clock, PID, 1, ABORT, 1)
    entry = manager.last_entry(PID)
    assert entry.producer_epoch == 1
    assert entry.current_txn_first_offset is None
    assert (entry.first_seq, entry.last_seq) == (NO_SEQUENCE, NO_SEQUENCE)
    append_client(manager, clock, PID, 1, 0, 2)
    assert manager.last_entry(PID).first_seq == 0


def test_out_of_sequence_after_control_record_epoch_bump(manager, clock):
    append_client(manager, clock, PID, EPOCH, 0, 0, txn=True)
    append_client(manager, clock, PID, EPOCH, 1, 1, txn=True)
    append_end_marker(manager, clock, PID, 1, ABORT, 1)
    # The bumped epoch expects sequence 0, and so does an epoch bumped again.
    with pytest.raises(OutOfOrderSequenceError):
        append_client(manager, clock, PID, 1, 2, 2, txn=True)
    with pytest.raises(OutOfOrderSequenceError):
        append_client(manager, clock, PID, 2, 2, 2, txn=True)
    append_client(manager, clock, PID, 1, 0, 0, txn=True)
    entry = manager.last_entry(PID)
    assert (entry.producer_epoch, entry.last_seq) == (1, 0)


def test_accept_append_with_sequence_gaps_on_replica(manager, clock):
    append_client(manager, clock, PID, EPOCH, 0, 0, ts=0)
    with pytest.raises(OutOfOrderSequenceError):
        append_client(manager, clock, PID, EPOCH, 3, 1, ts=1)
    assert manager.active_producers[PID].last_seq == 0
    append_replication(manager, clock, EPOCH, 3, 1, ts=1)
    assert manager.active_producers[PID].last_seq == 3


def test_old_epoch_from_replication_is_logged_not_refused(manager, clock, caplog):
    append_client(manager, clock, PID, 3, 0, 0)
    with caplog.at_level(logging.WARNING):
        append_replication(manager, clock, 2, 0, 1)
    assert "is 2, which is < the last seen epoch 3 (TV0)" in caplog.text


def test_sequence_not_validated_for_coordinator_appends(manager, clock):
    append_entry(manager, PID, EPOCH, NO_SEQUENCE, 99, clock.ms, AppendOrigin.COORDINATOR, True)
    append_entry(manager, PID, EPOCH, NO_SEQUENCE, 100, clock.ms, AppendOrigin.COORDINATOR, True)
    with pytest.raises(InvalidProducerEpochError):
        append_entry(manager, PID, EPOCH - 1, NO_SEQUENCE, 101, clock.ms, AppendOrigin.COORDINATOR, True)


def test_prepare_update_does_not_mutate(manager, clock):
    info = manager.prepare_update(PID, AppendOrigin.CLIENT)
    info.append_data_batch(EPOCH, 0, 5, clock.ms, 15, 20, False)
    assert manager.last_entry(PID) is None
    manager.update(info)
    nxt = manager.prepare_update(PID, AppendOrigin.CLIENT)
    nxt.append_data_batch(EPOCH, 6, 10, clock.ms, 26, 30, False)
    entry = manager.last_entry(PID)
    assert (entry.first_seq, entry.last_seq, entry.last_data_offset) == (0, 5, 20)
    manager.update(nxt)
    entry = manager.last_entry(PID)
    assert (entry.first_seq, entry.last_seq, entry.last_data_offset) == (0, 10, 30)


def test_refused_batch_leaves_state_untouched(manager):
    infos = {}
    update_producers(manager, data_batch(0, 0), infos, None, AppendOrigin.CLIENT)
    manager.update(infos[PID])
    infos = {}
    with pytest.raises(OutOfOrderSequenceError):
        update_producers(manager, data_batch(1, 7), infos, None, AppendOrigin.CLIENT)
    assert manager.last_entry(PID).last_seq == 0


# ---- transactions ----------------------------------------------------------------
def test_update_producer_transaction_state(manager, clock):
    append_client(manager, clock, PID, EPOCH, 0, 9)
    info = manager.prepare_update(PID, AppendOrigin.CLIENT)
    info.append_data_batch(EPOCH, 1, 5, clock.ms, 16, 20, True)
    info.append_data_batch(EPOCH, 6, 10, clock.ms, 26, 30, True)
    entry = info.to_entry()
    assert (entry.first_seq, entry.last_seq, entry.first_data_offset, entry.last_data_offset) == (1, 10, 16, 30)
    assert entry.current_txn_first_offset == 16
    assert info.started_transactions == (TxnMetadata(PID, 16),)
    completed = info.append_end_txn_marker(EndTransactionMarker(COMMIT, 15), EPOCH, 40, clock.ms)
    assert completed == CompletedTxn(PID, 16, 40, False)
    # The marker leaves the cached batches alone and closes the transaction.
    entry = info.to_entry()
    assert (entry.first_seq, entry.last_seq, entry.first_data_offset, entry.last_data_offset) == (1, 10, 16, 30)
    assert entry.current_txn_first_offset is None


def test_non_transactional_append_with_ongoing_transaction(manager, clock):
    append_client(manager, clock, PID, EPOCH, 0, 0, txn=True)
    with pytest.raises(InvalidTxnStateError):
        append_client(manager, clock, PID, EPOCH, 1, 1)


def test_txn_first_offset_metadata_is_cached(manager, clock):
    info = ProducerAppendInfo(TP, PID, ProducerStateEntry.empty(PID), AppendOrigin.CLIENT,
                              manager.maybe_create_verification_state_entry(PID, 0, EPOCH))
    position = ("segment 990000", 234224)
    info.append_data_batch(EPOCH, 0, 0, clock.ms, 992342, 992342, True, position)
    manager.update(info)
    assert manager.first_unstable_offset() == 992342
    assert manager.first_unstable_offset_metadata() == position


def test_first_unstable_offset(manager, clock):
    assert manager.first_undecided_offset() is None
    append_client(manager, clock, PID, 5, 0, 99, txn=True)
    assert (manager.first_undecided_offset(), manager.first_unstable_offset()) == (99, 99)
    other = 2
    append_client(manager, clock, other, 5, 0, 105, txn=True)
    assert (manager.first_undecided_offset(), manager.first_unstable_offset()) == (99, 99)
    append_end_marker(manager, clock, PID, 5, COMMIT, 109)
    assert (manager.first_undecided_offset(), manager.first_unstable_offset()) == (105, 99)
    manager.on_high_watermark_updated(100)
    assert manager.first_unstable_offset() == 99
    manager.on_high_watermark_updated(110)
    assert manager.first_unstable_offset() == 105
    append_end_marker(manager, clock, other, 5, ABORT, 112)
    assert manager.first_undecided_offset() is None
    assert manager.first_unstable_offset() == 105
    manager.on_high_watermark_updated(113)
    assert manager.first_unstable_offset() is None


def test_last_stable_offset_of_completed_txn(manager, clock):
    def begin(pid, start):
        info = ProducerAppendInfo(TP, pid, ProducerStateEntry.empty(pid), AppendOrigin.CLIENT,
                                  manager.maybe_create_verification_state_entry(pid, 0, EPOCH))
        info.append_data_batch(EPOCH, 0, 0, clock.ms, start, start, True)
        manager.update(info)

    start1, start2, start3 = 992342, 992342 + 25, 992342 + 57
    begin(1, start1)
    begin(2, start2)
    begin(3, start3)
    last1 = start3 + 15
    txn1 = CompletedTxn(1, start1, last1, False)
    assert manager.last_stable_offset(txn1) == start2
    manager.complete_txn(txn1)
    manager.on_high_watermark_updated(last1 + 1)
    assert manager.first_unstable_offset() == start2
    last3 = last1 + 20
    txn3 = CompletedTxn(3, start3, last3, False)
    assert manager.last_stable_offset(txn3) == start2
    manager.complete_txn(txn3)
    manager.on_high_watermark_updated(last3 + 1)
    assert manager.first_unstable_offset() == start2
    last2 = last3 + 78
    txn2 = CompletedTxn(2, start2, last2, False)
    assert manager.last_stable_offset(txn2) == last2 + 1
    manager.complete_txn(txn2)
    manager.on_high_watermark_updated(last2 + 1)
    assert manager.first_unstable_offset() is None


def test_completing_a_txn_that_was_not_started_is_refused(manager):
    with pytest.raises(ValueError, match="which was not started"):
        manager.complete_txn(CompletedTxn(PID, 5, 9, True))


def test_skip_empty_transactions(manager, clock):
    seq = [0]

    def append_data(info, start, end):
        info.append_data_batch(EPOCH, seq[0], seq[0] + end - start, clock.ms, start, end, True)
        seq[0] += end - start + 1

    def end_txn(info, control_type, offset):
        return info.append_end_txn_marker(EndTransactionMarker(control_type, 27), EPOCH, offset, clock.ms)

    first = manager.prepare_update(PID, AppendOrigin.CLIENT)
    append_data(first, 16, 20)
    assert first.started_transactions == (TxnMetadata(PID, 16),)
    manager.update(first)
    manager.on_high_watermark_updated(21)
    assert manager.first_unstable_offset() == 16
    # One append: ends the old transaction, two empty ones, a complete one, an open one.
    second = manager.prepare_update(PID, AppendOrigin.CLIENT)
    first_completed = end_txn(second, COMMIT, 21)
    assert first_completed == CompletedTxn(PID, 16, 21, False)
    assert end_txn(second, COMMIT, 22) is None
    assert end_txn(second, ABORT, 23) is None
    append_data(second, 24, 27)
    second_completed = end_txn(second, ABORT, 28)
    assert second_completed == CompletedTxn(PID, 24, 28, True)
    assert end_txn(second, ABORT, 29) is None
    append_data(second, 30, 31)
    assert [t.first_offset for t in second.started_transactions] == [24, 30]
    manager.update(second)
    manager.complete_txn(first_completed)
    manager.complete_txn(second_completed)
    manager.on_high_watermark_updated(32)
    assert manager.first_unstable_offset() == 30


def test_old_epoch_for_control_record(manager, clock):
    append_client(manager, clock, PID, 5, 0, 99, txn=True)
    with pytest.raises(InvalidProducerEpochError):
        append_end_marker(manager, clock, PID, 3, COMMIT, 100)


def test_coordinator_fencing(manager, clock):
    append_client(manager, clock, PID, 5, 0, 99, txn=True)
    append_end_marker(manager, clock, PID, 5, COMMIT, 100, coordinator_epoch=1)
    assert manager.last_entry(PID).coordinator_epoch == 1
    append_end_marker(manager, clock, PID, 5, COMMIT, 101, coordinator_epoch=1)
    append_end_marker(manager, clock, PID, 5, COMMIT, 102, coordinator_epoch=2)
    with pytest.raises(TransactionCoordinatorFencedError):
        append_end_marker(manager, clock, PID, 5, COMMIT, 103, coordinator_epoch=1)


def test_coordinator_fenced_after_reload(manager, new_manager, clock):
    append_client(manager, clock, PID, EPOCH, 0, 99, txn=True)
    append_end_marker(manager, clock, PID, EPOCH, COMMIT, 100, coordinator_epoch=1)
    manager.take_snapshot()
    recovered = new_manager()
    recovered.truncate_and_reload(0, 101, clock.ms)
    with pytest.raises(TransactionCoordinatorFencedError):
        append_end_marker(recovered, clock, PID, EPOCH, COMMIT, 101, coordinator_epoch=0)


def test_stale_coordinator_epoch_from_replication_is_accepted(manager, clock):
    append_end_marker(manager, clock, PID, EPOCH, COMMIT, 0, coordinator_epoch=4)
    info = manager.prepare_update(PID, AppendOrigin.REPLICATION)
    info.append_end_txn_marker(EndTransactionMarker(ABORT, 3), EPOCH, 1, clock.ms)
    manager.update(info)
    assert manager.last_entry(PID).coordinator_epoch == 3


def test_producer_state_after_fencing_abort_marker(manager, clock):
    append_client(manager, clock, PID, EPOCH, 0, 0, txn=True)
    append_end_marker(manager, clock, PID, EPOCH + 1, ABORT, 1)
    entry = manager.last_entry(PID)
    assert entry.current_txn_first_offset is None
    assert (entry.first_data_offset, entry.last_data_offset) == (-1, -1)
    # Kept, so the fencing epoch survives.
    manager.remove_expired_producers(clock.ms)
    assert manager.last_entry(PID) is not None


def test_has_late_transaction(manager, clock):
    pid1, pid2 = 39, 57
    append_client(manager, clock, pid1, 2, 0, 100, txn=True)
    assert not manager.has_late_transaction(clock.ms)
    clock.sleep(500)
    append_client(manager, clock, pid2, 9, 0, 150, txn=True)
    assert not manager.has_late_transaction(clock.ms)
    clock.sleep(LATE_TXN_TIMEOUT_MS - 500 + 1)
    assert manager.has_late_transaction(clock.ms)
    clock.sleep(500)
    assert manager.has_late_transaction(clock.ms)
    append_end_marker(manager, clock, pid1, 2, COMMIT, 200)
    assert manager.has_late_transaction(clock.ms)
    append_end_marker(manager, clock, pid2, 9, COMMIT, 250)
    assert not manager.has_late_transaction(clock.ms)


def test_has_late_transaction_initialized_after_reload(manager, new_manager, clock):
    append_client(manager, clock, 39, 2, 0, 100, txn=True)
    clock.sleep(500)
    append_client(manager, clock, 57, 9, 0, 150, txn=True)
    manager.take_snapshot()
    clock.sleep(LATE_TXN_TIMEOUT_MS - 500 + 1)
    assert manager.has_late_transaction(clock.ms)
    reloaded = new_manager()
    reloaded.truncate_and_reload(0, manager.map_end_offset, clock.ms)
    assert reloaded.has_late_transaction(clock.ms)


@pytest.mark.parametrize("full", [False, True])
def test_has_late_transaction_cleared_by_truncation(manager, clock, full):
    append_client(manager, clock, 39, 2, 0, 100, txn=True)
    clock.sleep(LATE_TXN_TIMEOUT_MS + 1)
    assert manager.has_late_transaction(clock.ms)
    if full:
        manager.truncate_fully_and_start_at(150)
    else:
        manager.truncate_and_reload(0, 80, clock.ms)
    assert not manager.has_late_transaction(clock.ms)


# ---- transaction verification ------------------------------------------------------
def test_verification_entry_is_reused_and_cleared(manager, clock):
    original = manager.maybe_create_verification_state_entry(PID, 0, EPOCH)
    again = manager.maybe_create_verification_state_entry(PID, 0, EPOCH)
    assert again.verification_guard == original.verification_guard
    assert original.verification_guard.verify(again.verification_guard)
    assert not original.verification_guard.verify(type(original.verification_guard).SENTINEL)
    append_client(manager, clock, PID, 0, 0, 0, txn=True)
    manager.clear_verification_state_entry(PID)
    assert manager.verification_state_entry(PID) is None


def test_verification_entry_keeps_lowest_sequence_and_newest_epoch(manager):
    entry = manager.maybe_create_verification_state_entry(PID, 1, EPOCH)
    guard = entry.verification_guard

    def check(sequence, epoch):
        current = manager.verification_state_entry(PID)
        assert current.verification_guard == guard
        assert (current.lowest_sequence, current.epoch) == (sequence, epoch)

    check(1, EPOCH)
    manager.maybe_create_verification_state_entry(PID, 0, EPOCH)
    check(0, EPOCH)
    manager.maybe_create_verification_state_entry(PID, 2, 1)
    check(2, 1)
    manager.maybe_create_verification_state_entry(PID, 0, EPOCH)
    check(2, 1)


@pytest.mark.parametrize("dynamically_disable", [True, False])
def test_verification_entry_refuses_higher_sequence(manager, clock, config, dynamically_disable):
    original = manager.maybe_create_verification_state_entry(PID, 0, EPOCH)
    if dynamically_disable:
        config.transaction_verification_enabled = False
    with pytest.raises(OutOfOrderSequenceError):
        append_client(manager, clock, PID, EPOCH, 4, 0, txn=True)
    assert manager.verification_state_entry(PID) is original


def test_a_transactions_v2_verification_wants_sequence_zero_from_a_producer_with_no_state(manager, clock):
    """ProducerAppendInfo.checkSequence: a transactions-v2 producer new to the partition starts
    its transaction at sequence 0; a v1 verification keeps only the lowest-sequence rule."""
    manager.maybe_create_verification_state_entry(PID, 3, EPOCH, supports_epoch_bump=True)
    with pytest.raises(OutOfOrderSequenceError, match="Expected sequence 0 for transactions v2"):
        append_client(manager, clock, PID, EPOCH, 3, 0, txn=True)
    manager.clear_verification_state_entry(PID)
    manager.maybe_create_verification_state_entry(PID, 3, EPOCH)
    append_client(manager, clock, PID, EPOCH, 3, 0, txn=True)


def test_a_transactions_v2_marker_needs_a_newer_epoch_unless_it_repeats_one(manager, clock):
    append_client(manager, clock, PID, EPOCH, 0, 0, txn=True)
    info = manager.prepare_update(PID, AppendOrigin.COORDINATOR)
    with pytest.raises(InvalidProducerEpochError, match=r"is <= the last seen epoch 0 \(TV2\)"):
        info.append_end_txn_marker(EndTransactionMarker(ControlRecordType.COMMIT, 0), EPOCH, 1, clock.ms, 2)
    append_end_marker(manager, clock, PID, EPOCH, ControlRecordType.COMMIT, 1)  # a v1 marker: same epoch
    info = manager.prepare_update(PID, AppendOrigin.COORDINATOR)  # the transaction is over: a retry
    assert info.append_end_txn_marker(EndTransactionMarker(ControlRecordType.COMMIT, 0), EPOCH, 2, clock.ms,
                                      2) is None


def test_verification_entry_expires(manager, clock, config):
    original = manager.maybe_create_verification_state_entry(PID, 0, EPOCH)
    clock.sleep(config.producer_id_expiration_ms // 2)
    manager.remove_expired_producers(clock.ms)
    assert manager.verification_state_entry(PID) is original
    clock.sleep(config.producer_id_expiration_ms // 2 + 1)
    manager.remove_expired_producers(clock.ms)
    assert manager.verification_state_entry(PID) is None


# ---- expiration ------------------------------------------------------------------
def test_pid_expiration_timeout(manager, clock, config):
    append_client(manager, clock, PID, 5, 0, 1)
    clock.sleep(config.producer_id_expiration_ms + 1)
    manager.remove_expired_producers(clock.ms)
    assert manager.last_entry(PID) is None
    # Forgotten, the producer may continue with any sequence.
    append_client(manager, clock, PID, 5, 1, 2)
    assert len(manager.active_producers) == 1
    assert manager.active_producers[PID].last_seq == 1
    assert manager.map_end_offset == 3


def test_producers_with_ongoing_transactions_dont_expire(manager, clock, config):
    append_client(manager, clock, PID, 5, 0, 99, txn=True)
    clock.sleep(config.producer_id_expiration_ms + 1)
    manager.remove_expired_producers(clock.ms)
    assert manager.last_entry(PID) is not None
    assert manager.first_undecided_offset() == 99


def test_expired_producers_are_not_loaded_from_snapshot(manager, new_manager, clock, config):
    append_client(manager, clock, 1, EPOCH, 0, 0, ts=clock.ms - config.producer_id_expiration_ms)
    append_client(manager, clock, 2, EPOCH, 0, 1)
    manager.take_snapshot()
    recovered = new_manager()
    recovered.truncate_and_reload(0, 2, clock.ms)
    assert set(recovered.active_producers) == {2}


def test_accept_append_without_producer_state_on_replica(manager, new_manager, clock):
    append_client(manager, clock, PID, EPOCH, 0, 0, ts=0)
    append_client(manager, clock, PID, EPOCH, 1, 1, ts=1)
    manager.take_snapshot()
    recovered = new_manager()
    recovered.truncate_and_reload(0, 1, 70000)  # the snapshot at 2 is beyond the end
    assert PID not in recovered.active_producers
    append_replication(recovered, clock, EPOCH, 2, 2, ts=70001)
    entry = recovered.active_producers[PID]
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq) == (EPOCH, 2, 2)


# ---- snapshots: taking, loading, truncating --------------------------------------------
def test_take_snapshot_writes_one_file_at_map_end_offset(manager, clock, tmp_path):
    append_client(manager, clock, PID, EPOCH, 0, 0)
    append_client(manager, clock, PID, EPOCH, 1, 1)
    path = manager.take_snapshot()
    assert path == snapshot_file_path(tmp_path, 2)
    assert os.listdir(tmp_path) == ["00000000000000000002.snapshot"]
    assert path.stat().st_size == 10 + ENTRY_SIZE_BYTES


def test_skip_snapshot_if_offset_unchanged(manager, clock, tmp_path):
    append_client(manager, clock, PID, EPOCH, 0, 0)
    manager.take_snapshot()
    assert manager.take_snapshot() is None
    assert snapshot_offsets_on_disk(tmp_path) == {1}


def test_fetch_snapshot_of_unknown_offset_is_none(manager):
    assert manager.fetch_snapshot(1) is None


def test_recover_from_snapshot_unfinished_transaction(manager, new_manager, clock):
    append_client(manager, clock, PID, EPOCH, 0, 0, txn=True)
    append_client(manager, clock, PID, EPOCH, 1, 1, txn=True)
    manager.take_snapshot()
    recovered = new_manager()
    recovered.truncate_and_reload(0, 3, clock.ms)
    entry = recovered.last_entry(PID)
    # Only the last batch is persisted.
    assert (entry.first_data_offset, entry.first_seq, entry.last_data_offset, entry.last_seq) == (1, 1, 1, 1)
    assert entry.current_txn_first_offset == 0
    assert recovered.first_undecided_offset() == 0
    append_client(recovered, clock, PID, EPOCH, 2, 2, txn=True)


def test_recover_from_snapshot_finished_transaction(manager, new_manager, clock):
    append_client(manager, clock, PID, EPOCH, 0, 0, txn=True)
    append_client(manager, clock, PID, EPOCH, 1, 1, txn=True)
    append_end_marker(manager, clock, PID, EPOCH, ABORT, 2)
    manager.take_snapshot()
    recovered = new_manager()
    recovered.truncate_and_reload(0, 3, clock.ms)
    entry = recovered.last_entry(PID)
    assert (entry.first_data_offset, entry.first_seq, entry.last_data_offset, entry.last_seq) == (1, 1, 1, 1)
    assert entry.current_txn_first_offset is None


def test_recover_from_snapshot_empty_transaction(manager, new_manager, clock):
    ts = clock.ms
    append_end_marker(manager, clock, PID, EPOCH, ABORT, 0, ts=ts)
    manager.take_snapshot()
    recovered = new_manager()
    recovered.truncate_and_reload(0, 1, clock.ms)
    entry = recovered.last_entry(PID)
    assert entry.last_timestamp == ts
    assert entry.current_txn_first_offset is None
    assert entry.is_empty()


def test_truncate_and_reload_removes_out_of_range_snapshots(manager, clock):
    for seq in range(5):
        append_client(manager, clock, PID, EPOCH, seq, seq)
        manager.take_snapshot()
    manager.truncate_and_reload(1, 3, clock.ms)
    assert manager.oldest_snapshot_offset() == 2
    assert manager.latest_snapshot_offset() == 3
    assert manager.map_end_offset == 3


def test_truncate_and_reload_loads_latest_snapshot_at_or_below_target(manager, new_manager, clock):
    append_client(manager, clock, PID, EPOCH, 0, 0)
    manager.take_snapshot()  # at 1
    append_client(manager, clock, PID, EPOCH, 1, 1)
    append_client(manager, clock, PID, EPOCH, 2, 2)
    manager.take_snapshot()  # at 3
    append_client(manager, clock, PID, EPOCH, 3, 3)
    manager.take_snapshot()  # at 4
    recovered = new_manager()
    recovered.truncate_and_reload(0, 3, clock.ms)
    # The log must now replay only from offset 3.
    assert recovered.map_end_offset == 3
    assert recovered.last_entry(PID).last_seq == 2
    assert recovered.snapshot_offsets() == [1, 3]


def test_truncate_and_reload_at_map_end_keeps_state(manager, clock):
    append_client(manager, clock, PID, EPOCH, 0, 0)
    append_client(manager, clock, 2, EPOCH, 0, 1)
    manager.truncate_and_reload(0, 2, clock.ms)
    assert set(manager.active_producers) == {PID, 2}


def test_load_from_snapshot_retains_non_expired_producers(manager, clock):
    append_client(manager, clock, 1, EPOCH, 0, 0)
    append_client(manager, clock, 2, EPOCH, 0, 1)
    manager.take_snapshot()
    manager.truncate_and_reload(1, 2, clock.ms)
    assert len(manager.active_producers) == 2
    assert (manager.last_entry(1).last_seq, manager.last_entry(1).last_data_offset) == (0, 0)
    assert (manager.last_entry(2).last_seq, manager.last_entry(2).last_data_offset) == (0, 1)


def test_load_from_snapshot_without_snapshot_starts_at_log_start(manager, clock):
    manager.load_from_snapshot(42, clock.ms)
    assert manager.map_end_offset == 42
    assert manager.is_empty()


def test_first_unstable_offset_after_truncation(manager, clock):
    append_client(manager, clock, PID, EPOCH, 0, 99, txn=True)
    assert manager.first_unstable_offset() == 99
    manager.take_snapshot()
    append_end_marker(manager, clock, PID, EPOCH, COMMIT, 105)
    manager.on_high_watermark_updated(106)
    assert manager.first_unstable_offset() is None
    manager.take_snapshot()
    append_client(manager, clock, PID, EPOCH, 1, 106)
    manager.truncate_and_reload(0, 106, clock.ms)
    assert manager.first_unstable_offset() is None
    manager.truncate_and_reload(0, 100, clock.ms)
    assert manager.first_unstable_offset() == 99
    assert manager.first_unstable_offset_metadata() is None  # only the offset is known


def test_delete_snapshots_before(manager, clock, tmp_path):
    append_client(manager, clock, PID, EPOCH, 0, 0)
    append_client(manager, clock, PID, EPOCH, 1, 1)
    manager.take_snapshot()
    append_client(manager, clock, PID, EPOCH, 2, 2)
    manager.take_snapshot()
    assert snapshot_offsets_on_disk(tmp_path) == {2, 3}
    manager.delete_snapshots_before(3)
    assert snapshot_offsets_on_disk(tmp_path) == {3} and manager.snapshot_offsets() == [3]
    manager.delete_snapshots_before(4)
    assert os.listdir(tmp_path) == [] and manager.snapshot_offsets() == []


def test_truncate_fully_and_start_at(manager, clock, tmp_path):
    append_client(manager, clock, PID, EPOCH, 0, 0)
    append_client(manager, clock, PID, EPOCH, 1, 1)
    manager.take_snapshot()
    append_client(manager, clock, PID, EPOCH, 2, 2)
    manager.take_snapshot()
    manager.truncate_fully_and_start_at(0)
    assert os.listdir(tmp_path) == []
    assert manager.is_empty() and manager.map_end_offset == 0
    append_client(manager, clock, PID, EPOCH, 0, 0)
    manager.take_snapshot()
    assert snapshot_offsets_on_disk(tmp_path) == {1}


def test_reload_snapshots(manager, clock, tmp_path):
    append_client(manager, clock, PID, EPOCH, 1, 1)
    append_client(manager, clock, PID, EPOCH, 2, 2)
    manager.take_snapshot()
    saved = {p: p.read_bytes() for p in tmp_path.iterdir()}
    append_client(manager, clock, PID, EPOCH, 3, 3)
    append_client(manager, clock, PID, EPOCH, 4, 4)
    manager.take_snapshot()
    assert snapshot_offsets_on_disk(tmp_path) == {3, 5}
    manager.truncate_and_reload(3, 5, clock.ms)
    assert snapshot_offsets_on_disk(tmp_path) == {5}
    for path, data in saved.items():
        path.write_bytes(data)
    manager.truncate_fully_and_reload_snapshots()
    assert manager.latest_snapshot_offset() == 3
    assert snapshot_offsets_on_disk(tmp_path) == {3}


def test_on_log_start_offset_incremented_moves_map_end_offset(manager, clock):
    append_client(manager, clock, PID, EPOCH, 0, 0)
    manager.on_log_start_offset_incremented(10)
    assert manager.map_end_offset == 10
    assert manager.take_snapshot() is None  # nothing new since the log start


def test_remove_stray_snapshots_keeps_clean_shutdown_snapshot(manager, tmp_path):
    for offset in (5, 2, 42):
        snapshot_file_path(tmp_path, offset).touch()
    manager.remove_stray_snapshots([5])
    assert (manager.oldest_snapshot_offset(), manager.latest_snapshot_offset()) == (5, 42)
    assert [s.offset for s in list_snapshot_files(tmp_path)] == [5, 42]


def test_remove_all_stray_snapshots(manager, tmp_path):
    for offset in (5, 2, 42):
        snapshot_file_path(tmp_path, offset).touch()
    manager.remove_stray_snapshots([42])
    assert [s.offset for s in list_snapshot_files(tmp_path)] == [42]


def test_remove_and_mark_snapshot_for_deletion(new_manager, tmp_path):
    snapshot_file_path(tmp_path, 5).touch()
    m = new_manager()
    assert m.latest_snapshot_offset() == 5
    snapshot = m.remove_and_mark_snapshot_for_deletion(5)
    assert snapshot.path.name == "00000000000000000005.snapshot.deleted" and snapshot.path.exists()
    assert m.latest_snapshot_offset() is None


def test_remove_and_mark_snapshot_for_deletion_already_deleted(new_manager, tmp_path):
    path = snapshot_file_path(tmp_path, 5)
    path.touch()
    m = new_manager()
    path.unlink()
    assert m.remove_and_mark_snapshot_for_deletion(5) is None
    assert m.latest_snapshot_offset() is None


def test_unfinished_tmp_snapshot_is_ignored_and_removed(tmp_path, new_manager):
    tmp = tmp_path / "00000000000000000007.snapshot.tmp"
    tmp.write_bytes(b"partial")
    m = new_manager()
    assert m.latest_snapshot_offset() is None
    assert not tmp.exists()


@pytest.mark.parametrize("damage", ["empty", "truncated", "garbage", "bad_version"])
def test_corrupt_snapshot_is_deleted_and_older_one_loaded(manager, new_manager, clock, tmp_path,
                                                          caplog, damage):
    append_client(manager, clock, PID, EPOCH, 0, 0)
    manager.take_snapshot()
    append_client(manager, clock, PID, EPOCH, 1, 1)
    manager.take_snapshot()
    assert manager.latest_snapshot_offset() == 2
    path = snapshot_file_path(tmp_path, 2)
    data = path.read_bytes()
    path.write_bytes({"empty": b"", "truncated": data[: len(data) // 2],
                      "garbage": bytes(37) + data[37:], "bad_version": b"\x00\x02" + data[2:]}[damage])
    reloaded = new_manager()
    with caplog.at_level(logging.WARNING, logger="franz.storage.producer_state"):
        reloaded.truncate_and_reload(0, 20, clock.ms)
    assert not path.exists()
    assert "00000000000000000002.snapshot" in caplog.text
    assert reloaded.active_producers[PID].last_data_offset == 0
    assert reloaded.map_end_offset == 1


# ---- snapshot bytes ---------------------------------------------------------------
def reference_crc32c(data: bytes) -> int:
    """Bitwise CRC-32C (Castagnoli, reflected polynomial 0x82F63B78)."""
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def test_reference_crc32c_check_value():
    assert reference_crc32c(b"123456789") == 0xE3069283


def test_snapshot_bytes_match_kafka_layout(tmp_path):
    entry = ProducerStateEntry(1, producer_epoch=2, coordinator_epoch=3, last_timestamp=1000,
                               current_txn_first_offset=100,
                               first_batch=BatchMetadata(last_seq=7, last_offset=104, offset_delta=4,
                                                         timestamp=1000))
    path = tmp_path / "00000000000000000105.snapshot"
    ProducerStateManager.write_snapshot(path, {1: entry})
    body = bytes.fromhex(
        "00000001"  # entry count
        "0000000000000001"  # producer id
        "0002"  # epoch
        "00000007"  # last sequence
        "0000000000000068"  # last offset 104
        "00000004"  # offset delta
        "00000000000003e8"  # timestamp 1000
        "00000003"  # coordinator epoch
        "0000000000000064"  # current txn first offset 100
    )
    assert reference_crc32c(body) == 0x624796FF
    assert path.read_bytes() == bytes.fromhex("0001" "624796ff") + body
    assert len(path.read_bytes()) == 56


def test_read_write_snapshot_round_trip(tmp_path):
    expected = {
        1: ProducerStateEntry(1, 2, 3, -1, 100, BatchMetadata(1, 2, 3, -1)),
        11: ProducerStateEntry(11, 12, 13, 123456, None, None),
    }
    path = tmp_path / "testReadWriteSnapshot"
    ProducerStateManager.write_snapshot(path, expected)
    actual = {e.producer_id: e for e in ProducerStateManager.read_snapshot(path)}
    assert actual.keys() == expected.keys()
    for pid, e in expected.items():
        a = actual[pid]
        assert (a.producer_epoch, a.coordinator_epoch, a.last_timestamp, a.current_txn_first_offset,
                a.batch_metadata) == (e.producer_epoch, e.coordinator_epoch, e.last_timestamp,
                                      e.current_txn_first_offset, e.batch_metadata)


def test_empty_snapshot_is_ten_bytes():
    data = encode_snapshot([])
    assert data == b"\x00\x01" + struct.pack(">I", reference_crc32c(bytes(4))) + bytes(4)
    assert decode_snapshot(data) == []


def test_snapshot_with_trailing_bytes_is_corrupt():
    data = encode_snapshot([SnapshotEntry(1, 0, 0, 0, 0, 0, 0, -1)])
    with pytest.raises(CorruptSnapshotError, match="entries need"):
        decode_snapshot(data + b"\x00")


int16 = st.integers(-(2**15), 2**15 - 1)
int32 = st.integers(-(2**31), 2**31 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)
snapshot_entries = st.lists(st.builds(SnapshotEntry, int64, int16, int32, int64, int32, int64, int32, int64),
                            max_size=20)


@given(snapshot_entries)
def test_snapshot_encoding_round_trips(entries):
    assert decode_snapshot(encode_snapshot(entries)) == entries


@given(snapshot_entries.filter(bool), st.data())
def test_any_flipped_bit_is_detected(entries, data):
    encoded = bytearray(encode_snapshot(entries))
    position = data.draw(st.integers(0, len(encoded) - 1))
    encoded[position] ^= 1 << data.draw(st.integers(0, 7))
    with pytest.raises(CorruptSnapshotError):
        decode_snapshot(bytes(encoded))


# ---- real record batches ------------------------------------------------------------
def test_real_transaction_through_batches_gives_aborted_txn_fields(manager):
    infos = {}
    assert update_producers(manager, data_batch(0, 0, count=3, txn=True), infos, None,
                            AppendOrigin.CLIENT) is None
    update_producers(manager, data_batch(3, 0, count=2, pid=2), infos, None, AppendOrigin.CLIENT)
    for info in infos.values():
        manager.update(info)
    manager.update_map_end_offset(5)
    assert manager.first_unstable_offset() == 0
    infos = {}
    completed = update_producers(manager, marker_batch(ABORT, 5, coordinator_epoch=7), infos, None,
                                 AppendOrigin.COORDINATOR)
    assert completed == CompletedTxn(PID, 0, 5, True)
    manager.update(infos[PID])
    lso = manager.last_stable_offset(completed)
    assert completed.aborted_txn_fields(lso) == (PID, 0, 5, 6)
    manager.complete_txn(completed)
    manager.on_high_watermark_updated(6)
    assert manager.first_unstable_offset() is None
    entry = manager.last_entry(PID)
    assert (entry.coordinator_epoch, entry.last_timestamp) == (7, 2000)


def test_verification_entry_is_cleared_by_transactional_append(manager):
    manager.maybe_create_verification_state_entry(PID, 0, EPOCH)
    update_producers(manager, data_batch(0, 0, txn=True), {}, None, AppendOrigin.CLIENT)
    assert manager.verification_state_entry(PID) is None


def test_load_producers_from_batches_replays_the_log(manager):
    batches = [
        data_batch(0, 0, count=2, txn=True),
        RecordBatch(build_batch([SimpleRecord(b"x", timestamp=1)], base_offset=2)),  # no producer
        data_batch(3, 5, pid=2),  # a gap a replica must accept
        marker_batch(COMMIT, 4),
        data_batch(5, 2, count=1, txn=True),
    ]
    load_producers_from_batches(manager, batches)
    assert set(manager.active_producers) == {PID, 2}
    assert manager.last_entry(2).last_seq == 5
    assert manager.first_undecided_offset() == 5
    assert manager.first_unstable_offset() == 0  # the committed one awaits the HW
    manager.on_high_watermark_updated(5)
    assert manager.first_unstable_offset() == 5


class EmptyControlBatch:
    """A control batch the cleaner emptied: header only."""

    is_control_batch = True
    is_transactional = True
    producer_id = 23423
    producer_epoch = 0
    base_offset = 15

    def records(self):
        return iter(())


def test_append_empty_control_batch(manager):
    infos = {}
    assert update_producers(manager, EmptyControlBatch(), infos, None, AppendOrigin.CLIENT) is None
    manager.update(infos[23423])
    assert manager.last_entry(23423).current_txn_first_offset is None


def test_errors_carry_kafka_error_codes():
    assert OutOfOrderSequenceError.error_code == 45
    assert DuplicateSequenceError.error_code == 46
    assert InvalidProducerEpochError.error_code == 47
    assert InvalidTxnStateError.error_code == 48
    assert TransactionCoordinatorFencedError.error_code == 52
    assert ProducerFencedError.error_code == 90


def test_a_v2_marker_keeps_the_verification_of_the_next_transaction_it_bumped_to(manager, clock):
    """UnifiedLog.updateProducers: a transactions-v2 producer may verify its next transaction at
    the bumped epoch before the marker ending the last one (written with that epoch) lands; the
    marker must not clear that verification. Any other transactional batch clears it."""
    append_client(manager, clock, PID, EPOCH, 0, 0, txn=True)
    upcoming = manager.maybe_create_verification_state_entry(PID, 0, EPOCH + 1, supports_epoch_bump=True)
    producers: dict = {}
    marker = next(MemoryRecords(bytearray(build_control_batch(
        ControlRecordType.COMMIT, producer_id=PID, producer_epoch=EPOCH + 1, base_offset=1))).batches())
    update_producers(manager, marker, producers, None, AppendOrigin.COORDINATOR, 2)
    assert manager.verification_state_entry(PID) is upcoming
    manager.clear_verification_state_entry(PID)
    manager.maybe_create_verification_state_entry(PID, 0, EPOCH + 1)  # a v1 entry: the marker clears it
    update_producers(manager, marker, {}, None, AppendOrigin.COORDINATOR, 2)
    assert manager.verification_state_entry(PID) is None
