"""`franz console-producer`: one record per line of standard input (Kafka's kafka-console-producer.sh).

Lines are read by LineMessageReader, which splits a line into headers, key and
value as Kafka 4.3's reader of that name does, configured by its reader
properties (--reader-property, --reader-config). The producer takes Kafka's
producer settings (--command-property, --command-config and the options that
stand for one setting each, such as --batch-size), mapped to librdkafka's by
franz/cli/command_config.py.

A line the reader cannot parse ends the tool with exit code 1, but only after the
records read before it are sent: Kafka's tool closes its producer (which sends
what is pending) in a shutdown hook, and so does this one, also on Ctrl-C.
Exits 1 as well if any record was not acknowledged, after saying which error the
broker gave.
"""

from __future__ import annotations

import argparse
import io
import re
import signal
import sys
import time
from collections.abc import Iterable, Iterator

from franz.cli.command_config import (CommandConfigError, add_command_options, command_properties,
                                      describe_client_error, librdkafka_config)
from franz.cli.usage_errors import exit_1_on_usage_errors

FLUSH_TIMEOUT_S = 60.0
QUEUE_FULL_POLL_S = 0.1
MAX_BLOCK_MS_DEFAULT = 60_000  # Kafka's max.block.ms default
LINE_READER = "org.apache.kafka.tools.LineMessageReader"
EXIT_ON_INTERRUPT = 130  # 128 + SIGINT, as the JVM exits on Ctrl-C
EXIT_ON_TERMINATE = 143  # 128 + SIGTERM: the JVM runs its shutdown hooks on SIGTERM too
# The Java producer's max.request.size default, which also bounds one record; librdkafka's
# message.max.bytes defaults to 1,000,000 and would refuse records Kafka's tool sends.
MAX_REQUEST_SIZE_DEFAULT = 1024 * 1024

# Options that each stand for one producer setting; given explicitly, they win over the properties.
SETTING_OPTIONS = (
    ("batch_size", "batch.size"),
    ("max_partition_memory_bytes", "batch.size"),  # deprecated in 4.2; applied after --batch-size, as in Kafka
    ("timeout", "linger.ms"),
    ("request_required_acks", "acks"),
    ("request_timeout_ms", "request.timeout.ms"),
    ("message_send_max_retries", "retries"),
    ("retry_backoff_ms", "retry.backoff.ms"),
    ("socket_buffer_size", "send.buffer.bytes"),
    ("max_memory_bytes", "buffer.memory"),
    ("metadata_expiry_ms", "metadata.max.age.ms"),
    ("max_block_ms", "max.block.ms"),
)


class ReaderError(Exception):
    """A reader setting or an input line LineMessageReader refuses (Kafka's KafkaException from the reader)."""


class LineMessageReader:
    """Kafka's LineMessageReader: each line is [HEADERS<headers.delimiter>][KEY<key.separator>]VALUE.

    HEADERS is h1<headers.key.separator>v1<headers.separator>h2... (headers.separator is
    a regular expression, as in Kafka); any of key, value, the whole headers field or a
    header value equal to null.marker becomes null. With ignore.error a missing
    delimiter leaves that field out instead of failing the line.
    """

    def __init__(self, properties: dict[str, str]) -> None:
        def flag(name: str) -> bool:
            return properties.get(name, "false").strip().lower() == "true"

        self.parse_key = flag("parse.key")
        self.key_separator = properties.get("key.separator", "\t")
        self.parse_headers = flag("parse.headers")
        self.headers_delimiter = properties.get("headers.delimiter", "\t")
        self.headers_separator = properties.get("headers.separator", ",")
        self.headers_key_separator = properties.get("headers.key.separator", ":")
        self.ignore_error = flag("ignore.error")
        self.null_marker = properties.get("null.marker")
        # Kafka checks these whether or not parse.key / parse.headers is on.
        for (name_a, a), (name_b, b) in _pairs_of((
                ("headers.delimiter", self.headers_delimiter), ("headers.separator", self.headers_separator),
                ("headers.key.separator", self.headers_key_separator))):
            if a == b:
                raise ReaderError(f"{name_a} and {name_b} may not be equal")
        for name, value in (("key.separator", self.key_separator), ("headers.separator", self.headers_separator),
                            ("headers.delimiter", self.headers_delimiter),
                            ("headers.key.separator", self.headers_key_separator)):
            if value == self.null_marker:
                raise ReaderError(f"null.marker and {name} may not be equal")
        try:
            self.headers_separator_pattern = re.compile(self.headers_separator)
        except re.error as exc:
            raise ReaderError(f"headers.separator is not a valid regular expression: {exc}") from None
        self.line_number = 0

    def records(self, lines: Iterable[str]) -> Iterator[tuple[list[tuple[str, bytes | None]], bytes | None,
                                                              bytes | None]]:
        """(headers, key, value) of each line; raises ReaderError at the first line it cannot parse."""
        for line in lines:
            self.line_number += 1
            line = line.removesuffix("\n")
            headers = self._field(self.parse_headers, line, 0, self.headers_delimiter, "headers delimiter")
            header_end = 0 if headers is None else len(headers) + len(self.headers_delimiter)
            key = self._field(self.parse_key, line, header_end, self.key_separator, "key separator")
            key_end = 0 if key is None else len(key) + len(self.key_separator)
            value = line[header_end + key_end:]
            record_headers = [] if headers is None or headers == self.null_marker else self._split_headers(headers)
            yield record_headers, self._bytes(key), self._bytes(value)

    def _field(self, enabled: bool, line: str, start: int, delimiter: str, delimiter_name: str) -> str | None:
        if not enabled:
            return None
        end = line.find(delimiter, start)
        if end == -1:
            if self.ignore_error:
                return None
            raise ReaderError(f"No {delimiter_name} found on line number {self.line_number}: '{line}'")
        return line[start:end]

    def _split_headers(self, headers: str) -> list[tuple[str, bytes | None]]:
        pairs = self.headers_separator_pattern.split(headers)
        while len(pairs) > 1 and pairs[-1] == "":
            pairs.pop()  # Java's String.split drops trailing empty strings
        result: list[tuple[str, bytes | None]] = []
        for pair in pairs:
            at = pair.find(self.headers_key_separator)
            if at == -1:
                if not self.ignore_error:
                    raise ReaderError(f"No header key separator found in pair '{pair}' on line number "
                                      f"{self.line_number}")
                result.append((_text(pair), None))
                continue
            header_key = pair[:at]
            if header_key == self.null_marker:
                raise ReaderError(f"Header keys should not be equal to the null marker '{self.null_marker}' "
                                  "as they can't be null")
            result.append((_text(header_key), self._bytes(pair[at + len(self.headers_key_separator):])))
        return result

    def _bytes(self, field: str | None) -> bytes | None:
        if field is None or field == self.null_marker:
            return None
        return field.encode("utf-8", "surrogateescape")


def _pairs_of(items):
    return [(items[i], items[j]) for i in range(len(items)) for j in range(i + 1, len(items))]


def _text(field: str) -> str:
    """A header key as text: bytes that were not UTF-8 become U+FFFD, as Java's reader decodes them."""
    return field.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("console-producer", help="produce lines of stdin as records")
    exit_1_on_usage_errors(parser)
    parser.add_argument("--bootstrap-server", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--sync", action="store_true", help="send each record and wait for its acknowledgement")
    parser.add_argument("--compression-codec", nargs="?", const="gzip", default="none",
                        choices=["none", "gzip", "snappy", "lz4", "zstd"], help="gzip when given without a value")
    parser.add_argument("--line-reader", default=LINE_READER, help=f"only {LINE_READER}")
    parser.add_argument("--reader-property", action="append", default=[], metavar="KEY=VALUE",
                        help="parse.key, key.separator, parse.headers, headers.delimiter, headers.separator, "
                             "headers.key.separator, ignore.error, null.marker")
    parser.add_argument("--property", action="append", default=[], metavar="KEY=VALUE",
                        help="deprecated: --reader-property")
    parser.add_argument("--reader-config", metavar="FILE", help="reader properties file")
    add_command_options(parser, "producer")
    parser.add_argument("--request-required-acks", help="acks")
    parser.add_argument("--timeout", type=int, metavar="MS", help="linger.ms")
    parser.add_argument("--batch-size", type=int, help="batch.size")
    parser.add_argument("--max-partition-memory-bytes", type=int, help="deprecated: --batch-size")
    parser.add_argument("--message-send-max-retries", type=int, help="retries")
    parser.add_argument("--retry-backoff-ms", type=int, help="retry.backoff.ms")
    parser.add_argument("--request-timeout-ms", type=int, help="request.timeout.ms")
    parser.add_argument("--max-block-ms", type=int, help="max.block.ms: the longest wait for room in the queue")
    parser.add_argument("--max-memory-bytes", type=int, help="buffer.memory")
    parser.add_argument("--metadata-expiry-ms", type=int, help="metadata.max.age.ms")
    parser.add_argument("--socket-buffer-size", type=int, help="send.buffer.bytes")
    parser.set_defaults(func=_run)


def _check_usage(args: argparse.Namespace) -> None:
    for new, old, new_name, old_name in (
            (args.command_config, args.producer_config, "--command-config", "--producer.config"),
            (args.command_property, args.producer_property, "--command-property", "--producer-property"),
            (args.reader_property, args.property, "--reader-property", "--property")):
        if new and old:
            args.command_parser.error(f"Options {new_name} and {old_name} cannot be specified together.")
    if args.line_reader != LINE_READER:
        args.command_parser.error(f"--line-reader {args.line_reader}: franz reads lines only with {LINE_READER}")


def _producer_properties(args: argparse.Namespace) -> dict[str, str]:
    """The producer's settings in Kafka's names, with ConsoleProducer's precedence."""
    properties = command_properties(args.command_config or args.producer_config,
                                    args.command_property or args.producer_property)
    properties["bootstrap.servers"] = args.bootstrap_server
    properties["compression.type"] = args.compression_codec  # Kafka's tool sets it whatever the properties say
    properties.setdefault("client.id", "console-producer")
    properties.setdefault("max.request.size", str(MAX_REQUEST_SIZE_DEFAULT))
    for option, name in SETTING_OPTIONS:
        value = getattr(args, option)
        if value is not None:
            properties[name] = str(value)
    return properties


def _run(args: argparse.Namespace) -> int:
    from confluent_kafka import KafkaException, Producer  # noqa: PLC0415
    _check_usage(args)
    try:
        reader_properties = command_properties(args.reader_config, args.reader_property or args.property)
        reader = LineMessageReader(reader_properties)
        properties = _producer_properties(args)
        max_block_ms = _max_block_ms(properties.pop("max.block.ms", str(MAX_BLOCK_MS_DEFAULT)))
        config = librdkafka_config(properties, "producer")
    except (CommandConfigError, ReaderError) as exc:
        print(f"franz console-producer: {exc}", file=sys.stderr)
        return 1
    # murmur2_random: keyed lines land where kafka-console-producer (the Java producer) puts them.
    config.setdefault("partitioner", "murmur2_random")
    try:
        producer = Producer(config)
    except (KafkaException, ValueError, TypeError) as exc:
        print(f"franz console-producer: {describe_client_error(exc, 'producer')}", file=sys.stderr)
        return 1
    failures: list[str] = []

    def report(error, message) -> None:
        if error is not None:
            _log_send_error(args.topic, message.key(), message.value(), str(error))
            failures.append(str(error))

    lines = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape")
    exit_code = 0
    # Ctrl-C and SIGTERM end the input and send what was read, even when started with SIGINT ignored
    # (a background job of a non-interactive shell), as the console consumer does.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _terminated)
    try:
        for headers, key, value in reader.records(lines):
            _send(producer, args.topic, headers, key, value, report, max_block_ms, failures)
            if args.sync:
                producer.flush(FLUSH_TIMEOUT_S)
                if failures:
                    break
    except ReaderError as exc:
        print(f"franz console-producer: {exc}", file=sys.stderr)
        exit_code = 1
    except KeyboardInterrupt:
        exit_code = EXIT_ON_INTERRUPT
    except Terminated:
        exit_code = EXIT_ON_TERMINATE
    # What was read is sent before exiting, whatever ended the input (Kafka's producer-shutdown-hook).
    remaining = producer.flush(FLUSH_TIMEOUT_S)
    if failures or remaining:
        print(f"franz console-producer: {len(failures) + remaining} records not acknowledged: "
              f"{failures[:1] or ['timed out']}", file=sys.stderr)
        return exit_code or 1
    return exit_code


def _log_send_error(topic: str, key, value, error: str) -> None:
    """The line Kafka's ErrorLoggingCallback logs for a record that failed; the run goes on."""
    key_text = "null" if key is None else f"{len(key)} bytes"
    value_text = "null" if value is None else f"{len(value)} bytes"
    print(f"ERROR Error when sending message to topic {topic} with key: {key_text}, value: {value_text} "
          f"with error: {error}", file=sys.stderr, flush=True)


class Terminated(Exception):
    """SIGTERM arrived: stop reading, then send what was read, as Kafka's shutdown hook does."""


def _terminated(_signum, _frame) -> None:
    raise Terminated


def _max_block_ms(value: str) -> int:
    """max.block.ms, which librdkafka does not have: this tool applies it itself (see _send)."""
    try:
        return int(value)
    except ValueError:
        raise CommandConfigError(f'the producer property "max.block.ms" must be a number, not {value!r}') from None


def _send(producer, topic: str, headers, key, value, report, max_block_ms: int, failures: list[str]) -> None:
    """Produce one record, waiting at most max_block_ms for room in the queue (Kafka's max.block.ms);
    a record that finds none is dropped and counted as failed, as the Java producer fails its send."""
    from confluent_kafka import KafkaException  # noqa: PLC0415
    deadline = time.monotonic() + max_block_ms / 1000
    while True:
        try:
            producer.produce(topic, value=value, key=key, headers=headers or None, on_delivery=report)
            break
        except KafkaException as exc:  # this record alone (too large, ...): the Java send fails it in its callback
            error = exc.args[0].str() if exc.args and hasattr(exc.args[0], "str") else str(exc)
            _log_send_error(topic, key, value, error)
            failures.append(error)
            break
        except BufferError:
            if time.monotonic() >= deadline:
                failures.append("Failed to allocate memory within the configured max blocking time "
                                f"{max_block_ms} ms.")
                break
            producer.poll(QUEUE_FULL_POLL_S)
    producer.poll(0)
