"""`franz console-consumer` against a real broker."""

from __future__ import annotations

import queue
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.support.cli import TIMEOUT_S, franz

pytestmark = pytest.mark.interop

NO_BROKER = "127.0.0.1:1"  # for runs that must end before connecting anywhere


def create_topic(bootstrap: str, topic: str, config: dict[str, str] | None = None) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the creation is answered
    admin.create_topics([NewTopic(topic, 1, config=config or {})])[topic].result(timeout=30)


def produce(bootstrap: str, topic: str, records: list[tuple]) -> None:
    """(key, value[, headers]) records, each in its own produce call."""
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": bootstrap})
    for key, value, *headers in records:
        producer.produce(topic, key=key, value=value, headers=headers[0] if headers else None)
    assert producer.flush(30) == 0


def consume(bootstrap: str, *args: str):
    return franz("console-consumer", "--bootstrap-server", bootstrap, *args)


def start_consumer(bootstrap: str, *args: str) -> subprocess.Popen:
    """The tool as its own process, for signals and pipes; stdout in bytes, stderr in text."""
    return subprocess.Popen([sys.executable, "-m", "franz.cli.main", "console-consumer", "--bootstrap-server",
                             bootstrap, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def read_lines(stream, count: int, timeout_s: float = 30) -> list[bytes]:
    """`count` lines of `stream`, failing the test when they do not come within `timeout_s`."""
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=lambda: [lines.put(stream.readline()) for _ in range(count)], daemon=True).start()
    return [lines.get(timeout=timeout_s) for _ in range(count)]


def finish(process: subprocess.Popen) -> tuple[bytes, str]:
    try:
        out, err = process.communicate(timeout=TIMEOUT_S)
    finally:
        process.kill()
    return out or b"", err.decode()


def test_console_consumer_from_an_offset_and_a_timeout(broker):
    b = broker.bootstrap
    franz("topics", "--bootstrap-server", b, "--create", "--topic", "off")
    franz("console-producer", "--bootstrap-server", b, "--topic", "off", stdin="a\nb\nc\nd\n")
    consumed = franz("console-consumer", "--bootstrap-server", b, "--topic", "off", "--partition", "0",
                     "--offset", "2", "--timeout-ms", "1500")
    assert consumed.stdout.splitlines() == ["c", "d"]
    assert "Processed a total of 2 messages" in consumed.stderr


def test_print_timestamp_names_the_records_timestamp_type(broker):
    b = broker.bootstrap
    create_topic(b, "appended", {"message.timestamp.type": "LogAppendTime"})
    create_topic(b, "created")
    produce(b, "appended", [(None, b"a")])
    produce(b, "created", [(None, b"c")])
    appended = consume(b, "--topic", "appended", "--from-beginning", "--max-messages", "1",
                       "--formatter-property", "print.timestamp=true")
    created = consume(b, "--topic", "created", "--from-beginning", "--max-messages", "1",
                      "--formatter-property", "print.timestamp=true")
    assert appended.stdout.startswith("LogAppendTime:") and appended.stdout.endswith("\ta\n"), appended.stderr
    assert created.stdout.startswith("CreateTime:") and created.stdout.endswith("\tc\n"), created.stderr


def test_formatter_properties_print_as_kafkas_default_message_formatter(broker):
    b = broker.bootstrap
    create_topic(b, "formatted")
    produce(b, "formatted", [(b"k1", b"v1", [("h1", b"x"), ("h2", None)]), (b"k2", None)])
    everything = consume(b, "--topic", "formatted", "--from-beginning", "--max-messages", "2",
                         "--formatter", "org.apache.kafka.tools.consumer.DefaultMessageFormatter",
                         "--formatter-property", "print.headers=true", "--formatter-property", "print.key=true",
                         "--formatter-property", "print.offset=true", "--formatter-property", "print.epoch=true",
                         "--formatter-property", "print.delivery=true", "--formatter-property", "key.separator= ",
                         "--formatter-property", "headers.separator=|", "--formatter-property", "line.separator=;",
                         "--formatter-property", "null.literal=<nil>")
    assert everything.returncode == 0, everything.stderr
    assert everything.stdout == ("Offset:0 Delivery:NOT_PRESENT Epoch:NOT_PRESENT h1:x|h2:<nil> k1 v1;"
                                 "Offset:1 Delivery:NOT_PRESENT Epoch:NOT_PRESENT NO_HEADERS k2 <nil>;")
    keys_only = consume(b, "--topic", "formatted", "--from-beginning", "--max-messages", "2",
                        "--formatter-property", "print.key=true", "--formatter-property", "print.value=false")
    # DefaultMessageFormatter writes line.separator only after a value, so without values the records run on.
    assert keys_only.stdout == "k1k2", keys_only.stderr
    offsets_only = consume(b, "--topic", "formatted", "--from-beginning", "--max-messages", "2",
                           "--formatter-property", "print.offset=true", "--formatter-property", "print.value=false")
    assert offsets_only.stdout == "Offset:0Offset:1", offsets_only.stderr


def test_formatter_and_consumer_properties_files_are_read(broker, tmp_path):
    b = broker.bootstrap
    create_topic(b, "configured")
    produce(b, "configured", [(b"k", b"v")])
    formatter_config = tmp_path / "formatter.properties"
    formatter_config.write_text("# a comment\nprint.key: true\nkey.separator = \\u007c\n")
    consumer_config = tmp_path / "consumer.properties"
    # Kafka's names: auto.offset.reset from the file stands in for --from-beginning; receive.buffer.bytes is
    # librdkafka's socket.receive.buffer.bytes; Kafka's tool replaces the deserializers anyway.
    consumer_config.write_text("auto.offset.reset=earliest\nreceive.buffer.bytes=65536\n"
                               "key.deserializer=org.apache.kafka.common.serialization.StringDeserializer\n")
    consumed = consume(b, "--topic", "configured", "--max-messages", "1", "--formatter-config", str(formatter_config),
                       "--command-config", str(consumer_config))
    assert consumed.stdout == "k|v\n", consumed.stderr


def test_include_reads_every_topic_whose_whole_name_matches(broker):
    b = broker.bootstrap
    for topic in ("inc-a", "inc-b", "xinc-c"):
        create_topic(b, topic)
        produce(b, topic, [(None, topic.encode())])
    consumed = consume(b, "--include", "inc-.*", "--from-beginning", "--max-messages", "2", "--timeout-ms", "20000",
                       "--command-property", "group.id=include-test")
    assert consumed.returncode == 0, consumed.stderr
    assert sorted(consumed.stdout.splitlines()) == ["inc-a", "inc-b"]


def test_deserializers_and_skip_message_on_error(broker):
    b = broker.bootstrap
    create_topic(b, "numbers")
    produce(b, "numbers", [(b"\x00\x00\x00\x07", b"seven"), (b"\x01", b"short key"), (b"\xff\xff\xff\xfe", b"neg")])
    common = ("--topic", "numbers", "--from-beginning", "--max-messages", "3", "--timeout-ms", "5000",
              "--formatter-property", "print.key=true",
              "--key-deserializer", "org.apache.kafka.common.serialization.IntegerDeserializer",
              "--value-deserializer", "org.apache.kafka.common.serialization.StringDeserializer")
    skipping = consume(b, *common, "--skip-message-on-error")
    assert skipping.returncode == 0, skipping.stderr
    assert skipping.stdout.splitlines() == ["7\tseven", "-2\tneg"]
    assert "skipping this message: Size of data received by IntegerDeserializer is not 4" in skipping.stderr
    stopping = consume(b, *common)
    assert stopping.returncode == 1
    assert stopping.stdout.splitlines() == ["7\tseven"]
    assert "Size of data received by IntegerDeserializer is not 4" in stopping.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--topic", "t", "--partition", "0", "--offset", "foo"],
     "The provided offset value 'foo' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long."),
    (["--topic", "t", "--partition", "0", "--offset", "-5"], "The provided offset value '-5' is incorrect."),
    (["--topic", "t", "--offset", "3"], "The partition is required when offset is specified."),
    (["--topic", "t", "--partition", "0", "--offset", "3", "--from-beginning"],
     "Options from-beginning and offset cannot be specified together."),
    (["--topic", "t", "--partition", "0", "--group", "g1"],
     "Options group and partition cannot be specified together."),
    (["--topic", "t", "--partition", "0", "--command-property", "group.id=g1"],
     "Options group and partition cannot be specified together."),
    (["--topic", "t", "--group", "g1", "--command-property", "group.id=g2"],
     "Detected group ids: 'g1', 'g2'"),
    ([], "Exactly one of the following arguments is required: [topic], [include]"),
    (["--topic", "t", "--include", "t.*"], "Exactly one of the following arguments is required"),
    (["--include", "t.*", "--partition", "0"], "The topic is required when partition is specified."),
    (["--topic", "t", "--property", "print.key=true", "--formatter-property", "print.key=true"],
     "Options --property and --formatter-property cannot be specified together."),
    (["--topic", "t", "--consumer-property", "a=1", "--command-property", "a=1"],
     "Options --consumer-property and --command-property cannot be specified together."),
    (["--topic", "t", "--consumer.config", "a", "--command-config", "b"],
     "Options --consumer.config and --command-config cannot be specified together."),
    (["--topic", "t", "--formatter", "org.apache.kafka.tools.consumer.LoggingMessageFormatter"],
     "LoggingMessageFormatter"),
    (["--topic", "t", "--no-such-option"], "unrecognized arguments: --no-such-option"),
])
def test_usage_errors_exit_1_with_kafkas_messages(args, message):
    consumed = consume(NO_BROKER, *args)
    assert consumed.returncode == 1, consumed.stderr
    assert message in consumed.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--key-deserializer", "com.example.AvroDeserializer"], "key.deserializer com.example.AvroDeserializer"),
    (["--command-property", "metadata.max.idle.ms=1000"], '"metadata.max.idle.ms" is a Java client setting'),
    (["--from-beginning", "--command-property", "auto.offset.reset=latest"],
     "Can't simultaneously specify --from-beginning and 'auto.offset.reset=latest', please remove one option"),
])
def test_settings_franz_cannot_honour_are_refused_naming_them(args, message):
    consumed = consume(NO_BROKER, "--topic", "t", *args)
    assert consumed.returncode == 1
    assert message in consumed.stderr
    assert "Traceback" not in consumed.stderr


def test_records_of_an_open_transaction_are_printed_unless_read_committed_is_asked_for(broker):
    from confluent_kafka import Producer

    b = broker.bootstrap
    create_topic(b, "open-txn")
    producer = Producer({"bootstrap.servers": b, "transactional.id": "console-consumer-test"})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce("open-txn", value=b"pending")
    assert producer.flush(30) == 0
    # Kafka's tool reads uncommitted records unless told otherwise; librdkafka's own default is read_committed.
    by_default = consume(b, "--topic", "open-txn", "--from-beginning", "--max-messages", "1", "--timeout-ms", "10000")
    committed_only = consume(b, "--topic", "open-txn", "--from-beginning", "--timeout-ms", "2000",
                             "--isolation-level", "read_committed")
    producer.abort_transaction(30)
    assert by_default.stdout == "pending\n", by_default.stderr
    assert committed_only.stdout == "", committed_only.stderr


def test_include_takes_java_regex_syntax_and_picks_up_new_topics(broker):
    b = broker.bootstrap
    for topic in ("p1", "p2", "px", "hdr"):
        create_topic(b, topic)
        produce(b, topic, [(None, topic.encode())])
    digits = consume(b, "--include", r"p\d", "--from-beginning", "--max-messages", "2", "--timeout-ms", "20000")
    assert digits.returncode == 0, digits.stderr
    assert sorted(digits.stdout.splitlines()) == ["p1", "p2"]
    flagged = consume(b, "--include", "(?i)HDR", "--from-beginning", "--max-messages", "1", "--timeout-ms", "20000")
    assert flagged.stdout == "hdr\n", flagged.stderr
    # A topic created after the start is read once the metadata is looked at again (metadata.max.age.ms).
    late = start_consumer(b, "--include", r"late-\d+", "--from-beginning", "--max-messages", "1",
                          "--timeout-ms", "30000", "--command-property", "metadata.max.age.ms=1000")
    try:
        time.sleep(2)
        create_topic(b, "late-1")
        produce(b, "late-1", [(None, b"late")])
    finally:
        out, err = finish(late)
    assert out == b"late\n", err
    assert late.returncode == 0


@pytest.mark.parametrize("pattern", ["[", "(", "(?P<x>a)"])
def test_an_include_pattern_java_refuses_is_an_error_without_a_traceback(pattern):
    consumed = consume(NO_BROKER, "--include", pattern, "--timeout-ms", "1000")
    assert consumed.returncode == 1
    assert "is not a valid Java regular expression" in consumed.stderr
    assert "Traceback" not in consumed.stderr


def test_closed_output_ends_the_run_with_kafkas_message_and_the_count(broker):
    b = broker.bootstrap
    create_topic(b, "piped")
    produce(b, "piped", [(None, b"record-%06d" % i) for i in range(50_000)])  # more than a pipe holds
    process = start_consumer(b, "--topic", "piped", "--from-beginning", "--timeout-ms", "20000")
    try:
        assert read_lines(process.stdout, 1) == [b"record-000000\n"]
        process.stdout.close()  # as `| head -1` does
    finally:
        _, err = finish(process)
    assert process.returncode == 0, err
    assert "Unable to write to standard out, closing consumer." in err
    assert "Processed a total of " in err
    assert "Traceback" not in err and "Error" not in err.replace("Unable", ""), err


@pytest.mark.parametrize(("signum", "exit_code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_ends_the_run_promptly_while_no_broker_answers(signum, exit_code):
    process = start_consumer(NO_BROKER, "--topic", "t")
    try:
        time.sleep(2)  # waiting for the topic's metadata
        signalled = time.monotonic()
        process.send_signal(signum)
    finally:
        _, err = finish(process)
    assert time.monotonic() - signalled < 5
    assert process.returncode == exit_code, err  # 128 + the signal, as the JVM exits after its shutdown hook
    assert "Processed a total of 0 messages" in err
    assert "Traceback" not in err
    # librdkafka logs each failed connect, ~20 a second here; a repeat within a second is counted instead,
    # about what Kafka's client logs with its backoff growing to 1 s.
    assert 1 <= err.count("Connection refused") <= 6, err


def test_timeout_ms_ends_the_run_while_no_broker_answers():
    started = time.monotonic()
    consumed = consume(NO_BROKER, "--topic", "t", "--timeout-ms", "1500")
    assert time.monotonic() - started < 10
    assert consumed.returncode == 0, consumed.stderr
    assert "Processed a total of 0 messages" in consumed.stderr
    assert "Traceback" not in consumed.stderr


def test_sigterm_closes_the_consumer_committing_its_groups_offsets(broker):
    b = broker.bootstrap
    create_topic(b, "terminated")
    produce(b, "terminated", [(None, b"a"), (None, b"b"), (None, b"c")])
    process = start_consumer(b, "--topic", "terminated", "--group", "sigterm-group", "--from-beginning",
                             "--command-property", "auto.commit.interval.ms=600000")
    try:
        assert read_lines(process.stdout, 3) == [b"a\n", b"b\n", b"c\n"]
        process.send_signal(signal.SIGTERM)
    finally:
        _, err = finish(process)
    assert process.returncode == 143, err
    assert "Processed a total of 3 messages" in err
    produce(b, "terminated", [(None, b"d")])
    # close() committed the offsets read, so the group goes on after them.
    again = consume(b, "--topic", "terminated", "--group", "sigterm-group", "--from-beginning", "--max-messages", "1",
                    "--timeout-ms", "20000")
    assert again.stdout == "d\n", again.stderr
