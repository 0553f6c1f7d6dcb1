"""What the LogCleaner costs the rest of the broker: produce latency while a pass runs.

Run:  .venv/bin/python bench/cleaner_bench.py [--runs 3] [--dirty-mib 128] [--rate 2000] [--seconds 5]

A real broker process (log.cleaner.backoff.ms=100) holds a compacted topic of
--dirty-mib of 100-byte records over 10,000 keys, written with
min.cleanable.dirty.ratio=1.0 so that nothing cleans it yet. One librdkafka
producer (linger.ms=0, acks=1) sends --rate records/s of 100 bytes to another
topic for --seconds and notes each record's produce()-to-delivery latency:

- idle:      the cleaner has nothing to do (the limit: the same broker's own latency);
- cleaning:  the compacted topic's ratio is set to 0.01 at the start, so a
             pass over all of it runs meanwhile (the cleaner is Python on its
             own thread and shares the GIL with the event loop).

Prints p50/p99 of each, the ratio cleaning/idle, and the pass's MB/s from the
broker's own cleaner summary. Medians of --runs runs. Not a timed test.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, NewTopic  # noqa: E402

from tests.support.broker import BrokerProcess  # noqa: E402

KEYS = 10_000
TIMEOUT_S = 120


def fill(bootstrap: str, topic: str, total_bytes: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5, "batch.size": 1 << 20,
                         "queue.buffering.max.messages": 1_000_000})
    value = b"v" * 100
    for i in range(total_bytes // 120):
        while True:
            try:
                producer.produce(topic, key=b"key-%05d" % (i % KEYS), value=value, partition=0)
                break
            except BufferError:
                producer.poll(0.01)
    assert producer.flush(TIMEOUT_S) == 0


def paced_latencies(bootstrap: str, topic: str, rate: int, seconds: float) -> list[float]:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 0, "acks": 1})
    latencies: list[float] = []

    def delivered(err, _msg, sent=None):
        if err is None:
            latencies.append((time.perf_counter() - sent) * 1000)
    start = time.perf_counter()
    count = int(rate * seconds)
    for i in range(count):
        due = start + i / rate
        while time.perf_counter() < due:
            producer.poll(0)
        sent = time.perf_counter()
        producer.produce(topic, value=b"x" * 100, partition=0,
                         on_delivery=lambda err, msg, sent=sent: delivered(err, msg, sent))
    assert producer.flush(TIMEOUT_S) == 0
    return latencies


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def one_run(args) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        broker = BrokerProcess(Path(tmp) / "data", {"log.cleaner.backoff.ms": "100"})
        broker.start()
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        try:
            futures = admin.create_topics([
                NewTopic("big", 1, 1, config={"cleanup.policy": "compact", "segment.bytes": str(4 << 20),
                                              "min.cleanable.dirty.ratio": "1.0"}),
                NewTopic("latency", 1, 1)])
            for future in futures.values():
                future.result(TIMEOUT_S)
            fill(broker.bootstrap, "big", args.dirty_mib << 20)
            idle = paced_latencies(broker.bootstrap, "latency", args.rate, args.seconds)
            resource = ConfigResource(ConfigResource.Type.TOPIC, "big", incremental_configs=[
                ConfigEntry("min.cleanable.dirty.ratio", "0.01", incremental_operation=AlterConfigOpType.SET)])
            next(iter(admin.incremental_alter_configs([resource]).values())).result(TIMEOUT_S)
            passes_before = sum("cleaned log big-0" in line for line in broker.lines)
            cleaning = paced_latencies(broker.bootstrap, "latency", args.rate, args.seconds)
            deadline = time.monotonic() + TIMEOUT_S
            while sum("cleaned log big-0" in line for line in broker.lines) == passes_before:
                assert time.monotonic() < deadline, "the pass never ended"
                time.sleep(0.1)
            rates = [float(m.group(1).replace(",", "")) for m in
                     (re.search(r"processed in [\d.,]+ seconds \(([\d.,]+) MB/sec\)", line) for line in broker.lines)
                     if m]
            return {"idle p50": percentile(idle, 0.5), "idle p99": percentile(idle, 0.99),
                    "cleaning p50": percentile(cleaning, 0.5), "cleaning p99": percentile(cleaning, 0.99),
                    "pass MB/s": rates[-1]}
        finally:
            del admin  # before the broker goes, or it reports every reconnect it tries
            broker.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dirty-mib", type=int, default=128)
    parser.add_argument("--rate", type=int, default=2_000)
    parser.add_argument("--seconds", type=float, default=5.0)
    args = parser.parse_args()
    rows: dict[str, list[float]] = {}
    for run in range(args.runs):
        result = one_run(args)
        print(f"run {run + 1}/{args.runs}: " + ", ".join(f"{k} {v:.1f}" for k, v in result.items()), flush=True)
        for key, value in result.items():
            rows.setdefault(key, []).append(value)
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"{'row':<26}{'median':>10}  beside")
    print(f"{'idle p50 / p99 ms':<26}{med['idle p50']:>5.1f} /{med['idle p99']:>5.1f}  (the limit)")
    print(f"{'while cleaning p50 / p99':<26}{med['cleaning p50']:>5.1f} /{med['cleaning p99']:>5.1f}  "
          f"p99 ratio {med['cleaning p99'] / med['idle p99']:.1f} of idle")
    print(f"{'cleaner pass MB/s':<26}{med['pass MB/s']:>10.1f}  ({args.dirty_mib} MiB dirty, {KEYS:,} keys)")


if __name__ == "__main__":
    main()
