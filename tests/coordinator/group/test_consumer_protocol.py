"""The consumer's embedded protocol (ConsumerProtocolSubscription/Assignment) against kafka-python's,
which is generated from Kafka's own JSON specs: each side reads what the other writes, byte for byte."""

from __future__ import annotations

import pytest
from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from franz.coordinator.group import consumer_protocol
from franz.coordinator.group.consumer_protocol import ConsumerProtocolError


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_a_subscription_is_written_as_kafka_writes_it_in_every_version(version):
    ours = consumer_protocol.serialize_subscription(["b", "a"], version, {"a": [1, 0]}, 5, "rack-1", b"u")
    fields = {"topics": ["a", "b"], "user_data": b"u", "owned_partitions": [("a", [0, 1])], "generation_id": 5,
              "rack_id": "rack-1"}
    theirs = ConsumerProtocolSubscription(version=version, **dict(list(fields.items())[:2 + version]))
    assert ours == bytes(theirs.encode())
    read = consumer_protocol.deserialize_subscription(ours)
    assert read.topics == ("a", "b") and read.user_data == b"u"
    assert read.owned_partitions == ((("a", (0, 1)),) if version >= 1 else ())
    assert (read.generation_id, read.rack_id) == ((5 if version >= 2 else -1), ("rack-1" if version >= 3 else None))


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_an_assignment_round_trips_with_kafka_pythons_codec(version):
    ours = consumer_protocol.serialize_assignment({"t": [2, 1], "s": [0]}, version)
    decoded = ConsumerProtocolAssignment.decode(ours)
    assert sorted((tp.topic, sorted(tp.partitions)) for tp in decoded.assigned_partitions) == [("s", [0]),
                                                                                               ("t", [1, 2])]
    theirs = bytes(ConsumerProtocolAssignment(version, [("t", [3])], b"custom").encode())
    assert consumer_protocol.deserialize_assignment(theirs) == consumer_protocol.Assignment((("t", (3,)),), b"custom")
    assert consumer_protocol.deserialize_version(theirs) == version


def test_a_newer_version_is_read_as_the_highest_known_and_a_negative_or_short_one_is_refused():
    newer = b"\x00\x07" + consumer_protocol.serialize_subscription(["t"], 3)[2:] + b"future fields"
    assert consumer_protocol.deserialize_subscription(newer).topics == ("t",)
    for bad in (b"\xff\xff" + consumer_protocol.serialize_subscription(["t"], 0)[2:], b"\x00", b"\x00\x00\x00\x00\x00\x09"):
        with pytest.raises(ConsumerProtocolError):
            consumer_protocol.deserialize_subscription(bad)
    with pytest.raises(ConsumerProtocolError):
        consumer_protocol.serialize_assignment({"t": [0]}, -1)
