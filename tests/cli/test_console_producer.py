"""`franz console-producer` against a real broker."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from tests.support.cli import TIMEOUT_S, franz

pytestmark = pytest.mark.interop

NO_BROKER = "127.0.0.1:1"  # for runs that must end before connecting anywhere


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the creation is answered
    admin.create_topics([NewTopic(topic, partitions)])[topic].result(timeout=30)


def read_all(bootstrap: str, topic: str, count: int) -> list:
    """The first `count` records of partition 0 of `topic`, as confluent_kafka Messages."""
    from confluent_kafka import OFFSET_BEGINNING, Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "producer-test-check"})
    messages = []
    try:
        consumer.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
        deadline = time.monotonic() + 30
        while len(messages) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and not message.error():
                messages.append(message)
        # Nothing more than expected: a record that should not have been sent would show here.
        extra = consumer.poll(1.0)
        assert extra is None or extra.error(), extra.value()
    finally:
        consumer.close()
    return messages


def test_console_producer_then_consumer_round_trip_keys_and_values(broker):
    b = broker.bootstrap
    assert franz("topics", "--bootstrap-server", b, "--create", "--topic", "lines").returncode == 0
    produced = franz("console-producer", "--bootstrap-server", b, "--topic", "lines",
                     "--property", "parse.key=true", "--property", "key.separator=:",
                     stdin="k1:first\nk2:second\nk1:third\n")
    assert produced.returncode == 0, produced.stderr
    consumed = franz("console-consumer", "--bootstrap-server", b, "--topic", "lines", "--from-beginning",
                     "--max-messages", "3", "--property", "print.key=true", "--property", "print.offset=true")
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.splitlines() == ["Offset:0\tk1\tfirst", "Offset:1\tk2\tsecond", "Offset:2\tk1\tthird"]
    assert "Processed a total of 3 messages" in consumed.stderr


def test_console_producer_puts_a_keyed_line_on_the_partition_kafkas_tool_would(broker):
    from confluent_kafka import Consumer, TopicPartition
    from kafka.partitioner.default import murmur2  # kafka-python's port of the Java client's hash

    b = broker.bootstrap
    created = franz("topics", "--bootstrap-server", b, "--create", "--topic", "spread", "--partitions", "4")
    assert created.returncode == 0
    keys = [f"key-{i}" for i in range(12)]
    produced = franz("console-producer", "--bootstrap-server", b, "--topic", "spread", "--property", "parse.key=true",
                     "--property", "key.separator=:", stdin="".join(f"{key}:v\n" for key in keys))
    assert produced.returncode == 0, produced.stderr
    consumer = Consumer({"bootstrap.servers": b, "group.id": "spread-check"})
    try:
        ends = [consumer.get_watermark_offsets(TopicPartition("spread", p), timeout=10)[1] for p in range(4)]
    finally:
        consumer.close()
    expected = [0] * 4
    for key in keys:
        expected[(murmur2(key.encode()) & 0x7FFFFFFF) % 4] += 1
    assert ends == expected


def test_a_line_without_key_separator_fails_with_kafkas_message_after_sending_the_lines_before_it(broker):
    create_topic(broker.bootstrap, "bad-line")
    # A long linger (--timeout) keeps the first two records queued when the third line is read.
    produced = franz("console-producer", "--bootstrap-server", broker.bootstrap, "--topic", "bad-line",
                     "--property", "parse.key=true", "--timeout", "30000", stdin="a\tb\nc\td\nnosep\ne\tf\n")
    assert produced.returncode == 1
    assert "No key separator found on line number 3: 'nosep'" in produced.stderr
    assert "Traceback" not in produced.stderr
    assert [(m.key(), m.value()) for m in read_all(broker.bootstrap, "bad-line", 2)] == [(b"a", b"b"), (b"c", b"d")]


def test_headers_keys_and_null_markers_are_parsed_as_kafkas_line_reader_does(broker):
    create_topic(broker.bootstrap, "headed")
    lines = "h1:x,h2:NULL\tk1\tv1\nNULL\tNULL\tv2\nh3:z\tk3\tNULL\na:1,b:2,\tk4\tv\tw\n"
    produced = franz("console-producer", "--bootstrap-server", broker.bootstrap, "--topic", "headed",
                     "--reader-property", "parse.headers=true", "--reader-property", "parse.key=true",
                     "--reader-property", "null.marker=NULL", stdin=lines)
    assert produced.returncode == 0, produced.stderr
    records = [(m.headers(), m.key(), m.value()) for m in read_all(broker.bootstrap, "headed", 4)]
    assert records == [([("h1", b"x"), ("h2", None)], b"k1", b"v1"),
                       (None, None, b"v2"),
                       ([("h3", b"z")], b"k3", None),
                       ([("a", b"1"), ("b", b"2")], b"k4", b"v\tw")]


def test_custom_header_separators_and_ignore_error_keep_lines_that_lack_a_delimiter(broker):
    create_topic(broker.bootstrap, "lenient")
    produced = franz("console-producer", "--bootstrap-server", broker.bootstrap, "--topic", "lenient",
                     "--reader-property", "parse.headers=true", "--reader-property", "parse.key=true",
                     "--reader-property", "headers.delimiter=|", "--reader-property", "headers.separator=;",
                     "--reader-property", "headers.key.separator==", "--reader-property", "key.separator=#",
                     "--reader-property", "ignore.error=true",
                     stdin="a=1;b|k#v\nno delimiters at all\nh=1|only-value\n")
    assert produced.returncode == 0, produced.stderr
    records = [(m.headers(), m.key(), m.value()) for m in read_all(broker.bootstrap, "lenient", 3)]
    assert records == [([("a", b"1"), ("b", None)], b"k", b"v"),
                       (None, None, b"no delimiters at all"),
                       ([("h", b"1")], None, b"only-value")]


@pytest.mark.parametrize(("properties", "stdin", "message"), [
    (["headers.separator=:"], "", "headers.separator and headers.key.separator may not be equal"),
    (["headers.delimiter=,"], "", "headers.delimiter and headers.separator may not be equal"),
    (["null.marker=\t"], "", "null.marker and key.separator may not be equal"),
    (["parse.headers=true"], "h1\tv\n", "No header key separator found in pair 'h1' on line number 1"),
    (["parse.headers=true"], "x\n", "No headers delimiter found on line number 1: 'x'"),
    (["parse.headers=true", "null.marker=N"], "N:v\tv\n",
     "Header keys should not be equal to the null marker 'N' as they can't be null"),
])
def test_bad_reader_settings_and_lines_are_refused_with_kafkas_messages(properties, stdin, message):
    args = [arg for prop in properties for arg in ("--reader-property", prop)]
    produced = franz("console-producer", "--bootstrap-server", NO_BROKER, "--topic", "t", *args, stdin=stdin)
    assert produced.returncode == 1
    assert message in produced.stderr
    assert "Traceback" not in produced.stderr


def test_kafka_4_3_producer_options_are_taken_and_a_bare_compression_codec_means_gzip(broker, tmp_path):
    create_topic(broker.bootstrap, "options")
    produced = franz("console-producer", "--bootstrap-server", broker.bootstrap, "--topic", "options", "--sync",
                     "--reader-property", "parse.key=true", "--command-property", "acks=1",
                     "--timeout", "5", "--batch-size", "4096", "--message-send-max-retries", "2",
                     "--retry-backoff-ms", "50", "--request-timeout-ms", "10000", "--max-block-ms", "5000",
                     "--max-memory-bytes", "1048576", "--metadata-expiry-ms", "60000", "--socket-buffer-size", "65536",
                     "--request-required-acks", "-1", "--line-reader", "org.apache.kafka.tools.LineMessageReader",
                     "--compression-codec", stdin=f"k1\t{'a' * 1000}\nk2\t{'b' * 1000}\n")
    assert produced.returncode == 0, produced.stderr
    # Values that compress well: librdkafka sends a batch uncompressed when compressing would not shrink it.
    assert [(m.key(), m.value()) for m in read_all(broker.bootstrap, "options", 2)] == [(b"k1", b"a" * 1000),
                                                                                        (b"k2", b"b" * 1000)]
    dumped = subprocess.run([sys.executable, "-m", "franz", "dump-log",
                             str(broker.data_dir / "options-0" / "00000000000000000000.log")],
                            capture_output=True, text=True, timeout=TIMEOUT_S)
    batches = [line for line in dumped.stdout.splitlines() if line.startswith("baseOffset:")]
    # --sync sends each record on its own and waits for it: one batch per line.
    assert len(batches) == 2 and all("compresscodec: gzip" in line for line in batches), dumped.stdout + dumped.stderr


def test_properties_files_are_read_as_java_reads_them(broker, tmp_path):
    create_topic(broker.bootstrap, "from-files")
    reader_config = tmp_path / "reader.properties"
    # Comments, `key: value`, a \\u escape (the key separator is "|") and a continued line.
    reader_config.write_text("# parse.key=false\n! another comment\nparse.key: true\nkey.separator = \\u007c\n"
                             "null.marker = NO\\\n    THING\n")
    producer_config = tmp_path / "producer.properties"
    # Java client names that librdkafka spells differently, and serializers Kafka's tool replaces anyway.
    producer_config.write_text("send.buffer.bytes=65536\nbuffer.memory=1048576\nmax.request.size=1048576\n"
                               "key.serializer=org.apache.kafka.common.serialization.StringSerializer\n")
    produced = franz("console-producer", "--bootstrap-server", broker.bootstrap, "--topic", "from-files",
                     "--reader-config", str(reader_config), "--producer.config", str(producer_config),
                     stdin="k|v\nNOTHING|w\n")
    assert produced.returncode == 0, produced.stderr
    assert [(m.key(), m.value()) for m in read_all(broker.bootstrap, "from-files", 2)] == [(b"k", b"v"), (None, b"w")]


def test_a_java_only_producer_setting_is_refused_naming_it():
    produced = franz("console-producer", "--bootstrap-server", NO_BROKER, "--topic", "t",
                     "--command-property", "metadata.max.idle.ms=1000", stdin="v\n")
    assert produced.returncode == 1
    assert '"metadata.max.idle.ms" is a Java client setting' in produced.stderr
    assert "Traceback" not in produced.stderr


def test_a_missing_command_config_file_is_reported():
    produced = franz("console-producer", "--bootstrap-server", NO_BROKER, "--topic", "t",
                     "--command-config", "/nonexistent/producer.properties", stdin="v\n")
    assert produced.returncode == 1
    assert "cannot read the properties file /nonexistent/producer.properties" in produced.stderr
    assert "Traceback" not in produced.stderr


@pytest.mark.parametrize(("args", "message"), [
    (["--property", "parse.key=true", "--reader-property", "parse.key=true"],
     "Options --reader-property and --property cannot be specified together."),
    (["--producer-property", "acks=1", "--command-property", "acks=1"],
     "Options --command-property and --producer-property cannot be specified together."),
    (["--producer.config", "a", "--command-config", "b"],
     "Options --command-config and --producer.config cannot be specified together."),
    (["--line-reader", "com.example.MyReader"], "com.example.MyReader"),
    (["--no-such-option"], "unrecognized arguments: --no-such-option"),
    (["--batch-size", "big"], "--batch-size"),
])
def test_usage_errors_exit_1_as_kafkas_tools_do(args, message):
    produced = franz("console-producer", "--bootstrap-server", NO_BROKER, "--topic", "t", *args, stdin="")
    assert produced.returncode == 1, produced.stderr
    assert message in produced.stderr


def test_max_block_ms_bounds_the_wait_for_room_in_the_queue():
    # No broker: the 1 KiB queue fills and stays full until delivery.timeout.ms expires the records.
    produced = franz("console-producer", "--bootstrap-server", NO_BROKER, "--topic", "t",
                     "--max-memory-bytes", "1024", "--max-block-ms", "100",
                     "--command-property", "delivery.timeout.ms=2000", stdin=("x" * 200 + "\n") * 12)
    assert produced.returncode == 1
    assert "Failed to allocate memory within the configured max blocking time 100 ms." in produced.stderr


@pytest.mark.parametrize("signum, exit_code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_sends_the_lines_read_before_it(broker, signum, exit_code):
    """Kafka's producer-shutdown-hook runs on either signal; the JVM exits 128 + the signal."""
    topic = f"interrupted-{signum}"
    create_topic(broker.bootstrap, topic)
    command = [sys.executable, "-m", "franz.cli.main", "console-producer", "--bootstrap-server", broker.bootstrap,
               "--topic", topic, "--timeout", "60000"]
    # started with SIGINT ignored, as a non-interactive shell starts a background job (CI does): still taken
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        process.stdin.write("one\ntwo\n")
        process.stdin.flush()
        time.sleep(3)  # read and queued; the 60 s linger keeps them from being sent
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=TIMEOUT_S)
    finally:
        process.kill()
    assert process.returncode == exit_code, stderr
    assert "Traceback" not in stderr
    assert [m.value() for m in read_all(broker.bootstrap, topic, 2)] == [b"one", b"two"]


def test_a_record_too_large_fails_alone_and_the_lines_after_it_are_sent(broker):
    """Records up to the Java producer's max.request.size (1 MiB) go out; a larger one fails in its own
    callback (ErrorLoggingCallback's line) and the tool reads on (ConsoleProducer.loopReader)."""
    create_topic(broker.bootstrap, "big-lines")
    near_limit, too_large = "a" * 1_048_000, "b" * 2_000_000
    produced = franz("console-producer", "--bootstrap-server", broker.bootstrap, "--topic", "big-lines",
                     stdin=f"small1\n{near_limit}\n{too_large}\nsmall2\n")
    assert produced.returncode == 1  # not every record was acknowledged
    assert "Traceback" not in produced.stderr
    assert ("ERROR Error when sending message to topic big-lines with key: null, value: 2000000 bytes with "
            "error: ") in produced.stderr
    assert [len(m.value()) for m in read_all(broker.bootstrap, "big-lines", 3)] == [6, 1_048_000, 6]
