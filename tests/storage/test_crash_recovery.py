"""SIGKILL a real writer process at random moments; every flushed record must survive.

Each round starts tests/storage/crash_writer.py on the same log dir, lets it
append (flush.messages=1, so an acknowledged value is on disk), kills it with
SIGKILL at a random moment, then reopens the log dir as an unclean restart and
checks: every acknowledged value is there, offsets are contiguous from 0,
values are in order with no gap, and every index passes its sanity check and
points at batch starts.
"""

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from franz.storage.log_config import LogConfig
from franz.storage.log_manager import LogManager
from franz.storage.unified_log import FetchIsolation

WRITER = Path(__file__).with_name("crash_writer.py")
ROUNDS = 8


def read_all(partition_log):
    values, offsets, offset = [], [], partition_log.log_start_offset
    while offset < partition_log.log_end_offset:
        fetch = partition_log.read(offset, 1 << 20, FetchIsolation.LOG_END, True)
        records = [r for b in fetch.records.batches() for r in b.records()]
        assert records, f"no records at offset {offset}"
        offsets += [r.offset for r in records]
        values += [int(r.value) for r in records]
        offset = records[-1].offset + 1
    return offsets, values


def check_indexes(partition_log):
    for segment in partition_log.segments.values():
        segment.offset_index.sanity_check()
        segment.time_index.sanity_check()
        starts = {batch.position for batch in segment.log.batches()}
        for entry in segment.offset_index.entries_list():
            assert entry.position in starts, f"index entry {entry} is not a batch start in {segment}"


def test_sigkill_at_random_moments_loses_nothing_acknowledged(tmp_path):
    rng = random.Random(20261122)
    data_dir = tmp_path / "data"
    acknowledged = -1
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    for _ in range(ROUNDS):
        writer = subprocess.Popen([sys.executable, str(WRITER), str(data_dir), str(acknowledged + 1)],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
        try:
            deadline = time.monotonic() + 30
            first = writer.stdout.readline()  # wait until it is writing
            assert first, "the writer died before writing"
            acknowledged = max(acknowledged, int(first))
            time.sleep(rng.uniform(0.05, 0.6))
            assert time.monotonic() < deadline
        finally:
            writer.send_signal(signal.SIGKILL)
            out, _ = writer.communicate(timeout=30)
        # Only whole lines count: a kill can cut the last one short.
        for line in out.split("\n")[:-1]:
            if line.strip().isdigit():
                acknowledged = max(acknowledged, int(line))

        manager = LogManager([data_dir], LogConfig.from_props({"segment.bytes": 4096}),
                             initial_task_delay_ms=10**9)
        manager.startup(start_background_tasks=False)
        try:
            partition_log = manager.get_log("crash", 0)
            assert not manager.had_clean_shutdown[data_dir.resolve()]
            offsets, values = read_all(partition_log)
            assert offsets == list(range(len(offsets))), "offsets must be contiguous from 0"
            assert values == list(range(len(values))), "values must be in order with no gap"
            assert len(values) - 1 >= acknowledged, f"acknowledged {acknowledged} but only {len(values)} survived"
            check_indexes(partition_log)
            partition_log.flush(partition_log.log_end_offset)
            for segment in partition_log.segments.values():
                segment.offset_index.flush()
            indexes = sorted(str(p) for p in partition_log.dir.glob("*.index"))
            tool = subprocess.run([sys.executable, "-m", "franz", "dump-log", "--index-sanity-check", *indexes],
                                  capture_output=True, text=True, env=env, timeout=60)
            assert tool.returncode == 0, tool.stderr
            acknowledged = len(values) - 1  # the next writer continues after what survived
        finally:
            # Leave it as a crash would: no clean-shutdown marker for the next round.
            manager.scheduler.shutdown()
            for partition_log in manager.all_logs():
                partition_log.close()
    assert acknowledged > 0


def test_sigkill_while_the_cleaner_compacts_loses_no_latest_value_of_a_key(tmp_path):
    """The same with a compacted topic and the LogCleaner swapping segments meanwhile: after each
    restart, every record is still at its own offset, no `.cleaned`/`.swap` file is left, and
    each key's latest acknowledged record (or a later one of that key) is there."""
    from tests.storage.crash_writer import key_of  # noqa: PLC0415 - the writer's own key function

    rng = random.Random(20261126)
    data_dir = tmp_path / "data"
    next_value, acknowledged, cleaned_rounds = 0, -1, 0
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    for _ in range(ROUNDS):
        writer = subprocess.Popen([sys.executable, str(WRITER), str(data_dir), str(next_value), "compact"],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
        try:
            first = writer.stdout.readline()
            assert first, "the writer died before writing"
            time.sleep(rng.uniform(0.3, 1.2))
        finally:
            writer.send_signal(signal.SIGKILL)
            out, _ = writer.communicate(timeout=30)
        for line in [first] + out.split("\n")[:-1]:
            if line.strip().isdigit():
                acknowledged = max(acknowledged, int(line))

        config = LogConfig.from_props({"segment.bytes": 1024, "cleanup.policy": "compact"})
        manager = LogManager([data_dir], config, initial_task_delay_ms=10**9)
        manager.startup(start_background_tasks=False)
        try:
            partition_log = manager.get_log("crash", 0)
            assert not list(partition_log.dir.glob("*.cleaned")) and not list(partition_log.dir.glob("*.swap"))
            records = [r for s in partition_log.segments.values() for b in s.log.batches() for r in b.records()]
            assert all(int(r.value) == r.offset and r.key == key_of(r.offset) for r in records)
            offsets = [r.offset for r in records]
            assert offsets == sorted(set(offsets))
            if len(offsets) < partition_log.log_end_offset:
                cleaned_rounds += 1
            latest_on_disk = {}
            for r in records:
                latest_on_disk[r.key] = r.offset
            for value in range(max(0, acknowledged - 300), acknowledged + 1):
                assert latest_on_disk.get(key_of(value), -1) >= value, f"lost the latest record of {key_of(value)}"
            check_indexes(partition_log)
            next_value = partition_log.log_end_offset  # record n at offset n, in the next round too
            assert next_value > acknowledged
        finally:
            manager.scheduler.shutdown()
            for partition_log in manager.all_logs():
                partition_log.close()
    assert cleaned_rounds > 0, "the cleaner never removed anything: the test proved nothing"
