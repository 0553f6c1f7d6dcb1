"""The share coordinator: `__share_group_state` records byte for byte, the batch combiner, and
initialize / read / write / delete on a real in-process KafkaServer, across restarts."""

from __future__ import annotations

import asyncio
import os
import struct

import pytest

from franz.common.utils import java_string_hash, kafka_abs
from franz.coordinator.group.coordinator_loader import load_partition
from franz.coordinator.share import share_coordinator_record_serde as serde
from franz.coordinator.share.share_coordinator import (
    ACKNOWLEDGED,
    ARCHIVED,
    AVAILABLE,
    SHARE_GROUP_STATE_TOPIC,
    ShareStateError,
    StateBatch,
    combine,
    coordinator_key,
    parse_coordinator_key,
)
from franz.coordinator.share.share_coordinator_record_serde import SharePartitionKey
from franz.protocol.errors import Errors
from franz.server.broker_features import SHARE_VERSION
from franz.storage.local_log import KafkaStorageError
from tests.coordinator.group.test_group_coordinator import run
from tests.support.failing_disk import descriptor_swapped

TOPIC_ID = bytes(range(16))


def test_a_snapshot_key_is_the_record_type_then_group_topic_id_and_partition():
    key = serde.key(serde.SHARE_SNAPSHOT, SharePartitionKey("g", TOPIC_ID, 3))
    assert key == struct.pack(">hh", 0, 1) + b"g" + TOPIC_ID + struct.pack(">i", 3)
    assert serde.read_key(key) == (serde.SHARE_SNAPSHOT, SharePartitionKey("g", TOPIC_ID, 3))
    assert serde.key(serde.SHARE_UPDATE, SharePartitionKey("g", TOPIC_ID, 3))[:2] == b"\x00\x01"


def test_a_share_coordinator_key_parses_as_kafkas_share_partition_key_does():
    """SharePartitionKey.getInstance(String): the group keeps its own colons, Java's split drops
    trailing empty parts, the topic id is URL-safe base64 of 16 bytes, the partition an int32."""
    text = coordinator_key(SharePartitionKey("a:b", TOPIC_ID, 7))
    assert parse_coordinator_key(text) == SharePartitionKey("a:b", TOPIC_ID, 7)
    assert text == "a:b:AAECAwQFBgcICQoLDA0ODw:7"
    assert parse_coordinator_key("g:AAECAwQFBgcICQoLDA0ODw==:+3") == SharePartitionKey("g", TOPIC_ID, 3)
    assert parse_coordinator_key("g:AAECAwQFBgcICQoLDA0ODw:7:::").partition == 7
    for bad, message in (("", "cannot be empty"), ("g:7", "Invalid key format"),
                         ("g:AAECAwQFBgcICQoLDA0ODw:", "Invalid key format"),
                         (" \t:AAECAwQFBgcICQoLDA0ODw:1", "GroupId must not be empty"),
                         ("g:AAECAwQFBgcICQoLDA0O:1", "Invalid topic ID"),
                         ("g:AAECAwQFBgcICQoLDA0OD+:1", "Invalid topic ID"),
                         ("g:AAECAwQFBgcICQoLDA0ODw=:1", "Invalid topic ID"),  # Java wants "==" or none
                         ("g:AAECAwQFBgcICQoLDA0ODw:1.0", "Invalid partition"),
                         ("g:AAECAwQFBgcICQoLDA0ODw:2147483648", "Invalid partition")):
        with pytest.raises(ValueError, match=message):
            parse_coordinator_key(bad)


def test_the_finished_count_is_a_tagged_field_left_out_at_its_default():
    batch = {"first_offset": 5, "last_offset": 9, "delivery_state": ACKNOWLEDGED, "delivery_count": 1}
    unset = serde.value(serde.SHARE_UPDATE, {"snapshot_epoch": 0, "leader_epoch": 0, "start_offset": 5,
                                             "delivery_complete_count": -1, "state_batches": [batch]})
    counted = serde.value(serde.SHARE_UPDATE, {"snapshot_epoch": 0, "leader_epoch": 0, "start_offset": 5,
                                               "delivery_complete_count": 5, "state_batches": [batch]})
    assert unset.endswith(b"\x00") and len(counted) == len(unset) + 6  # tag 0, size 4, int32
    assert serde.read_value(serde.SHARE_UPDATE, counted)["delivery_complete_count"] == 5
    assert serde.read_value(serde.SHARE_UPDATE, unset)["state_batches"] == [batch]


def test_the_coordinator_key_prints_the_topic_id_as_kafka_prints_a_uuid():
    assert coordinator_key(SharePartitionKey("my:group", TOPIC_ID, 7)) == "my:group:AAECAwQFBgcICQoLDA0ODw:7"


def test_combining_keeps_the_higher_delivery_count_where_batches_overlap_and_prunes_below_the_start():
    current = (StateBatch(0, 9, AVAILABLE, 1),)
    new = (StateBatch(3, 5, ACKNOWLEDGED, 2), StateBatch(6, 6, ARCHIVED, 1))
    assert combine(current, new, 2) == (StateBatch(2, 2, AVAILABLE, 1), StateBatch(3, 5, ACKNOWLEDGED, 2),
                                        StateBatch(6, 6, ARCHIVED, 1), StateBatch(7, 9, AVAILABLE, 1))
    assert combine((StateBatch(0, 4, ACKNOWLEDGED, 1),), (StateBatch(5, 8, ACKNOWLEDGED, 1),), 0) == (
        StateBatch(0, 8, ACKNOWLEDGED, 1),)
    assert combine((StateBatch(0, 4, ACKNOWLEDGED, 1),), (), 5) == ()


def test_combining_follows_kafkas_combiner_where_it_leaves_equal_neighbours_apart():
    """PersisterStateBatchCombiner settles batches left to right: 0-3 is final before 4-4's
    overlap is resolved into its twin, so the two stay apart, as Kafka persists and answers them."""
    current = (StateBatch(0, 3, AVAILABLE, 2), StateBatch(4, 4, AVAILABLE, 1))
    assert combine(current, (StateBatch(4, 4, AVAILABLE, 2),), 0) == (
        StateBatch(0, 3, AVAILABLE, 2), StateBatch(4, 4, AVAILABLE, 2))
    # a lower batch under a higher one that it outruns keeps only its tail
    assert combine((StateBatch(0, 5, ACKNOWLEDGED, 2),), (StateBatch(3, 9, AVAILABLE, 1),), -1) == (
        StateBatch(0, 5, ACKNOWLEDGED, 2), StateBatch(6, 9, AVAILABLE, 1))


def test_combining_many_overlapping_batches_keeps_the_highest_count():
    """What one WriteShareGroupState may ask: 20,000 batches over the same offsets, one resolved
    pair at a time (with a re-sort per pair this took minutes; the sorted list takes a moment)."""
    batches = [StateBatch(0, 10 ** 6, AVAILABLE, count) for count in range(1, 20_001)]
    assert combine((), batches, 0) == (StateBatch(0, 10 ** 6, AVAILABLE, 20_000),)


async def _topic(server, name: str) -> bytes:
    await server.controller.create_topic(name, 2, {})
    return server.metadata.get(name).topic_id.bytes


def test_state_is_initialized_written_and_read_back_after_a_restart(tmp_path):
    overrides = {"share_coordinator_snapshot_update_records_per_snapshot": "2"}

    async def write(server):
        coordinator = server.share_coordinator
        key = SharePartitionKey("g", await _topic(server, "t"), 1)
        with pytest.raises(ShareStateError) as uninitialized:
            await coordinator.read(key, 0)
        assert uninitialized.value.code == Errors.INVALID_REQUEST
        await coordinator.initialize(key, 2, -1)
        assert (await coordinator.read(key, 0)).start_offset == -1
        await coordinator.write(key, 2, 0, 0, 3, [StateBatch(0, 2, ACKNOWLEDGED, 1), StateBatch(3, 4, AVAILABLE, 1)])
        await coordinator.write(key, 2, 0, 3, 0, [StateBatch(3, 3, ACKNOWLEDGED, 2)])
        await coordinator.write(key, 2, 0, 4, 0, [StateBatch(4, 4, ARCHIVED, 2), StateBatch(5, 6, AVAILABLE, 1)])
        with pytest.raises(ShareStateError) as fenced:
            await coordinator.write(key, 1, 0, 4, 0, [])
        assert fenced.value.code == Errors.FENCED_STATE_EPOCH
        log = server.replica_manager.log_of((SHARE_GROUP_STATE_TOPIC, coordinator.partition_for(key)))
        types: list[int] = []
        load_partition(log, lambda k, v, _offset: types.append(serde.read_key(k)[0]))
        return key, types

    key, types = run(tmp_path, write, **overrides)
    # initialize is a snapshot; two updates; then, the update count reached, a snapshot
    assert types == [serde.SHARE_SNAPSHOT, serde.SHARE_UPDATE, serde.SHARE_UPDATE, serde.SHARE_SNAPSHOT]

    async def read(server):
        state = await server.share_coordinator.read(key, 0)
        await server.share_coordinator.delete(key)
        return state, server.share_coordinator.read_summary(key)

    state, deleted = run(tmp_path, read, **overrides)
    assert (state.state_epoch, state.start_offset) == (2, 4)
    assert state.state_batches == (StateBatch(4, 4, ARCHIVED, 2), StateBatch(5, 6, AVAILABLE, 1))
    assert deleted is None

    async def after_delete(server):
        return server.share_coordinator.read_summary(key)
    assert run(tmp_path, after_delete, **overrides) is None


def test_pruning_keeps_only_what_the_latest_snapshots_need_and_cold_snapshots_let_it_advance(tmp_path):
    overrides = {"share_coordinator_state_topic_num_partitions": "1"}

    async def scenario(server):
        coordinator = server.share_coordinator
        topic_id = await _topic(server, "t")
        a, b = SharePartitionKey("g", topic_id, 0), SharePartitionKey("g", topic_id, 1)
        await coordinator.initialize(a, 2, 0)  # offset 0
        await coordinator.initialize(b, 2, 0)  # offset 1
        for start in (1, 2, 3):  # offsets 2-4: updates of a
            await coordinator.write(a, 2, 0, start, 0, [StateBatch(start, start + 1, AVAILABLE, 1)])
        log = server.replica_manager.log_of((SHARE_GROUP_STATE_TOPIC, 0))
        nothing_redundant = await coordinator.prune(), log.log_start_offset
        assert await coordinator.write_cold_snapshots() == 0  # written just now: not cold
        coordinator.cold_snapshot_interval_ms = 1  # (its timer runs every 5 minutes: called here instead)
        await asyncio.sleep(0.01)
        cold = await coordinator.write_cold_snapshots()  # offsets 5 and 6
        after_cold = await coordinator.prune(), log.log_start_offset
        await coordinator.delete(b)  # offset 7, a tombstone
        after_delete = await coordinator.prune(), log.log_start_offset
        return nothing_redundant, cold, after_cold, after_delete, coordinator.read_summary(a)

    nothing_redundant, cold, after_cold, after_delete, state = run(tmp_path, scenario, **overrides)
    assert nothing_redundant == ({}, 0) and cold == 2
    assert after_cold == ({0: 5}, 5) and after_delete == ({}, 5)  # a's snapshot at 5 is still its latest

    async def reload(server):
        topic_id = server.metadata.get("t").topic_id.bytes
        return (server.share_coordinator.read_summary(SharePartitionKey("g", topic_id, 0)),
                server.share_coordinator.read_summary(SharePartitionKey("g", topic_id, 1)))
    loaded, gone = run(tmp_path, reload, **overrides)
    assert (loaded.start_offset, loaded.state_batches) == (state.start_offset, state.state_batches)
    assert gone is None


def test_periodic_jobs_wait_while_share_version_is_0(tmp_path):
    """ShareCoordinatorService runs its pruning (and cold snapshots) only while share groups are
    on: with share.version at 0 a prunable __share_group_state keeps its records."""
    overrides = {"share_coordinator_state_topic_num_partitions": "1",
                 "share_coordinator_snapshot_update_records_per_snapshot": "2",
                 "share_coordinator_state_topic_prune_interval_ms": "20"}

    async def scenario(server):
        coordinator = server.share_coordinator
        features = server.metadata.features
        features.levels.pop(SHARE_VERSION)
        key = SharePartitionKey("g", await _topic(server, "t"), 0)
        await coordinator.initialize(key, 2, 0)  # offset 0, a snapshot
        for start in (1, 2, 3):  # offsets 1, 2 (updates), 3 (a snapshot: the second update was the limit)
            await coordinator.write(key, 2, 0, start, 0, [])
        log = server.replica_manager.log_of((SHARE_GROUP_STATE_TOPIC, 0))
        await asyncio.sleep(0.3)
        while_off = log.log_start_offset
        features.levels[SHARE_VERSION] = 1
        for _ in range(100):  # bounded: a few prune intervals
            if log.log_start_offset > 0:
                break
            await asyncio.sleep(0.02)
        return while_off, log.log_start_offset

    while_off, when_on = run(tmp_path, scenario, **overrides)
    assert while_off == 0 and when_on == 3


def test_pruning_passes_over_a_state_partition_gone_offline(tmp_path):
    """A __share_group_state log gone offline after a disk error (here an fsync's EINVAL, its
    segment's descriptor made /dev/null's) refuses moving its start offset: pruning leaves it
    alone instead of raising out of the periodic task, which would stop pruning everywhere."""
    overrides = {"share_coordinator_state_topic_num_partitions": "1"}

    async def scenario(server):
        coordinator = server.share_coordinator
        topic_id = await _topic(server, "t")
        a = SharePartitionKey("g", topic_id, 0)
        await coordinator.initialize(a, 2, 0)
        for start in (1, 2, 3):
            await coordinator.write(a, 2, 0, start, 0, [StateBatch(start, start + 1, AVAILABLE, 1)])
        coordinator.cold_snapshot_interval_ms = 1
        await asyncio.sleep(0.01)
        assert await coordinator.write_cold_snapshots() == 1  # the updates before it are redundant now
        log = server.replica_manager.log_of((SHARE_GROUP_STATE_TOPIC, 0))
        with descriptor_swapped(log.local_log.segments.active_segment.log.fd, os.devnull):
            with pytest.raises(KafkaStorageError):
                log.flush(log.log_end_offset)
            return log.offline, await coordinator.prune(), log.log_start_offset

    assert run(tmp_path, scenario, **overrides) == (True, {}, 0)


def test_a_state_partition_count_raised_after_the_topic_was_made_moves_no_share_partition(tmp_path):
    """share.coordinator.state.topic.num.partitions raised from 2 to 3 after __share_group_state
    was made: keys hash over the two partitions the topic has (metadataCache.numPartitions), so
    a key that three partitions would send to one that does not exist reads and writes on."""
    async def initialize(server):
        topic_id = await _topic(server, "t")
        key = next(k for k in (SharePartitionKey(f"g{i}", topic_id, 0) for i in range(100))
                   if server.share_coordinator.partition_for(k) != kafka_abs(java_string_hash(coordinator_key(k))) % 3
                   and kafka_abs(java_string_hash(coordinator_key(k))) % 3 == 2)
        await server.share_coordinator.initialize(key, 1, 5)
        return key

    key = run(tmp_path, initialize, share_coordinator_state_topic_num_partitions="2")

    async def write_and_read(server):
        coordinator = server.share_coordinator
        await coordinator.write(key, 1, 0, 5, 0, [StateBatch(5, 6, ACKNOWLEDGED, 1)])
        state = await coordinator.read(key, 0)
        return state.start_offset, server.metadata.get(SHARE_GROUP_STATE_TOPIC).num_partitions

    assert run(tmp_path, write_and_read, share_coordinator_state_topic_num_partitions="3") == (5, 2)
