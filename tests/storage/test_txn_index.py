"""Behaviours of Kafka's TransactionIndexTest, as franz's own tests, plus torn-tail,
version and chunking cases and a brute-force property for collect_aborted_txns."""

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from franz.storage import txn_index as txn_index_module
from franz.storage.index import CorruptIndexError
from franz.storage.txn_index import (
    ABORTED_TXN_SIZE,
    AbortedTxn,
    TransactionIndex,
    TxnIndexSearchResult,
)

FOUR = [AbortedTxn(0, 0, 10, 11), AbortedTxn(1, 5, 15, 13), AbortedTxn(2, 18, 35, 25), AbortedTxn(3, 32, 50, 40)]


@pytest.fixture
def path(tmp_path):
    return tmp_path / "00000000000000000000.txnindex"


@pytest.fixture
def index(path):
    txn_index = TransactionIndex(0, path)
    yield txn_index
    txn_index.close()


def _fill(index, txns):
    for txn in txns:
        index.append(txn)


def test_the_file_is_created_only_by_the_first_append(index):
    assert not index.file.exists()
    assert index.collect_aborted_txns(0, 100) == TxnIndexSearchResult([], False)
    index.flush()  # nothing to flush yet
    index.append(AbortedTxn(1, 0, 10, 11))
    index.flush()
    assert index.file.exists() and index.file.stat().st_size == 34


def test_entries_are_34_bytes_in_kafkas_layout(index):
    index.append(AbortedTxn(producer_id=7, first_offset=3, last_offset=9, last_stable_offset=12))
    index.append(AbortedTxn(2**63 - 1, 10, 11, 2**63 - 1))
    assert index.file.read_bytes() == struct.pack(">hqqqq", 0, 7, 3, 9, 12) + \
        struct.pack(">hqqqq", 0, 2**63 - 1, 10, 11, 2**63 - 1)
    assert index.size_in_bytes() == 2 * ABORTED_TXN_SIZE


def test_aborted_txn_serde():
    txn = AbortedTxn(983493, 137, 299, 200)
    assert txn.version == 0
    assert AbortedTxn.from_bytes(txn.to_bytes()) == txn
    assert AbortedTxn.from_bytes(b"xx" + txn.to_bytes(), 2) == txn


def test_position_is_set_at_the_end_when_reopened(index, path):
    _fill(index, FOUR)
    index.close()
    reopened = TransactionIndex(0, path)
    another = AbortedTxn(3, 50, 60, 55)
    reopened.append(another)
    assert reopened.all_aborted_txns() == FOUR + [another]
    reopened.close()


def test_reopened_index_still_requires_increasing_last_offsets(index, path):
    _fill(index, FOUR)
    index.close()
    reopened = TransactionIndex(0, path)
    assert reopened.last_offset == 50
    with pytest.raises(ValueError, match="increase sequentially"):
        reopened.append(AbortedTxn(9, 45, 50, 50))
    reopened.close()


def test_sanity_check_catches_an_entry_below_the_segment_start(index, path):
    _fill(index, FOUR)
    index.close()
    # a different start offset fakes bad data
    with TransactionIndex(100, path) as reopened, pytest.raises(CorruptIndexError, match="less than start offset"):
        reopened.sanity_check()
    with TransactionIndex(10, path) as reopened:  # the first entry ends exactly at 10
        reopened.sanity_check()


def test_last_offset_must_increase(index):
    index.append(AbortedTxn(1, 5, 15, 13))
    with pytest.raises(ValueError, match="increase sequentially"):
        index.append(AbortedTxn(0, 0, 15, 11))
    with pytest.raises(ValueError, match="increase sequentially"):
        index.append(AbortedTxn(0, 0, 10, 11))
    assert index.all_aborted_txns() == [AbortedTxn(1, 5, 15, 13)]


def test_collect_aborted_transactions_overlapping_the_fetch_range(index):
    _fill(index, FOUR)
    assert index.collect_aborted_txns(0, 100) == (FOUR, False)
    assert index.collect_aborted_txns(0, 32) == (FOUR[:3], True)
    assert index.collect_aborted_txns(0, 35) == (FOUR, True)
    assert index.collect_aborted_txns(10, 35) == (FOUR, True)
    assert index.collect_aborted_txns(11, 35) == (FOUR[1:], True)
    assert index.collect_aborted_txns(20, 41) == (FOUR[2:], False)
    assert index.collect_aborted_txns(51, 100) == ([], False)


def test_truncate_to_drops_entries_ending_at_or_after_the_offset(index):
    txns = [AbortedTxn(0, 0, 10, 2), AbortedTxn(1, 5, 15, 16), AbortedTxn(2, 18, 35, 25), AbortedTxn(3, 32, 50, 40)]
    _fill(index, txns)
    index.truncate_to(51)
    assert index.collect_aborted_txns(0, 100).aborted_transactions == txns
    index.truncate_to(50)
    assert index.collect_aborted_txns(0, 100).aborted_transactions == txns[:3]
    assert index.last_offset == 35 and index.size_in_bytes() == 3 * 34
    index.append(AbortedTxn(4, 40, 45, 45))  # appends continue from the cut
    assert [t.producer_id for t in index.all_aborted_txns()] == [0, 1, 2, 4]
    index.truncate_to(0)
    assert index.all_aborted_txns() == [] and index.last_offset is None
    index.reset()
    assert index.collect_aborted_txns(0, 100).aborted_transactions == []


def test_reset_empties_the_file(index):
    _fill(index, FOUR)
    index.reset()
    assert index.all_aborted_txns() == [] and index.last_offset is None and index.file.stat().st_size == 0
    index.append(AbortedTxn(0, 0, 1, 2))  # any last offset again
    assert index.all_aborted_txns() == [AbortedTxn(0, 0, 1, 2)]


def test_rename_keeps_appending_to_the_renamed_file(index, tmp_path):
    index.append(AbortedTxn(0, 0, 10, 2))
    renamed = tmp_path / "00000000000000000000.txnindex.deleted"
    index.rename_to(renamed)
    index.append(AbortedTxn(1, 5, 15, 16))
    assert [t.first_offset for t in index.collect_aborted_txns(0, 100).aborted_transactions] == [0, 5]
    assert renamed.stat().st_size == 68 and index.file == renamed


def test_rename_of_a_never_written_index_only_changes_the_name(index, tmp_path):
    target = tmp_path / "00000000000000000000.txnindex.swap"
    index.rename_to(target)
    assert index.file == target and not target.exists()


def test_update_parent_dir(index, tmp_path):
    parent = tmp_path / "parent"
    parent.mkdir()
    index.update_parent_dir(parent)
    assert index.file == parent / "00000000000000000000.txnindex"


def test_delete_if_exists(index):
    assert not index.delete_if_exists()
    index.append(AbortedTxn(0, 0, 1, 2))
    assert index.delete_if_exists() and not index.file.exists()


def test_a_closed_index_reads_nothing_until_the_next_append_reopens_it(index):
    _fill(index, FOUR[:2])
    index.close()
    assert index.all_aborted_txns() == []
    index.append(FOUR[2])
    assert index.all_aborted_txns() == FOUR[:3]


# -- corruption --------------------------------------------------------------------------------

def test_a_torn_tail_is_ignored_by_reads_reported_by_sanity_and_cut_by_the_next_append(path):
    whole = struct.pack(">hqqqq", 0, 1, 2, 5, 6)
    path.write_bytes(whole + whole[:20])
    index = TransactionIndex(0, path)
    assert path.stat().st_size == 54  # opening changes nothing
    assert index.all_aborted_txns() == [AbortedTxn(1, 2, 5, 6)] and index.last_offset == 5
    with pytest.raises(CorruptIndexError, match="torn entry"):
        index.sanity_check()
    index.append(AbortedTxn(9, 7, 8, 9))
    index.sanity_check()
    index.close()
    assert path.stat().st_size == 68
    assert TransactionIndex(0, path).all_aborted_txns() == [AbortedTxn(1, 2, 5, 6), AbortedTxn(9, 7, 8, 9)]


def test_a_file_shorter_than_one_entry_reads_as_empty(path):
    path.write_bytes(b"\x00" * 33)
    with TransactionIndex(0, path) as index:
        assert index.all_aborted_txns() == [] and index.last_offset is None
        with pytest.raises(CorruptIndexError, match="torn"):
            index.sanity_check()


def test_an_unknown_version_is_reported_as_corrupt(path):
    path.write_bytes(struct.pack(">hqqqq", 0, 1, 2, 5, 6) + struct.pack(">hqqqq", 1, 1, 6, 7, 8))
    with TransactionIndex(0, path) as index:
        with pytest.raises(CorruptIndexError, match="Unexpected aborted transaction version 1"):
            index.all_aborted_txns()
        with pytest.raises(CorruptIndexError, match="version"):
            index.sanity_check()


@settings(max_examples=60, deadline=None)
@given(st.binary(max_size=300))
def test_any_bytes_read_as_entries_or_raise_only_corrupt_index(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("txn") / "00000000000000000000.txnindex"
    path.write_bytes(data)
    with TransactionIndex(0, path) as index:
        try:
            assert len(index.all_aborted_txns()) == len(data) // 34
            index.collect_aborted_txns(0, 2**62)
            index.sanity_check()
        except CorruptIndexError:
            pass
    assert path.read_bytes() == data


def test_reads_cross_chunk_boundaries(index, monkeypatch):
    monkeypatch.setattr(txn_index_module, "READ_CHUNK_ENTRIES", 3)
    txns = [AbortedTxn(i, 10 * i, 10 * i + 5, 10 * i + 5) for i in range(10)]
    _fill(index, txns)
    assert index.all_aborted_txns() == txns
    index.truncate_to(75)
    assert index.all_aborted_txns() == txns[:7]


# -- properties ------------------------------------------------------------------------------

@st.composite
def _aborted_txns(draw):
    txns, last = [], -1
    for _ in range(draw(st.integers(0, 40))):
        first = draw(st.integers(max(0, last - 20), last + 30))
        last = max(last + 1, first) + draw(st.integers(0, 20))
        txns.append(AbortedTxn(draw(st.integers(0, 5)), first, last, last + draw(st.integers(-5, 10))))
    return txns


@settings(max_examples=100, deadline=None)
@given(_aborted_txns(), st.integers(0, 1500), st.integers(0, 60))
def test_collect_equals_brute_force(tmp_path_factory, txns, fetch_offset, length):
    with TransactionIndex(0, tmp_path_factory.mktemp("txn") / "00000000000000000000.txnindex") as index:
        _fill(index, txns)
        upper = fetch_offset + length
        expected, complete = [], False
        for txn in txns:
            if txn.last_offset >= fetch_offset and txn.first_offset < upper:
                expected.append(txn)
            if txn.last_stable_offset >= upper:
                complete = True
                break
        assert index.collect_aborted_txns(fetch_offset, upper) == (expected, complete)
        index.truncate_to(fetch_offset)
        assert index.all_aborted_txns() == [t for t in txns if t.last_offset < fetch_offset]
