"""`franz console-consumer`: print records of a topic (Kafka's kafka-console-consumer.sh).

Reads --topic, or every topic whose whole name matches the --include regular
expression. With --partition it reads that partition from --offset (earliest,
latest or a number); with a group (--group, or group.id in the consumer settings)
it joins that consumer group; otherwise it reads every partition of the topic as
a consumer with a throwaway group would, from auto.offset.reset (latest, or
earliest with --from-beginning). Ends after --max-messages or --timeout-ms
without a record, on SIGINT or SIGTERM (exit code 128 + the signal, as the JVM's)
or when standard output is closed, and prints "Processed a total of N messages"
to stderr, as Kafka does. --include is a Java regular expression matched against
whole topic names here, new topics being looked for every metadata.max.age.ms.

Records are printed by DefaultMessageFormatter, as Kafka 4.3's class of that
name prints them, configured by its formatter properties (--formatter-property,
--formatter-config). Consumer settings (--command-property, --command-config)
are taken in Kafka's names and mapped to librdkafka's by franz/cli/command_config.py.
"""

from __future__ import annotations

import argparse
import logging
import random
import re
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping

from franz.cli.command_config import (CommandConfigError, add_command_options, command_properties,
                                      describe_client_error, librdkafka_config)
from franz.cli.standard_out import discard_stdout
from franz.cli.usage_errors import exit_1_on_usage_errors
from franz.common.java_regex import java_pattern

POLL_S = 0.2
# A metadata request waits this long at most, so that Ctrl-C and --timeout-ms are seen while no broker answers.
METADATA_WAIT_S = 0.5
# Kafka's metadata.max.age.ms: how often a subscription by pattern looks for new topics.
METADATA_MAX_AGE_MS = 300_000
# How soon a --topic without partitions (not created yet) is looked up again (Kafka's retry.backoff.max.ms).
MISSING_TOPIC_RETRY_S = 1.0
# Topics Kafka's consumer leaves out of a subscription by pattern (exclude.internal.topics=true).
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
# A librdkafka log line identical to one printed less than this long ago is counted, not printed: librdkafka
# re-bootstraps an unreachable cluster every ~50 ms and logs each failed connect, where Kafka's client logs
# one WARN per attempt with a backoff growing to reconnect.backoff.max.ms (1 s).
LOG_REPEAT_S = 1.0
SYSLOG_LEVELS = {logging.CRITICAL: 2, logging.ERROR: 3, logging.WARNING: 4, logging.INFO: 6, logging.DEBUG: 7}
FORMATTER = "org.apache.kafka.tools.consumer.DefaultMessageFormatter"
RANDOM_GROUP_BOUND = 100_000  # Kafka names a throwaway group console-consumer-<0..99999>

# confluent_kafka's timestamp type (TIMESTAMP_CREATE_TIME = 1, TIMESTAMP_LOG_APPEND_TIME = 2) as Kafka's
# TimestampType prints; 0 (TIMESTAMP_NOT_AVAILABLE) is printed as NO_TIMESTAMP.
TIMESTAMP_TYPES = {1: "CreateTime", 2: "LogAppendTime"}


class DeserializationError(Exception):
    """A record a deserializer cannot read (Kafka's SerializationException)."""


def _fixed_size_int(class_name: str, size: int) -> Callable[[bytes], bytes]:
    def deserialize(data: bytes) -> bytes:
        if len(data) != size:
            raise DeserializationError(f"Size of data received by {class_name} is not {size}")
        return str(int.from_bytes(data, "big", signed=True)).encode()
    return deserialize


SERIALIZATION = "org.apache.kafka.common.serialization."
# Kafka's deserializers that franz can stand in for: bytes in, the bytes of the text Kafka prints out.
DESERIALIZERS: dict[str, Callable[[bytes], bytes]] = {
    SERIALIZATION + "StringDeserializer": lambda data: data.decode("utf-8", "replace").encode(),
    # Kafka would print the Java array's identity ("[B@1b6d3586"); the bytes themselves are what anyone wants.
    SERIALIZATION + "ByteArrayDeserializer": lambda data: data,
    SERIALIZATION + "ShortDeserializer": _fixed_size_int("ShortDeserializer", 2),
    SERIALIZATION + "IntegerDeserializer": _fixed_size_int("IntegerDeserializer", 4),
    SERIALIZATION + "LongDeserializer": _fixed_size_int("LongDeserializer", 8),
}


class DefaultMessageFormatter:
    """Kafka's DefaultMessageFormatter: the chosen fields of a record, in Kafka's order, joined by
    key.separator and ended by line.separator.

    Delivery and Epoch print NOT_PRESENT, as they do in Kafka 4.3's console consumer, which hands its
    formatter a copy of each record without a leader epoch or a delivery count.
    """

    def __init__(self, properties: Mapping[str, str]) -> None:
        def flag(name: str, default: bool) -> bool:
            return properties[name].strip().lower() == "true" if name in properties else default

        def text(name: str, default: str) -> bytes:
            return properties.get(name, default).encode()

        self.print_timestamp = flag("print.timestamp", False)
        self.print_partition = flag("print.partition", False)
        self.print_offset = flag("print.offset", False)
        self.print_delivery = flag("print.delivery", False)
        self.print_epoch = flag("print.epoch", False)
        self.print_headers = flag("print.headers", False)
        self.print_key = flag("print.key", False)
        self.print_value = flag("print.value", True)
        self.key_separator = text("key.separator", "\t")
        self.line_separator = text("line.separator", "\n")
        self.headers_separator = text("headers.separator", ",")
        self.null_literal = text("null.literal", "null")
        self.key_deserializer = _deserializer(properties, "key.deserializer")
        self.value_deserializer = _deserializer(properties, "value.deserializer")
        self.headers_deserializer = _deserializer(properties, "headers.deserializer")

    def format(self, message) -> bytes:
        """The bytes Kafka's formatter writes for `message` (a confluent_kafka Message)."""
        fields: list[bytes] = []
        if self.print_timestamp:
            timestamp_type, timestamp = message.timestamp()
            name = TIMESTAMP_TYPES.get(timestamp_type)
            fields.append(f"{name}:{timestamp}".encode() if name else b"NO_TIMESTAMP")
        if self.print_partition:
            fields.append(f"Partition:{message.partition()}".encode())
        if self.print_offset:
            fields.append(f"Offset:{message.offset()}".encode())
        if self.print_delivery:
            fields.append(b"Delivery:NOT_PRESENT")
        if self.print_epoch:
            fields.append(b"Epoch:NOT_PRESENT")
        if self.print_headers:
            headers = message.headers() or []
            fields.append(self.headers_separator.join(
                key.encode() + b":" + self._field(self.headers_deserializer, value) for key, value in headers)
                if headers else b"NO_HEADERS")
        if self.print_key:
            fields.append(self._field(self.key_deserializer, message.key()))
        if self.print_value:
            fields.append(self._field(self.value_deserializer, message.value()))
        # As in Kafka, line.separator ends only a record whose value is printed.
        return self.key_separator.join(fields) + (self.line_separator if self.print_value else b"")

    def _field(self, deserializer, data: bytes | None) -> bytes:
        # As in Kafka, a null field is the null literal, and that is what the deserializer is given.
        data = self.null_literal if data is None else data
        return deserializer(data) if deserializer else data


def _deserializer(properties: Mapping[str, str], name: str) -> Callable[[bytes], bytes] | None:
    class_name = properties.get(name)
    if class_name is None:
        return None
    if class_name not in DESERIALIZERS:
        raise CommandConfigError(f"{name} {class_name} is not one franz can use: "
                                 f"{', '.join(sorted(DESERIALIZERS))}")
    return DESERIALIZERS[class_name]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("console-consumer", help="print records of a topic")
    exit_1_on_usage_errors(parser)
    parser.add_argument("--bootstrap-server", required=True)
    parser.add_argument("--topic")
    parser.add_argument("--include", metavar="REGEX", help="every topic whose name matches (instead of --topic)")
    parser.add_argument("--group")
    parser.add_argument("--from-beginning", action="store_true")
    parser.add_argument("--partition", type=int)
    parser.add_argument("--offset", default=None, help="earliest, latest or a non-negative number (with --partition)")
    parser.add_argument("--max-messages", type=int)
    parser.add_argument("--timeout-ms", type=int)
    parser.add_argument("--skip-message-on-error", action="store_true",
                        help="skip a record that cannot be printed instead of stopping")
    parser.add_argument("--isolation-level", choices=["read_uncommitted", "read_committed"])
    parser.add_argument("--formatter", default=FORMATTER, help=f"only {FORMATTER}")
    parser.add_argument("--formatter-property", action="append", default=[], metavar="KEY=VALUE",
                        help="print.timestamp, print.key, print.offset, print.epoch, print.partition, print.headers, "
                             "print.value, print.delivery, key.separator, line.separator, headers.separator, "
                             "null.literal, key.deserializer, value.deserializer, headers.deserializer")
    parser.add_argument("--property", action="append", default=[], metavar="KEY=VALUE",
                        help="deprecated: --formatter-property")
    parser.add_argument("--formatter-config", metavar="FILE", help="formatter properties file")
    parser.add_argument("--key-deserializer", metavar="CLASS", help="Kafka's String/ByteArray/Integer/... class")
    parser.add_argument("--value-deserializer", metavar="CLASS")
    add_command_options(parser, "consumer")
    parser.set_defaults(func=_run)


def _check_usage(args: argparse.Namespace) -> None:
    """ConsoleConsumerOptions' checks of the command line, with its messages."""
    error = args.command_parser.error
    if (args.topic is None) == (args.include is None):
        error("Exactly one of the following arguments is required: [topic], [include]")
    if args.partition is not None:
        if args.topic is None:
            error("The topic is required when partition is specified.")
        if args.from_beginning and args.offset is not None:
            error("Options from-beginning and offset cannot be specified together.")
    elif args.offset is not None:
        error("The partition is required when offset is specified.")
    if args.consumer_property and args.command_property:
        error("Options --consumer-property and --command-property cannot be specified together.")
    if args.consumer_config and args.command_config:
        error("Options --consumer.config and --command-config cannot be specified together.")
    if args.offset is not None and args.offset.lower() not in ("earliest", "latest") and not (
            args.offset.isascii() and args.offset.isdigit()):
        error(f"The provided offset value '{args.offset}' is incorrect. Valid values are "
              "'earliest', 'latest', or a non-negative long.")
    if args.formatter_property and args.property:
        error("Options --property and --formatter-property cannot be specified together.")
    if args.formatter != FORMATTER:
        error(f"--formatter {args.formatter}: franz prints records only with {FORMATTER}")


def _consumer_properties(args: argparse.Namespace) -> tuple[dict[str, str], bool]:
    """The consumer's settings in Kafka's names, as ConsoleConsumerOptions builds them, and whether
    the user named a group (with --group or group.id)."""
    from_file = command_properties(args.command_config or args.consumer_config, [])
    from_args = command_properties(None, args.command_property or args.consumer_property)
    groups = list(dict.fromkeys(group for group in (args.group, from_file.get("group.id"), from_args.get("group.id"))
                                if group is not None))
    if len(groups) > 1:
        args.command_parser.error(
            "The group ids provided in different places (directly using '--group', via '--consumer-property', "
            "or via '--consumer.config') do not match. Detected group ids: "
            + ", ".join(f"'{group}'" for group in groups))
    if groups and args.partition is not None:
        args.command_parser.error("Options group and partition cannot be specified together.")
    properties = {**from_file, **from_args}
    reset = properties.get("auto.offset.reset")
    if reset is not None and args.from_beginning and reset != "earliest":
        raise CommandConfigError(f"Can't simultaneously specify --from-beginning and 'auto.offset.reset={reset}', "
                                 "please remove one option")
    properties.setdefault("auto.offset.reset", "earliest" if args.from_beginning else "latest")
    properties["bootstrap.servers"] = args.bootstrap_server
    properties.setdefault("client.id", "console-consumer")
    if args.isolation_level is not None or "isolation.level" not in properties:
        # Kafka's default, which is not librdkafka's (read_committed).
        properties["isolation.level"] = args.isolation_level or "read_uncommitted"
    if groups:
        properties["group.id"] = groups[0]
    else:
        # A throwaway group: nothing of it is meant to be used again, so nothing is committed by default.
        properties["group.id"] = f"console-consumer-{random.randrange(RANDOM_GROUP_BOUND)}"
        properties.setdefault("enable.auto.commit", "false")
    return properties, bool(groups)


def _formatter_properties(args: argparse.Namespace) -> dict[str, str]:
    properties = command_properties(args.formatter_config, [])
    if args.key_deserializer:
        properties["key.deserializer"] = args.key_deserializer
    if args.value_deserializer:
        properties["value.deserializer"] = args.value_deserializer
    properties.update(command_properties(None, args.formatter_property or args.property))
    return properties


def _start_offset(args: argparse.Namespace, auto_offset_reset: str) -> int:
    from confluent_kafka import OFFSET_BEGINNING, OFFSET_END, OFFSET_STORED  # noqa: PLC0415
    offset = (args.offset or "").lower()
    if offset == "earliest":
        return OFFSET_BEGINNING
    if offset == "latest":
        return OFFSET_END
    if offset:
        return int(offset)
    if args.partition is not None:  # Kafka seeks the partition itself, whatever auto.offset.reset says
        return OFFSET_BEGINNING if args.from_beginning else OFFSET_END
    return {"earliest": OFFSET_BEGINNING, "latest": OFFSET_END}.get(auto_offset_reset, OFFSET_STORED)


class _Shutdown:
    """Kafka's consumer-shutdown-hook: SIGINT or SIGTERM ends the run as a last record would (the consumer is
    closed, committing with a group, and the count printed); the JVM then exits 128 + the signal's number.
    A second signal ends the process at once."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.signum: int | None = None
        if threading.current_thread() is threading.main_thread():
            for signum in self.SIGNALS:
                signal.signal(signum, self._handle)

    def _handle(self, signum: int, _frame) -> None:
        self.signum = signum
        for other in self.SIGNALS:
            signal.signal(other, signal.SIG_DFL)

    def exit_code(self, otherwise: int) -> int:
        return 128 + self.signum if self.signum is not None else otherwise


class _CollapsedLog(logging.Handler):
    """librdkafka's log lines on stderr in its own format, a line repeated within LOG_REPEAT_S counted
    and the count told on the next line printed of it."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.printed: dict[tuple, list] = {}  # (level, facility, text) -> [when printed, repeats not printed]

    def emit(self, record: logging.LogRecord) -> None:
        facility, name, text = record.args if isinstance(record.args, tuple) and len(record.args) == 3 else (
            "LOG", "rdkafka", record.getMessage())
        now = time.monotonic()
        key = (record.levelno, facility, text)
        seen = self.printed.get(key)
        if seen is not None and now - seen[0] < LOG_REPEAT_S:
            seen[1] += 1
            return
        repeats = f" ({seen[1]} identical line(s) not printed)" if seen and seen[1] else ""
        self.printed[key] = [now, 0]
        level = SYSLOG_LEVELS.get(record.levelno, 7)
        try:
            sys.stderr.write(f"%{level}|{record.created:.3f}|{facility}|{name}| {text}{repeats}\n")
            sys.stderr.flush()
        except OSError:
            pass


def _librdkafka_logger() -> logging.Logger:
    logger = logging.getLogger("franz.cli.console_consumer.librdkafka")
    if not logger.handlers:
        logger.addHandler(_CollapsedLog())
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
    return logger


class _Reader:
    """What the consumer reads, set up as Kafka's ConsumerWrapper sets it up, without blocking: a --topic with a
    group is subscribed to; a --partition is assigned; every partition of a --topic without a group is assigned
    once the metadata names them; an --include pattern (Java syntax, whole names) is matched here against the
    cluster's topics, looked at again every metadata.max.age.ms as Kafka's subscription by pattern is.
    Metadata is asked for by `refresh`, called between polls, never waiting longer than METADATA_WAIT_S."""

    def __init__(self, args: argparse.Namespace, consumer, start: int, group_given: bool,
                 include: re.Pattern | None, max_age_ms: int) -> None:
        from confluent_kafka import TopicPartition  # noqa: PLC0415
        self.consumer = consumer
        self.topic = args.topic
        self.start = start
        self.include = include
        self.max_age_s = max_age_ms / 1000
        self.subscribed: list[str] = []
        self.assigned: set[int] = set()
        self.next_refresh: float | None = 0.0  # None: nothing to look up
        if include is None and args.partition is not None:
            consumer.assign([TopicPartition(args.topic, args.partition, start)])
            self.next_refresh = None
        elif include is None and group_given:
            consumer.subscribe([args.topic])
            self.next_refresh = None

    def refresh(self) -> None:
        from confluent_kafka import KafkaException, TopicPartition  # noqa: PLC0415
        if self.next_refresh is None or time.monotonic() < self.next_refresh:
            return
        try:
            metadata = self.consumer.list_topics(self.topic, timeout=METADATA_WAIT_S)
        except KafkaException:
            return  # no answer yet: asked again after the next poll
        self.next_refresh = time.monotonic() + self.max_age_s
        if self.include is not None:
            topics = sorted(name for name in metadata.topics
                            if name not in INTERNAL_TOPICS and self.include.fullmatch(name))
            if topics != self.subscribed:
                if topics:
                    self.consumer.subscribe(topics)
                else:
                    self.consumer.unsubscribe()
                self.subscribed = topics
            return
        described = metadata.topics.get(self.topic)
        partitions = set(described.partitions) if described is not None and not described.error else set()
        if not partitions:
            self.next_refresh = time.monotonic() + MISSING_TOPIC_RETRY_S
        new = sorted(partitions - self.assigned)
        if new:
            self.consumer.incremental_assign([TopicPartition(self.topic, p, self.start) for p in new])
            self.assigned.update(new)


def _run(args: argparse.Namespace) -> int:
    from confluent_kafka import Consumer, KafkaException  # noqa: PLC0415
    _check_usage(args)
    try:
        properties, group_given = _consumer_properties(args)
        formatter = DefaultMessageFormatter(_formatter_properties(args))
        config = librdkafka_config(properties, "consumer")
    except CommandConfigError as exc:
        print(f"franz console-consumer: {exc}", file=sys.stderr)
        return 1
    include = None
    if args.include is not None:
        try:
            include = java_pattern(args.include)
        except re.error as exc:
            print(f"franz console-consumer: --include {args.include!r} is not a valid Java regular expression: {exc}",
                  file=sys.stderr)
            return 1
    shutdown = _Shutdown()
    try:
        consumer = Consumer({**config, "logger": _librdkafka_logger()})
    except (KafkaException, ValueError, TypeError) as exc:
        print(f"franz console-consumer: {describe_client_error(exc, 'consumer')}", file=sys.stderr)
        return 1
    try:
        max_age_ms = int(properties.get("metadata.max.age.ms", METADATA_MAX_AGE_MS))
    except ValueError:
        max_age_ms = METADATA_MAX_AGE_MS
    reader = _Reader(args, consumer, _start_offset(args, properties["auto.offset.reset"]), group_given, include,
                     max_age_ms)
    return _consume(args, consumer, reader, formatter, shutdown)


def _consume(args: argparse.Namespace, consumer, reader: _Reader, formatter: DefaultMessageFormatter,
             shutdown: _Shutdown) -> int:
    count = 0
    exit_code = 0
    last_record = time.monotonic()
    out = sys.stdout.buffer
    try:
        while shutdown.signum is None and (args.max_messages is None or count < args.max_messages):
            reader.refresh()
            message = consumer.poll(POLL_S)
            if message is None or message.error():
                if args.timeout_ms is not None and (time.monotonic() - last_record) * 1000 >= args.timeout_ms:
                    break
                continue
            last_record = time.monotonic()
            count += 1  # counted whether or not it can be printed, as Kafka counts it
            try:
                out.write(formatter.format(message))
                out.flush()
            except DeserializationError as exc:
                if not args.skip_message_on_error:
                    print(f"Unknown error when running consumer: {exc}", file=sys.stderr)
                    exit_code = 1
                    break
                print(f"Error processing message, skipping this message: {exc}", file=sys.stderr)
            except OSError:
                # ConsoleConsumer.checkErr: no one reads the output any more. Later writes (Python's own flush
                # of stdout at exit among them) go nowhere instead of failing again.
                print("Unable to write to standard out, closing consumer.", file=sys.stderr)
                discard_stdout()
                break
    finally:
        consumer.close()
        print(f"Processed a total of {count} messages", file=sys.stderr)
    return shutdown.exit_code(exit_code)
