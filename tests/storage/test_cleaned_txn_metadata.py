"""CleanedTransactionMetadata: which transactional batches and markers a cleaning pass may drop."""

from franz.records import (
    CompressionType,
    ControlRecordType,
    MemoryRecords,
    SimpleRecord,
    TimestampType,
    build_batch,
    build_control_batch,
    compute_attributes,
    encode_batch,
)
from franz.storage.cleaned_txn_metadata import CleanedTransactionMetadata
from franz.storage.txn_index import AbortedTxn, TransactionIndex


def data(producer_id, base_offset, transactional=True):
    return next(MemoryRecords(build_batch([SimpleRecord(b"v", key=b"k")], base_offset=base_offset,
                                          producer_id=producer_id, producer_epoch=0, base_sequence=0,
                                          is_transactional=transactional)).batches())


def marker(control_type, producer_id, base_offset):
    return next(MemoryRecords(build_control_batch(control_type, producer_id=producer_id, producer_epoch=0,
                                                  base_offset=base_offset)).batches())


def test_an_aborted_transactions_data_goes_and_its_marker_stays_while_data_was_seen(tmp_path):
    metadata = CleanedTransactionMetadata()
    metadata.cleaned_index = TransactionIndex(0, tmp_path / "0.txnindex")
    aborted = AbortedTxn(producer_id=7, first_offset=1, last_offset=3, last_stable_offset=1)
    metadata.add_aborted_transactions([aborted])
    assert metadata.on_batch_read(data(5, 0)) is False  # another producer's transaction: kept
    assert metadata.on_batch_read(data(7, 1)) is True  # aborted data: may go
    assert metadata.on_control_batch_read(marker(ControlRecordType.ABORT, 7, 3)) is False
    assert list(metadata.cleaned_index.iter_aborted_txns()) == [aborted]  # re-indexed with its marker


def test_an_abort_marker_whose_data_is_gone_may_go_and_is_not_reindexed(tmp_path):
    metadata = CleanedTransactionMetadata()
    metadata.cleaned_index = TransactionIndex(0, tmp_path / "0.txnindex")
    metadata.add_aborted_transactions([AbortedTxn(7, 1, 3, 1)])
    assert metadata.on_control_batch_read(marker(ControlRecordType.ABORT, 7, 3)) is True
    assert list(metadata.cleaned_index.iter_aborted_txns()) == []


def test_a_commit_marker_stays_while_its_data_was_seen_and_an_emptied_marker_goes():
    metadata = CleanedTransactionMetadata()
    assert metadata.on_batch_read(data(9, 0)) is False
    assert metadata.on_control_batch_read(marker(ControlRecordType.COMMIT, 9, 1)) is False
    assert metadata.on_control_batch_read(marker(ControlRecordType.COMMIT, 9, 2)) is True  # nothing of it seen
    assert metadata.on_batch_read(data(4, 3, transactional=False)) is False  # not transactional: never aborted
    # A control batch an earlier pass emptied (a bare header) may go.
    emptied = encode_batch(b"", base_offset=4, last_offset_delta=0, record_count=0,
                           attributes=compute_attributes(CompressionType.NONE, TimestampType.CREATE_TIME, True, True,
                                                         False),
                           base_timestamp=-1, max_timestamp=0, producer_id=9, producer_epoch=0)
    assert metadata.on_control_batch_read(next(MemoryRecords(emptied).batches())) is True
