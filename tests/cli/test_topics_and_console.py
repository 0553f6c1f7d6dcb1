"""`franz topics`, `franz console-producer` and `franz console-consumer` against a real broker."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.interop

TIMEOUT_S = 60


def franz(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "franz.cli.main", *args], input=stdin, capture_output=True,
                          text=True, timeout=TIMEOUT_S)


def test_topics_create_list_describe_alter_delete(broker):
    b = broker.bootstrap
    created = franz("topics", "--bootstrap-server", b, "--create", "--topic", "cli", "--partitions", "2",
                    "--config", "retention.ms=60000")
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip() == "Created topic cli."
    again = franz("topics", "--bootstrap-server", b, "--create", "--topic", "cli", "--partitions", "2")
    assert again.returncode == 1 and "already exists" in again.stderr
    assert franz("topics", "--bootstrap-server", b, "--list").stdout.split() == ["cli"]
    assert franz("topics", "--bootstrap-server", b, "--alter", "--topic", "cli", "--partitions", "3").returncode == 0
    described = franz("topics", "--bootstrap-server", b, "--describe", "--topic", "cli")
    assert described.returncode == 0, described.stderr
    lines = described.stdout.splitlines()
    assert lines[0].startswith("Topic: cli\tTopicId: ")
    assert "PartitionCount: 3\tReplicationFactor: 1\tConfigs: retention.ms=60000" in lines[0]
    assert lines[1] == "\tTopic: cli\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \tLastKnownElr: "
    assert len(lines) == 4
    assert franz("topics", "--bootstrap-server", b, "--delete", "--topic", "cli").returncode == 0
    assert franz("topics", "--bootstrap-server", b, "--list").stdout.split() == []


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
    assert franz("topics", "--bootstrap-server", b, "--create", "--topic", "spread", "--partitions", "4").returncode == 0
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


def test_console_consumer_from_an_offset_and_a_timeout(broker):
    b = broker.bootstrap
    franz("topics", "--bootstrap-server", b, "--create", "--topic", "off")
    franz("console-producer", "--bootstrap-server", b, "--topic", "off", stdin="a\nb\nc\nd\n")
    consumed = franz("console-consumer", "--bootstrap-server", b, "--topic", "off", "--partition", "0",
                     "--offset", "2", "--timeout-ms", "1500")
    assert consumed.stdout.splitlines() == ["c", "d"]
    assert "Processed a total of 2 messages" in consumed.stderr
