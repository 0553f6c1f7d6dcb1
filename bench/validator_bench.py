"""Produce validation (LogValidator) per codec, beside what decompression alone costs.

Run:  .venv/bin/python bench/validator_bench.py [--runs 7] [--records 9000] [--record-bytes 100]
                                                [--topic-codec producer|uncompressed|gzip|snappy|lz4|zstd]

One produce's batch of --records records of --record-bytes (about 1 MiB before
compression, what librdkafka sends with batch.size=1 MiB), for each codec; the
values repeat one random value, as a producer's often repeat their shape. Rows:

- limit:    CRC32C of the batch plus decompressing its records (the codec library
            alone): validation must do both, so it cannot be faster. With --topic-codec
            naming a codec other than the batch's, compressing the records again with it
            (at the topic's level) too, as the broker must.
- franz:    validate_messages_and_assign_offsets as the broker runs it: the C module
            (franz/storage/_validator_fast.c) walks every record, as Kafka's
            LogValidator does, then the batch is stamped in place.
- python:   the same call with the C module switched off (what a source tree without
            `pip install` runs, and what franz ran for compressed batches before it).
- per record: only when the batch is recompressed: the franz row with the rebuild
            decoding and encoding record by record (what it did before canonical
            records went to the topic's codec as they are).

Figures are medians of --runs; records/s, and the ratio franz / limit. Not a timed test.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import crc32c  # noqa: E402

from franz.records import CompressionType, MemoryRecords, SimpleRecord, build_batch  # noqa: E402
from franz.records.compression import compress  # noqa: E402
from franz.storage import validator  # noqa: E402
from franz.storage.log_config import LogConfig  # noqa: E402

CRC_FROM = 21  # ATTRIBUTES_OFFSET: the CRC covers the batch from here


def median_seconds(action, runs: int, repeat: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(repeat):
            action()
        times.append((time.perf_counter() - start) / repeat)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--records", type=int, default=9000)
    parser.add_argument("--record-bytes", type=int, default=100)
    parser.add_argument("--topic-codec", default="producer",
                        choices=["producer", "uncompressed", "gzip", "snappy", "lz4", "zstd"],
                        help="the topic's compression.type (default: keep the producer's codec)")
    args = parser.parse_args()
    now = int(time.time() * 1000)
    config = LogConfig.from_props({"max.message.bytes": str(8 * 1024 * 1024), "compression.type": args.topic_codec})
    native = validator.assign_offsets_non_compressed, validator.walk_records
    canonical_records = validator.canonical_records
    if native[0] is None:
        print("franz.storage._validator_fast is not built (pip install -e .): the franz row is the python row")
    print(f"{'codec':8s} {'batch bytes':>11s} {'limit rec/s':>13s} {'franz rec/s':>13s} {'python rec/s':>13s}"
          f" {'franz/limit':>11s} {'per record rec/s':>16s}")
    for codec in CompressionType:
        value = random.Random(7).randbytes(args.record_bytes)
        records = [SimpleRecord(value, key=b"key-%d" % (i % 1000), timestamp=now) for i in range(args.records)]
        batch_bytes = build_batch(records, compression_type=codec)
        batch = next(MemoryRecords(batch_bytes).batches())

        target = validator.target_compression(config, codec)

        def limit():
            crc32c.crc32c(memoryview(batch_bytes)[CRC_FROM:])
            data, _ = batch.records_data()
            if target != codec:
                compress(target, data, validator.target_compression_level(config))

        def validate():
            validator.validate_messages_and_assign_offsets(MemoryRecords(bytearray(batch_bytes)), 0, now, config, 0)

        repeat = 20 if validator.walk_records is not None else 1
        limit_s = median_seconds(limit, args.runs, 20)
        franz_s = median_seconds(validate, args.runs, repeat)
        validator.assign_offsets_non_compressed = validator.walk_records = None
        try:
            python_s = median_seconds(validate, max(3, args.runs // 2), 1)
        finally:
            validator.assign_offsets_non_compressed, validator.walk_records = native
        per_record = "-"
        if target != codec:
            validator.canonical_records = None
            try:
                per_record = f"{args.records / median_seconds(validate, max(3, args.runs // 2), 1):,.0f}"
            finally:
                validator.canonical_records = canonical_records
        count = args.records
        print(f"{codec.name_lower:8s} {len(batch_bytes):>11,d} {count / limit_s:>13,.0f} {count / franz_s:>13,.0f} "
              f"{count / python_s:>13,.0f} {limit_s / franz_s:>11.2f} {per_record:>16s}")


if __name__ == "__main__":
    main()
