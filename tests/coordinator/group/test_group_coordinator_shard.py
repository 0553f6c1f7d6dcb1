"""Replaying `__consumer_offsets` entries into fresh coordinator state: offsets, transaction
markers, classic and consumer group records, tombstones, and records that do not decode."""

from __future__ import annotations

import asyncio

from franz.coordinator.group import group_coordinator_record_serde as serde
from franz.coordinator.group.consumer_group_coordinator import ConsumerGroupConfig, ConsumerGroupCoordinator
from franz.coordinator.group.group_coordinator import GroupConfig, GroupCoordinator
from franz.coordinator.group.group_coordinator_record_serde import OffsetAndMetadata
from franz.coordinator.group.group_coordinator_shard import replay
from franz.coordinator.group.offset_metadata_manager import OffsetMetadataManager
from franz.records.builder import NO_PRODUCER_ID

PARTITION, PRODUCER = 1, 77


def _commit(group: str, topic: str, offset: int) -> tuple[bytes, bytes]:
    return (serde.offset_commit_key(group, topic, 0),
            serde.offset_commit_value(OffsetAndMetadata(offset, -1, "", 1_000)))


async def _noop_write(_group_id, _entries) -> None:
    return None


def _replay(entries):
    offsets = OffsetMetadataManager()

    async def write_metadata(_group, _value) -> None:
        return None

    classic = GroupCoordinator(GroupConfig(), write_metadata)
    consumer = ConsumerGroupCoordinator(ConsumerGroupConfig(), dict, lambda _group_id: None, _noop_write)

    async def main():
        loaded = replay(entries, offsets, classic, consumer, 1_000)
        await consumer.shutdown()
        return loaded
    return asyncio.run(main()), offsets, classic, consumer


def test_offsets_markers_tombstones_and_bad_records_replay_in_log_order():
    entries = [
        (PARTITION, *_commit("g", "a", 5), 0, NO_PRODUCER_ID),
        (PARTITION, *_commit("g", "b", 9), 1, NO_PRODUCER_ID),
        (PARTITION, serde.offset_commit_key("g", "b", 0), None, 2, NO_PRODUCER_ID),  # tombstone
        (PARTITION, *_commit("g", "a", 7), 3, PRODUCER),  # transactional ...
        (PARTITION, None, True, 4, PRODUCER),  # ... and committed by its marker
        (PARTITION, *_commit("g", "c", 1), 5, PRODUCER),  # a transaction left open
        (PARTITION, serde.offset_commit_key("g", "d", 0), b"\x00\x09garbage", 6, NO_PRODUCER_ID),
    ]
    _loaded, offsets, classic, _consumer = _replay(entries)
    assert {tp: o.committed_offset for tp, o in offsets.group_offsets("g").items()} == {("a", 0): 7}
    assert offsets.has_pending("g", "c", 0)
    assert classic.group("g") is not None  # offsets without a group record: an Empty classic group


def test_consumer_group_records_become_a_consumer_group_and_no_classic_one():
    key = serde.consumer_group_key(serde.CONSUMER_GROUP_METADATA, "cg")
    value = serde.consumer_group_value(serde.CONSUMER_GROUP_METADATA, {"epoch": 4})
    entries = [(PARTITION, key, value, 0, NO_PRODUCER_ID), (PARTITION, *_commit("cg", "a", 3), 1, NO_PRODUCER_ID),
               (PARTITION, serde.consumer_group_key(serde.CONSUMER_GROUP_METADATA, "gone"), value, 2, NO_PRODUCER_ID),
               (PARTITION, serde.consumer_group_key(serde.CONSUMER_GROUP_METADATA, "gone"), None, 3,
                NO_PRODUCER_ID)]
    loaded, _offsets, classic, consumer = _replay(entries)
    assert loaded == 1 and consumer.group("cg").group_epoch == 4 and consumer.group("gone") is None
    assert classic.group("cg") is None


def test_streams_group_records_are_not_loaded_as_a_consumer_group():
    """Until streams groups load, their records (types 17, 19-23) are recognised and set aside."""
    key = serde.consumer_group_key(serde.STREAMS_GROUP_METADATA, "sg")
    value = serde.consumer_group_value(serde.STREAMS_GROUP_METADATA, {"epoch": 4, "metadata_hash": 0})
    member_key = serde.consumer_group_key(serde.STREAMS_GROUP_MEMBER_METADATA, "sg", "m")
    entries = [(PARTITION, key, value, 0, NO_PRODUCER_ID), (PARTITION, member_key, None, 1, NO_PRODUCER_ID)]
    loaded, _offsets, _classic, consumer = _replay(entries)
    assert loaded == 0 and consumer.group("sg") is None
