"""The log engine beside the raw disk, in one run.

Run:  .venv/bin/python bench/storage_bench.py [--append-mib 512] [--recovery-mib 1024] [--partitions 1000]
          [--clean-mib 128] [--runs 3]

Rows (medians of --runs; ratios against the limit measured in the same run):
- raw write:     os.write of the append row's 16 KiB batches, each in its own
                 buffer as requests arrive, to a fresh file (page cache, no fsync),
                 the limit for appends. Raw and append slices alternate (8 per run),
                 each row going first in half of the pairs, and the append ratio is
                 the median of the runs' own ratios.
- append:        UnifiedLog.append_as_leader of 16 KiB batches of 100-byte
                 records (CRC + every record walked, as Kafka's LogValidator walks
                 them + stamp offsets/epoch + index + write),
                 one partition, default flush policy (no fsync per append, as Kafka).
                 Target: >= 60% of raw write.
- raw read:      os.pread of 1 MiB chunks of the same log files (page cache).
- read:          UnifiedLog.read by offset, 1 MiB per fetch, then pread of the
                 returned slice (what sendfile would send), from offset 0 to the end;
                 each next offset comes from the bytes read, as a client finds it.
- recovery:      reopening an unclean log of --recovery-mib (no clean-shutdown
                 marker, recovery point 0): every batch CRC-checked, indexes and
                 producer state rebuilt. Reported as s/GiB; Kafka operators quote
                 5-15 s/GB. Target: <= 1 s/GiB.
- clean start:   LogManager.startup over --partitions cleanly shut partitions.
                 Target: < 2 s for 1,000.
- compaction:    one LogCleaner pass (offset map, then copy) over a compacted log of
                 --clean-mib of 16 KiB batches of keyed 100-byte records, each key
                 about ten times, so a tenth survives: MB of log processed per second,
                 beside raw read (the cleaner reads the log twice and writes what
                 survives). No target in the issue; Kafka's cleaner is I/O-bound.
Not a timed test: it prints figures, it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from franz.records import MemoryRecords, SimpleRecord, build_batch  # noqa: E402
from franz.storage.cleaner import Cleaner  # noqa: E402
from franz.storage.cleaner_manager import LogToClean  # noqa: E402
from franz.storage.log_config import LogConfig  # noqa: E402
from franz.storage.log_manager import LogManager  # noqa: E402
from franz.storage.offset_map import SkimpyOffsetMap  # noqa: E402
from franz.storage.throttler import Throttler  # noqa: E402
from franz.storage.unified_log import FetchIsolation, UnifiedLog  # noqa: E402

MIB = 1024 * 1024
BATCH_BYTES = 16 * 1024
RECORD_BYTES = 100


def template_batch() -> bytes:
    now = int(time.time() * 1000)
    records = []
    while True:
        records.append(SimpleRecord(b"v" * RECORD_BYTES, timestamp=now))
        batch = build_batch(records)
        if len(batch) > BATCH_BYTES - 120:
            return batch


def bench_write_and_append(directory: Path, total_bytes: int, config: LogConfig,
                           slices: int = 8) -> tuple[float, float, float, UnifiedLog]:
    """(raw write MB/s, append MB/s, append batches/s, the log) of one run.

    The raw row and the append row take turns, a slice of total_bytes / slices at a
    time, so that both see the same machine: on a shared VM the disk and CPU drift by
    +-30% over seconds, and rows measured one after the other would carry that drift
    into their ratio. Within a pair the order alternates: here the second writer of a
    pair is the slower one (the page cache's dirty data from the first), by up to 30%
    in a /tmp probe that rotated the order (docs/TEAM_NOTES.md), so a fixed order would
    favour one row. Both write the same fresh 16 KiB request buffers (built untimed,
    cold in the CPU caches as a broker receives them) into one growing file each."""
    template = template_batch()
    per_slice = total_bytes // len(template) // slices
    raw_path = directory / "raw.bin"
    raw_fd = os.open(raw_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    partition_log = UnifiedLog.create(directory / "bench-0", config)
    raw_bytes = raw_time = append_time = 0.0
    appended = 0
    try:
        for index in range(slices):
            for row in ("raw", "append") if index % 2 == 0 else ("append", "raw"):
                if row == "raw":
                    buffers = [bytearray(template) for _ in range(per_slice)]
                    start = time.perf_counter()
                    for buffer in buffers:
                        raw_bytes += os.write(raw_fd, buffer)
                    raw_time += time.perf_counter() - start
                else:
                    requests = [MemoryRecords(bytearray(template)) for _ in range(per_slice)]
                    start = time.perf_counter()
                    for records in requests:
                        partition_log.append_as_leader(records, 0)
                    append_time += time.perf_counter() - start
                    appended += per_slice
    finally:
        os.close(raw_fd)
        raw_path.unlink()
    partition_log.maybe_increment_high_watermark(partition_log.log_end_offset)
    return (raw_bytes / raw_time / MIB, appended * len(template) / append_time / MIB, appended / append_time,
            partition_log)


def bench_append(directory: Path, total_bytes: int, config: LogConfig) -> UnifiedLog:
    """An unflushed log of total_bytes of 16 KiB batches (the recovery row's input)."""
    template = template_batch()
    partition_log = UnifiedLog.create(directory / "bench-0", config)
    for _ in range(total_bytes // len(template)):
        partition_log.append_as_leader(MemoryRecords(bytearray(template)), 0)
    return partition_log


def bench_raw_read(partition_log: UnifiedLog) -> float:
    total = 0
    start = time.perf_counter()
    for segment in partition_log.segments.values():
        fd = os.open(segment.log_file, os.O_RDONLY)
        position = 0
        while True:
            data = os.pread(fd, MIB, position)
            if not data:
                break
            position += len(data)
        total += position
        os.close(fd)
    return total / (time.perf_counter() - start) / MIB


def bench_read(partition_log: UnifiedLog) -> float:
    offset, total = 0, 0
    start = time.perf_counter()
    while offset < partition_log.log_end_offset:
        fetch = partition_log.read(offset, MIB, FetchIsolation.HIGH_WATERMARK, True)
        records = fetch.records
        data = os.pread(records.fd, records.size_in_bytes, records.start)
        total += len(data)
        offset = next_offset_after(data)
    return total / (time.perf_counter() - start) / MIB


def next_offset_after(data: bytes) -> int:
    """The offset after the last whole batch in a fetch's bytes, found as a client finds it:
    from the batch lengths in what it received (~26 us per MiB of 16 KiB batches). Iterating
    the FileRecords slice instead would pread each batch header again, ~190 us per MiB here:
    more than the read itself."""
    last = None
    for last in MemoryRecords(data).batches(stop_at_partial_batch=True):
        pass
    return last.next_offset


def bench_recovery(directory: Path, total_bytes: int) -> float:
    config = LogConfig.from_props({"segment.bytes": 128 * MIB, "message.timestamp.after.max.ms": 2**62})
    partition_log = bench_append(directory, total_bytes, config)
    size = partition_log.size()
    partition_log.close()
    os.sync()
    start = time.perf_counter()
    reopened = UnifiedLog.create(directory / "bench-0", config, recovery_point=0, had_clean_shutdown=False)
    elapsed = time.perf_counter() - start
    assert reopened.log_end_offset == partition_log.log_end_offset
    reopened.close()
    return elapsed / (size / (1024 * MIB))


def bench_clean_start(directory: Path, partitions: int) -> float:
    config = LogConfig.from_props({"message.timestamp.after.max.ms": 2**62})
    manager = LogManager([directory / "data"], config, initial_task_delay_ms=10**9)
    manager.startup(start_background_tasks=False)
    payload = template_batch()
    for partition in range(partitions):
        manager.get_or_create_log("start", partition).append_as_leader(MemoryRecords(bytearray(payload)), 0)
    manager.shutdown()
    start = time.perf_counter()
    restarted = LogManager([directory / "data"], config, initial_task_delay_ms=10**9)
    restarted.startup(start_background_tasks=False)
    elapsed = time.perf_counter() - start
    assert len(restarted.logs) == partitions
    restarted.shutdown()
    return elapsed


def bench_compaction(directory: Path, total_bytes: int) -> float:
    config = LogConfig.from_props({"cleanup.policy": "compact", "message.timestamp.after.max.ms": 2**62,
                                   "file.delete.delay.ms": 0})
    partition_log = UnifiedLog.create(directory / "compact-0", config)
    now, sequence, size = int(time.time() * 1000), 0, 0
    keys = max(1, total_bytes // (RECORD_BYTES + 20) // 10)  # each key about ten times
    while size < total_bytes:
        records = [SimpleRecord(b"v" * RECORD_BYTES, key=b"key-%08d" % ((sequence + i) % keys), timestamp=now)
                   for i in range(BATCH_BYTES // (RECORD_BYTES + 20))]
        sequence += len(records)
        batch = build_batch(records)
        size += len(batch)
        partition_log.append_as_leader(MemoryRecords(bytearray(batch)), 0)
    partition_log.roll()
    partition_log.update_high_watermark(partition_log.log_end_offset)
    size = partition_log.size()
    cleaner = Cleaner(0, SkimpyOffsetMap(128 * MIB), 256 * 1024, MIB, 0.9, Throttler(float("inf")),
                      lambda: now, lambda tp: None)
    start = time.perf_counter()
    end, _ = cleaner.clean(LogToClean(("compact", 0), partition_log, 0, partition_log.log_end_offset))
    elapsed = time.perf_counter() - start
    assert end == partition_log.log_end_offset and partition_log.size() < size / 5
    partition_log.close()
    return size / elapsed / MIB


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--append-mib", type=int, default=512)
    parser.add_argument("--recovery-mib", type=int, default=1024)
    parser.add_argument("--partitions", type=int, default=1000)
    parser.add_argument("--clean-mib", type=int, default=128)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", default=None, help="where to write (default: a temp dir)")
    args = parser.parse_args()
    config = LogConfig.from_props({"message.timestamp.after.max.ms": 2**62})
    rows: dict[str, list[float]] = {k: [] for k in
                                    ("raw write", "append", "append ratio", "append batches/s", "raw read", "read", "recovery",
                                     "clean start", "compaction")}
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
            tmp_path = Path(tmp)
            raw, rate, batches, partition_log = bench_write_and_append(tmp_path, args.append_mib * MIB, config)
            rows["raw write"].append(raw)
            rows["append"].append(rate)
            rows["append ratio"].append(rate / raw)
            rows["append batches/s"].append(batches)
            rows["raw read"].append(bench_raw_read(partition_log))
            rows["read"].append(bench_read(partition_log))
            partition_log.close()
            shutil.rmtree(tmp_path / "bench-0")
            rows["recovery"].append(bench_recovery(tmp_path, args.recovery_mib * MIB))
            shutil.rmtree(tmp_path / "bench-0")
            rows["clean start"].append(bench_clean_start(tmp_path, args.partitions))
            rows["compaction"].append(bench_compaction(tmp_path, args.clean_mib * MIB))
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"{'row':<22}{'median':>14}  limit / target")
    print(f"{'raw write MB/s':<22}{med['raw write']:>14.0f}  (limit)")
    print(f"{'append MB/s':<22}{med['append']:>14.0f}  ratio {med['append ratio']:.2f} of raw write "
          f"(median of the runs' ratios; target >= 0.60); {med['append batches/s']:.0f} batches/s of 16 KiB")
    print(f"{'':<22}{'':>14}  runs' ratios: {' '.join(f'{r:.2f}' for r in rows['append ratio'])}")
    print(f"{'raw read MB/s':<22}{med['raw read']:>14.0f}  (limit)")
    print(f"{'read MB/s':<22}{med['read']:>14.0f}  ratio {med['read'] / med['raw read']:.2f} of raw read")
    print(f"{'recovery s/GiB':<22}{med['recovery']:>14.2f}  target <= 1.0 (Kafka operators quote 5-15 s/GB)")
    print(f"{'clean start s':<22}{med['clean start']:>14.2f}  for {args.partitions} partitions (target < 2.0)")
    print(f"{'compaction MB/s':<22}{med['compaction']:>14.0f}  ratio {med['compaction'] / med['raw read']:.3f} of raw "
          "read (no target; one cleaner pass, a tenth of the records survive)")


if __name__ == "__main__":
    main()
