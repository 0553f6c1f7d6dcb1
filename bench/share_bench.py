"""Share groups (KIP-932) beside plain consumers: how fast Kafka's Java client reads a topic
through a share group, against how fast the same client reads it with a KafkaConsumer from
the same broker in the same run, which is the limit a share group chases (it reads the same
log bytes, and must also acquire every record, acknowledge it and write that down).

    .venv/bin/python bench/share_bench.py [--records N] [--size B] [--partitions P] [--runs R]

Per run: one topic is filled once (PerfDriver produce); then, alternating which goes
first, a KafkaConsumer reads it from offset 0 (after an untimed warm-up of a fifth of the
records, as broker_bench's Java driver does) and a KafkaShareConsumer of a new group reads
it from the earliest offset, timed from its first record to the commit of its last
acknowledgement (no warm-up: a share group hands a record out once). Figures are medians
of the runs; ratio = share / plain. Each phase also prints the broker's CPU seconds. Tansu 0.6.0 and noida-db 0.2.3 have no share groups,
so there is no peer column.

Not a timed test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from broker_bench import FRANZ_OVERRIDES, Broker, JavaDriver, broker_cpu_s, create_topic  # noqa: E402
from tests.support.broker import BrokerProcess  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--size", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=1)
    parser.add_argument("--runs", type=int, default=4)
    args = parser.parse_args()
    driver = JavaDriver()
    plain: list[float] = []
    shared: list[float] = []
    with tempfile.TemporaryDirectory(prefix="franz-share-bench-") as work:
        broker = BrokerProcess(Path(work) / "franz", overrides=FRANZ_OVERRIDES).start()
        measured = Broker("franz", broker.bootstrap, broker)
        try:
            for run in range(args.runs):
                topic = f"share-bench-{run}"
                create_topic(broker.bootstrap, topic, args.partitions)
                driver.produce(broker.bootstrap, topic, args.records, args.size, 1, 0)
                order = ("plain", "share") if run % 2 == 0 else ("share", "plain")
                for kind in order:
                    cpu_before = broker_cpu_s(measured)
                    if kind == "plain":
                        warmup = args.records // 5
                        msgs_s, _ = driver.consume(broker.bootstrap, topic, args.records - warmup, warmup)
                        plain.append(msgs_s)
                    else:
                        msgs_s = float(driver._run("share-consume", broker.bootstrap, topic, str(args.records),
                                                   f"bench-{uuid.uuid4().hex[:8]}")[0])
                        shared.append(msgs_s)
                    cpu_after = broker_cpu_s(measured)
                    # the broker's CPU over the whole phase (JVM start, join, warm-up included): says
                    # whether the broker or the client was the one working
                    print(f"run {run + 1}/{args.runs}: {kind:5} {msgs_s:,.0f} msgs/s (broker cpu user "
                          f"{cpu_after[0] - cpu_before[0]:.2f} s, sys {cpu_after[1] - cpu_before[1]:.2f} s)", flush=True)
        finally:
            broker.stop()
    plain_median, share_median = statistics.median(plain), statistics.median(shared)
    print(f"\n{args.records:,} x {args.size} B, {args.partitions} partition(s), medians of {args.runs} runs")
    print(f"{'consumer':24} {'msgs/s':>12} {'MB/s':>8}")
    for name, value in (("KafkaConsumer (limit)", plain_median), ("KafkaShareConsumer", share_median)):
        print(f"{name:24} {value:>12,.0f} {value * args.size / (1 << 20):>8,.1f}")
    print(f"share / plain: {share_median / plain_median:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
