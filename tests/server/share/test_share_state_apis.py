"""The share-group state RPCs (83-87) and FindCoordinator of type SHARE on the wire, against a
real broker process: a persister elsewhere initializes, reads, writes, summarizes and deletes
share-partition state, and is refused as Kafka 4.3's ShareCoordinatorShard refuses it."""

from __future__ import annotations

import base64
import time

from franz.protocol.errors import Errors
from tests.support.raw_client import RawClient

CREATE_TOPICS, FIND_COORDINATOR = 19, 10
INITIALIZE, READ, WRITE, DELETE, READ_SUMMARY = 83, 84, 85, 86, 87
KEY_TYPE_SHARE = 2
AVAILABLE, ACKNOWLEDGED, ARCHIVED = 0, 2, 4


def _topic(client: RawClient, name: str, partitions: int) -> bytes:
    answer = client.request(CREATE_TOPICS, 7, {"topics": [{
        "name": name, "num_partitions": partitions, "replication_factor": 1, "configs": []}], "timeout_ms": 5000})
    [topic] = answer["topics"]
    assert topic["error_code"] == Errors.NONE, topic
    return bytes(topic["topic_id"])


def _ask(client: RawClient, api_key: int, version: int, group: str, topic_id: bytes, partitions: list[dict]) -> dict:
    """One topic's results, by partition."""
    answer = client.request(api_key, version, {"group_id": group, "topics": [
        {"topic_id": topic_id, "partitions": partitions}]})
    [result] = answer["results"]
    assert bytes(result["topic_id"]) == topic_id
    return {p["partition"]: p for p in result["partitions"]}


def _batch(first: int, last: int, state: int, count: int) -> dict:
    return {"first_offset": first, "last_offset": last, "delivery_state": state, "delivery_count": count}


def _write(client, group, topic_id, partition, state_epoch, leader_epoch, start, batches, finished=-1, version=1):
    return _ask(client, WRITE, version, group, topic_id, [
        {"partition": partition, "state_epoch": state_epoch, "leader_epoch": leader_epoch, "start_offset": start,
         "delivery_complete_count": finished, "state_batches": batches}])[partition]


def _find_share_coordinator(client: RawClient, keys: list[str], version: int = 6) -> list[dict]:
    deadline = time.monotonic() + 20
    while True:
        answer = client.request(FIND_COORDINATOR, version, {"key_type": KEY_TYPE_SHARE, "coordinator_keys": keys})
        codes = {c["error_code"] for c in answer["coordinators"]}
        if Errors.COORDINATOR_NOT_AVAILABLE not in codes or time.monotonic() > deadline:
            return answer["coordinators"]
        time.sleep(0.1)


def _uuid_text(topic_id: bytes) -> str:
    return base64.urlsafe_b64encode(topic_id).rstrip(b"=").decode()


def test_find_coordinator_of_type_share_names_this_node_for_a_valid_key_only(broker):
    with RawClient(broker.bootstrap) as client:
        topic_id = _topic(client, "found", 1)
        good = f"group:with:colons:{_uuid_text(topic_id)}:0"
        bad = ["", "group:0", f"  :{_uuid_text(topic_id)}:0", "group:not-a-uuid:0", f"group:{_uuid_text(topic_id)}:x",
               f"group:{_uuid_text(topic_id)}:"]
        coordinators = _find_share_coordinator(client, [good, *bad])
        by_key = {c["key"]: c for c in coordinators}
        assert by_key[good]["error_code"] == Errors.NONE
        assert by_key[good]["port"] == int(broker.bootstrap.rsplit(":", 1)[1])
        assert by_key[good]["node_id"] == 1
        for key in bad:
            assert by_key[key]["error_code"] == Errors.INVALID_REQUEST, key
            assert by_key[key]["node_id"] == -1
        # the SHARE type came with v6
        [old] = client.request(FIND_COORDINATOR, 5, {"key_type": KEY_TYPE_SHARE,
                                                     "coordinator_keys": [good]})["coordinators"]
        assert old["error_code"] == Errors.INVALID_REQUEST


def test_a_persister_initializes_writes_reads_and_deletes_share_partition_state(broker_factory, tmp_path):
    broker = broker_factory({"share.coordinator.snapshot.update.records.per.snapshot": "2"})
    with RawClient(broker.bootstrap) as client:
        topic_id = _topic(client, "state", 2)
        _find_share_coordinator(client, [f"g:{_uuid_text(topic_id)}:0"])  # makes the state topic
        initialized = _ask(client, INITIALIZE, 0, "g", topic_id, [
            {"partition": 0, "state_epoch": 3, "start_offset": 10},
            {"partition": 1, "state_epoch": 3, "start_offset": -1}])
        assert {p: (r["error_code"], r["error_message"]) for p, r in initialized.items()} == {
            0: (Errors.NONE, None), 1: (Errors.NONE, None)}

        read = _ask(client, READ, 0, "g", topic_id, [{"partition": 0, "leader_epoch": 5},
                                                      {"partition": 1, "leader_epoch": -1}])
        assert (read[0]["error_code"], read[0]["state_epoch"], read[0]["start_offset"], read[0]["state_batches"]) == (
            Errors.NONE, 3, 10, [])
        assert (read[1]["state_epoch"], read[1]["start_offset"]) == (3, -1)

        # Three writes with a snapshot every two updates: the state is the combination of all.
        for batches in ([_batch(10, 14, ACKNOWLEDGED, 1)], [_batch(15, 19, AVAILABLE, 1)],
                        [_batch(15, 16, ARCHIVED, 2)]):
            written = _write(client, "g", topic_id, 0, 3, 5, 10, batches, finished=7)
            assert (written["error_code"], written["error_message"]) == (Errors.NONE, None)
        expected = [_batch(10, 14, ACKNOWLEDGED, 1), _batch(15, 16, ARCHIVED, 2), _batch(17, 19, AVAILABLE, 1)]
        read = _ask(client, READ, 0, "g", topic_id, [{"partition": 0, "leader_epoch": 5}])[0]
        assert read["state_batches"] == expected

        summary = _ask(client, READ_SUMMARY, 1, "g", topic_id, [{"partition": 0, "leader_epoch": 5}])[0]
        assert (summary["error_code"], summary["state_epoch"], summary["leader_epoch"], summary["start_offset"],
                summary["delivery_complete_count"]) == (Errors.NONE, 3, 5, 10, 7)
        old_summary = _ask(client, READ_SUMMARY, 0, "g", topic_id, [{"partition": 0, "leader_epoch": 5}])[0]
        assert (old_summary["start_offset"], old_summary["delivery_complete_count"]) == (10, -1)  # not in v0

        # A write of v0 carries no finished count: it is recorded as unknown (-1).
        assert _write(client, "g", topic_id, 0, 3, 5, 12, [], version=0)["error_code"] == Errors.NONE
        summary = _ask(client, READ_SUMMARY, 1, "g", topic_id, [{"partition": 0, "leader_epoch": 5}])[0]
        assert (summary["start_offset"], summary["delivery_complete_count"]) == (12, -1)

    broker.stop()
    broker = broker_factory({}, data_dir=broker.data_dir)
    with RawClient(broker.bootstrap) as client:
        read = _ask(client, READ, 0, "g", topic_id, [{"partition": 0, "leader_epoch": 5}])[0]
        assert (read["state_epoch"], read["start_offset"], read["state_batches"]) == (
            3, 12, [_batch(12, 14, ACKNOWLEDGED, 1), _batch(15, 16, ARCHIVED, 2), _batch(17, 19, AVAILABLE, 1)])

        deleted = _ask(client, DELETE, 0, "g", topic_id, [{"partition": 0}, {"partition": 1}])
        assert {p: (r["error_code"], r["error_message"]) for p, r in deleted.items()} == {
            0: (Errors.NONE, None), 1: (Errors.NONE, None)}
        summary = _ask(client, READ_SUMMARY, 1, "g", topic_id, [{"partition": 0, "leader_epoch": 0}])[0]
        assert (summary["error_code"], summary["state_epoch"], summary["leader_epoch"], summary["start_offset"],
                summary["delivery_complete_count"]) == (Errors.NONE, 0, 0, -1, -1)
        read = _ask(client, READ, 0, "g", topic_id, [{"partition": 0, "leader_epoch": 5}])[0]
        assert read["error_code"] == Errors.INVALID_REQUEST


def test_the_shard_refuses_stale_epochs_unknown_partitions_and_uninitialized_state(broker):
    with RawClient(broker.bootstrap) as client:
        topic_id = _topic(client, "refusals", 1)
        # before any FindCoordinator made __share_group_state, no shard answers
        early = _ask(client, INITIALIZE, 0, "g", topic_id, [{"partition": 0, "state_epoch": 0, "start_offset": 0}])[0]
        assert (early["error_code"], early["error_message"]) == (
            Errors.NOT_COORDINATOR, "Unable to initialize share group state: This is not the correct coordinator.")
        _find_share_coordinator(client, [f"g:{_uuid_text(topic_id)}:0"])
        unknown_topic = bytes(range(16))

        read = _ask(client, READ, 0, "g", topic_id, [{"partition": 0, "leader_epoch": 1}])[0]
        assert (read["error_code"], read["error_message"]) == (
            Errors.INVALID_REQUEST, "Read operation on uninitialized share partition not allowed.")
        written = _write(client, "g", topic_id, 0, 0, 1, 0, [])
        assert (written["error_code"], written["error_message"]) == (
            Errors.INVALID_REQUEST, "Write operation on uninitialized share partition not allowed.")

        assert _ask(client, INITIALIZE, 0, "g", topic_id, [
            {"partition": 0, "state_epoch": 2, "start_offset": 0}])[0]["error_code"] == Errors.NONE
        assert _ask(client, READ, 0, "g", topic_id, [{"partition": 0, "leader_epoch": 4}])[0]["error_code"] == 0

        stale_leader = _write(client, "g", topic_id, 0, 2, 3, 0, [])
        assert (stale_leader["error_code"], stale_leader["error_message"]) == (
            Errors.FENCED_LEADER_EPOCH, "The leader epoch in the request is older than the epoch on the broker.")
        stale_read = _ask(client, READ, 0, "g", topic_id, [{"partition": 0, "leader_epoch": 3}])[0]
        assert stale_read["error_code"] == Errors.FENCED_LEADER_EPOCH
        stale_state = _write(client, "g", topic_id, 0, 1, 4, 0, [])
        assert (stale_state["error_code"], stale_state["error_message"]) == (
            Errors.FENCED_STATE_EPOCH,
            "The share coordinator rejected the request because the share-group state epoch did not match.")
        stale_init = _ask(client, INITIALIZE, 0, "g", topic_id, [{"partition": 0, "state_epoch": 1,
                                                                  "start_offset": 0}])[0]
        assert stale_init["error_code"] == Errors.FENCED_STATE_EPOCH
        # -1 means "not checked", for both epochs
        assert _write(client, "g", topic_id, 0, -1, -1, 0, [])["error_code"] == Errors.NONE

        negative = _ask(client, READ_SUMMARY, 1, "g", topic_id, [{"partition": -1, "leader_epoch": 0}])[-1]
        assert (negative["error_code"], negative["error_message"]) == (
            Errors.INVALID_REQUEST, "The partition id cannot be a negative number.")
        for api_key, version, partition in (
                (INITIALIZE, 0, {"partition": 0, "state_epoch": 0, "start_offset": 0}),
                (READ_SUMMARY, 1, {"partition": 0, "leader_epoch": 0}),
                (DELETE, 0, {"partition": 0})):
            answer = _ask(client, api_key, version, "g", unknown_topic, [partition])[0]
            assert (answer["error_code"], answer["error_message"]) == (
                Errors.UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition."), api_key
        past_end = _ask(client, INITIALIZE, 0, "g", topic_id, [{"partition": 1, "state_epoch": 0,
                                                                "start_offset": 0}])[1]
        assert past_end["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION

        # The service answers a request with no group, no topics or a topic with no partitions with nothing.
        assert client.request(READ, 0, {"group_id": "", "topics": [
            {"topic_id": topic_id, "partitions": [{"partition": 0, "leader_epoch": 0}]}]}) == {"results": []}
        assert client.request(WRITE, 1, {"group_id": "g", "topics": []}) == {"results": []}
        assert client.request(DELETE, 0, {"group_id": "g", "topics": [
            {"topic_id": topic_id, "partitions": [{"partition": 0}]},
            {"topic_id": unknown_topic, "partitions": []}]}) == {"results": []}
        # the state was not deleted by that
        assert _ask(client, READ, 0, "g", topic_id, [{"partition": 0, "leader_epoch": 4}])[0]["error_code"] == 0


def test_answers_carry_the_last_records_epochs_while_fencing_keeps_the_highest(broker):
    """ShareCoordinatorShard keeps each record's own epochs in the state it answers with, and the
    highest ones apart, for fencing: a new initialize snapshot (leader epoch 0) is answered as
    such, yet a leader older than any seen is still fenced; -1 is not checked, and answered."""
    with RawClient(broker.bootstrap) as client:
        topic_id = _topic(client, "epochs", 1)
        _find_share_coordinator(client, [f"g:{_uuid_text(topic_id)}:0"])
        init = [{"partition": 0, "state_epoch": 1, "start_offset": 0}]
        assert _ask(client, INITIALIZE, 0, "g", topic_id, init)[0]["error_code"] == Errors.NONE
        assert _ask(client, READ, 0, "g", topic_id, [{"partition": 0, "leader_epoch": 5}])[0]["error_code"] == 0
        again = [{"partition": 0, "state_epoch": 2, "start_offset": 100}]
        assert _ask(client, INITIALIZE, 0, "g", topic_id, again)[0]["error_code"] == Errors.NONE
        summary = _ask(client, READ_SUMMARY, 1, "g", topic_id, [{"partition": 0, "leader_epoch": 0}])[0]
        assert (summary["state_epoch"], summary["leader_epoch"], summary["start_offset"]) == (2, 0, 100)
        stale = _ask(client, READ, 0, "g", topic_id, [{"partition": 0, "leader_epoch": 4}])[0]
        assert stale["error_code"] == Errors.FENCED_LEADER_EPOCH
        unchecked = [{"partition": 0, "state_epoch": -1, "start_offset": 7}]
        assert _ask(client, INITIALIZE, 0, "g", topic_id, unchecked)[0]["error_code"] == Errors.NONE
        read = _ask(client, READ, 0, "g", topic_id, [{"partition": 0, "leader_epoch": -1}])[0]
        assert (read["error_code"], read["state_epoch"], read["start_offset"]) == (Errors.NONE, -1, 7)
        stale_group = _write(client, "g", topic_id, 0, 1, 5, 7, [])  # state epoch 2 was seen
        assert stale_group["error_code"] == Errors.FENCED_STATE_EPOCH


def test_a_write_too_large_for_the_state_topic_is_answered_as_the_service_answers_a_failed_write(broker):
    """A state record above the state topic's max.message.bytes fails its append
    (RECORD_LIST_TOO_LARGE), which CoordinatorOperationExceptionHelper turns into
    UNKNOWN_SERVER_ERROR, and the service words as 'Unable to write share group state: ...';
    the state stays as it was."""
    with RawClient(broker.bootstrap) as client:
        topic_id = _topic(client, "too-large", 1)
        _find_share_coordinator(client, [f"g:{_uuid_text(topic_id)}:0"])
        assert _ask(client, INITIALIZE, 0, "g", topic_id, [
            {"partition": 0, "state_epoch": 0, "start_offset": 0}])[0]["error_code"] == Errors.NONE
        batches = [_batch(2 * i, 2 * i, ACKNOWLEDGED, 1) for i in range(80_000)]  # ~1.5 MB of batches
        failed = _write(client, "g", topic_id, 0, 0, 0, 0, batches)
        assert failed["error_code"] == Errors.UNKNOWN_SERVER_ERROR
        assert failed["error_message"].startswith("Unable to write share group state: ")
        read = _ask(client, READ, 0, "g", topic_id, [{"partition": 0, "leader_epoch": -1}])[0]
        assert (read["error_code"], read["state_batches"]) == (Errors.NONE, [])
