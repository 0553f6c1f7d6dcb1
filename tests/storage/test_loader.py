"""Behaviours of Kafka's LogLoaderTest, as franz's own tests.

Each test builds a real partition directory with UnifiedLog, damages it the way
a crash (or an operator) would, and loads it again through UnifiedLog.create,
which runs LogLoader. Every repair must leave a WARN (or worse) naming the file.
"""

import logging
import shutil
import time

import pytest

from franz.records import MemoryRecords, SimpleRecord, build_batch
from franz.storage import files
from franz.storage.checkpoint import LEADER_EPOCH_CHECKPOINT_FILE
from franz.storage.local_log import split_overflowed_segment
from franz.storage.log_config import LogConfig
from franz.storage.scheduler import KafkaScheduler
from franz.storage.segment import LogSegment
from franz.storage.unified_log import FetchIsolation, UnifiedLog

TOPIC_DIR = "topic-0"
CUT_POINTS_MAX = 512  # bounds the torn-tail loop; one batch here is ~80 bytes


def config_of(**props):
    return LogConfig.from_props({"file.delete.delay.ms": 0, "message.timestamp.after.max.ms": 2**62,
                                 "message.timestamp.before.max.ms": 2**62, **props})


def open_log(path, config, **kwargs):
    return UnifiedLog.create(path / TOPIC_DIR, config, **kwargs)


def produce(*values, timestamp=1000, producer_id=-1, epoch=-1, sequence=-1):
    return MemoryRecords(bytearray(build_batch(
        [SimpleRecord(v, timestamp=timestamp + i) for i, v in enumerate(values)], producer_id=producer_id,
        producer_epoch=epoch, base_sequence=sequence)))


def all_values(log):
    """Every record value in the log, reading segment after segment."""
    values = []
    offset = log.log_start_offset
    for _ in range(10_000):
        if offset >= log.log_end_offset:
            return values
        fetch = log.read(offset, 1 << 20, FetchIsolation.LOG_END, False)
        records = [r for b in fetch.records.batches() for r in b.records()]
        values += [r.value for r in records]
        offset = records[-1].offset + 1
    raise AssertionError("read loop did not finish")


def warnings_naming(caplog, name):
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and name in r.getMessage()]


def write_values(log, count, prefix=b"v", leader_epoch=0):
    for i in range(count):
        log.append_as_leader(produce(prefix + b"%03d" % i), leader_epoch)


# -- leftovers of a crash ------------------------------------------------------------------

def test_deleted_and_cleaned_files_are_removed_at_load(tmp_path):
    config = config_of()
    log = open_log(tmp_path, config)
    write_values(log, 3)
    log.close()
    directory = tmp_path / TOPIC_DIR
    strays = [directory / "00000000000000000007.log.deleted", directory / "00000000000000000007.index.deleted",
              directory / "00000000000000000000.log.cleaned", directory / "00000000000000000000.index.cleaned",
              directory / "00000000000000000002.snapshot.deleted"]
    for stray in strays:
        stray.write_bytes(b"junk")
    reopened = open_log(tmp_path, config)
    assert not [s for s in strays if s.exists()]
    assert all_values(reopened) == [b"v000", b"v001", b"v002"]
    reopened.close()


def test_orphan_index_files_without_a_log_are_deleted(tmp_path, caplog):
    config = config_of()
    log = open_log(tmp_path, config)
    write_values(log, 2)
    log.close()
    directory = tmp_path / TOPIC_DIR
    orphans = [files.offset_index_file(directory, 50), files.time_index_file(directory, 50),
               files.transaction_index_file(directory, 50)]
    for orphan in orphans:
        orphan.write_bytes(b"")
    reopened = open_log(tmp_path, config)
    assert not [o for o in orphans if o.exists()]
    for orphan in orphans:
        assert warnings_naming(caplog, orphan.name)
    assert reopened.segments.base_offsets() == [0]
    assert all_values(reopened) == [b"v000", b"v001"]
    reopened.close()


def three_segment_log(tmp_path, config):
    """Offsets 0-1 | 2-3 | 4 in three segments, closed cleanly."""
    log = open_log(tmp_path, config)
    for i in range(5):
        log.append_as_leader(produce(b"v%d" % i), 0)
        if i in (1, 3):
            log.roll()
    assert log.segments.base_offsets() == [0, 2, 4]
    log.close()
    return tmp_path / TOPIC_DIR


def cleaned_segment(directory, config, base_offset, offsets, suffix=files.CLEANED_FILE_SUFFIX):
    """A compaction output at base_offset keeping only `offsets`, as LogCleaner writes it."""
    segment = LogSegment.open(directory, base_offset, config, file_suffix=suffix)
    for offset in offsets:
        batch = build_batch([SimpleRecord(b"c%d" % offset, timestamp=1000)], base_offset=offset)
        segment.append(offset, 1000, offset, MemoryRecords(bytearray(batch)))
    segment.flush()
    return segment


def rename_segment_files(directory, base_offset, old_suffix, new_suffix):
    for make in (files.log_file, files.offset_index_file, files.time_index_file, files.transaction_index_file):
        path = make(directory, base_offset, old_suffix)
        if path.exists():
            path.rename(make(directory, base_offset, new_suffix))


def test_a_swap_left_before_the_old_segments_were_deleted_is_completed(tmp_path, caplog):
    config = config_of()
    directory = three_segment_log(tmp_path, config)
    # replace_segments' commit point: .cleaned renamed .swap; the crash comes before the old go.
    swap = cleaned_segment(directory, config, 0, [1, 3], suffix=files.SWAP_FILE_SUFFIX)
    swap.close()
    caplog.set_level(logging.INFO)
    reopened = open_log(tmp_path, config)
    assert reopened.segments.base_offsets() == [0, 4]
    assert all_values(reopened) == [b"c1", b"c3", b"v4"]
    names = sorted(p.name for p in directory.iterdir())
    assert not [n for n in names if n.endswith((".swap", ".cleaned", ".deleted"))]
    assert not files.log_file(directory, 2).exists()
    assert any("00000000000000000000.log.swap" in r.getMessage() for r in caplog.records)
    reopened.close()


def test_a_swap_left_after_the_old_segments_were_renamed_deleted_is_completed(tmp_path):
    config = config_of()
    directory = three_segment_log(tmp_path, config)
    swap = cleaned_segment(directory, config, 0, [0, 3], suffix=files.SWAP_FILE_SUFFIX)
    swap.close()
    for base_offset in (0, 2):
        rename_segment_files(directory, base_offset, "", files.DELETED_FILE_SUFFIX)
    reopened = open_log(tmp_path, config, had_clean_shutdown=False)
    assert reopened.segments.base_offsets() == [0, 4]
    assert all_values(reopened) == [b"c0", b"c3", b"v4"]
    assert not [p for p in directory.iterdir() if p.name.endswith((".swap", ".deleted"))]
    reopened.close()


def test_a_swap_at_or_above_a_cleaned_file_is_an_unfinished_split_and_is_discarded(tmp_path):
    config = config_of()
    directory = three_segment_log(tmp_path, config)
    # A split writes all its outputs as .cleaned before any becomes .swap: a .swap at or
    # above the lowest .cleaned one belongs to a split that never reached its commit point.
    cleaned_segment(directory, config, 2, [2]).close()
    cleaned_segment(directory, config, 3, [3], suffix=files.SWAP_FILE_SUFFIX).close()
    reopened = open_log(tmp_path, config)
    assert reopened.segments.base_offsets() == [0, 2, 4]
    assert all_values(reopened) == [b"v0", b"v1", b"v2", b"v3", b"v4"]
    assert not [p for p in directory.iterdir() if p.name.endswith((".swap", ".cleaned"))]
    reopened.close()


# -- indexes -------------------------------------------------------------------------------

def indexed_log(tmp_path, count=20):
    """One segment with an index entry per batch, closed cleanly."""
    config = config_of(**{"index.interval.bytes": 1})
    log = open_log(tmp_path, config)
    for i in range(count):
        log.append_as_leader(produce(b"v%03d" % i, timestamp=1000 + i), 0)
    segment = log.segments.active_segment
    offset_entries = [segment.offset_index.entry(i) for i in range(segment.offset_index.entries)]
    time_entries = [segment.time_index.entry(i) for i in range(segment.time_index.entries)]
    log.close()
    assert len(offset_entries) > count // 2
    return config, tmp_path / TOPIC_DIR, offset_entries, time_entries


def index_entries(log):
    segment = log.segments.active_segment
    return ([segment.offset_index.entry(i) for i in range(segment.offset_index.entries)],
            [segment.time_index.entry(i) for i in range(segment.time_index.entries)])


def assert_rebuilt(tmp_path, config, offset_entries, time_entries, count=20):
    reopened = open_log(tmp_path, config)
    assert reopened.log_end_offset == count
    rebuilt_offsets, rebuilt_times = index_entries(reopened)
    assert rebuilt_offsets == offset_entries
    assert rebuilt_times[-1] == time_entries[-1]
    assert all_values(reopened) == [b"v%03d" % i for i in range(count)]
    assert reopened.fetch_offset_by_timestamp(1000 + count - 3).offset == count - 3
    reopened.close()


def test_a_missing_offset_index_is_rebuilt_from_the_log(tmp_path, caplog):
    config, directory, offset_entries, time_entries = indexed_log(tmp_path)
    files.offset_index_file(directory, 0).unlink()
    assert_rebuilt(tmp_path, config, offset_entries, time_entries)
    assert warnings_naming(caplog, "00000000000000000000.log")


def test_a_missing_time_index_is_rebuilt_from_the_log(tmp_path, caplog):
    config, directory, offset_entries, time_entries = indexed_log(tmp_path)
    path = files.time_index_file(directory, 0)
    path.unlink()
    assert_rebuilt(tmp_path, config, offset_entries, time_entries)
    assert warnings_naming(caplog, path.name)


def test_a_truncated_offset_index_is_rebuilt_from_the_log(tmp_path, caplog):
    config, directory, offset_entries, time_entries = indexed_log(tmp_path)
    path = files.offset_index_file(directory, 0)
    path.write_bytes(path.read_bytes()[:-3])  # a torn last entry
    assert_rebuilt(tmp_path, config, offset_entries, time_entries)
    assert warnings_naming(caplog, path.name)


def test_a_truncated_time_index_is_rebuilt_from_the_log(tmp_path, caplog):
    config, directory, offset_entries, time_entries = indexed_log(tmp_path)
    path = files.time_index_file(directory, 0)
    path.write_bytes(path.read_bytes()[:-5])
    assert_rebuilt(tmp_path, config, offset_entries, time_entries)
    assert warnings_naming(caplog, path.name)


def test_an_offset_index_pointing_past_the_log_is_rebuilt(tmp_path, caplog):
    config, directory, offset_entries, _ = indexed_log(tmp_path)
    log_path = files.log_file(directory, 0)
    # Keep the first ten batches whole: the index still describes twenty.
    kept_offset, cut = offset_entries[10]
    log_path.write_bytes(log_path.read_bytes()[:cut])
    reopened = open_log(tmp_path, config)
    assert reopened.log_end_offset == kept_offset
    rebuilt_offsets, _ = index_entries(reopened)
    assert rebuilt_offsets == offset_entries[:len(rebuilt_offsets)]
    assert all(entry.position < cut for entry in rebuilt_offsets)
    assert all_values(reopened) == [b"v%03d" % i for i in range(kept_offset)]
    assert warnings_naming(caplog, "00000000000000000000.index")
    reopened.close()


def test_stray_producer_snapshots_are_removed_at_load_but_the_newest_beyond_every_segment(tmp_path):
    """LogLoader.load's removeStraySnapshots: a snapshot at an offset no segment starts at is
    left by a truncation or a crash; only the newest one, past the last segment's base, stays."""
    config = config_of()
    directory = three_segment_log(tmp_path, config)  # bases 0, 2, 4; the clean stop's snapshot at 5
    kept = {int(p.name.split(".")[0]) for p in directory.glob("*.snapshot")}
    assert 5 in kept
    for stray in (1, 3):
        shutil.copy(files.producer_snapshot_file(directory, 5), files.producer_snapshot_file(directory, stray))
    reopened = open_log(tmp_path, config)
    assert {int(p.name.split(".")[0]) for p in directory.glob("*.snapshot")} == kept
    assert all_values(reopened) == [b"v0", b"v1", b"v2", b"v3", b"v4"]
    reopened.close()


def test_a_crash_leaves_preallocated_indexes_that_recovery_rebuilds_without_calling_them_corrupt(tmp_path, caplog):
    """After a crash the active segment's indexes still have their preallocated size: Kafka's
    LogSegment.sanityCheck leaves them to the recovery of everything past the recovery point,
    which rebuilds them, and says nothing of corruption."""
    config = config_of(**{"index.interval.bytes": 1})
    crashed = open_log(tmp_path, config)
    write_values(crashed, 20)
    offset_entries, time_entries = index_entries(crashed)  # the log is never closed: a crash
    caplog.set_level(logging.INFO)
    reopened = open_log(tmp_path, config, recovery_point=0, had_clean_shutdown=False)
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING], caplog.text
    recovered = [r.getMessage() for r in caplog.records if "Recovering unflushed segment" in r.getMessage()]
    assert len(recovered) == 1, recovered  # once, not again for the indexes
    assert index_entries(reopened) == (offset_entries, time_entries)
    assert all_values(reopened) == [b"v%03d" % i for i in range(20)]
    reopened.close()
    crashed.close()


# -- unclean restart -----------------------------------------------------------------------

def test_unclean_restart_recovers_only_from_the_recovery_point(tmp_path, caplog):
    config = config_of()
    three_segment_log(tmp_path, config)
    caplog.set_level(logging.INFO)
    reopened = open_log(tmp_path, config, recovery_point=2, had_clean_shutdown=False)
    recovered = [r.getMessage() for r in caplog.records if "Recovering unflushed segment" in r.getMessage()]
    assert [m.split("Recovering unflushed segment ")[1].split(".")[0] for m in recovered] == ["2", "4"]
    # Recovered bytes are not flushed yet: the recovery point stays where the last flush left it.
    assert reopened.recovery_point == 2
    assert all_values(reopened) == [b"v0", b"v1", b"v2", b"v3", b"v4"]
    reopened.close()


def test_clean_restart_trusts_the_whole_log_and_moves_the_recovery_point_to_its_end(tmp_path):
    config = config_of()
    three_segment_log(tmp_path, config)
    reopened = open_log(tmp_path, config, recovery_point=0, had_clean_shutdown=True)
    assert reopened.recovery_point == reopened.log_end_offset == 5
    reopened.close()


def test_unclean_restart_cuts_a_torn_last_batch_at_every_cut_point(tmp_path, caplog):
    config = config_of()
    pristine = three_segment_log(tmp_path / "pristine", config)
    log_name = files.log_file(pristine, 4).name
    log_size = files.log_file(pristine, 4).stat().st_size
    log = open_log(tmp_path / "pristine", config)
    last_batch_start = log.segments.active_segment.translate_offset(4).position
    log.close()
    assert 0 < log_size - last_batch_start < CUT_POINTS_MAX
    for cut in range(last_batch_start, log_size):
        caplog.clear()
        root = tmp_path / f"cut{cut}"
        shutil.copytree(pristine, root / TOPIC_DIR)
        path = root / TOPIC_DIR / log_name
        path.write_bytes(path.read_bytes()[:cut])
        reopened = open_log(root, config, recovery_point=2, had_clean_shutdown=False)
        assert reopened.log_end_offset == 4, cut
        assert all_values(reopened) == [b"v0", b"v1", b"v2", b"v3"], cut
        assert files.log_file(root / TOPIC_DIR, 4).stat().st_size == last_batch_start
        if cut > last_batch_start:
            assert [m for m in warnings_naming(caplog, log_name) if f"Truncating {cut - last_batch_start} bytes" in m]
        assert reopened.append_as_leader(produce(b"after"), 0).first_offset == 4
        reopened.close()
        shutil.rmtree(root)


def flip_byte(path, position):
    data = bytearray(path.read_bytes())
    data[position] ^= 0xFF
    path.write_bytes(bytes(data))


def three_segment_log_and_position_of_offset_3(tmp_path, config):
    directory = three_segment_log(tmp_path, config)
    log = open_log(tmp_path, config)
    position = log.segments.get(2).translate_offset(3).position
    log.close()
    return directory, position


def test_a_corrupt_batch_cuts_its_segment_there_and_deletes_every_later_segment(tmp_path, caplog):
    config = config_of()
    directory, corrupt_at = three_segment_log_and_position_of_offset_3(tmp_path, config)
    segment_file = files.log_file(directory, 2)
    flip_byte(segment_file, segment_file.stat().st_size - 1)  # offset 3's value: its CRC no longer matches
    reopened = open_log(tmp_path, config, recovery_point=0, had_clean_shutdown=False)
    assert reopened.segments.base_offsets() == [0, 2]
    assert reopened.log_end_offset == 3
    assert all_values(reopened) == [b"v0", b"v1", b"v2"]
    assert not files.log_file(directory, 4).exists() and not files.offset_index_file(directory, 4).exists()
    assert [m for m in warnings_naming(caplog, "00000000000000000002.log") if f"byte offset {corrupt_at}" in m]
    assert [m for m in warnings_naming(caplog, "segment 2") if "deleting 1 later segment" in m
            and str(files.log_file(directory, 4)) in m]
    assert reopened.append_as_leader(produce(b"after"), 0).first_offset == 3
    reopened.close()


def test_a_log_start_offset_checkpoint_beyond_the_log_end_starts_the_log_there(tmp_path, caplog):
    config = config_of()
    directory = three_segment_log(tmp_path, config)
    reopened = open_log(tmp_path, config, log_start_offset=100, recovery_point=5, had_clean_shutdown=True)
    assert (reopened.log_start_offset, reopened.log_end_offset) == (100, 100)
    assert reopened.segments.base_offsets() == [100]
    assert sorted(p.name for p in directory.glob("*.log")) == ["00000000000000000100.log"]
    assert not list(directory.glob("*.snapshot"))
    assert reopened.leader_epoch_cache.epoch_entries() == []
    assert [m for m in warnings_naming(caplog, "100") if "log end offset 5" in m
            and str(files.log_file(directory, 4)) in m]
    assert reopened.append_as_leader(produce(b"after"), 0).first_offset == 100
    reopened.close()


# -- producer state and epochs ---------------------------------------------------------------

def test_corrupt_producer_snapshots_are_discarded_and_state_rebuilt_from_the_log(tmp_path, caplog):
    # Real timestamps: producers whose last write is older than producer.id.expiration.ms
    # are expired on load, as in Kafka.
    now = int(time.time() * 1000)
    config = config_of()
    log = open_log(tmp_path, config)
    for i in range(6):
        log.append_as_leader(produce(b"p%d" % i, producer_id=7, epoch=0, sequence=i, timestamp=now), 0)
        if i == 2:
            log.roll()
    log.close()
    snapshots = sorted((tmp_path / TOPIC_DIR).glob("*.snapshot"))
    assert [p.name for p in snapshots] == ["00000000000000000003.snapshot", "00000000000000000006.snapshot"]
    for snapshot in snapshots:
        flip_byte(snapshot, snapshot.stat().st_size // 2)
    reopened = open_log(tmp_path, config, recovery_point=6)
    for snapshot in snapshots:
        assert warnings_naming(caplog, snapshot.name)
    entry = reopened.producer_state_manager.last_entry(7)
    assert (entry.producer_epoch, entry.last_seq) == (0, 5)
    retry = reopened.append_as_leader(produce(b"p5", producer_id=7, epoch=0, sequence=5, timestamp=now), 0)
    assert retry.duplicate and retry.last_offset == 5
    assert reopened.append_as_leader(produce(b"p6", producer_id=7, epoch=0, sequence=6, timestamp=now),
                                     0).first_offset == 6
    reopened.close()


def test_a_garbage_leader_epoch_checkpoint_is_rebuilt_from_the_batches(tmp_path, caplog):
    config = config_of()
    log = open_log(tmp_path, config)
    for epoch, values in ((0, [b"a", b"b"]), (2, [b"c"]), (5, [b"d", b"e"])):
        for value in values:
            log.append_as_leader(produce(value), epoch)
    expected = log.leader_epoch_cache.epoch_entries()
    log.close()
    assert [(e.epoch, e.start_offset) for e in expected] == [(0, 0), (2, 2), (5, 3)]
    checkpoint = tmp_path / TOPIC_DIR / LEADER_EPOCH_CHECKPOINT_FILE
    checkpoint.write_bytes(b"0\n3\n0 0\nnot an epoch\n\xff\x00")
    reopened = open_log(tmp_path, config, recovery_point=5)
    assert reopened.leader_epoch_cache.epoch_entries() == expected
    assert warnings_naming(caplog, LEADER_EPOCH_CHECKPOINT_FILE)
    reopened.close()
    # The rebuilt cache was written back: a further load reads it as is.
    assert open_log(tmp_path, config, recovery_point=5).leader_epoch_cache.epoch_entries() == expected


# -- segments whose offsets overflow (KAFKA-6264) --------------------------------------------

INT32_MAX = 2**31 - 1


def sample_batches(base_offset):
    """Offsets base, base+1..base+2 and base+INT32_MAX-1: the last still fits a segment at base."""
    def batch(offsets):
        return build_batch([SimpleRecord(b"%d" % o, key=b"%d" % o, timestamp=1000) for o in offsets],
                           base_offset=offsets[0])
    return b"".join((batch([base_offset]), batch([base_offset + 1, base_offset + 2]),
                     batch([base_offset + INT32_MAX - 1]))), base_offset + INT32_MAX


def overflowed_log_dir(root):
    """Three segments as a pre-KAFKA-6264 broker could leave them; the second holds
    two rounds of sample batches, so its offsets overflow an int32 past its base."""
    directory = root / TOPIC_DIR
    directory.mkdir(parents=True)
    next_offset = 0
    for rounds in (1, 2, 1):
        base_offset = next_offset
        data = b""
        for _ in range(rounds):
            batches, next_offset = sample_batches(next_offset)
            data += batches
        files.log_file(directory, base_offset).write_bytes(data)
        # Empty indexes, so that a clean load trusts the segment as an old broker did.
        files.offset_index_file(directory, base_offset).write_bytes(b"")
        files.time_index_file(directory, base_offset).write_bytes(b"")
    return directory


def offsets_and_values(log):
    return [(r.offset, r.value) for segment in log.segments.values() for b in segment.log.batches()
            for r in b.records()]


def expected_records():
    offsets = []
    next_offset = 0
    for _ in range(4):
        offsets += [next_offset, next_offset + 1, next_offset + 2, next_offset + INT32_MAX - 1]
        next_offset += INT32_MAX
    return [(o, b"%d" % o) for o in offsets]


def test_a_segment_whose_offsets_overflow_is_split_on_recovery(tmp_path, caplog):
    config = config_of(**{"index.interval.bytes": 1})
    overflowed_log_dir(tmp_path)
    caplog.set_level(logging.INFO)
    log = open_log(tmp_path, config, had_clean_shutdown=False)
    # The second segment splits where its offsets stop fitting: after offset 2 * INT32_MAX.
    assert log.segments.base_offsets() == [0, INT32_MAX, 2 * INT32_MAX + 1, 3 * INT32_MAX]
    assert offsets_and_values(log) == expected_records()
    assert log.log_end_offset == 4 * INT32_MAX
    assert not [s for s in log.segments.values() if s.has_overflow()]
    for segment in log.segments.values():
        with pytest.raises(ValueError):
            split_overflowed_segment(segment, log.segments, log.dir, log.topic_partition, config)
    assert [r for r in caplog.records if "Splitting overflowed segment" in r.getMessage()]
    assert not [p for p in log.dir.iterdir() if p.name.endswith((".cleaned", ".swap", ".deleted"))]
    log.close()


def restore_deleted_files(directory):
    for path in directory.iterdir():
        if path.name.endswith(files.DELETED_FILE_SUFFIX):
            path.rename(files.strip_suffix(path, files.DELETED_FILE_SUFFIX))


def delete_deleted_files(directory):
    for path in directory.iterdir():
        if path.name.endswith(files.DELETED_FILE_SUFFIX):
            path.unlink()


@pytest.mark.parametrize("phase", [1, 2, 3, 4, 5])
def test_a_crash_at_any_phase_of_a_split_recovers_every_record(tmp_path, phase):
    """Kafka's testRecoveryAfterCrashDuringSplitPhase1-5: the split is completed or redone."""
    # A long delete delay keeps the old segment's .deleted files for the phases to rearrange;
    # the scheduler holding that delete is shut down before it runs.
    config = config_of(**{"index.interval.bytes": 1, "file.delete.delay.ms": 600_000})
    scheduler = KafkaScheduler()
    try:
        directory = overflowed_log_dir(tmp_path)
        log = open_log(tmp_path, config, recovery_point=4 * INT32_MAX)  # clean: nothing noticed yet
        overflowed = [s for s in log.segments.values() if s.has_overflow()]
        assert [s.base_offset for s in overflowed] == [INT32_MAX]
        new_segments = split_overflowed_segment(overflowed[0], log.segments, log.dir, log.topic_partition, config,
                                                scheduler).new_segments
        assert len(new_segments) == 2
        if phase in (1, 2):
            # 1: crash before any output became .swap; 2: after the last became .swap.
            for segment in reversed(new_segments):
                last = segment is new_segments[-1]
                suffix = files.SWAP_FILE_SUFFIX if phase == 2 and last else files.CLEANED_FILE_SUFFIX
                segment.change_file_suffixes("", suffix)
                segment.truncate_to(0)
            restore_deleted_files(directory)
        elif phase in (3, 4):
            # 3: every output is .swap and the old segment not yet deleted; 4: deleted too.
            for segment in reversed(new_segments):
                segment.change_file_suffixes("", files.SWAP_FILE_SUFFIX)
            overflowed[0].truncate_to(0)  # the old segment's data must not be what recovery relies on
            if phase == 3:
                restore_deleted_files(directory)
            else:
                delete_deleted_files(directory)
        else:
            # 5: the first output is in place, the last still .swap.
            new_segments[-1].change_file_suffixes("", files.SWAP_FILE_SUFFIX)
            overflowed[0].truncate_to(0)
        log.close_handlers()
        recovered = open_log(tmp_path, config, recovery_point=0, had_clean_shutdown=False)
        assert offsets_and_values(recovered) == expected_records()
        assert recovered.segments.base_offsets() == [0, INT32_MAX, 2 * INT32_MAX + 1, 3 * INT32_MAX]
        assert not [p for p in directory.iterdir() if p.name.endswith((".cleaned", ".swap"))]
        recovered.close()
    finally:
        scheduler.shutdown()


def test_a_base_offset_going_backwards_is_cut_as_corruption_not_split(tmp_path, caplog):
    config = config_of()
    directory, position = three_segment_log_and_position_of_offset_3(tmp_path, config)
    path = files.log_file(directory, 2)
    data = bytearray(path.read_bytes())
    data[position:position + 8] = (1).to_bytes(8, "big")  # outside the CRC: still a "valid" batch
    path.write_bytes(bytes(data))
    reopened = open_log(tmp_path, config, recovery_point=0, had_clean_shutdown=False)
    assert reopened.segments.base_offsets() == [0, 2]
    assert all_values(reopened) == [b"v0", b"v1", b"v2"]
    assert [m for m in warnings_naming(caplog, path.name) if f"byte offset {position}" in m]
    reopened.close()


def test_an_empty_directory_starts_at_the_log_start_offset_checkpoint(tmp_path):
    config = config_of()
    log = open_log(tmp_path, config, log_start_offset=42, recovery_point=42, had_clean_shutdown=False)
    assert (log.log_start_offset, log.log_end_offset, log.segments.base_offsets()) == (42, 42, [42])
    assert log.append_as_leader(produce(b"first"), 0).first_offset == 42
    log.close()
