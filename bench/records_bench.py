"""Record batch header path: parse + CRC check and in-place stamping, beside raw CRC32C.

Run:  .venv/bin/python bench/records_bench.py [--runs 7] [--buffer-mib 64] [--batch-kib 16]

The buffer holds back-to-back v2 batches of --batch-kib KiB made of 100-byte
records (uncompressed, as a broker sees most of its bytes: it never
decompresses on the read path). Scenarios, each timed over the whole buffer:

- raw crc32c:     one crc32c() call over the whole buffer: the most the CRC
                  library does on this machine (the limit).
- raw crc32c/batch: crc32c() over each batch's CRC range, in a Python loop
                  over precomputed positions: the limit for any per-batch loop.
- headers+crc (inline): the fused checks written inline in the bench, no API
                  at all: what pure Python can do per batch (the floor of the
                  two API rows below).
- headers+crc (views):  MemoryRecords.batches(), then for each RecordBatch
                  header() (all 13 fields) and is_valid(): the object API.
- headers+crc (fused):  MemoryRecords.validate_batches(): the same checks in
                  one loop yielding BatchHeader tuples, for the storage engine.
- stamp:          MemoryRecords.batches() + RecordBatch.stamp(base offset,
                  leader epoch, max timestamp, LOG_APPEND_TIME) with its one
                  CRC recompute per batch.
- file headers:   FileRecords.batches() over the same bytes in a (page-cached)
                  file, reading only each 61-byte header (one pread per batch).

Figures are medians of --runs runs; "ratio" is MB/s over raw crc32c's MB/s in
the same run (target for headers+crc: >= 0.50). Not a timed test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import crc32c

from franz.records import (
    FileRecords,
    MemoryRecords,
    MemoryRecordsBuilder,
    RecordBatch,
    TimestampType,
)
from franz.records.constants import (
    ATTRIBUTES_OFFSET,
    HEADER_STRUCT,
    LOG_OVERHEAD,
    RECORD_BATCH_OVERHEAD,
)

RECORD_VALUE_BYTES = 100


def make_batch(batch_bytes: int, base_offset: int) -> bytes:
    """One uncompressed batch of 100-byte records, as close to batch_bytes as fits."""
    builder = MemoryRecordsBuilder(base_offset=base_offset)
    value = os.urandom(RECORD_VALUE_BYTES)
    ts = 1_700_000_000_000
    while True:
        builder.append_with_offset(builder.next_sequential_offset(), ts, None, value)
        # each record adds ~RECORD_VALUE_BYTES + 7 bytes; stop before overflowing the target
        if builder.uncompressed_size_in_bytes + RECORD_VALUE_BYTES + 16 > batch_bytes:
            return builder.build_bytes()


def make_buffer(total_bytes: int, batch_bytes: int) -> tuple[bytearray, int]:
    template = make_batch(batch_bytes, 0)
    count = max(1, total_bytes // len(template))
    buf = bytearray(template * count)
    # distinct base offsets, as in a log (outside the CRC, so the template's CRC holds)
    records_per_batch = RecordBatch(template).record_count
    for i, batch in enumerate(MemoryRecords(buf).batches()):
        batch.set_base_offset(i * records_per_batch)
    return buf, count


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--buffer-mib", type=int, default=64)
    ap.add_argument("--batch-kib", type=int, default=16)
    args = ap.parse_args()

    buf, count = make_buffer(args.buffer_mib << 20, args.batch_kib << 10)
    total = len(buf)
    batch_size = total // count
    view = memoryview(buf)
    ranges = [(p + ATTRIBUTES_OFFSET, p + batch_size) for p in range(0, total, batch_size)]
    mr = MemoryRecords(buf)

    def raw_crc():
        crc32c.crc32c(view)

    def raw_crc_per_batch():
        f = crc32c.crc32c
        for a, b in ranges:
            f(view[a:b])

    unpack_header = HEADER_STRUCT.unpack_from

    def headers_crc_inline():
        pos = 0
        crc = crc32c.crc32c
        while pos < total:
            fields = unpack_header(buf, pos)
            size = fields[1] + LOG_OVERHEAD
            if size > total - pos or size < RECORD_BATCH_OVERHEAD or fields[3] != 2:
                raise AssertionError("bad batch")
            if crc(view[pos + ATTRIBUTES_OFFSET:pos + size]) != fields[4]:
                raise AssertionError("bad crc")
            pos += size

    def headers_crc_views():
        for batch in mr.batches():
            batch.header()
            if not batch.is_valid():
                raise AssertionError("bad crc")

    def headers_crc_fused():
        n = 0
        for _position, _header in mr.validate_batches():
            n += 1
        assert n == count

    stamp_ts = [1_800_000_000_000]

    def stamp():
        stamp_ts[0] += 1  # a new max timestamp each run, so every batch needs its CRC
        ts = stamp_ts[0]
        offset = 0
        for batch in mr.batches():
            batch.stamp(base_offset=offset, partition_leader_epoch=7, max_timestamp=ts,
                        timestamp_type=TimestampType.LOG_APPEND_TIME)
            offset += 1000

    with tempfile.TemporaryDirectory() as d:
        fr = FileRecords.open(os.path.join(d, "00000000000000000000.log"))
        fr.append(buf)
        fr.flush()

        def file_headers():
            n = 0
            for batch in fr.batches():
                batch.header()
                n += 1
            assert n == count

        scenarios = [
            ("raw crc32c", raw_crc),
            ("raw crc32c/batch", raw_crc_per_batch),
            ("headers+crc (inline)", headers_crc_inline),
            ("headers+crc (views)", headers_crc_views),
            ("headers+crc (fused)", headers_crc_fused),
            ("stamp (+1 crc)", stamp),
            ("file headers", file_headers),
        ]
        results: dict[str, list[float]] = {name: [] for name, _ in scenarios}
        for _ in range(args.runs):  # interleave runs so drift hits every scenario alike
            for name, fn in scenarios:
                results[name].append(timed(fn))
        fr.close()

    assert all(b.is_valid() for b in MemoryRecords(buf).batches())
    raw_mbs = total / statistics.median(results["raw crc32c"]) / 1e6
    print(f"buffer {total / 2**20:.1f} MiB = {count} batches of {batch_size} bytes "
          f"({RecordBatch(buf).record_count} records of {RECORD_VALUE_BYTES} B), "
          f"crc32c hardware_based={crc32c.hardware_based}, median of {args.runs} runs")
    print(f"{'scenario':<22}{'batches/s':>14}{'MB/s':>10}{'us/batch':>10}{'ratio':>8}")
    for name, _ in scenarios:
        t = statistics.median(results[name])
        mbs = total / t / 1e6
        print(f"{name:<22}{count / t:>14,.0f}{mbs:>10,.0f}{t / count * 1e6:>10.2f}{mbs / raw_mbs:>8.2f}")


if __name__ == "__main__":
    main()
