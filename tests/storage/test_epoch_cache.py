"""Behaviours of Kafka's LeaderEpochFileCacheTest, as franz's own tests, plus loading
garbage checkpoints and a model-based property over random operations."""

import bisect
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from franz.storage.checkpoint import (
    CheckpointError,
    EpochEntry,
    LeaderEpochCheckpointFile,
)
from franz.storage.epoch_cache import (
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    LeaderEpochFileCache,
)

UNDEFINED = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


@pytest.fixture
def checkpoint(tmp_path):
    return LeaderEpochCheckpointFile(tmp_path / "leader-epoch-checkpoint")


@pytest.fixture
def cache(checkpoint):
    return LeaderEpochFileCache("TestTopic-5", checkpoint)


def _assign_all(cache, *pairs):
    for epoch, offset in pairs:
        cache.assign(epoch, offset)


def _entries(*pairs):
    return [EpochEntry(*pair) for pair in pairs]


def test_previous_epoch(cache):
    assert cache.previous_epoch() is None
    cache.assign(2, 10)
    assert cache.previous_epoch() is None
    cache.assign(4, 15)
    assert cache.previous_epoch() == 2
    cache.assign(10, 20)
    assert cache.previous_epoch() == 4
    cache.truncate_from_end(18)
    assert cache.previous_epoch() == 2


def test_assign_if_newer_records_only_epochs_above_the_latest(cache):
    cache.assign_if_newer(-1, 0)  # a batch without an epoch
    assert cache.epoch_entries() == []
    cache.assign_if_newer(2, 10)
    cache.assign_if_newer(2, 12)  # the same epoch again
    cache.assign_if_newer(1, 15)  # older: assign() would truncate epoch 2 away
    cache.assign_if_newer(5, 20)
    assert cache.epoch_entries() == _entries((2, 10), (5, 20))


def test_add_epoch_and_start_offset(cache):
    cache.assign(2, 10)
    assert cache.latest_epoch() == 2 and cache.epoch_entries() == _entries((2, 10))
    assert cache.end_offset_for(2, 11) == (2, 11)  # the latest epoch ends at the log end offset


def test_the_latest_epoch_ends_at_the_log_end_offset(cache):
    _assign_all(cache, (2, 11), (2, 12))
    assert cache.end_offset_for(2, 14) == (2, 14)


def test_an_undefined_epoch_gets_an_undefined_answer(cache):
    assert cache.end_offset_for(UNDEFINED_EPOCH, 73) == UNDEFINED  # empty cache
    _assign_all(cache, (2, 11), (3, 12))
    assert cache.end_offset_for(UNDEFINED_EPOCH, 0) == UNDEFINED


def test_an_epochs_start_offset_is_never_moved_up_by_assign(cache):
    cache.assign(2, 9)
    cache.assign(2, 10)
    assert cache.epoch_entries() == _entries((2, 9))
    cache.assign(2, 6)  # down is a conflict: the entry is replaced
    assert cache.epoch_entries() == _entries((2, 6))


def test_a_new_epoch_at_the_same_offset_replaces_the_old_one(cache):
    cache.assign(2, 9)
    cache.assign(3, 9)
    assert cache.epoch_entries() == _entries((3, 9))


def test_end_offset_of_an_empty_cache_is_undefined(cache):
    assert cache.end_offset_for(0, 0) == UNDEFINED
    assert cache.end_offset_for(7, 0) == UNDEFINED
    assert cache.latest_epoch() is None and cache.earliest_entry() is None and not cache.non_empty()


def test_an_epoch_older_than_the_first_ends_where_the_first_starts(cache):
    _assign_all(cache, (5, 11), (6, 12), (7, 13))
    assert cache.end_offset_for(4, 0) == (4, 11)


def test_the_same_epoch_at_an_earlier_offset_truncates(cache):
    _assign_all(cache, (5, 11), (6, 12), (7, 13))
    cache.assign(7, 12)  # epoch 7 starts earlier: epoch 6 goes
    assert cache.end_offset_for(5, 0) == (5, 12)
    assert cache.end_offset_for(6, 0) == (5, 12)


def test_a_previous_epoch_ends_where_the_next_starts(cache):
    _assign_all(cache, (1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16))
    assert cache.end_offset_for(2, 17) == (2, 15)


def test_an_unknown_epoch_answers_with_the_floor_epoch_and_the_next_start(cache):
    _assign_all(cache, (0, 10), (2, 13), (4, 17))
    assert cache.end_offset_for(1, 0) == (0, 13)
    assert cache.end_offset_for(2, 0) == (2, 17)
    assert cache.end_offset_for(3, 0) == (2, 17)


def test_an_epoch_above_the_latest_is_undefined(cache):
    cache.assign(2, 100)
    assert cache.end_offset_for(3, 100) == UNDEFINED


def test_epochs_persist_between_instances(tmp_path, cache, checkpoint):
    cache.assign(2, 6)
    cache.assign(3, 10)
    assert checkpoint.path.read_text() == "0\n2\n2 6\n3 10\n"
    reloaded = LeaderEpochFileCache("TestTopic-5", LeaderEpochCheckpointFile(checkpoint.path))
    assert reloaded.epoch_entries() == _entries((2, 6), (3, 10))


def test_an_older_epoch_at_a_later_offset_truncates_the_later_epochs(cache):
    _assign_all(cache, (1, 5), (2, 6))
    cache.assign(1, 7)  # the log is already inconsistent; the cache stays monotonic
    assert cache.latest_epoch() == 1 and cache.epoch_entries() == _entries((1, 7))
    assert cache.end_offset_for(1, 8) == (1, 8)
    assert cache.end_offset_for(2, 8) == UNDEFINED


def test_a_later_epoch_at_an_earlier_offset_wins(cache):
    _assign_all(cache, (2, 6), (3, 5))
    assert cache.epoch_entries() == _entries((3, 5))


def test_a_new_epoch_at_a_lower_offset_removes_entries_at_or_above_it(cache):
    _assign_all(cache, (2, 6), (3, 8), (4, 7))
    assert cache.epoch_entries() == _entries((2, 6), (4, 7))


def test_epochs_tracked_as_leaders_change(cache):
    _assign_all(cache, (0, 0), (1, 0))
    assert cache.latest_epoch() == 1
    assert cache.end_offset_for(1, 0) == (1, 0)
    assert cache.epoch_entries() == _entries((1, 0))  # nothing was written in epoch 0
    assert cache.end_offset_for(0, 0) == (0, 0)  # older than every known epoch: ends where the first starts
    assert cache.end_offset_for(1, 5) == (1, 5)
    cache.assign(2, 5)
    assert cache.end_offset_for(2, 10) == (2, 10)
    assert cache.end_offset_for(1, 10) == (1, 5)
    assert cache.end_offset_for(0, 10) == (0, 0)


def test_epochs_tracked_as_a_follower_receives_batches(cache):
    for epoch in range(3):
        for offset in range(3 * epoch, 3 * epoch + 3):
            cache.assign(epoch, offset)
            assert cache.end_offset_for(epoch, offset + 1) == (epoch, offset + 1)
    assert cache.epoch_entries() == _entries((0, 0), (1, 3), (2, 6))
    assert cache.end_offset_for(0, 9) == (0, 3)
    assert cache.end_offset_for(1, 9) == (1, 6)


@pytest.mark.parametrize("end, expected", [(8, [(2, 6)]), (9, [(2, 6), (3, 8)]), (11, [(2, 6), (3, 8)]),
                                           (12, [(2, 6), (3, 8), (4, 11)]), (6, []), (0, []),
                                           (UNDEFINED_EPOCH_OFFSET, [(2, 6), (3, 8), (4, 11)])])
def test_truncate_from_end(cache, end, expected):
    _assign_all(cache, (2, 6), (3, 8), (4, 11))
    cache.truncate_from_end_async_flush(end)
    assert cache.epoch_entries() == _entries(*expected)


@pytest.mark.parametrize("start, expected", [
    (8, [(3, 8), (4, 11)]),   # on an epoch boundary: that epoch stays as it is
    (9, [(3, 9), (4, 11)]),   # between boundaries: the epoch moves up
    (1, [(2, 6), (3, 8), (4, 11)]),
    (6, [(2, 6), (3, 8), (4, 11)]),
    (11, [(4, 11)]),
    (15, [(4, 15)]),
    (UNDEFINED_EPOCH_OFFSET, [(2, 6), (3, 8), (4, 11)]),
])
def test_truncate_from_start(cache, start, expected):
    _assign_all(cache, (2, 6), (3, 8), (4, 11))
    cache.truncate_from_start_async_flush(start)
    assert cache.epoch_entries() == _entries(*expected)


def test_truncate_from_start_keeps_the_first_epoch_moved_up(cache):
    _assign_all(cache, (0, 0), (1, 7), (2, 10))
    cache.truncate_from_start(5)
    assert cache.epoch_entries() == _entries((0, 5), (1, 7), (2, 10))


def test_truncations_of_an_empty_cache_do_nothing(cache, checkpoint):
    cache.truncate_from_start(7)
    cache.truncate_from_end(7)
    assert cache.epoch_entries() == [] and checkpoint.path.read_text() == ""


def test_clear_and_flush(cache, checkpoint):
    _assign_all(cache, (2, 6), (3, 8), (4, 11))
    cache.clear_and_flush()
    assert cache.epoch_entries() == [] and checkpoint.read() == []


def test_clear_leaves_the_file(cache, checkpoint):
    cache.assign(2, 6)
    cache.clear()
    assert cache.epoch_entries() == [] and checkpoint.read() == _entries((2, 6))


def test_find_previous_epoch_and_entry(cache):
    assert cache.previous_epoch(2) is None and cache.previous_entry(2) is None
    cache.assign(2, 10)
    assert cache.previous_epoch(2) is None and cache.previous_entry(2) is None
    cache.assign(4, 15)
    assert cache.previous_epoch(4) == 2 and cache.previous_entry(4) == EpochEntry(2, 10)
    cache.assign(10, 20)
    assert cache.previous_epoch(10) == 4 and cache.previous_entry(10) == EpochEntry(4, 15)
    cache.truncate_from_end(18)
    assert cache.previous_epoch(cache.latest_epoch()) == 2
    assert cache.previous_entry(cache.latest_epoch()) == EpochEntry(2, 10)


def test_find_next_epoch(cache):
    _assign_all(cache, (0, 0), (1, 100), (2, 200))
    assert [cache.next_epoch(e) for e in (-1, 0, 1, 2, 100)] == [0, 1, 2, None, None]


def test_get_epoch_entry(cache):
    _assign_all(cache, (2, 100), (3, 500), (5, 1000))
    assert cache.epoch_entry(2) == EpochEntry(2, 100)
    assert cache.epoch_entry(3) == EpochEntry(3, 500)
    assert cache.epoch_entry(5) == EpochEntry(5, 1000)
    assert cache.epoch_entry(4) is None and cache.epoch_entry(6) is None
    assert cache.epoch_with_offsets() == {2: 100, 3: 500, 5: 1000}
    assert cache.earliest_entry() == EpochEntry(2, 100) and cache.latest_entry() == EpochEntry(5, 1000)


def test_epoch_for_offset(cache):
    _assign_all(cache, (0, 10), (1, 20), (5, 30))
    assert [cache.epoch_for_offset(o) for o in (25, 20, 30, 50, 5)] == [1, 1, 5, 5, None]


def test_truncations_write_the_checkpoint(cache, checkpoint):
    _assign_all(cache, (2, 6), (3, 8), (4, 11))
    cache.truncate_from_end(11)
    cache.truncate_from_start(8)
    assert checkpoint.read() == _entries((3, 8))


def test_epoch_entries_in_range(cache):
    _assign_all(cache, (2, 6), (3, 8), (4, 11))
    assert cache.epoch_entries_in_range(7, 11) == _entries((2, 7), (3, 8))
    assert cache.epoch_entries_in_range(-1, 100) == _entries((2, 6), (3, 8), (4, 11))
    assert cache.epoch_entries_in_range(12, 100) == _entries((4, 12))
    assert cache.epoch_entries() == _entries((2, 6), (3, 8), (4, 11))  # the cache is unchanged


def test_with_checkpoint_moves_the_entries_to_another_file(tmp_path, cache):
    _assign_all(cache, (2, 6), (3, 8))
    (tmp_path / "t-0.x-delete").mkdir()
    moved = cache.with_checkpoint(LeaderEpochCheckpointFile(tmp_path / "t-0.x-delete" / "leader-epoch-checkpoint"))
    assert moved.epoch_entries() == _entries((2, 6), (3, 8))
    moved.assign(4, 11)
    assert moved.checkpoint.read() == _entries((2, 6), (3, 8), (4, 11))
    assert cache.epoch_entries() == _entries((2, 6), (3, 8))


def test_truncations_tolerate_a_directory_deleted_meanwhile(tmp_path):
    directory = tmp_path / "t-0"
    directory.mkdir()
    cache = LeaderEpochFileCache("t-0", LeaderEpochCheckpointFile(directory / "leader-epoch-checkpoint"))
    _assign_all(cache, (2, 6), (3, 8))
    (directory / "leader-epoch-checkpoint").unlink()
    directory.rmdir()
    cache.truncate_from_end(7)
    cache.clear_and_flush()
    assert cache.epoch_entries() == []
    with pytest.raises(FileNotFoundError):
        cache.assign(5, 10)


def test_negative_values_are_refused(cache):
    with pytest.raises(ValueError, match="invalid partition leader epoch entry"):
        cache.assign(-1, 5)
    with pytest.raises(ValueError):
        cache.assign(1, -5)


def test_a_cache_without_a_checkpoint_works_in_memory():
    cache = LeaderEpochFileCache("t-0", None)
    cache.assign(1, 0)
    cache.truncate_from_start(0)
    assert cache.epoch_entries() == _entries((1, 0))


# -- loading --------------------------------------------------------------------------------

def test_a_checkpoint_with_conflicting_entries_loads_as_the_assignments_would_leave_it(checkpoint):
    checkpoint.path.write_text("0\n3\n5 10\n3 20\n4 30\n")
    assert LeaderEpochFileCache("t-0", checkpoint).epoch_entries() == _entries((3, 20), (4, 30))


@pytest.mark.parametrize("content", ["0\n1\nnot numbers\n", "7\n0\n", "0\n2\n1 5\n", "garbage",
                                     "0\n1\n-1 5\n", "0\n1\n1 -5\n", "0\n1\n1 5 7\n", "\x00\x01"])
def test_a_garbage_checkpoint_raises_a_checkpoint_error_naming_it(checkpoint, content):
    checkpoint.path.write_text(content)
    with pytest.raises(CheckpointError, match="leader-epoch-checkpoint"):
        LeaderEpochFileCache("t-0", checkpoint)


# -- property -------------------------------------------------------------------------------

class _Model:
    """A plain restatement of Kafka's rules over a sorted list."""

    def __init__(self):
        self.entries = []

    def assign(self, epoch, offset):
        if self.entries and self.entries[-1][0] == epoch and offset >= self.entries[-1][1]:
            return
        self.entries = [(e, o) for e, o in self.entries if e < epoch and o < offset] + [(epoch, offset)]

    def truncate_from_end(self, end):
        if end >= 0:
            self.entries = [(e, o) for e, o in self.entries if o < end]

    def truncate_from_start(self, start):
        below = [(e, o) for e, o in self.entries if o <= start]
        if below:
            self.entries = [(below[-1][0], start)] + [(e, o) for e, o in self.entries if o > start]


_operations = st.lists(st.tuples(st.sampled_from(["assign", "end", "start"]), st.integers(0, 12),
                                 st.integers(-1, 60)), max_size=40)


@settings(max_examples=150, deadline=None)
@given(_operations, st.integers(-1, 14), st.integers(0, 70))
def test_random_operations_match_the_model_and_survive_a_reload(tmp_path_factory, operations, epoch, offset):
    path = tmp_path_factory.mktemp("epochs") / "leader-epoch-checkpoint"
    cache, model = LeaderEpochFileCache("t-0", LeaderEpochCheckpointFile(path)), _Model()
    for name, op_epoch, op_offset in operations:
        if name == "assign" and op_offset >= 0:
            cache.assign(op_epoch, op_offset)
            model.assign(op_epoch, op_offset)
        elif name == "end":
            cache.truncate_from_end(op_offset)
            model.truncate_from_end(op_offset)
        elif name == "start":
            cache.truncate_from_start(op_offset)
            model.truncate_from_start(op_offset)
        assert cache.epoch_entries() == _entries(*model.entries)
    entries = model.entries
    epochs = [e for e, _ in entries]
    starts = [o for _, o in entries]
    assert all(a < b for a, b in itertools.pairwise(epochs)) and all(a < b for a, b in itertools.pairwise(starts))
    slot = bisect.bisect_right(starts, offset) - 1
    assert cache.epoch_for_offset(offset) == (entries[slot][0] if slot >= 0 else None)
    floor = bisect.bisect_right(epochs, epoch) - 1
    if epoch == UNDEFINED_EPOCH or floor == len(entries) - 1 and (not entries or epochs[-1] != epoch):
        expected = UNDEFINED
    elif entries and epochs[-1] == epoch:
        expected = (epoch, 1000)
    else:
        expected = (epochs[floor] if floor >= 0 else epoch, starts[floor + 1])
    assert cache.end_offset_for(epoch, 1000) == expected
    assert LeaderEpochFileCache("t-0", LeaderEpochCheckpointFile(path)).epoch_entries() == cache.epoch_entries()


def test_truncate_from_start_that_changes_nothing_does_not_rewrite_the_checkpoint(cache, checkpoint):
    cache.assign(0, 0)
    before = checkpoint.path.stat()
    cache.truncate_from_start(0)  # what every log load does at log start 0
    after = checkpoint.path.stat()
    assert (before.st_ino, before.st_mtime_ns) == (after.st_ino, after.st_mtime_ns)
