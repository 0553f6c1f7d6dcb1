"""KIP-227 incremental fetch sessions: the cache rules, and a broker answering
only the partitions with news."""

from __future__ import annotations

from franz.protocol.errors import Errors
from franz.server.fetch_session import CachedPartition, FetchSessionCache
from tests.support.raw_client import RawClient, batch, create_topic

FETCH, PRODUCE = 1, 0


def _partition(index: int, offset: int = 0) -> CachedPartition:
    return CachedPartition("t", index, bytes(16), offset, 1024)


def test_epoch_zero_asks_for_a_session_and_later_epochs_must_follow():
    cache = FetchSessionCache(10)
    context = cache.new_context(0, 0, [_partition(0), _partition(1)], [])
    assert context.new_session_wanted
    session_id = cache.create_session(context.partitions)
    assert session_id > 0
    assert cache.new_context(session_id, 5, [], []).error == Errors.INVALID_FETCH_SESSION_EPOCH
    assert cache.new_context(12345, 1, [], []).error == Errors.FETCH_SESSION_ID_NOT_FOUND
    following = cache.new_context(session_id, 1, [_partition(1, offset=7)], [("t", 0)])
    assert following.incremental
    assert [(p.partition, p.fetch_offset) for p in following.partitions] == [(1, 7)]
    assert cache.new_context(session_id, 2, [], []).incremental


def test_final_epoch_closes_the_session():
    cache = FetchSessionCache(10)
    session_id = cache.create_session([_partition(0)])
    context = cache.new_context(session_id, -1, [_partition(0)], [])
    assert not context.incremental and not context.new_session_wanted
    assert len(cache) == 0


def test_forgetting_every_partition_ends_the_session():
    """FetchManager.newContext: an incremental fetch that leaves its session empty closes
    it and is answered sessionless (session id 0)."""
    cache = FetchSessionCache(10)
    session_id = cache.create_session([_partition(0), _partition(1)])
    context = cache.new_context(session_id, 1, [], [("t", 0), ("t", 1)])
    assert context.error == Errors.NONE and not context.incremental and not context.new_session_wanted
    assert context.partitions == [] and len(cache) == 0
    assert cache.new_context(session_id, 2, [], []).error == Errors.FETCH_SESSION_ID_NOT_FOUND


def test_the_least_recently_used_session_is_evicted_when_slots_run_out():
    cache = FetchSessionCache(2)
    first = cache.create_session([_partition(0)])
    second = cache.create_session([_partition(0)])
    cache.new_context(first, 1, [], [])  # first is now the most recently used
    cache.create_session([_partition(0)])
    assert cache.new_context(second, 1, [], []).error == Errors.FETCH_SESSION_ID_NOT_FOUND
    assert cache.new_context(first, 2, [], []).error == Errors.NONE


def test_partitions_that_returned_records_go_to_the_back_of_the_session():
    cache = FetchSessionCache(10)
    session_id = cache.create_session([_partition(0), _partition(1), _partition(2)])
    session = cache.new_context(session_id, 1, [], []).session
    session.served_last([("t", 0), ("t", 1)])
    assert [p.partition for p in cache.new_context(session_id, 2, [], []).partitions] == [2, 0, 1]


def test_no_slots_means_no_sessions():
    assert FetchSessionCache(0).create_session([_partition(0)]) == 0


def _fetch(client: RawClient, session_id: int, epoch: int, partitions: list[tuple[int, int]]) -> dict:
    return client.request(FETCH, 12, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
        "session_id": session_id, "session_epoch": epoch,
        "topics": [{"topic": "s", "partitions": [{"partition": p, "fetch_offset": o, "partition_max_bytes": 1 << 20}
                                                 for p, o in partitions]}] if partitions else []})


def test_incremental_fetches_answer_only_partitions_with_news(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "s", 2)
        full = _fetch(client, 0, 0, [(0, 0), (1, 0)])
        session_id = full["session_id"]
        assert session_id > 0
        assert len(full["responses"][0]["partitions"]) == 2
        assert _fetch(client, session_id, 1, [])["responses"] == []  # nothing new anywhere
        client.request(PRODUCE, 9, {"acks": 1, "timeout_ms": 5000, "topic_data": [
            {"name": "s", "partition_data": [{"index": 1, "records": batch(b"a", b"b")}]}]})
        news = _fetch(client, session_id, 2, [])
        partitions = news["responses"][0]["partitions"]
        assert [p["partition_index"] for p in partitions] == [1]
        assert partitions[0]["high_watermark"] == 2 and len(partitions[0]["records"]) > 0
        moved = _fetch(client, session_id, 3, [(1, 2)])
        assert moved["responses"] == []  # HW unchanged, no records past offset 2
        stale = _fetch(client, session_id, 3, [])
        assert stale["error_code"] == Errors.INVALID_FETCH_SESSION_EPOCH


def test_a_partition_left_out_by_the_response_limit_comes_first_next_time(broker):
    # Without the rotation, partition 0 would fill every response and partition 1
    # would wait until 0 has nothing more to give.
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "s", 2)
        for index in (0, 1):
            for _ in range(3):
                client.request(PRODUCE, 9, {"acks": 1, "timeout_ms": 5000, "topic_data": [
                    {"name": "s", "partition_data": [{"index": index, "records": batch(b"x" * 3000)}]}]})

        def fetch(session_id: int, epoch: int, partitions) -> list[int]:
            answer = client.request(FETCH, 12, {
                "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 4000, "isolation_level": 0,
                "session_id": session_id, "session_epoch": epoch,
                "topics": [{"topic": "s", "partitions": [
                    {"partition": p, "fetch_offset": o, "partition_max_bytes": 1 << 20}
                    for p, o in partitions]}] if partitions else []})
            return answer["session_id"], [p["partition_index"] for t in answer["responses"]
                                          for p in t["partitions"] if p["records"]]

        session_id, served = fetch(0, 0, [(0, 0), (1, 0)])
        assert served == [0]  # the response limit fits one batch; the new session keeps the request's order
        _, served = fetch(session_id, 1, [(0, 1)])
        assert served == [0]  # ...and partition 0, served by this incremental fetch, goes to the back
        _, served = fetch(session_id, 2, [(0, 2)])
        assert served == [1]
        _, served = fetch(session_id, 3, [(1, 1)])
        assert served == [0]
