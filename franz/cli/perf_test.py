"""`franz perf-test produce|consume`: Kafka's kafka-producer-perf-test and
kafka-consumer-perf-test under one command, on librdkafka (confluent-kafka).

Works against any Kafka-compatible broker and prints what Kafka's tools print,
so that figures and scripts carry over:

- produce: a progress line every --reporting-interval ms (5 s) and a final
  "N records sent, X records/sec (Y MB/sec), A ms avg latency, M ms max
  latency, p50 ms 50th, p95 ms 95th, p99 ms 99th, p999 ms 99.9th." line.
  Latency is from produce() to the delivery report (librdkafka's own
  per-message timestamp, msg.latency()); percentiles are whole milliseconds
  over at most 500,000 sampled latencies, as in ProducerPerformance.Stats.
- consume: Kafka's header and one CSV line (start.time, end.time,
  data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec,
  rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec).
  Beyond Kafka: without --group the consumer assign()s every partition from
  the beginning (or the end with --from-latest) and joins no group, so the
  figure is fetch speed alone (rebalance.time.ms is then 0).

Exit code: 0 when every record was delivered (produce) or the expected count
was read before --timeout (consume), 1 otherwise, 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from array import array
from datetime import datetime

MIB = 1024 * 1024
LATENCY_SAMPLES_MAX = 500_000  # ProducerPerformance keeps at most this many latencies
# Distinct random payloads cycled through: a fresh one per record would cost the client more than the broker.
PAYLOAD_POOL_SIZE = 64
POLL_EVERY_RECORDS = 1024  # serve delivery reports at least this often while producing
THROTTLE_SLEEP_MS_MIN = 2.0  # ThroughputThrottler.MIN_SLEEP_NS: shorter deficits are carried, not slept
METADATA_TIMEOUT_S = 30.0
CONSUME_BATCH_RECORDS = 10_000
CONSUME_POLL_S = 0.1
CONSUMER_GROUP_DEFAULT = "franz-perf-consumer"  # librdkafka needs a group.id even when it joins no group


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("perf-test", help="producer and consumer performance (Kafka's perf-test tools)")
    which = parser.add_subparsers(dest="perf_command", metavar="produce|consume", required=True)

    produce = which.add_parser("produce", help="as kafka-producer-perf-test")
    produce.add_argument("--bootstrap-server", required=True, help="host:port of a broker")
    produce.add_argument("--topic", required=True)
    produce.add_argument("--num-records", type=int, required=True)
    produce.add_argument("--record-size", type=int, required=True, help="bytes per record value")
    produce.add_argument("--throughput", type=float, required=True,
                         help="records/sec to approach; -1 for no throttling")
    produce.add_argument("--producer-props", nargs="+", default=[], type=_key_value, metavar="KEY=VALUE",
                         help="librdkafka producer properties")
    produce.add_argument("--acks", help="acks (0, 1, -1 or all); --producer-props acks=... wins")
    produce.add_argument("--reporting-interval", type=int, default=5000, metavar="MS")
    produce.set_defaults(func=run_produce)

    consume = which.add_parser("consume", help="as kafka-consumer-perf-test")
    consume.add_argument("--bootstrap-server", required=True, help="host:port of a broker")
    consume.add_argument("--topic", required=True)
    consume.add_argument("--messages", "--num-records", dest="messages", type=int, required=True,
                         help="records to consume")
    consume.add_argument("--group", help="join this consumer group (subscribe); default: assign() with no group")
    consume.add_argument("--from-latest", action="store_true", help="start at the end instead of the beginning")
    consume.add_argument("--fetch-size", type=int, default=MIB, help="max.partition.fetch.bytes")
    consume.add_argument("--socket-buffer-size", type=int, default=2 * MIB, help="socket.receive.buffer.bytes")
    consume.add_argument("--timeout", type=int, default=10_000, metavar="MS",
                         help="longest wait between returned records")
    consume.add_argument("--reporting-interval", type=int, default=5000, metavar="MS")
    consume.add_argument("--show-detailed-stats", action="store_true", help="a stats line per reporting interval")
    consume.add_argument("--hide-header", action="store_true")
    consume.add_argument("--consumer-props", nargs="+", default=[], type=_key_value, metavar="KEY=VALUE",
                         help="librdkafka consumer properties")
    consume.set_defaults(func=run_consume)


def _key_value(item: str) -> tuple[str, str]:
    """argparse type of one client property: KEY=VALUE."""
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expects KEY=VALUE, got {item!r}")
    return key, value


# -- produce --------------------------------------------------------------------------

class ProducerStats:
    """Counts, windows and sampled latencies of delivered records (ProducerPerformance.Stats)."""

    def __init__(self, num_records: int, reporting_interval_ms: int, out=sys.stdout) -> None:
        assert num_records > 0 and reporting_interval_ms > 0
        self.out = out
        self.start_s = time.monotonic()
        self.sampling = num_records // min(num_records, LATENCY_SAMPLES_MAX)
        self.latencies_ms = array("d")
        self.reporting_interval_s = reporting_interval_ms / 1000.0
        self.count = 0
        self.bytes = 0
        self.total_latency_ms = 0.0
        self.max_latency_ms = 0.0
        self.new_window(self.start_s)

    def new_window(self, now_s: float) -> None:
        self.window_start_s = now_s
        self.window_count = 0
        self.window_bytes = 0
        self.window_total_latency_ms = 0.0
        self.window_max_latency_ms = 0.0

    def record(self, latency_ms: float, size_bytes: int) -> None:
        if self.count % self.sampling == 0:
            self.latencies_ms.append(latency_ms)
        self.count += 1
        self.bytes += size_bytes
        self.total_latency_ms += latency_ms
        self.max_latency_ms = max(self.max_latency_ms, latency_ms)
        self.window_count += 1
        self.window_bytes += size_bytes
        self.window_total_latency_ms += latency_ms
        self.window_max_latency_ms = max(self.window_max_latency_ms, latency_ms)

    def maybe_print_window(self) -> None:
        now_s = time.monotonic()
        if now_s - self.window_start_s < self.reporting_interval_s or self.window_count == 0:
            return
        elapsed_s = now_s - self.window_start_s
        print(f"{self.window_count} records sent, {self.window_count / elapsed_s:.1f} records/sec "
              f"({self.window_bytes / elapsed_s / MIB:.2f} MB/sec), "
              f"{self.window_total_latency_ms / self.window_count:.1f} ms avg latency, "
              f"{self.window_max_latency_ms:.1f} ms max latency.", file=self.out, flush=True)
        self.new_window(now_s)

    def total_line(self) -> str:
        elapsed_s = max(time.monotonic() - self.start_s, 1e-9)
        ordered = sorted(self.latencies_ms)
        # Kafka's percentile: the sample at index int(p * n), in whole milliseconds.
        p50, p95, p99, p999 = (int(ordered[int(p * len(ordered))]) if ordered else 0
                               for p in (0.5, 0.95, 0.99, 0.999))
        avg_ms = self.total_latency_ms / self.count if self.count else 0.0
        return (f"{self.count} records sent, {self.count / elapsed_s:.1f} records/sec "
                f"({self.bytes / elapsed_s / MIB:.2f} MB/sec), {avg_ms:.2f} ms avg latency, "
                f"{self.max_latency_ms:.2f} ms max latency, {p50} ms 50th, {p95} ms 95th, "
                f"{p99} ms 99th, {p999} ms 99.9th.")


def _payloads(record_size: int) -> list[bytes]:
    # Random upper-case letters, as ProducerPerformance fills its payloads.
    rng = random.Random(0)
    letters = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return [bytes(rng.choices(letters, k=record_size)) for _ in range(PAYLOAD_POOL_SIZE)]


def run_produce(args: argparse.Namespace) -> int:
    from confluent_kafka import Producer  # noqa: PLC0415 - only this command needs it
    if args.num_records <= 0:
        print("franz perf-test: --num-records should be greater than zero", file=sys.stderr)
        return 2
    if args.record_size <= 0:
        print("franz perf-test: --record-size should be greater than zero", file=sys.stderr)
        return 2
    props: dict = {"bootstrap.servers": args.bootstrap_server}
    if args.acks is not None:
        props["acks"] = args.acks
    props.update(args.producer_props)
    failures = [0]
    stats = ProducerStats(args.num_records, args.reporting_interval)

    def on_delivery(err, msg) -> None:
        if err is not None:
            failures[0] += 1
            if failures[0] <= 10:  # the first few say why; the rest would only repeat it
                print(f"delivery failed: {err}", file=sys.stderr)
            return
        stats.record(msg.latency() * 1000.0, len(msg))

    props["on_delivery"] = on_delivery
    producer = Producer(props)
    payloads = _payloads(args.record_size)
    produce, poll = producer.produce, producer.poll
    topic, throughput = args.topic, args.throughput
    pool_mask = PAYLOAD_POOL_SIZE - 1
    assert PAYLOAD_POOL_SIZE & pool_mask == 0
    stats.start_s = time.monotonic()
    stats.new_window(stats.start_s)
    for i in range(args.num_records):
        value = payloads[i & pool_mask]
        while True:
            try:
                produce(topic, value)
                break
            except BufferError:  # librdkafka's queue is full: let deliveries drain it
                poll(0.01)
                stats.maybe_print_window()
        if i % POLL_EVERY_RECORDS == 0:
            poll(0)
            stats.maybe_print_window()
        if throughput > 0:  # ThroughputThrottler: wait out the lead over the target rate, serving deliveries
            ahead_ms = ((i + 1) / throughput - (time.monotonic() - stats.start_s)) * 1000.0
            if ahead_ms >= THROTTLE_SLEEP_MS_MIN:
                poll(ahead_ms / 1000.0)
                stats.maybe_print_window()
    # Bounded by message.timeout.ms: librdkafka fails what it cannot deliver, and flush() then returns 0.
    while producer.flush(0.5) > 0:
        stats.maybe_print_window()
    print(stats.total_line(), flush=True)
    return 1 if failures[0] else 0


# -- consume --------------------------------------------------------------------------

def _date(ts_s: float) -> str:
    # Kafka's default --date-format, yyyy-MM-dd HH:mm:ss:SSS.
    moment = datetime.fromtimestamp(ts_s)
    return moment.strftime("%Y-%m-%d %H:%M:%S") + f":{moment.microsecond // 1000:03d}"


def run_consume(args: argparse.Namespace) -> int:
    from confluent_kafka import (  # noqa: PLC0415 - only this command needs it
        OFFSET_BEGINNING, OFFSET_END, Consumer, KafkaError, KafkaException, TopicPartition)
    if args.messages <= 0:
        print("franz perf-test: --messages should be greater than zero", file=sys.stderr)
        return 2
    props: dict = {"bootstrap.servers": args.bootstrap_server, "group.id": args.group or CONSUMER_GROUP_DEFAULT,
                   "enable.auto.commit": False, "auto.offset.reset": "latest" if args.from_latest else "earliest",
                   "max.partition.fetch.bytes": args.fetch_size,
                   "socket.receive.buffer.bytes": args.socket_buffer_size}
    props.update(args.consumer_props)
    if not args.hide_header:
        first = "time, threadId" if args.show_detailed_stats else "start.time, end.time"
        print(f"{first}, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
              "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec", flush=True)
    consumer = Consumer(props)
    join_ms = [0.0]
    start_s = time.time()
    if args.group:
        join_start_s = [start_s]

        def on_assign(_consumer, _partitions) -> None:
            join_ms[0] += (time.time() - join_start_s[0]) * 1000.0

        def on_revoke(_consumer, _partitions) -> None:
            join_start_s[0] = time.time()

        consumer.subscribe([args.topic], on_assign=on_assign, on_revoke=on_revoke)
    else:
        metadata = consumer.list_topics(args.topic, timeout=METADATA_TIMEOUT_S)
        topic = metadata.topics.get(args.topic)
        if topic is None or topic.error is not None or not topic.partitions:
            print(f"franz perf-test: topic {args.topic!r} not found: {topic.error if topic else ''}", file=sys.stderr)
            consumer.close()
            return 1
        start_offset = OFFSET_END if args.from_latest else OFFSET_BEGINNING
        consumer.assign([TopicPartition(args.topic, p, start_offset) for p in sorted(topic.partitions)])

    read, read_bytes = 0, 0
    last_read, last_bytes = 0, 0
    interval_s, timeout_s = args.reporting_interval / 1000.0, args.timeout / 1000.0
    now_s = time.time()
    last_report_s = last_consumed_s = now_s
    try:
        while read < args.messages and now_s - last_consumed_s <= timeout_s:
            batch = consumer.consume(min(CONSUME_BATCH_RECORDS, args.messages - read), CONSUME_POLL_S)
            now_s = time.time()
            for msg in batch:
                error = msg.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        continue
                    raise KafkaException(error)
                read += 1
                key = msg.key()
                read_bytes += len(msg) + (len(key) if key is not None else 0)
            if batch:
                last_consumed_s = now_s
            if args.show_detailed_stats and now_s - last_report_s >= interval_s:
                elapsed_s = now_s - last_report_s
                interval_mb = (read_bytes - last_bytes) / MIB
                rate = (read - last_read) / elapsed_s
                print(f"{_date(now_s)}, 0, {read_bytes / MIB:.4f}, {interval_mb / elapsed_s:.4f}, {read}, {rate:.4f}, "
                      f"0, {int(elapsed_s * 1000)}, {interval_mb / elapsed_s:.4f}, {rate:.4f}", flush=True)
                last_report_s, last_read, last_bytes = now_s, read, read_bytes
    except KafkaException as exc:
        print(f"franz perf-test: {exc}", file=sys.stderr)
        consumer.close()
        return 1
    end_s = time.time()
    consumer.close()
    if read < args.messages:
        print(f"WARNING: Exiting before consuming the expected number of messages: timeout ({args.timeout} ms) "
              "exceeded. You can use the --timeout option to increase the timeout.", flush=True)
    if not args.show_detailed_stats:
        elapsed_s = max(end_s - start_s, 1e-9)
        fetch_ms = int((end_s - start_s) * 1000 - join_ms[0])
        fetch_s = max(fetch_ms / 1000.0, 1e-9)
        mb = read_bytes / MIB
        print(f"{_date(start_s)}, {_date(end_s)}, {mb:.4f}, {mb / elapsed_s:.4f}, {read}, {read / elapsed_s:.4f}, "
              f"{int(join_ms[0])}, {fetch_ms}, {mb / fetch_s:.4f}, {read / fetch_s:.4f}", flush=True)
    return 0 if read >= args.messages else 1
