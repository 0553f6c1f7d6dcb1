"""`franz perf-test produce|consume`: Kafka's kafka-producer-perf-test and
kafka-consumer-perf-test under one command, on librdkafka (confluent-kafka).

Works against any Kafka-compatible broker and takes the options and prints the
lines Kafka 4.3's tools do, so that figures and scripts carry over:

- produce: a progress line every --reporting-interval ms (5 s) and a final
  "N records sent, X records/sec (Y MB/sec), A ms avg latency, M ms max
  latency, p50 ms 50th, p95 ms 95th, p99 ms 99th, p999 ms 99.9th." line
  (with --warmup-records, a second one for the steady state). Latency is from
  produce() to the delivery report (librdkafka's own per-message timestamp,
  msg.latency()); percentiles are whole milliseconds over at most 500,000
  sampled latencies, as in ProducerPerformance.Stats. Payloads: --record-size
  random upper-case letters, --payload-file records split at
  --payload-delimiter, or --payload-monotonic (the record's index). With
  --transactional-id (or --transaction-duration-ms) records go in transactions
  committed every --transaction-duration-ms (3 s).
- consume: Kafka's header and one CSV line (start.time, end.time,
  data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec,
  rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec), or one line
  per --reporting-interval with --show-detailed-stats. --topic or --include
  (a regular expression). Beyond Kafka: without --group the consumer assign()s
  every partition from the beginning (or the end with --from-latest) and joins
  no group, so the figure is fetch speed alone (rebalance.time.ms is then 0).

Client settings come as Kafka's tools take them (--command-config FILE,
--command-property KEY=VALUE, and their deprecated forms --producer.config,
--consumer.config, --producer-props), in the Java client's names, handed to
librdkafka by franz.cli.command_config. --print-metrics prints librdkafka's
own statistics (its names, not the Java client's metrics).

Exit code: 0 when every record was delivered (produce) or the run ended
(consume: as in Kafka, a --timeout before the expected count only warns);
1 when a produce failed some records (Kafka's tool prints the exceptions and
exits 0; franz fails the run, so scripts notice), on a client error, or on a
bad command line (as Kafka's CommandLineUtils).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
import uuid
from array import array
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from franz.cli.command_config import CommandConfigError, command_properties, describe_client_error, librdkafka_config
from franz.cli.standard_out import discard_stdout
from franz.cli.usage_errors import exit_1_on_usage_errors
from franz.common.java_regex import java_pattern

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
TRANSACTION_DURATION_MS_DEFAULT = 3000  # ProducerPerformance.DEFAULT_TRANSACTION_DURATION_MS
TRANSACTIONAL_ID_PREFIX = "performance-producer-"  # ProducerPerformance.DEFAULT_TRANSACTION_ID_PREFIX
DATE_FORMAT_DEFAULT = "yyyy-MM-dd HH:mm:ss:SSS"  # ConsumerPerfOptions' --date-format
MAX_REQUEST_SIZE_DEFAULT = 1024 * 1024  # the Java producer's max.request.size, which bounds one record too


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("perf-test", help="producer and consumer performance (Kafka's perf-test tools)")
    which = parser.add_subparsers(dest="perf_command", metavar="produce|consume", required=True)

    produce = which.add_parser("produce", help="as kafka-producer-perf-test")
    exit_1_on_usage_errors(produce)
    produce.add_argument("--bootstrap-server", help="host:port of a broker (or bootstrap.servers in the properties)")
    produce.add_argument("--topic", required=True)
    produce.add_argument("--num-records", type=int, required=True)
    payload = produce.add_mutually_exclusive_group(required=True)
    payload.add_argument("--record-size", type=int, help="bytes per record value")
    payload.add_argument("--payload-file", help="a file of payloads, split at --payload-delimiter, sent at random")
    payload.add_argument("--payload-monotonic", action="store_true", help="payloads 0, 1, 2, ... as text")
    produce.add_argument("--payload-delimiter", default="\\n", help="splits --payload-file (default: a newline)")
    produce.add_argument("--throughput", type=float, required=True,
                         help="records/sec to approach; -1 for no throttling")
    produce.add_argument("--producer-props", nargs="+", type=_key_value, metavar="KEY=VALUE",
                         help="(deprecated) producer properties; use --command-property")
    _add_client_options(produce, "producer")
    produce.add_argument("--transactional-id", help="send in transactions with this transactional.id")
    produce.add_argument("--transaction-duration-ms", type=int, metavar="MS",
                         help=f"commit a transaction this often (default {TRANSACTION_DURATION_MS_DEFAULT})")
    produce.add_argument("--warmup-records", type=int, default=0,
                         help="records left out of a second, steady-state summary")
    produce.add_argument("--acks", help="acks (0, 1, -1 or all); a property acks=... wins")
    produce.add_argument("--reporting-interval", type=int, default=5000, metavar="MS")
    produce.set_defaults(func=run_produce)

    consume = which.add_parser("consume", help="as kafka-consumer-perf-test")
    exit_1_on_usage_errors(consume)
    consume.add_argument("--bootstrap-server", required=True, help="host:port of a broker")
    topics = consume.add_mutually_exclusive_group(required=True)
    topics.add_argument("--topic")
    topics.add_argument("--include", help="a regular expression of the topics to consume")
    records = consume.add_mutually_exclusive_group(required=True)
    records.add_argument("--num-records", type=int, help="records to consume")
    records.add_argument("--messages", type=int, help="(deprecated) records to consume; use --num-records")
    consume.add_argument("--group", help="join this consumer group (subscribe); default: assign() with no group")
    consume.add_argument("--from-latest", action="store_true", help="start at the end instead of the beginning")
    consume.add_argument("--fetch-size", type=int, default=MIB, help="max.partition.fetch.bytes")
    consume.add_argument("--socket-buffer-size", type=int, default=2 * MIB, help="socket.receive.buffer.bytes")
    consume.add_argument("--timeout", type=int, default=10_000, metavar="MS",
                         help="longest wait between returned records")
    consume.add_argument("--reporting-interval", type=int, default=5000, metavar="MS")
    consume.add_argument("--show-detailed-stats", action="store_true", help="a stats line per reporting interval")
    consume.add_argument("--hide-header", action="store_true")
    consume.add_argument("--date-format", default=DATE_FORMAT_DEFAULT,
                         help="java.text.SimpleDateFormat pattern of the time fields")
    consume.add_argument("--consumer-props", nargs="+", type=_key_value, metavar="KEY=VALUE",
                         help="(franz) consumer properties; --command-property is Kafka's")
    _add_client_options(consume, "consumer")
    consume.set_defaults(func=run_consume)


def _add_client_options(parser: argparse.ArgumentParser, client: str) -> None:
    """The client settings and metrics options both of Kafka's perf tools take. The consumer's
    --command-property may be repeated, each adding (jopt-simple's valuesOf); the producer's
    takes its last use (argparse4j), as in Kafka."""
    parser.add_argument("--command-property", nargs="+", type=_key_value, metavar="KEY=VALUE",
                        action="extend" if client == "consumer" else "store",
                        help=f"{client} properties, in the Java client's names")
    parser.add_argument(f"--{client}.config", dest=f"{client}_config", metavar="FILE",
                        help=f"(deprecated) {client} properties file; use --command-config")
    parser.add_argument("--command-config", metavar="FILE", help=f"{client} properties file")
    parser.add_argument("--print-metrics", action="store_true", help="print librdkafka's statistics at the end")


def _key_value(item: str) -> tuple[str, str]:
    """argparse type of one client property: KEY=VALUE."""
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expects KEY=VALUE, got {item!r}")
    return key, value


def _emit(line: str, out=None) -> None:
    """Print a line (standard out unless `out`); once the reader has gone (`| head`), drop the output
    and let the run go on, as Java's System.out does (it swallows write errors), so that records in
    flight still land."""
    out = out or sys.stdout
    try:
        print(line, file=out, flush=True)
    except BrokenPipeError:
        discard_stdout()


def _usage_error(args: argparse.Namespace, message: str) -> int:
    """A command-line mistake found after parsing: usage and message, exit 1 (ConfigPostProcessor)."""
    args.command_parser.error(message)
    return 1  # not reached: error() exits


def _client_config(args: argparse.Namespace, client: str, config_file: str | None,
                   properties: list[tuple[str, str]] | None) -> dict:
    """The client's settings from a properties file and KEY=VALUE items (these win), as librdkafka's."""
    return librdkafka_config({**command_properties(config_file, ()), **dict(properties or ())}, client)


class LibrdkafkaStatistics:
    """The last statistics librdkafka emitted (stats_cb), printed by --print-metrics as Kafka's
    ToolsUtils.printMetrics lays out a client's metrics: one "name : value" row per number."""

    INTERVAL_MS = 1000

    def __init__(self) -> None:
        self.last: dict = {}

    def on_stats(self, text: str) -> None:
        self.last = json.loads(text)

    def print_table(self, out=sys.stdout) -> None:
        rows = [(f"librdkafka:{key}", value) for key, value in sorted(self.last.items())
                if isinstance(value, (int, float)) and not isinstance(value, bool)]
        if not rows:
            return
        width = max(len(name) for name, _ in rows)
        _emit(f"\n{'Metric Name':<{width}}   Value", out)
        for name, value in rows:
            _emit(f"{name:<{width}} : {value}", out)


# -- produce --------------------------------------------------------------------------

class ProducerStats:
    """Counts, windows and sampled latencies of delivered records (ProducerPerformance.Stats).
    A steady-state one counts the records after --warmup-records and says so in its lines."""

    def __init__(self, num_records: int, reporting_interval_ms: int, out=sys.stdout,
                 steady_state: bool = False) -> None:
        assert num_records > 0 and reporting_interval_ms > 0
        self.out = out
        self.steady_state = steady_state
        self.suppressed = False  # the whole-run stats stop printing windows once the steady state's begin
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
        if self.steady_state and self.count == self.window_count:
            _emit("In steady state.", self.out)
        if not self.suppressed:
            elapsed_s = now_s - self.window_start_s
            _emit(f"{self.window_count} records sent, {self.window_count / elapsed_s:.1f} records/sec "
                  f"({self.window_bytes / elapsed_s / MIB:.2f} MB/sec), "
                  f"{self.window_total_latency_ms / self.window_count:.1f} ms avg latency, "
                  f"{self.window_max_latency_ms:.1f} ms max latency.", self.out)
        self.new_window(now_s)

    def total_line(self) -> str:
        elapsed_s = max(time.monotonic() - self.start_s, 1e-9)
        ordered = sorted(self.latencies_ms)
        # Kafka's percentile: the sample at index int(p * n), in whole milliseconds.
        p50, p95, p99, p999 = (int(ordered[int(p * len(ordered))]) if ordered else 0
                               for p in (0.5, 0.95, 0.99, 0.999))
        avg_ms = self.total_latency_ms / self.count if self.count else 0.0
        return (f"{self.count}{' steady state' if self.steady_state else ''} records sent, "
                f"{self.count / elapsed_s:f} records/sec ({self.bytes / elapsed_s / MIB:.2f} MB/sec), "
                f"{avg_ms:.2f} ms avg latency, {self.max_latency_ms:.2f} ms max latency, {p50} ms 50th, "
                f"{p95} ms 95th, {p99} ms 99th, {p999} ms 99.9th.")


def _random_payloads(record_size: int) -> list[bytes]:
    # Random upper-case letters, as ProducerPerformance fills its payloads.
    rng = random.Random(0)
    letters = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return [bytes(rng.choices(letters, k=record_size)) for _ in range(PAYLOAD_POOL_SIZE)]


def _file_payloads(path: str, delimiter: str) -> list[bytes]:
    """ProducerPerformance.readPayloadFile: the file's text split at `delimiter`, empty pieces dropped
    (a Scanner skips them), each piece sent as UTF-8."""
    source = Path(path)
    _emit(f"Reading payloads from: {source.absolute()}")
    if not source.is_file() or source.stat().st_size == 0:
        raise ValueError("File does not exist or empty file provided.")
    pieces = [piece.encode() for piece in re.split(delimiter, source.read_text(encoding="utf-8")) if piece]
    _emit(f"Number of records read: {len(pieces)}")
    return pieces


def _payload_for(args: argparse.Namespace) -> Callable[[int], bytes]:
    """The value of record i, as ProducerPerformance.generateRandomPayload picks it."""
    if args.payload_monotonic:
        return lambda i: str(i).encode()
    if args.payload_file is not None:
        delimiter = "\n" if args.payload_delimiter == "\\n" else args.payload_delimiter
        pieces = _file_payloads(args.payload_file, delimiter)
        pick = random.Random(0).randrange
        return lambda i: pieces[pick(len(pieces))]
    payloads = _random_payloads(args.record_size)
    pool_mask = PAYLOAD_POOL_SIZE - 1
    assert PAYLOAD_POOL_SIZE & pool_mask == 0
    return lambda i: payloads[i & pool_mask]


def _producer_config(args: argparse.Namespace) -> dict:
    """ConfigPostProcessor's checks and settings: (deprecated) options announced as Kafka does."""
    if args.num_records <= 0:
        _usage_error(args, "--num-records should be greater than zero.")
    if args.warmup_records >= args.num_records:
        _usage_error(args, "The value for --warmup-records must be strictly fewer than the number of records in "
                           "the test, --num-records.")
    if args.record_size is not None and args.record_size <= 0:
        _usage_error(args, "--record-size should be greater than zero.")
    if not (args.bootstrap_server or args.command_property or args.producer_props or args.producer_config
            or args.command_config):
        _usage_error(args, "At least one of --bootstrap-server, --command-property, --producer-props, "
                           "--producer.config or --command-config must be specified.")
    if args.command_property and args.producer_props:
        _usage_error(args, "--command-property and --producer-props cannot be specified together.")
    if args.command_config and args.producer_config:
        _usage_error(args, "--command-config and --producer.config cannot be specified together.")
    if args.transaction_duration_ms is not None and args.transaction_duration_ms <= 0:
        _usage_error(args, "--transaction-duration-ms should be greater than zero.")
    if args.reporting_interval <= 0:
        _usage_error(args, "--reporting-interval should be greater than zero.")
    if args.producer_props:
        _emit("Option --producer-props has been deprecated and will be removed in a future version. "
              "Use --command-property instead.")
    if args.producer_config:
        _emit("Option --producer.config has been deprecated and will be removed in a future version. "
              "Use --command-config instead.")
    # The Java producer's max.request.size default (librdkafka's message.max.bytes is 1,000,000).
    settings = {"client.id": "perf-producer-client", "message.max.bytes": str(MAX_REQUEST_SIZE_DEFAULT)}
    if args.acks is not None:
        settings["acks"] = args.acks
    settings.update(_client_config(args, "producer", args.command_config or args.producer_config,
                                   args.command_property or args.producer_props))
    if args.bootstrap_server:
        settings["bootstrap.servers"] = args.bootstrap_server
    if args.transactional_id is not None or args.transaction_duration_ms is not None or \
            "transactional.id" in settings:
        settings["transactional.id"] = (args.transactional_id or settings.get("transactional.id")
                                        or f"{TRANSACTIONAL_ID_PREFIX}{uuid.uuid4()}")
        if args.transaction_duration_ms is None:
            args.transaction_duration_ms = TRANSACTION_DURATION_MS_DEFAULT
    return settings


def run_produce(args: argparse.Namespace) -> int:
    from confluent_kafka import KafkaException, Producer  # noqa: PLC0415 - only this command needs it
    try:
        settings = _producer_config(args)
        payload_for = _payload_for(args)
    except (CommandConfigError, ValueError) as exc:
        print(f"franz perf-test: {exc}", file=sys.stderr)
        return 1
    failures = [0]
    stats = ProducerStats(args.num_records, args.reporting_interval)
    steady: list[ProducerStats] = []  # the steady-state stats, once past --warmup-records

    def on_delivery(err, msg) -> None:
        if err is not None:
            failures[0] += 1
            if failures[0] <= 10:  # the first few say why; the rest would only repeat it
                print(f"delivery failed: {err}", file=sys.stderr)
            return
        stats.record(msg.latency() * 1000.0, len(msg))

    def on_steady_delivery(err, msg) -> None:
        """A record sent after the warm-up (PerfCallback with the steady-state stats)."""
        on_delivery(err, msg)
        if err is None:
            steady[0].record(msg.latency() * 1000.0, len(msg))

    def print_windows() -> None:
        stats.maybe_print_window()
        if steady:
            steady[0].maybe_print_window()

    statistics = LibrdkafkaStatistics()
    settings["on_delivery"] = on_delivery
    if args.print_metrics:
        settings.update({"statistics.interval.ms": LibrdkafkaStatistics.INTERVAL_MS, "stats_cb": statistics.on_stats})
    try:
        producer = Producer(settings)
        transactional = "transactional.id" in settings
        if transactional:
            producer.init_transactions()
    except KafkaException as exc:
        print(f"franz perf-test: {describe_client_error(exc, 'producer')}", file=sys.stderr)
        return 1
    if args.warmup_records > 0:
        _emit(f"Warmup first {args.warmup_records} records. Steady state results will print after the complete "
              "test summary.")
    produce, poll = producer.produce, producer.poll
    topic, throughput = args.topic, args.throughput
    transaction_s = (args.transaction_duration_ms or 0) / 1000.0
    in_transaction, transaction_start_s = 0, 0.0
    stats.start_s = time.monotonic()
    stats.new_window(stats.start_s)
    for i in range(args.num_records):
        value = payload_for(i)
        if transactional and in_transaction == 0:
            producer.begin_transaction()
            transaction_start_s = time.monotonic()
        if i == args.warmup_records and args.warmup_records > 0:
            steady.append(ProducerStats(args.num_records - args.warmup_records, args.reporting_interval,
                                        steady_state=True))
            stats.suppressed = True
        while True:
            try:
                if steady:
                    produce(topic, value, on_delivery=on_steady_delivery)
                else:
                    produce(topic, value)
                break
            except BufferError:  # librdkafka's queue is full: let deliveries drain it
                poll(0.01)
                print_windows()
            except KafkaException as exc:  # this record alone (too large, ...): the Java send fails it in its callback
                on_delivery(exc.args[0] if exc.args else exc, None)
                break
        in_transaction += 1
        if transactional and time.monotonic() - transaction_start_s >= transaction_s:
            producer.commit_transaction()  # flushes what the transaction holds first
            in_transaction = 0
        if i % POLL_EVERY_RECORDS == 0:
            poll(0)
            print_windows()
        if throughput > 0:  # ThroughputThrottler: wait out the lead over the target rate, serving deliveries
            ahead_ms = ((i + 1) / throughput - (time.monotonic() - stats.start_s)) * 1000.0
            if ahead_ms >= THROTTLE_SLEEP_MS_MIN:
                poll(ahead_ms / 1000.0)
                print_windows()
    if transactional and in_transaction:
        producer.commit_transaction()
    # Bounded by message.timeout.ms: librdkafka fails what it cannot deliver, and flush() then returns 0.
    while producer.flush(0.5) > 0:
        print_windows()
    _emit(stats.total_line())
    if steady:
        _emit(steady[0].total_line())
    if args.print_metrics:
        producer.poll(LibrdkafkaStatistics.INTERVAL_MS / 1000.0 * 1.5)  # serve one more statistics callback
        statistics.print_table()
    return 1 if failures[0] else 0


# -- consume --------------------------------------------------------------------------

# java.text.SimpleDateFormat letters -> strftime, for the --date-format patterns people use.
_DATE_LETTERS = {"yyyy": "%Y", "yy": "%y", "MM": "%m", "dd": "%d", "HH": "%H", "hh": "%I", "mm": "%M", "ss": "%S",
                 "a": "%p", "EEE": "%a", "MMM": "%b", "Z": "%z", "z": "%Z"}
_DATE_TOKEN = re.compile(r"'([^']*)'|(S+)|(yyyy|yy|MMM|MM|dd|HH|hh|mm|ss|EEE|a|Z|z)|([A-Za-z])|([^A-Za-z']+)")


def date_formatter(pattern: str) -> Callable[[float], str]:
    """A formatter of epoch seconds for a SimpleDateFormat `pattern` (quoted text, yyyy, MM, dd, HH,
    hh, mm, ss, S..., a, EEE, MMM, Z, z); ValueError names a letter it does not know."""
    parts: list[str | int] = []  # strftime text, or a count of fraction-of-second digits
    for quoted, millis, letters, unknown, text in _DATE_TOKEN.findall(pattern):
        if unknown:
            raise ValueError(f"the --date-format letter {unknown!r} is not one franz formats")
        if millis:
            parts.append(len(millis))
        elif letters:
            parts.append(_DATE_LETTERS[letters])
        else:  # literal text, quoted or not
            parts.append((quoted or text).replace("%", "%%"))

    def format_time(ts_s: float) -> str:
        moment = datetime.fromtimestamp(ts_s).astimezone()
        return "".join(moment.strftime(part) if isinstance(part, str)
                       else f"{moment.microsecond // 1000:0{part}d}" for part in parts)
    return format_time


def run_consume(args: argparse.Namespace) -> int:
    from confluent_kafka import (  # noqa: PLC0415 - only this command needs it
        OFFSET_BEGINNING, OFFSET_END, Consumer, KafkaError, KafkaException, TopicPartition)
    if args.messages is not None:
        _emit("Warning: --messages is deprecated. Use --num-records instead.")
    if args.consumer_config is not None:
        _emit("Warning: --consumer.config is deprecated. Use --command-config instead.")
    wanted = args.num_records if args.num_records is not None else args.messages
    if wanted <= 0:
        return _usage_error(args, "--num-records should be greater than zero")
    if args.reporting_interval <= 0:
        return _usage_error(args, "Reporting interval must be greater than 0.")
    try:
        format_date = date_formatter(args.date_format)
        include = java_pattern(args.include) if args.include is not None else None
        settings: dict = {"group.id": args.group or CONSUMER_GROUP_DEFAULT, "enable.auto.commit": False,
                          "auto.offset.reset": "latest" if args.from_latest else "earliest",
                          "max.partition.fetch.bytes": args.fetch_size,
                          "socket.receive.buffer.bytes": args.socket_buffer_size}
        settings.update(_client_config(args, "consumer", args.command_config or args.consumer_config,
                                       (args.command_property or []) + (args.consumer_props or [])))
    except (CommandConfigError, ValueError, re.error) as exc:
        return _usage_error(args, str(exc))
    settings["bootstrap.servers"] = args.bootstrap_server
    statistics = LibrdkafkaStatistics()
    if args.print_metrics:
        settings.update({"statistics.interval.ms": LibrdkafkaStatistics.INTERVAL_MS, "stats_cb": statistics.on_stats})
    if not args.hide_header:
        first = "time, threadId" if args.show_detailed_stats else "start.time, end.time"
        _emit(f"{first}, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
              "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
    try:
        consumer = Consumer(settings)
    except KafkaException as exc:
        print(f"franz perf-test: {describe_client_error(exc, 'consumer')}", file=sys.stderr)
        return 1
    join_ms = [0.0]  # every rebalance's, and (detailed stats) the current interval's
    join_ms_in_round = [0.0]
    start_s = time.time()
    try:
        if args.group:
            join_start_s = [start_s]

            def on_assign(_consumer, _partitions) -> None:
                elapsed_ms = (time.time() - join_start_s[0]) * 1000.0
                join_ms[0] += elapsed_ms
                join_ms_in_round[0] += elapsed_ms

            def on_revoke(_consumer, _partitions) -> None:
                join_start_s[0] = time.time()

            # The topics --include matches now (Java's syntax, whole names, as IncludeList): librdkafka's
            # own regex subscriptions are POSIX and match anywhere in a name.
            topics = [args.topic] if include is None else sorted(
                {tp.topic for tp in _assignment(consumer, None, include, OFFSET_BEGINNING, TopicPartition)})
            if not topics:
                print(f"franz perf-test: no topic matches {args.include!r}", file=sys.stderr)
                return 1
            consumer.subscribe(topics, on_assign=on_assign, on_revoke=on_revoke)
        else:
            assigned = _assignment(consumer, args.topic, include, OFFSET_END if args.from_latest else OFFSET_BEGINNING,
                                   TopicPartition)
            if not assigned:
                print(f"franz perf-test: no topic {'matches' if include else 'named'} "
                      f"{args.include if include else args.topic!r}", file=sys.stderr)
                consumer.close()
                return 1
            consumer.assign(assigned)

        read, read_bytes = 0, 0
        last_read, last_bytes = 0, 0
        interval_s, timeout_s = args.reporting_interval / 1000.0, args.timeout / 1000.0
        now_s = time.time()
        last_report_s = last_consumed_s = now_s
        while read < wanted and now_s - last_consumed_s <= timeout_s:
            batch = consumer.consume(min(CONSUME_BATCH_RECORDS, wanted - read), CONSUME_POLL_S)
            now_s = time.time()
            for msg in batch:
                error = msg.error()
                if error is not None:
                    if error.code() == KafkaError._PARTITION_EOF:
                        continue
                    raise KafkaException(error)
                last_consumed_s = now_s
                read += 1
                key = msg.key()
                read_bytes += len(msg) + (len(key) if key is not None else 0)
                # As ConsumerPerformance.consume: checked per record, so no line while nothing arrives.
                if now_s - last_report_s >= interval_s:
                    if args.show_detailed_stats:
                        _print_progress(format_date, read_bytes, last_bytes, read, last_read, last_report_s, now_s,
                                        join_ms_in_round[0])
                    join_ms_in_round[0] = 0.0
                    last_report_s, last_read, last_bytes = now_s, read, read_bytes
        if read < wanted:
            _emit(f"WARNING: Exiting before consuming the expected number of records: timeout ({args.timeout} ms) "
                  "exceeded. You can use the --timeout option to increase the timeout.")
        end_s = time.time()
        if not args.show_detailed_stats:
            elapsed_s = max(end_s - start_s, 1e-9)
            fetch_ms = int((end_s - start_s) * 1000 - join_ms[0])
            fetch_s = max(fetch_ms / 1000.0, 1e-9)
            mb = read_bytes / MIB
            _emit(f"{format_date(start_s)}, {format_date(end_s)}, {mb:.4f}, {mb / elapsed_s:.4f}, {read}, "
                  f"{read / elapsed_s:.4f}, {int(join_ms[0])}, {fetch_ms}, {mb / fetch_s:.4f}, {read / fetch_s:.4f}")
        if args.print_metrics:
            consumer.poll(LibrdkafkaStatistics.INTERVAL_MS / 1000.0 * 1.5)  # serve one more statistics callback
            statistics.print_table()
    except KafkaException as exc:
        print(f"franz perf-test: {exc}", file=sys.stderr)
        return 1
    finally:
        consumer.close()
    return 0


def _assignment(consumer, topic: str | None, include: re.Pattern | None, start_offset: int, partition_type) -> list:
    """Every partition of `topic`, or of every topic `include` matches whole (as Java's Pattern.matches)."""
    metadata = consumer.list_topics(topic, timeout=METADATA_TIMEOUT_S)
    return [partition_type(name, p, start_offset)
            for name, found in sorted(metadata.topics.items())
            if found.error is None and (name == topic if include is None else include.fullmatch(name))
            for p in sorted(found.partitions)]


def _print_progress(format_date: Callable[[float], str], read_bytes: int, last_bytes: int, read: int, last_read: int,
                    start_s: float, end_s: float, join_ms: float) -> None:
    """One --show-detailed-stats line (ConsumerPerformance.printConsumerProgress)."""
    elapsed_ms = max((end_s - start_s) * 1000.0, 1e-9)
    interval_mb = (read_bytes - last_bytes) / MIB
    fetch_ms = int((end_s - start_s) * 1000.0 - join_ms)
    fetch_mb_s = 1000.0 * interval_mb / fetch_ms if fetch_ms > 0 else 0.0
    fetch_rate = 1000.0 * (read - last_read) / fetch_ms if fetch_ms > 0 else 0.0
    _emit(f"{format_date(end_s)}, 0, {read_bytes / MIB:.4f}, {1000.0 * interval_mb / elapsed_ms:.4f}, {read}, "
          f"{1000.0 * (read - last_read) / elapsed_ms:.4f}, {int(join_ms)}, {fetch_ms}, {fetch_mb_s:.4f}, "
          f"{fetch_rate:.4f}")
