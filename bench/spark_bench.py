"""Spark reading and writing a franz topic, beside Spark reading and writing Parquet, in one run.

Run:  .venv/bin/python bench/spark_bench.py [--mib 1024] [--record-bytes 100] [--partitions 4] [--runs 3]

A franz broker process and a local[2] SparkSession on this machine. The same
rows (key = id as a string, value = record-bytes of text) are written with
df.write to a topic (format "franz": an idempotent librdkafka producer per
task) and to Parquet; then both are read back in full (the sum of the value
lengths, so every row crosses into Spark). Target from the issue: the topic
read at >= 50% of the Parquet read. Medians of --runs; not a timed test.

Values: with --values distinct (the default) each row's value is the hex
SHA-256 of its id, repeated to record-bytes: different in every row, as real
records are. --values constant gives every row the same filler, which
Parquet stores as one dictionary entry, so its "read" decodes almost nothing;
the figure is printed for comparison with earlier runs, not as the limit.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import franz.spark  # noqa: E402
from tests.support.broker import BrokerProcess  # noqa: E402

MIB = 1024 * 1024


def timed(action) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mib", type=int, default=1024, help="payload size of the dataset (the issue: a 1 GiB topic)")
    parser.add_argument("--record-bytes", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--values", choices=("distinct", "constant"), default="distinct")
    args = parser.parse_args()
    rows = args.mib * MIB // args.record_bytes
    work = Path(tempfile.mkdtemp(prefix="franz-spark-bench-"))
    broker = BrokerProcess(work / "data").start()
    spark = franz.spark.session(app_name="franz-spark-bench")
    try:
        from confluent_kafka.admin import AdminClient, NewTopic  # noqa: PLC0415
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        value = (f"substr(repeat(sha2(CAST(id AS STRING), 256), {args.record_bytes // 64 + 1}), 1, "
                 f"{args.record_bytes})" if args.values == "distinct" else f"repeat('x', {args.record_bytes})")
        data = spark.range(rows, numPartitions=args.partitions).selectExpr(
            "CAST(id AS STRING) AS key", f"{value} AS value").cache()
        data.count()
        figures: dict[str, list[float]] = {k: [] for k in ("write topic", "write parquet", "read topic",
                                                            "read parquet")}
        for run in range(args.runs):
            topic, parquet = f"bench-{run}", str(work / f"parquet-{run}")
            admin.create_topics([NewTopic(topic, args.partitions, 1)])[topic].result(60)
            figures["write topic"].append(timed(lambda: data.write.mode("append").format("franz").option(
                "kafka.bootstrap.servers", broker.bootstrap).option("topic", topic).save()))
            figures["write parquet"].append(timed(lambda: data.write.parquet(parquet)))
            topic_frame = spark.read.format("franz").option("kafka.bootstrap.servers", broker.bootstrap) \
                .option("subscribe", topic).load()
            figures["read topic"].append(timed(lambda: topic_frame.selectExpr("sum(length(value))").collect()))
            figures["read parquet"].append(timed(
                lambda: spark.read.parquet(parquet).selectExpr("sum(length(value))").collect()))
            print(f"run {run + 1}: " + ", ".join(f"{k} {rows / v[-1]:,.0f} rows/s" for k, v in figures.items()),
                  flush=True)
        payload_mib = rows * args.record_bytes / MIB
        print(f"\n{rows:,} rows of {args.record_bytes} B ({payload_mib:,.0f} MiB payload, {args.values} values), "
              f"{args.partitions} partitions, medians of {args.runs} runs")
        print(f"{'row':16} {'rows/s':>12} {'MB/s':>8}  limit / target")
        for name in figures:
            seconds = statistics.median(figures[name])
            note = ""
            if name == "read topic":
                ratio = statistics.median(figures["read parquet"]) / seconds
                note = f"ratio {ratio:.2f} of the Parquet read (target >= 0.50)"
            elif name == "write topic":
                ratio = statistics.median(figures["write parquet"]) / seconds
                note = f"ratio {ratio:.2f} of the Parquet write"
            else:
                note = "(limit)"
            print(f"{name:16} {rows / seconds:>12,.0f} {payload_mib / seconds:>8,.1f}  {note}")
    finally:
        spark.stop()
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
