"""Behaviours of Kafka's TransactionIndexTest, as franz's own tests."""

import struct

import pytest

from franz.storage.index import CorruptIndexError
from franz.storage.txn_index import AbortedTxn, TransactionIndex


@pytest.fixture
def index(tmp_path):
    txn_index = TransactionIndex(0, tmp_path / "00000000000000000000.txnindex")
    yield txn_index
    txn_index.close()


def test_the_file_is_created_only_by_the_first_append(tmp_path, index):
    assert not index.file.exists()
    assert index.collect_aborted_txns(0, 100).aborted_transactions == []
    index.append(AbortedTxn(1, 0, 10, 11))
    assert index.file.exists()


def test_entries_are_34_bytes_in_kafkas_layout(index):
    index.append(AbortedTxn(producer_id=7, first_offset=3, last_offset=9, last_stable_offset=12))
    index.flush()
    assert index.file.read_bytes() == struct.pack(">hqqqq", 0, 7, 3, 9, 12)


def test_positions_and_reload(tmp_path, index):
    txns = [AbortedTxn(0, 0, 10, 11), AbortedTxn(1, 5, 15, 13), AbortedTxn(2, 18, 35, 25), AbortedTxn(3, 32, 50, 40)]
    for txn in txns:
        index.append(txn)
    index.close()
    reopened = TransactionIndex(0, index.file)
    assert reopened.all_aborted_txns() == txns
    reopened.close()


def test_collect_aborted_txns_overlapping_the_fetch_range(index):
    txns = [AbortedTxn(0, 0, 10, 11), AbortedTxn(1, 5, 15, 13), AbortedTxn(2, 18, 35, 25), AbortedTxn(3, 32, 50, 40)]
    for txn in txns:
        index.append(txn)
    assert index.collect_aborted_txns(0, 32) == (txns[:3], True)
    assert index.collect_aborted_txns(0, 33) == (txns, True)
    assert index.collect_aborted_txns(16, 33) == (txns[2:], True)
    assert index.collect_aborted_txns(11, 13).aborted_transactions == txns[1:2]
    assert index.collect_aborted_txns(51, 100) == ([], False)


def test_append_requires_increasing_last_offsets(index):
    index.append(AbortedTxn(0, 0, 10, 2))
    with pytest.raises(ValueError, match="increase sequentially"):
        index.append(AbortedTxn(1, 5, 10, 3))


def test_truncate_to_drops_entries_ending_at_or_after_the_offset(index):
    txns = [AbortedTxn(0, 0, 1, 2), AbortedTxn(1, 2, 3, 4)]
    for txn in txns:
        index.append(txn)
    index.truncate_to(3)
    assert index.all_aborted_txns() == txns[:1]
    index.append(AbortedTxn(2, 5, 6, 7))  # appends continue from the cut
    assert [t.producer_id for t in index.all_aborted_txns()] == [0, 2]


def test_sanity_check_catches_an_entry_below_the_segment_start(tmp_path):
    path = tmp_path / "00000000000000000010.txnindex"
    path.write_bytes(struct.pack(">hqqqq", 0, 1, 2, 5, 6))
    index = TransactionIndex(10, path)
    with pytest.raises(CorruptIndexError, match="less than start offset"):
        index.sanity_check()
    index.close()


def test_a_torn_trailing_entry_is_cut_on_open(tmp_path):
    path = tmp_path / "00000000000000000000.txnindex"
    whole = struct.pack(">hqqqq", 0, 1, 2, 5, 6)
    path.write_bytes(whole + whole[:20])
    index = TransactionIndex(0, path)
    assert index.all_aborted_txns() == [AbortedTxn(1, 2, 5, 6)]
    index.append(AbortedTxn(9, 7, 8, 9))
    index.close()
    assert path.stat().st_size == 68


def test_an_unknown_version_is_reported_as_corrupt(tmp_path):
    path = tmp_path / "00000000000000000000.txnindex"
    path.write_bytes(struct.pack(">hqqqq", 5, 1, 2, 5, 6))
    index = TransactionIndex(0, path)
    with pytest.raises(CorruptIndexError, match="version"):
        index.all_aborted_txns()
    index.close()


def test_reset_and_rename_and_delete(tmp_path, index):
    index.append(AbortedTxn(0, 0, 1, 2))
    index.reset()
    assert index.all_aborted_txns() == [] and index.last_offset is None
    target = tmp_path / "00000000000000000000.txnindex.deleted"
    index.rename_to(target)
    assert target.exists()
    assert index.delete_if_exists() and not target.exists()
