"""`franz console-producer` against a real broker."""

from __future__ import annotations

import pytest

from tests.support.cli import franz

pytestmark = pytest.mark.interop


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
