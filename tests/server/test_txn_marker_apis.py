"""TxnMarkerApis against a running broker: WriteTxnMarkers ends a transaction in the partitions
it names, with the producer state's epoch checks and per-partition errors."""

from __future__ import annotations

from franz.protocol.errors import Errors
from franz.records import SimpleRecord, build_batch
from tests.support.raw_client import RawClient, create_topic

INIT_PRODUCER_ID, LIST_OFFSETS, WRITE_TXN_MARKERS = 22, 2, 27
READ_COMMITTED, LATEST = 1, -1


def _last_stable_offset(client: RawClient, topic: str) -> int:
    answer = client.request(LIST_OFFSETS, 7, {"replica_id": -1, "isolation_level": READ_COMMITTED, "topics": [
        {"name": topic, "partitions": [{"partition_index": 0, "current_leader_epoch": -1, "timestamp": LATEST}]}]})
    return answer["topics"][0]["partitions"][0]["offset"]


def _marker(producer_id: int, epoch: int, coordinator_epoch: int, *partitions: tuple[str, int],
            commit: bool = False) -> dict:
    return {"producer_id": producer_id, "producer_epoch": epoch, "transaction_result": commit,
            "coordinator_epoch": coordinator_epoch,
            "topics": [{"name": name, "partition_indexes": [index]} for name, index in partitions]}


def _errors(answer: dict) -> dict[tuple[int, str, int], int]:
    return {(marker["producer_id"], topic["name"], partition["partition_index"]): partition["error_code"]
            for marker in answer["markers"] for topic in marker["topics"] for partition in topic["partitions"]}


def test_an_abort_marker_ends_an_open_transaction_and_stale_epochs_are_refused(broker_factory):
    # A hanging transaction, one no coordinator knows, is what WriteTxnMarkers is for (as
    # kafka-transactions.sh abort sends it); only a broker without KIP-890 verification lets a
    # producer open one.
    broker = broker_factory({"transaction.partition.verification.enable": "false"})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "hanging")
        pid = client.request(INIT_PRODUCER_ID, 4, {"transactional_id": None, "transaction_timeout_ms": -1,
                                                   "producer_id": -1, "producer_epoch": -1})["producer_id"]
        open_batch = build_batch([SimpleRecord(b"a"), SimpleRecord(b"b")], producer_id=pid, producer_epoch=3,
                                 base_sequence=0, is_transactional=True)
        answer = client.request(0, 9, {"transactional_id": "hanging", "acks": 1, "timeout_ms": 5000, "topic_data": [
            {"name": "hanging", "partition_data": [{"index": 0, "records": open_batch}]}]})  # a transactional id:
        assert answer["responses"][0]["partition_responses"][0]["error_code"] == Errors.NONE  # Kafka needs one
        assert _last_stable_offset(client, "hanging") == 0  # held back by the open transaction

        for version in (1, 2):
            stale = client.request(WRITE_TXN_MARKERS, version, {"markers": [
                _marker(pid, 2, 0, ("hanging", 0)), _marker(pid, 3, 0, ("absent", 0))]})
            assert _errors(stale) == {(pid, "hanging", 0): Errors.INVALID_PRODUCER_EPOCH,
                                      (pid, "absent", 0): Errors.UNKNOWN_TOPIC_OR_PARTITION}
        aborted = client.request(WRITE_TXN_MARKERS, 1, {"markers": [_marker(pid, 3, 7, ("hanging", 0))]})
        assert _errors(aborted) == {(pid, "hanging", 0): Errors.NONE}
        assert _last_stable_offset(client, "hanging") == 3  # the two records and the marker
        zombie = client.request(WRITE_TXN_MARKERS, 1, {"markers": [_marker(pid, 3, 6, ("hanging", 0))]})
        assert _errors(zombie) == {(pid, "hanging", 0): Errors.TRANSACTION_COORDINATOR_FENCED}


def test_a_transactions_v2_marker_must_bump_the_epoch_unless_it_repeats_one(broker_factory):
    """WriteTxnMarkers v2 (KIP-1228) says which transaction version wrote the marker. A v2
    coordinator ends a transaction with the epoch bumped, so a v2 marker at the epoch of the
    open transaction is a zombie's (INVALID_PRODUCER_EPOCH); once the transaction is over, the
    same marker again is a retry and is written (KAFKA-19999)."""
    broker = broker_factory({"transaction.partition.verification.enable": "false"})
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "bumped")
        pid = client.request(INIT_PRODUCER_ID, 4, {"transactional_id": None, "transaction_timeout_ms": 60000,
                                                   "producer_id": -1, "producer_epoch": -1})["producer_id"]
        open_batch = build_batch([SimpleRecord(b"a")], producer_id=pid, producer_epoch=3, base_sequence=0,
                                 is_transactional=True)
        client.request(0, 9, {"transactional_id": "bumped", "acks": 1, "timeout_ms": 5000, "topic_data": [
            {"name": "bumped", "partition_data": [{"index": 0, "records": open_batch}]}]})

        def write(epoch: int, transaction_version: int) -> int:
            marker = {**_marker(pid, epoch, 0, ("bumped", 0)), "transaction_version": transaction_version}
            return _errors(client.request(WRITE_TXN_MARKERS, 2, {"markers": [marker]}))[(pid, "bumped", 0)]

        assert write(3, 2) == Errors.INVALID_PRODUCER_EPOCH
        assert _last_stable_offset(client, "bumped") == 0  # still open
        assert write(4, 2) == Errors.NONE
        assert _last_stable_offset(client, "bumped") == 2
        assert write(4, 2) == Errors.NONE  # the retry of a marker already written
        assert write(3, 2) == Errors.INVALID_PRODUCER_EPOCH  # older still is fenced
