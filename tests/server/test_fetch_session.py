"""KIP-227 incremental fetch sessions: the cache rules, and a broker answering
only the partitions with news."""

from __future__ import annotations

from franz.protocol.errors import Errors
from franz.server.fetch_session import (INITIAL_EPOCH, MAX_EPOCH, SESSION_ID_RANGE, CachedPartition, FetchContext,
                                        FetchSessionCache, FetchSessionCacheShard)
from tests.support.raw_client import RawClient, batch, create_topic

FETCH, PRODUCE = 1, 0


def _partition(index: int, offset: int = 0) -> CachedPartition:
    return CachedPartition("t", index, bytes(16), offset, 1024)


def _new_session(cache: FetchSessionCache, *partitions: CachedPartition, version: int = 12, now_ms: int = 0) -> int:
    context = cache.new_context(version, 0, INITIAL_EPOCH, list(partitions), [], now_ms)
    assert context.new_session_wanted
    return cache.create_session(context, now_ms)


def test_epoch_zero_asks_for_a_session_and_later_epochs_must_follow():
    cache = FetchSessionCache(16)
    session_id = _new_session(cache, _partition(0), _partition(1))
    assert session_id > 0
    assert cache.new_context(12, session_id, 5, [], [], 0).error == Errors.INVALID_FETCH_SESSION_EPOCH
    assert cache.new_context(12, 12345, 1, [], [], 0).error == Errors.FETCH_SESSION_ID_NOT_FOUND
    following = cache.new_context(12, session_id, 1, [_partition(1, offset=7)], [("t", 0)], 0)
    assert following.incremental
    assert [(p.partition, p.fetch_offset) for p in following.partitions] == [(1, 7)]
    assert cache.new_context(12, session_id, 2, [], [], 0).incremental


def test_final_epoch_closes_the_session():
    cache = FetchSessionCache(16)
    session_id = _new_session(cache, _partition(0))
    context = cache.new_context(12, session_id, -1, [_partition(0)], [], 0)
    assert not context.incremental and not context.new_session_wanted
    assert len(cache) == 0


def test_forgetting_every_partition_ends_the_session():
    """FetchManager.newContext: an incremental fetch that leaves its session empty closes
    it and is answered sessionless (session id 0)."""
    cache = FetchSessionCache(16)
    session_id = _new_session(cache, _partition(0), _partition(1))
    context = cache.new_context(12, session_id, 1, [], [("t", 0), ("t", 1)], 0)
    assert context.error == Errors.NONE and not context.incremental and not context.new_session_wanted
    assert context.partitions == [] and len(cache) == 0
    assert cache.new_context(12, session_id, 2, [], [], 0).error == Errors.FETCH_SESSION_ID_NOT_FOUND


def test_a_partition_both_named_and_forgotten_is_forgotten():
    """FetchSession.update adds and updates first, then forgets."""
    cache = FetchSessionCache(16)
    session_id = _new_session(cache, _partition(0), _partition(1))
    context = cache.new_context(12, session_id, 1, [_partition(1, offset=3)], [("t", 1)], 0)
    assert [p.partition for p in context.partitions] == [0]


def test_a_session_keeps_the_kind_of_topic_names_it_was_made_with():
    """A v13+ session keys partitions by topic id, an older one by name: a request of the other
    kind is FETCH_SESSION_TOPIC_ID_ERROR (checked after the epoch)."""
    cache = FetchSessionCache(16)
    by_name = _new_session(cache, _partition(0), version=12)
    assert cache.new_context(13, by_name, 1, [], [], 0).error == Errors.FETCH_SESSION_TOPIC_ID_ERROR
    assert cache.new_context(13, by_name, 2, [], [], 0).error == Errors.INVALID_FETCH_SESSION_EPOCH
    by_id = _new_session(cache, CachedPartition(None, 0, b"\x01" * 16, 0, 1024), version=17)
    assert cache.new_context(12, by_id, 1, [], [], 0).error == Errors.FETCH_SESSION_TOPIC_ID_ERROR
    forgotten = cache.new_context(17, by_id, 1, [], [(b"\x01" * 16, 0)], 0)  # an unknown id is forgotten by id
    assert forgotten.error == Errors.NONE and forgotten.partitions == [] and len(cache) == 1


def test_the_session_epoch_wraps_to_one():
    cache = FetchSessionCache(16)
    session_id = _new_session(cache, _partition(0))
    cache.get(session_id).epoch = MAX_EPOCH
    assert cache.new_context(12, session_id, MAX_EPOCH, [], [], 0).expected_epoch == 1
    assert cache.new_context(12, session_id, 1, [], [], 0).incremental


def test_a_full_shard_evicts_only_a_stale_or_less_valuable_session():
    """FetchSessionCacheShard.tryEvict, step by step as Kafka's FetchSessionTest.testSessionCache
    (eviction after 100 ms): a session idle past the eviction time goes first; else the smallest
    session older than that goes for a larger newcomer; a follower's session evicts a consumer's."""
    shard = FetchSessionCacheShard(3, shard_num=0, eviction_ms=100)

    def create(now_ms: int, size: int, privileged: bool = False) -> int:
        return shard.maybe_create_session(now_ms, privileged, True, [_partition(i) for i in range(size)])

    id1, id2, id3 = create(0, 10), create(10, 20), create(20, 30)
    assert create(30, 40) == 0 and create(40, 5) == 0  # all three young: nothing goes
    assert set(shard.sessions) == {id1, id2, id3}
    shard.touch(shard.sessions[id1], 200)
    id4 = create(210, 11)  # id2, idle since 10, is stale
    assert set(shard.sessions) == {id1, id3, id4}
    for session_id, now_ms in ((id1, 400), (id3, 390), (id4, 400)):
        shard.touch(shard.sessions[session_id], now_ms)
    id5 = create(410, 50)  # evicts the smallest old session, id1 (10 partitions)
    assert set(shard.sessions) == {id3, id4, id5}
    assert create(410, 5) == 0  # smaller than every evictable session
    id6 = create(410, 5, privileged=True)  # a follower's evicts the smallest consumer session, id4
    assert set(shard.sessions) == {id3, id5, id6}


def test_sessions_go_round_the_eight_shards_each_with_its_own_ids():
    assert FetchSessionCache(7).create_session(FetchContext(new_session_wanted=True), 0) == 0  # 7 // 8 slots each
    cache = FetchSessionCache(16)
    ids = [_new_session(cache, _partition(0)) for _ in range(8)]
    assert [session_id // SESSION_ID_RANGE for session_id in ids] == list(range(8))
    assert all(cache.get(session_id) is not None for session_id in ids)


def test_partitions_that_returned_records_go_to_the_back_of_the_session():
    cache = FetchSessionCache(16)
    session_id = _new_session(cache, _partition(0), _partition(1), _partition(2))
    context = cache.new_context(12, session_id, 1, [], [], 0)
    context.session.served_last(context.partitions[:2])
    assert [p.partition for p in cache.new_context(12, session_id, 2, [], [], 0).partitions] == [2, 0, 1]


def test_no_slots_means_no_sessions():
    cache = FetchSessionCache(0)
    assert _new_session(cache, _partition(0)) == 0


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


def _session_fetch(client: RawClient, version: int, session_id: int, epoch: int,
                   partitions: list[tuple[str | bytes, int, int]] = (), forgotten=()) -> dict:
    """A Fetch naming topics by name (v12) or by id (v13+): (topic, partition, fetch offset)."""
    key = "topic_id" if version >= 13 else "topic"
    topics: dict = {}
    for topic, index, offset in partitions:
        topics.setdefault(topic, []).append({"partition": index, "fetch_offset": offset,
                                             "partition_max_bytes": 1 << 20})
    return client.request(FETCH, version, {
        "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20, "isolation_level": 0,
        "session_id": session_id, "session_epoch": epoch, "rack_id": "",
        "topics": [{key: topic, "partitions": entries} for topic, entries in topics.items()],
        "forgotten_topics_data": [{key: topic, "partitions": [index]} for topic, index in forgotten]})


def _answers(response: dict) -> list[tuple[int, int]]:
    return [(p["partition_index"], p["error_code"]) for t in response["responses"] for p in t["partitions"]]


def _topic_id(client: RawClient, name: str) -> bytes:
    metadata = client.request(3, 12, {"topics": [{"name": name, "topic_id": bytes(16)}],
                                      "allow_auto_topic_creation": False})
    return bytes(metadata["topics"][0]["topic_id"])


def test_a_deleted_topic_stays_in_the_session_and_answers_its_error_every_time(broker):
    """Kafka never takes a partition out of a session but for the client's forgotten list: a
    deleted topic's partition answers UNKNOWN_TOPIC_OR_PARTITION on every incremental fetch,
    after the partitions that were read."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "gone")
        create_topic(client, "kept")
        full = _session_fetch(client, 12, 0, 0, [("gone", 0, 0), ("kept", 0, 0)])
        session_id = full["session_id"]
        assert session_id and _answers(full) == [(0, 0), (0, 0)]
        assert client.request(20, 4, {"topic_names": ["gone"], "timeout_ms": 10_000})["responses"][0][
            "error_code"] == Errors.NONE
        client.request(PRODUCE, 9, {"acks": 1, "timeout_ms": 5000, "topic_data": [
            {"name": "kept", "partition_data": [{"index": 0, "records": batch(b"a")}]}]})
        news = _session_fetch(client, 12, session_id, 1)
        assert [t["topic"] for t in news["responses"]] == ["kept", "gone"]  # read ones first
        assert _answers(news) == [(0, Errors.NONE), (0, Errors.UNKNOWN_TOPIC_OR_PARTITION)]
        assert news["responses"][1]["partitions"][0]["high_watermark"] == -1
        again = _session_fetch(client, 12, session_id, 2, [("kept", 0, 1)])  # past its records: no news
        assert again["session_id"] == session_id and _answers(again) == [(0, Errors.UNKNOWN_TOPIC_OR_PARTITION)]
        forgotten = _session_fetch(client, 12, session_id, 3, forgotten=[("gone", 0)])
        assert forgotten["session_id"] == session_id and forgotten["responses"] == []


def test_an_unknown_topic_id_is_kept_in_the_session_and_a_recreated_topic_is_inconsistent(broker):
    """Fetch v13+: an unknown topic id is answered UNKNOWN_TOPIC_ID on every fetch of the
    session it is kept in; a topic deleted and made again under its name answers the old id
    INCONSISTENT_TOPIC_ID (ReplicaManager's topic id check), never the new topic's records."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "again")
        old_id = _topic_id(client, "again")
        unknown = bytes(range(1, 17))
        full = _session_fetch(client, 17, 0, 0, [(old_id, 0, 0), (unknown, 0, 0)])
        session_id = full["session_id"]
        assert session_id and _answers(full) == [(0, Errors.NONE), (0, Errors.UNKNOWN_TOPIC_ID)]
        assert _answers(_session_fetch(client, 17, session_id, 1)) == [(0, Errors.UNKNOWN_TOPIC_ID)]
        client.request(20, 4, {"topic_names": ["again"], "timeout_ms": 10_000})
        create_topic(client, "again")
        client.request(PRODUCE, 9, {"acks": 1, "timeout_ms": 5000, "topic_data": [
            {"name": "again", "partition_data": [{"index": 0, "records": batch(b"new")}]}]})
        assert _topic_id(client, "again") != old_id
        for epoch in (2, 3):
            answer = _session_fetch(client, 17, session_id, epoch)
            assert _answers(answer) == [(0, Errors.INCONSISTENT_TOPIC_ID), (0, Errors.UNKNOWN_TOPIC_ID)]
            assert not answer["responses"][0]["partitions"][0]["records"]


def test_a_full_cache_answers_a_new_fetcher_without_a_session_and_keeps_the_others(broker_factory):
    """With 8 slots (one a shard) and every session young, a ninth full fetch gets session id 0
    where LRU eviction would have cut off a live session (FetchSessionCacheShard.tryEvict)."""
    broker = broker_factory({"max.incremental.fetch.session.cache.slots": "8"})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "slots")
        sessions = [_session_fetch(client, 12, 0, 0, [("slots", 0, 0)])["session_id"] for _ in range(8)]
        assert all(sessions)
        assert _session_fetch(client, 12, 0, 0, [("slots", 0, 0)])["session_id"] == 0
        for session_id in sessions:
            answer = _session_fetch(client, 12, session_id, 1)
            assert (answer["error_code"], answer["session_id"]) == (Errors.NONE, session_id)
