"""librdkafka end to end: kcat producing 100-byte records into one franz partition.

Run:  .venv/bin/python bench/kcat_bench.py [--records 4000000] [--runs 3]

The issue's produce target: >= 1,000,000 msgs/s of 100-byte records produced
end to end by librdkafka (linger.ms=5, 1 MiB batches, acks=1). kcat (the
Debian package, librdkafka's own command-line client) reads the records from a
file (`-l`, one 100-byte record per line) and exits once every
record is acknowledged, so its wall time is the end-to-end time; the topic's
end offset is checked against the records sent after each run. Printed beside
the machine's loopback TCP speed in the same run, as records/s of 100 bytes.
Medians of --runs. Only franz: Tansu's ApiVersions answer is refused by the
librdkafka 2.0.2 kcat links ("Read underflow"), see broker_bench.py.

Not a timed test.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, TopicPartition  # noqa: E402

from bench.broker_bench import MIB, loopback_mb_s  # noqa: E402
from tests.support.broker import BrokerProcess  # noqa: E402
from tests.support.raw_client import RawClient, create_topic  # noqa: E402

RECORD_BYTES = 100
KCAT_PRODUCER = ("-X", "linger.ms=5", "-X", "batch.size=1048576", "-X", "acks=1",
                 "-X", "queue.buffering.max.kbytes=1048576")


def end_offset(bootstrap: str, topic: str) -> int:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "kcat-bench"})
    try:
        return consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=30)[1]
    finally:
        consumer.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=4_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("kcat") is None:
        print("kcat is not installed (apt-get install kcat)")
        return 1
    work = Path(tempfile.mkdtemp(prefix="franz-kcat-bench-"))
    records = work / "records.txt"
    with open(records, "wb") as out:
        block = (b"x" * RECORD_BYTES + b"\n") * 10_000
        for _ in range(args.records // 10_000):
            out.write(block)
    sent = args.records // 10_000 * 10_000
    broker = BrokerProcess(work / "data").start()
    rates = []
    try:
        for run in range(args.runs):
            topic = f"kcat-{run}"
            with RawClient(broker.bootstrap) as client:
                create_topic(client, topic)
            start = time.perf_counter()
            done = subprocess.run(["kcat", "-P", "-b", broker.bootstrap, "-t", topic, "-p", "0", *KCAT_PRODUCER,
                                   "-l", str(records)], capture_output=True, text=True, timeout=600)
            elapsed = time.perf_counter() - start
            if done.returncode != 0:
                print(f"kcat exited {done.returncode}: {done.stderr.strip()[-400:]}")
                return 1
            written = end_offset(broker.bootstrap, topic)
            if written != sent:
                print(f"run {run + 1}: the topic holds {written:,} records of the {sent:,} sent")
                return 1
            rates.append(sent / elapsed)
            print(f"run {run + 1}: {sent / elapsed:,.0f} msgs/s", flush=True)
        loopback = loopback_mb_s(2.0) * MIB / RECORD_BYTES
    finally:
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)
    rate = statistics.median(rates)
    print(f"kcat produce, 100 B, 1 partition: {rate:,.0f} msgs/s, {rate * RECORD_BYTES / MIB:,.1f} MB/s "
          f"(target >= 1,000,000 msgs/s); loopback {loopback:,.0f} records/s of {RECORD_BYTES} B")
    return 0


if __name__ == "__main__":
    sys.exit(main())
