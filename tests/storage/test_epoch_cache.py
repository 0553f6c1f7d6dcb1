"""Behaviours of Kafka's LeaderEpochFileCacheTest, as franz's own tests."""

import pytest

from franz.storage.checkpoint import CheckpointError, EpochEntry, LeaderEpochCheckpointFile
from franz.storage.epoch_cache import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, LeaderEpochFileCache


@pytest.fixture
def checkpoint(tmp_path):
    return LeaderEpochCheckpointFile(tmp_path / "leader-epoch-checkpoint")


@pytest.fixture
def cache(checkpoint):
    return LeaderEpochFileCache("t-0", checkpoint)


def test_assign_persists_and_reloads(cache, checkpoint):
    cache.assign(2, 6)
    cache.assign(3, 10)
    assert checkpoint.path.read_text() == "0\n2\n2 6\n3 10\n"
    assert LeaderEpochFileCache("t-0", checkpoint).epoch_entries() == [EpochEntry(2, 6), EpochEntry(3, 10)]


def test_the_same_epoch_at_a_later_offset_is_ignored(cache):
    cache.assign(2, 6)
    cache.assign(2, 10)
    assert cache.epoch_entries() == [EpochEntry(2, 6)]


def test_a_lower_epoch_truncates_the_conflicting_tail(cache):
    cache.assign(2, 6)
    cache.assign(3, 8)
    cache.assign(1, 7)
    assert cache.epoch_entries() == [EpochEntry(1, 7)]


def test_a_new_epoch_at_a_lower_offset_removes_entries_at_or_above_it(cache):
    cache.assign(2, 6)
    cache.assign(3, 8)
    cache.assign(4, 7)
    assert cache.epoch_entries() == [EpochEntry(2, 6), EpochEntry(4, 7)]


def test_negative_values_are_refused(cache):
    with pytest.raises(ValueError):
        cache.assign(-1, 5)


def test_end_offset_for(cache):
    cache.assign(2, 6)
    cache.assign(4, 11)
    cache.assign(6, 15)
    assert cache.end_offset_for(UNDEFINED_EPOCH, 20) == (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
    assert cache.end_offset_for(6, 20) == (6, 20)  # the latest epoch ends at the LEO
    assert cache.end_offset_for(4, 20) == (4, 15)
    assert cache.end_offset_for(5, 20) == (4, 15)  # an unknown epoch in between
    assert cache.end_offset_for(1, 20) == (1, 6)   # older than anything known
    assert cache.end_offset_for(7, 20) == (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


def test_truncate_from_end(cache):
    cache.assign(2, 6)
    cache.assign(3, 8)
    cache.assign(4, 11)
    cache.truncate_from_end(9)
    assert cache.epoch_entries() == [EpochEntry(2, 6), EpochEntry(3, 8)]
    cache.truncate_from_end(100)
    assert cache.latest_epoch() == 3


def test_truncate_from_start_moves_the_first_kept_epoch_up(cache):
    cache.assign(2, 6)
    cache.assign(3, 8)
    cache.assign(4, 11)
    cache.truncate_from_start(9)
    assert cache.epoch_entries() == [EpochEntry(3, 9), EpochEntry(4, 11)]
    cache.truncate_from_start(11)
    assert cache.epoch_entries() == [EpochEntry(4, 11)]


def test_epoch_for_offset_and_previous_epoch(cache):
    cache.assign(2, 6)
    cache.assign(4, 11)
    assert cache.epoch_for_offset(5) is None
    assert cache.epoch_for_offset(6) == 2
    assert cache.epoch_for_offset(10) == 2
    assert cache.epoch_for_offset(50) == 4
    assert cache.previous_epoch() == 2
    assert cache.previous_epoch(4) == 2


def test_clear_and_flush(cache, checkpoint):
    cache.assign(2, 6)
    cache.clear_and_flush()
    assert checkpoint.read() == []


@pytest.mark.parametrize("content", ["0\n1\nnot numbers\n", "7\n0\n", "0\n2\n1 5\n", "garbage"])
def test_a_garbage_checkpoint_raises_a_checkpoint_error(checkpoint, content):
    checkpoint.path.write_text(content)
    with pytest.raises(CheckpointError):
        LeaderEpochFileCache("t-0", checkpoint)
