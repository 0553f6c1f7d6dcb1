"""ShareFetch and ShareAcknowledge on the wire, against a real broker process: the record flow
of one member (acquire, accept, release and re-acquire in one request, reject) and the error
codes Kafka answers for bad requests and bad sessions."""

from __future__ import annotations

import re
import time
import urllib.request

from franz.protocol.errors import Errors
from franz.records import MemoryRecords, SimpleRecord, build_batch
from tests.support.broker import free_port
from tests.support.raw_client import RawClient, create_topic, produce

SHARE_GROUP_HEARTBEAT, SHARE_FETCH, SHARE_ACKNOWLEDGE = 76, 78, 79
FAST = {"group.share.heartbeat.interval.ms": "500", "group.share.min.heartbeat.interval.ms": "500"}


def _fetch(client: RawClient, epoch: int, topic_id: bytes | None, acks=(), member: str | None = "member-1",
           group: str | None = "raw", max_wait_ms: int = 0, min_bytes: int = 1) -> dict:
    topics = [] if topic_id is None else [{"topic_id": topic_id, "partitions": [
        {"partition_index": 0, "acknowledgement_batches": [
            {"first_offset": f, "last_offset": last, "acknowledge_types": list(t)} for f, last, t in acks]}]}]
    return client.request(SHARE_FETCH, 1, {
        "group_id": group, "member_id": member, "share_session_epoch": epoch, "max_wait_ms": max_wait_ms,
        "min_bytes": min_bytes, "max_bytes": 1 << 20, "max_records": 500, "batch_size": 500, "topics": topics,
        "forgotten_topics_data": []})


def _acknowledge(client: RawClient, epoch: int, topic_id: bytes, acks, member: str = "member-1") -> dict:
    return client.request(SHARE_ACKNOWLEDGE, 1, {
        "group_id": "raw", "member_id": member, "share_session_epoch": epoch, "topics": [
            {"topic_id": topic_id, "partitions": [{"partition_index": 0, "acknowledgement_batches": [
                {"first_offset": f, "last_offset": last, "acknowledge_types": list(t)} for f, last, t in acks]}]}]})


def _partition(answer: dict) -> dict:
    assert answer["error_code"] == Errors.NONE, answer
    [topic] = answer["responses"]
    [partition] = topic["partitions"]
    return partition


def _join(client: RawClient, topic: str) -> bytes:
    """Join the share group and heartbeat until the partition's state is initialized and assigned."""
    epoch = 0
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        answer = client.request(SHARE_GROUP_HEARTBEAT, 1, {"group_id": "raw", "member_id": "member-1",
                                                           "member_epoch": epoch, "rack_id": None,
                                                           "subscribed_topic_names": [topic]})
        assert answer["error_code"] == Errors.NONE, answer
        epoch = answer["member_epoch"]
        if answer["assignment"] and answer["assignment"]["topic_partitions"]:
            return bytes(answer["assignment"]["topic_partitions"][0]["topic_id"])
        time.sleep(0.2)
    raise AssertionError("no assignment")


def _offsets(records: bytes) -> list[int]:
    return [record.offset for batch in MemoryRecords(bytearray(records)).batches() for record in batch]


def test_a_member_acquires_accepts_releases_and_rejects_records(broker_factory):
    port = free_port()
    broker = broker_factory({**FAST, "metrics.port": str(port)})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "raw-share")
        topic_id = _join(client, "raw-share")
        # The first fetch reads the share-partition's state: no start offset yet, so
        # share.auto.offset.reset (latest) puts it at the log end.
        opened = _partition(_fetch(client, 0, topic_id))
        assert (opened["error_code"], opened["acquired_records"]) == (Errors.NONE, [])
        produce(client, "raw-share", build_batch([SimpleRecord(value=b"v%d" % i) for i in range(10)]))
        first = _partition(_fetch(client, 1, topic_id, max_wait_ms=2000))
        assert first["acquired_records"] == [{"first_offset": 0, "last_offset": 9, "delivery_count": 1}]
        assert _offsets(first["records"]) == list(range(10))
        # Acknowledgements ride on the next fetch and come before it: the released half is
        # acquired again at once, with a delivery count of 2.
        second = _partition(_fetch(client, 2, topic_id, acks=[(0, 4, [1]), (5, 9, [2])]))
        assert second["acknowledge_error_code"] == Errors.NONE
        assert second["acquired_records"] == [{"first_offset": 5, "last_offset": 9, "delivery_count": 2}]
        for epoch, acks in ((3, [(5, 9, [9])]), (4, [(9, 5, [3])]), (5, [(5, 12, [3])]), (6, [(5, 9, [1, 3])])):
            refused = _acknowledge(client, epoch, topic_id, acks)  # unknown type, backwards, past the end, too few
            assert refused["responses"][0]["partitions"][0]["error_code"] == Errors.INVALID_REQUEST, acks
        other = _acknowledge(client, 7, topic_id, [(5, 9, [3])], member="member-2")
        assert other["error_code"] == Errors.SHARE_SESSION_NOT_FOUND
        rejected = _acknowledge(client, 7, topic_id, [(5, 9, [3])])
        assert rejected["responses"][0]["partitions"][0]["error_code"] == Errors.NONE
        again = _acknowledge(client, 8, topic_id, [(6, 6, [1])])  # below the start offset now: nothing to do
        assert again["responses"][0]["partitions"][0]["error_code"] == Errors.NONE
        produce(client, "raw-share", build_batch([SimpleRecord(value=b"late")]))
        third = _partition(_fetch(client, 9, topic_id, max_wait_ms=2000))
        assert third["acquired_records"] == [{"first_offset": 10, "last_offset": 10, "delivery_count": 1}]
        assert _fetch(client, 10, topic_id)["responses"] == []  # nothing new: the partition is not named
        assert _fetch(client, -1, None)["error_code"] == Errors.NONE
        assert _fetch(client, 11, topic_id)["error_code"] == Errors.SHARE_SESSION_NOT_FOUND
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as scraped:
        text = scraped.read().decode()
    meters = {name: float(value) for name, value in re.findall(
        r'^kafka_server_BrokerTopicMetrics_(\w+)_total\{topic="raw-share"\} (\S+)$', text, re.MULTILINE)}
    # SharePartitionManager's marks, once per topic of each call: five fetches reached it (epochs
    # 0, 1, 2, 9 and 10), and four acknowledgements (the fetch's at epoch 2 and the
    # ShareAcknowledges at 5, 7 and 8; those at 3, 4 and 6 were refused before it, as KafkaApis'
    # validateAcknowledgementBatches refuses them), one failed by the share-partition (5: past
    # the end)
    assert meters["TotalShareFetchRequestsPerSec"] == 5
    assert meters["TotalShareAcknowledgementRequestsPerSec"] == 4
    assert meters["FailedShareAcknowledgementRequestsPerSec"] == 1
    assert "FailedShareFetchRequestsPerSec" not in meters
    assert meters["BytesOutPerSec"] == len(first["records"]) + len(second["records"]) + len(third["records"])


def test_a_share_fetch_waits_for_min_bytes_of_log_and_not_min_records(broker_factory):
    """DelayedShareFetch counts the log's bytes between the next fetch offset and the HW: 100
    records of 100 B meet a MinBytes of 5,000 at once, 5 small ones wait out MaxWaitMs (and are
    handed out then), and a MinBytes of 0 answers at once with nothing to hand out."""
    broker = broker_factory(FAST)
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "raw-min-bytes")
        topic_id = _join(client, "raw-min-bytes")
        assert _partition(_fetch(client, 0, topic_id))["acquired_records"] == []  # at the log end (latest)

        began = time.monotonic()
        assert _fetch(client, 1, topic_id, max_wait_ms=8000, min_bytes=0)["responses"] == []
        assert time.monotonic() - began < 6  # not held for MaxWaitMs

        produce(client, "raw-min-bytes", build_batch([SimpleRecord(value=b"x" * 100) for _ in range(100)]))
        began = time.monotonic()
        enough = _partition(_fetch(client, 2, topic_id, max_wait_ms=8000, min_bytes=5000))
        assert time.monotonic() - began < 6
        assert enough["acquired_records"] == [{"first_offset": 0, "last_offset": 99, "delivery_count": 1}]

        produce(client, "raw-min-bytes", build_batch([SimpleRecord(value=b"y") for _ in range(5)]))
        began = time.monotonic()
        waited = _partition(_fetch(client, 3, topic_id, acks=[(0, 99, [1])], max_wait_ms=1500, min_bytes=5000))
        assert time.monotonic() - began >= 1.4  # ~120 bytes of log: below MinBytes until MaxWaitMs
        assert waited["acquired_records"] == [{"first_offset": 100, "last_offset": 104, "delivery_count": 1}]


def test_bad_share_requests_get_kafkas_error_codes(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "raw-bad")
        topic_id = bytes(16)
        assert _fetch(client, 0, topic_id, group=None)["error_code"] == Errors.INVALID_REQUEST
        assert _fetch(client, 0, topic_id, member="")["error_code"] == Errors.INVALID_REQUEST
        assert _fetch(client, 0, topic_id, member="m" * 37)["error_code"] == Errors.INVALID_REQUEST
        assert _fetch(client, 0, topic_id, acks=[(0, 0, [1])])["error_code"] == Errors.INVALID_REQUEST
        assert _fetch(client, 3, topic_id)["error_code"] == Errors.SHARE_SESSION_NOT_FOUND
        assert _acknowledge(client, 0, topic_id, [(0, 0, [1])])["error_code"] == Errors.INVALID_SHARE_SESSION_EPOCH
        opened = _fetch(client, 0, topic_id)  # a topic id nobody knows
        assert _partition(opened)["error_code"] == Errors.UNKNOWN_TOPIC_ID
        assert _fetch(client, 5, topic_id)["error_code"] == Errors.INVALID_SHARE_SESSION_EPOCH
        unknown = _acknowledge(client, 1, topic_id, [(3, 1, [1])])
        assert unknown["responses"][0]["partitions"][0]["error_code"] == Errors.UNKNOWN_TOPIC_ID


def test_record_limit_mode_acquires_exactly_max_records(broker_factory):
    """ShareFetch v2 with ShareAcquireMode 1 (record_limit): the log batch of 10 records is cut at
    MaxRecords; the rest stays for the next fetch, of any member."""
    broker = broker_factory(FAST)
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "raw-limit")
        topic_id = _join(client, "raw-limit")
        assert _partition(_fetch(client, 0, topic_id))["acquired_records"] == []  # state read: at the log end
        produce(client, "raw-limit", build_batch([SimpleRecord(value=b"v%d" % i) for i in range(10)]))
        acquired = []
        for epoch in (1, 2):
            answer = client.request(SHARE_FETCH, 2, {
                "group_id": "raw", "member_id": "member-1", "share_session_epoch": epoch, "max_wait_ms": 2000,
                "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 3, "batch_size": 3, "share_acquire_mode": 1,
                "is_renew_ack": False, "topics": [{"topic_id": topic_id, "partitions": [
                    {"partition_index": 0, "acknowledgement_batches": []}]}], "forgotten_topics_data": []})
            acquired += _partition(answer)["acquired_records"]
    assert acquired == [{"first_offset": 0, "last_offset": 2, "delivery_count": 1},
                        {"first_offset": 3, "last_offset": 5, "delivery_count": 1}]


def test_share_version_turned_off_ends_sessions_and_frees_acquired_records(broker_factory):
    """onShareVersionToggle: with share.version at 0 every share session ends and every
    share-partition is dropped, so once it is back on, the old session's epoch is unknown and
    the records it held (acquired, so never written to the share state) are handed out again."""
    broker = broker_factory(FAST)

    def set_share_version(client: RawClient, level: int, upgrade_type: int) -> None:
        answer = client.request(57, 2, {"timeout_ms": 30_000, "validate_only": False, "feature_updates": [
            {"feature": "share.version", "max_version_level": level, "upgrade_type": upgrade_type}]})
        assert answer["error_code"] == Errors.NONE, answer

    with RawClient(broker.bootstrap) as client:
        create_topic(client, "toggled")
        topic_id = _join(client, "toggled")
        assert _partition(_fetch(client, 0, topic_id))["acquired_records"] == []
        produce(client, "toggled", build_batch([SimpleRecord(value=b"v%d" % i) for i in range(10)]))
        held = _partition(_fetch(client, 1, topic_id, max_wait_ms=2000))
        assert held["acquired_records"] == [{"first_offset": 0, "last_offset": 9, "delivery_count": 1}]
        # Accepting offset 0 writes the state (start offset 1): 1-9 stay acquired, unwritten.
        assert _fetch(client, 2, topic_id, acks=[(0, 0, [1])])["error_code"] == Errors.NONE

        set_share_version(client, 0, 2)
        assert _fetch(client, 3, topic_id)["error_code"] == Errors.UNSUPPORTED_VERSION
        set_share_version(client, 1, 1)
        assert _fetch(client, 3, topic_id)["error_code"] == Errors.SHARE_SESSION_NOT_FOUND
        again = _partition(_fetch(client, 0, topic_id, max_wait_ms=2000))  # a new session
        assert [(r["first_offset"], r["last_offset"]) for r in again["acquired_records"]] == [(1, 9)]
