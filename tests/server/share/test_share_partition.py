"""SharePartition's record states on a real in-process KafkaServer and its log: the in-flight
limit, ownership and all-or-nothing acknowledgements, lock expiry up to the delivery limit,
and lock renewal."""

from __future__ import annotations

import asyncio

import pytest

from franz.coordinator.share.share_coordinator import ACKNOWLEDGED, ARCHIVED, AVAILABLE, StateBatch
from franz.coordinator.share.share_coordinator_record_serde import SharePartitionKey
from franz.protocol.errors import Errors
from franz.records import MemoryRecords, SimpleRecord, build_batch
from franz.server.share.share_partition import ACQUIRED, SharePartitionError
from franz.storage.producer_append_info import AppendOrigin
from tests.coordinator.group.test_group_coordinator import run


async def _share_partition(server, records: int, batch: int = 10):
    """A topic of `records` records in batches of `batch`, and group g's share-partition of it
    with its state initialized at offset 0."""
    await server.controller.create_topic("t", 1, {})
    topic_id = server.metadata.get("t").topic_id.bytes
    for first in range(0, records, batch):
        server.replica_manager.append_records(1, {("t", 0): build_batch(
            [SimpleRecord(value=b"%d" % i) for i in range(first, first + batch)])}, AppendOrigin.CLIENT)
    await server.share_coordinator.initialize(SharePartitionKey("g", topic_id, 0), 1, 0)
    manager = server.share_partitions
    return await manager._ready("g", topic_id, 0)


def _states(share_partition, offsets) -> list[tuple[int, int]]:
    return [(share_partition.in_flight[at].state, share_partition.in_flight[at].delivery_count) for at in offsets]


def test_no_more_records_are_in_flight_than_the_record_locks_rounded_up_to_a_batch(tmp_path):
    async def scenario(server):
        sp = await _share_partition(server, 250, batch=30)
        first = sp.acquire("a", 1000, 500, 1 << 20)
        # the batch 90-119 holding the 100th offset is taken whole, as Kafka takes it
        assert first.ranges == [{"first_offset": 0, "last_offset": 119, "delivery_count": 1}]
        assert sp.acquire("b", 1000, 500, 1 << 20) is None  # 120 in flight: no room
        await sp.acknowledge("a", [{"first_offset": 0, "last_offset": 59, "acknowledge_types": [1]}])
        assert sp.start_offset == 60
        second = sp.acquire("b", 1000, 500, 1 << 20)
        return second.ranges
    assert run(tmp_path, scenario, group_share_partition_max_record_locks="100") == [
        {"first_offset": 120, "last_offset": 179, "delivery_count": 1}]


def test_acknowledgements_are_the_owners_and_all_or_nothing(tmp_path):
    async def scenario(server):
        sp = await _share_partition(server, 10)
        sp.acquire("a", 500, 500, 1 << 20)
        with pytest.raises(SharePartitionError) as not_owner:
            await sp.acknowledge("b", [{"first_offset": 0, "last_offset": 9, "acknowledge_types": [1]}])
        with pytest.raises(SharePartitionError) as past_end:
            await sp.acknowledge("a", [{"first_offset": 0, "last_offset": 4, "acknowledge_types": [1]},
                                       {"first_offset": 5, "last_offset": 12, "acknowledge_types": [1]}])
        untouched = _states(sp, range(10))
        await sp.acknowledge("a", [{"first_offset": 0, "last_offset": 3, "acknowledge_types": [1, 2, 3, 0]}])
        return not_owner.value.code, past_end.value.code, untouched, sp.start_offset, _states(sp, range(1, 4))
    not_owner, past_end, untouched, start, mixed = run(tmp_path, scenario)
    assert (not_owner, past_end) == (Errors.INVALID_RECORD_STATE, Errors.INVALID_REQUEST)
    assert untouched == [(ACQUIRED, 1)] * 10  # the accepted first batch was rolled back
    # offset 0 accepted (the start moved past it), 1 released, 2 rejected, 3 a gap
    assert start == 1 and mixed == [(AVAILABLE, 1), (ARCHIVED, 1), (ARCHIVED, 1)]


def test_expired_locks_make_records_available_until_the_delivery_limit_archives_them(tmp_path):
    async def scenario(server):
        sp = await _share_partition(server, 5, batch=5)
        seen = []
        for _ in range(2):
            got = sp.acquire("a", 500, 500, 1 << 20)
            seen.append(got.ranges)
            await asyncio.sleep(1.3)
        return seen, sp.start_offset, sp.acquire("a", 500, 500, 1 << 20)
    seen, start, after = run(tmp_path, scenario, group_share_record_lock_duration_ms="1000",
                             group_share_min_record_lock_duration_ms="1000", group_share_delivery_count_limit="2")
    assert seen == [[{"first_offset": 0, "last_offset": 4, "delivery_count": n}] for n in (1, 2)]
    assert start == 5 and after is None  # archived at the limit: nothing comes back


def test_a_renewed_lock_keeps_records_acquired(tmp_path):
    async def scenario(server):
        sp = await _share_partition(server, 5, batch=5)
        sp.acquire("a", 500, 500, 1 << 20)
        await asyncio.sleep(0.7)
        await sp.acknowledge("a", [{"first_offset": 0, "last_offset": 4, "acknowledge_types": [4]}])
        await asyncio.sleep(0.7)  # past the first lock, within the renewed one
        held = _states(sp, range(5))
        await sp.acknowledge("a", [{"first_offset": 0, "last_offset": 4, "acknowledge_types": [1]}])
        state = server.share_coordinator.read_summary(SharePartitionKey("g", sp.topic_id, 0))
        return held, sp.start_offset, (state.start_offset, state.state_batches)
    held, start, persisted = run(tmp_path, scenario, group_share_record_lock_duration_ms="1000",
                                 group_share_min_record_lock_duration_ms="1000")
    assert held == [(ACQUIRED, 1)] * 5 and start == 5
    # Kafka writes the SPSO as it was before the acknowledgement: the next write moves it
    assert persisted == (0, (StateBatch(0, 4, ACKNOWLEDGED, 1),))


def test_records_deleted_below_the_start_offset_are_skipped(tmp_path):
    async def scenario(server):
        sp = await _share_partition(server, 20)
        first = sp.acquire("a", 5, 500, 1 << 20)  # one batch of 10: the budget rounds up to it
        sp.log.maybe_increment_log_start_offset(15, "DeleteRecords")
        held_back = sp.acquire("b", 500, 500, 1 << 20)
        await sp.acknowledge("a", [{"first_offset": 0, "last_offset": 9, "acknowledge_types": [1]}])
        after = sp.acquire("b", 500, 500, 1 << 20)
        return first.ranges, held_back.ranges if held_back else None, sp.start_offset, after
    first, held_back, start, after = run(tmp_path, scenario)
    assert first == [{"first_offset": 0, "last_offset": 9, "delivery_count": 1}]
    assert held_back == [{"first_offset": 15, "last_offset": 19, "delivery_count": 1}]
    assert start == 15 and after is None  # 15-19 are b's until it answers


def test_record_limit_mode_acquires_exactly_max_records_cutting_a_batch(tmp_path):
    """The cut log batch is in flight whole (one in-flight batch, its rest available), so each
    in-flight batch answers its own AcquiredRecords, and a batch-optimized fetch then takes the
    rest of the batch 10-19 whatever its MaxRecords."""
    async def scenario(server):
        sp = await _share_partition(server, 20)
        first = sp.acquire("a", 3, 500, 1 << 20, record_limit=True)
        in_flight = _states(sp, range(3, 10))
        second = sp.acquire("b", 9, 500, 1 << 20, record_limit=True)
        batch_optimized = sp.acquire("c", 1, 500, 1 << 20)
        return first.ranges, in_flight, second.ranges, batch_optimized.ranges
    assert run(tmp_path, scenario) == (
        [{"first_offset": 0, "last_offset": 2, "delivery_count": 1}],
        [(AVAILABLE, 0)] * 7,
        [{"first_offset": 3, "last_offset": 9, "delivery_count": 1},
         {"first_offset": 10, "last_offset": 11, "delivery_count": 1}],
        [{"first_offset": 12, "last_offset": 19, "delivery_count": 1}])


def test_max_records_is_checked_before_each_in_flight_batch_not_each_log_batch(tmp_path):
    """MaxRecords in batch-optimized mode: an in-flight batch goes out whole (100 records made of
    ten log batches, against a MaxRecords of 10), and the next in-flight batch waits; new records
    are rounded up to their log batch."""
    async def scenario(server):
        sp = await _share_partition(server, 150, batch=10)
        taken = sp.acquire("a", 100, 500, 1 << 20)  # one in-flight batch, 0-99
        await sp.acknowledge("a", [{"first_offset": 0, "last_offset": 99, "acknowledge_types": [2]}])
        whole = sp.acquire("b", 10, 500, 1 << 20)
        new = sp.acquire("c", 15, 500, 1 << 20)
        return taken.ranges, whole.ranges, new.ranges
    taken, whole, new = run(tmp_path, scenario)
    assert taken == [{"first_offset": 0, "last_offset": 99, "delivery_count": 1}]
    assert whole == [{"first_offset": 0, "last_offset": 99, "delivery_count": 2}]
    assert new == [{"first_offset": 100, "last_offset": 119, "delivery_count": 1}]


def test_records_acquired_when_the_state_was_last_written_come_back_after_a_reload(tmp_path):
    """ACQUIRED is never written: after a restart the offsets between written batches are handed
    out again (Kafka's gap window), and the SPSO waits for them."""
    async def first(server):
        sp = await _share_partition(server, 20)
        sp.acquire("a", 5, 500, 1 << 20)  # 0-9
        sp.acquire("b", 5, 500, 1 << 20)  # 10-19
        await sp.acknowledge("b", [{"first_offset": 10, "last_offset": 19, "acknowledge_types": [1]}])
    run(tmp_path, first)

    async def reloaded(server):
        topic_id = server.metadata.get("t").topic_id.bytes
        sp = await server.share_partitions._ready("g", topic_id, 0)
        again = sp.acquire("c", 500, 500, 1 << 20)
        await sp.acknowledge("c", [{"first_offset": 0, "last_offset": 9, "acknowledge_types": [1]}])
        return again.ranges, sp.start_offset
    assert run(tmp_path, reloaded) == ([{"first_offset": 0, "last_offset": 9, "delivery_count": 1}], 20)


def test_a_write_fenced_by_a_newer_state_drops_the_share_partition(tmp_path):
    """An admin's AlterShareGroupOffsets made a newer state while a member held records: its
    acknowledgement is answered NOT_LEADER_OR_FOLLOWER (fetchPersisterError) and the next fetch
    reads the new state."""
    async def scenario(server):
        sp = await _share_partition(server, 10)
        sp.acquire("a", 500, 500, 1 << 20)
        key = SharePartitionKey("g", sp.topic_id, 0)
        await server.share_coordinator.initialize(key, 5, 7)
        manager = server.share_partitions
        answer = await manager.acknowledge("g", "a", {(sp.topic_id, 0): [
            {"first_offset": 0, "last_offset": 9, "acknowledge_types": [1]}]})
        dropped = key not in manager.partitions
        fresh = await manager._ready("g", sp.topic_id, 0)
        return answer[(sp.topic_id, 0)][0], dropped, fresh.start_offset
    assert run(tmp_path, scenario) == (Errors.NOT_LEADER_OR_FOLLOWER, True, 7)


def test_the_groups_last_session_ending_drops_its_share_partitions(tmp_path):
    async def scenario(server):
        sp = await _share_partition(server, 10)
        manager = server.share_partitions
        manager.sessions.open(("g", "a"), [(sp.topic_id, 0)], "connection-1")
        manager.sessions.open(("g", "b"), [(sp.topic_id, 0)], "connection-2")
        await manager.release_session("g", "a")
        kept = bool(manager.partitions)
        await manager.release_session("g", "b")
        return kept, bool(manager.partitions)
    assert run(tmp_path, scenario) == (True, False)


def test_an_acknowledgement_whose_write_fails_is_rolled_back(tmp_path):
    """The state is gone at the share coordinator (the write is refused): the acknowledged
    records are the member's again, acquired, and the member is told UNKNOWN_SERVER_ERROR
    (fetchPersisterError)."""
    async def scenario(server):
        sp = await _share_partition(server, 10)
        sp.acquire("a", 500, 500, 1 << 20)
        await server.share_coordinator.delete(SharePartitionKey("g", sp.topic_id, 0))
        answer = await server.share_partitions.acknowledge("g", "a", {(sp.topic_id, 0): [
            {"first_offset": 0, "last_offset": 9, "acknowledge_types": [1]}]})
        return answer[(sp.topic_id, 0)][0], _states(sp, range(10)), sp.start_offset
    assert run(tmp_path, scenario) == (Errors.UNKNOWN_SERVER_ERROR, [(ACQUIRED, 1)] * 10, 0)


async def _release_all_until_archived(sp, member: str = "a", bound: int = 100) -> list[list[tuple[int, int, int]]]:
    """Acquire and release everything, again and again, until nothing comes: each acquisition's
    (first, last, delivery count) ranges."""
    seen = []
    for _ in range(bound):
        got = sp.acquire(member, 500, 500, 1 << 20)
        if got is None:
            return seen
        seen.append([(r["first_offset"], r["last_offset"], r["delivery_count"]) for r in got.ranges])
        await sp.acknowledge(member, [{"first_offset": r["first_offset"], "last_offset": r["last_offset"],
                                       "acknowledge_types": [2]} for r in got.ranges])
    raise AssertionError(f"still acquiring after {bound} rounds")


def test_records_near_the_delivery_limit_go_out_in_halving_batches_and_alone_at_the_last_attempt(tmp_path):
    """SharePartition's throttling with share.delivery.count.limit 6 (throttled from 3) over one
    in-flight batch of 8 released every time: whole at deliveries 1-3, then 4, 2, and each record
    alone on its 6th delivery; every record is delivered exactly 6 times, then archived."""
    async def scenario(server):
        sp = await _share_partition(server, 8, batch=8)
        return await _release_all_until_archived(sp), sp.start_offset
    seen, start = run(tmp_path, scenario, group_share_delivery_count_limit="6")
    assert seen == [
        [(0, 7, 1)], [(0, 7, 2)], [(0, 7, 3)],
        [(0, 3, 4)], [(0, 1, 5)], [(0, 0, 6)], [(1, 1, 6)],
        [(2, 3, 5)], [(2, 2, 6)], [(3, 3, 6)],
        [(4, 7, 4)], [(4, 5, 5)], [(4, 4, 6)], [(5, 5, 6)],
        [(6, 7, 5)], [(6, 6, 6)], [(7, 7, 6)]]
    assert start == 8


def test_a_throttled_batch_waits_for_a_fetch_of_its_own_and_in_flight_batches_survive_a_reload(tmp_path):
    """Two in-flight batches, 0-4 delivered once and 5-9 three times (the throttle of the default
    limit 5). A fetch takes 0-4 and stops before the throttled batch; the next takes the throttled
    one alone, halved. After a restart the written state batches are the in-flight batches again."""
    def release(ranges) -> list[dict]:
        return [{"first_offset": r["first_offset"], "last_offset": r["last_offset"], "acknowledge_types": [2]}
                for r in ranges]

    async def first(server):
        sp = await _share_partition(server, 10, batch=5)
        split = sp.acquire("a", 500, 3, 1 << 20).ranges  # batch size 3: cut at the log batch of 5-9
        await sp.acknowledge("a", [{"first_offset": 5, "last_offset": 9, "acknowledge_types": [2]}])
        for _ in range(2):  # 5-9 to delivery count 3, while a holds 0-4
            await sp.acknowledge("b", release(sp.acquire("b", 500, 500, 1 << 20).ranges))
        await sp.acknowledge("a", [{"first_offset": 0, "last_offset": 4, "acknowledge_types": [2]}])
        before_the_throttled = sp.acquire("a", 500, 500, 1 << 20).ranges
        throttled = sp.acquire("b", 500, 500, 1 << 20).ranges
        await sp.acknowledge("a", release(before_the_throttled))
        await sp.acknowledge("b", release(throttled))
        return split, before_the_throttled, throttled
    split, before_the_throttled, throttled = run(tmp_path, first)
    assert split == [{"first_offset": 0, "last_offset": 4, "delivery_count": 1},
                     {"first_offset": 5, "last_offset": 9, "delivery_count": 1}]
    assert before_the_throttled == [{"first_offset": 0, "last_offset": 4, "delivery_count": 2}]
    assert throttled == [{"first_offset": 5, "last_offset": 6, "delivery_count": 4}]  # 5 >> (3 - 3 + 1)

    async def reloaded(server):
        topic_id = server.metadata.get("t").topic_id.bytes
        sp = await server.share_partitions._ready("g", topic_id, 0)
        return sp.acquire("c", 500, 500, 1 << 20).ranges, sp.acquire("d", 500, 500, 1 << 20).ranges
    # written: 0-4 delivered twice, 5-6 four times, 7-9 three times: three in-flight batches now
    assert run(tmp_path, reloaded) == (
        [{"first_offset": 0, "last_offset": 4, "delivery_count": 3}],
        [{"first_offset": 5, "last_offset": 5, "delivery_count": 5}])


def test_persisted_state_past_the_log_end_is_dropped_and_an_impossible_span_refused(tmp_path):
    """State written through WriteShareGroupState by anyone: offsets past the log's end are dropped
    (a crash can lose the log's tail), and a batch wider than any leader writes (the in-flight
    window, 100 here, plus a log batch of max.message.bytes 1,000 records at most) fails the
    share-partition with UNKNOWN_SERVER_ERROR instead of being expanded offset by offset."""
    async def scenario(server):
        await server.controller.create_topic("t", 1, {"max.message.bytes": "1000"})
        topic_id = server.metadata.get("t").topic_id.bytes
        for first in range(0, 3000, 10):
            server.replica_manager.append_records(1, {("t", 0): build_batch(
                [SimpleRecord(value=b"%d" % i) for i in range(first, first + 10)])}, AppendOrigin.CLIENT)
        coordinator, manager = server.share_coordinator, server.share_partitions
        await coordinator.initialize(SharePartitionKey("g", topic_id, 0), 1, 2990)
        await coordinator.write(SharePartitionKey("g", topic_id, 0), 1, 0, 2990, -1,
                                [StateBatch(2995, 2 ** 40, AVAILABLE, 2)])
        clipped = await manager._ready("g", topic_id, 0)
        kept = (sorted(clipped.in_flight), clipped.end_offset)
        await coordinator.initialize(SharePartitionKey("h", topic_id, 0), 1, 0)
        await coordinator.write(SharePartitionKey("h", topic_id, 0), 1, 0, 0, -1, [StateBatch(0, 2 ** 40, ACKNOWLEDGED, 1)])
        with pytest.raises(SharePartitionError) as refused:
            await manager._ready("h", topic_id, 0)
        # a share fetch of it answers the partition's error, counted as a failed share fetch of its topic
        fetched = await manager.fetch("h", "member", [(topic_id, 0)], 1, 10, 10, 1 << 20, 0, 0)
        stats = server.replica_manager.broker_topic_stats
        return kept, refused.value.code, fetched[(topic_id, 0)][0], (
            stats.value("TotalShareFetchRequestsPerSec", "t"), stats.value("FailedShareFetchRequestsPerSec", "t"))
    kept, refused, fetch_error, meters = run(tmp_path, scenario, group_share_partition_max_record_locks="100")
    assert kept == (list(range(2990, 3000)), 3000)  # 2990-2994 new again (the gap), 2995-2999 as written
    assert refused == fetch_error == Errors.UNKNOWN_SERVER_ERROR
    assert meters == (1, 1)


def test_offsets_compacted_away_inside_a_run_go_out_with_it_to_be_acknowledged_as_gaps(tmp_path):
    """A compacted log (batches 0-9 and 20-29, 10-19 cleaned away): the new run 0-29 is one in-flight
    batch and one AcquiredRecords, as Kafka's createBatches spans the hole, and the member's GAP
    acknowledgements of 10-19 finish it."""
    async def scenario(server):
        await server.controller.create_topic("t", 1, {"cleanup.policy": "compact"})
        topic_id = server.metadata.get("t").topic_id.bytes
        log = server.replica_manager.log_of(("t", 0))
        for base in (0, 20):
            log.append_as_follower(MemoryRecords(bytearray(build_batch(
                [SimpleRecord(key=b"k%d" % i, value=b"v") for i in range(10)], base_offset=base))))
        log.update_high_watermark(log.log_end_offset)
        await server.share_coordinator.initialize(SharePartitionKey("g", topic_id, 0), 1, 0)
        sp = await server.share_partitions._ready("g", topic_id, 0)
        got = sp.acquire("a", 500, 500, 1 << 20)
        in_flight_batch = sp._batch_of(15)
        await sp.acknowledge("a", [{"first_offset": 0, "last_offset": 29,
                                    "acknowledge_types": [1] * 10 + [0] * 10 + [1] * 10}])
        return got.ranges, in_flight_batch, sp.start_offset
    assert run(tmp_path, scenario) == ([{"first_offset": 0, "last_offset": 29, "delivery_count": 1}], (0, 29), 30)
