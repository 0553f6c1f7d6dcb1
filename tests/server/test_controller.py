"""The single-node controller against a real broker: what a partition's directory
holds once the controller has made this node its leader, and topic creation
that keeps the event loop serving while its logs reach the disk."""

from __future__ import annotations

import json
import threading

import pytest
from confluent_kafka.admin import AdminClient, NewPartitions

from franz.protocol.codec import decode_response, encode_request
from franz.protocol.errors import Errors
from tests.support.broker_on_thread import BrokerOnThread
from tests.support.failing_fs import QUIET_CHECKPOINTS
from tests.support.raw_client import CREATE_TOPICS, RawClient, batch, create_topic, produce

TIMEOUT_S = 30
METADATA = 3
FIND_COORDINATOR = 10
LEADER_EPOCH_ZERO_FROM_OFFSET_ZERO = "0\n1\n0 0\n"  # version, entry count, "epoch startOffset"


def test_a_new_partition_has_its_leader_epoch_checkpointed_before_the_first_produce(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "led", 2)
        checkpoints = [broker.data_dir / f"led-{p}" / "leader-epoch-checkpoint" for p in (0, 1)]
        assert [c.read_text() for c in checkpoints] == [LEADER_EPOCH_ZERO_FROM_OFFSET_ZERO] * 2
        inode = checkpoints[0].stat().st_ino  # the file is replaced (tmp + rename) on every write
        assert produce(client, "led", batch(b"a", b"b"))["error_code"] == 0
        assert checkpoints[0].stat().st_ino == inode, "the first produce rewrote the epoch checkpoint"
        assert checkpoints[0].read_text() == LEADER_EPOCH_ZERO_FROM_OFFSET_ZERO


def test_added_partitions_are_led_from_their_creation_and_a_restart_keeps_the_entries(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "grown", 1)
        assert produce(client, "grown", batch(b"x"))["error_code"] == 0
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_partitions([NewPartitions("grown", 3)])["grown"].result(TIMEOUT_S)
    del admin  # no client left to retry its connection while the broker restarts
    for partition in (1, 2):
        assert (broker.data_dir / f"grown-{partition}" / "leader-epoch-checkpoint").read_text() == \
            LEADER_EPOCH_ZERO_FROM_OFFSET_ZERO
    broker.restart()
    assert (broker.data_dir / "grown-0" / "leader-epoch-checkpoint").read_text() == \
        LEADER_EPOCH_ZERO_FROM_OFFSET_ZERO


def _metadata(client: RawClient, name: str, auto_create: bool = False) -> dict:
    return client.request(METADATA, 12, {"topics": [{"topic_id": bytes(16), "name": name}],
                                         "allow_auto_topic_creation": auto_create,
                                         "include_topic_authorized_operations": False})["topics"][0]


def _create_topics_body(name: str, partitions: int) -> dict:
    return {"topics": [{"name": name, "num_partitions": partitions, "replication_factor": 1}], "timeout_ms": 5000}


def _stall(broker: BrokerOnThread, method: str = "get_or_create_log") -> tuple[threading.Event, threading.Event]:
    """(gate, stalled): every call of the LogManager's `method` (a log's creation, or its
    deletion) sets `stalled`, then waits for `gate` before the real one runs."""
    gate, stalled = threading.Event(), threading.Event()
    log_manager = broker.server.log_manager
    real = getattr(log_manager, method)

    def stalling_disk(*args, **kwargs):
        stalled.set()
        assert gate.wait(TIMEOUT_S)
        return real(*args, **kwargs)

    setattr(log_manager, method, stalling_disk)
    return gate, stalled


def test_a_topic_whose_logs_are_slow_to_create_blocks_no_other_request_and_appears_whole(tmp_path):
    """Creating a log fsyncs its files; on a stalling disk that must not stop the broker. The
    disk here stalls every log creation until the test lets it go (the real LogManager runs
    behind the gate)."""
    broker = BrokerOnThread(tmp_path)
    gate, stalled = _stall(broker)
    try:
        with RawClient(broker.bootstrap) as creator, RawClient(broker.bootstrap) as auto_creator, \
                RawClient(broker.bootstrap) as other:
            creator.send_frame(encode_request(CREATE_TOPICS, 7, 1, "creator", _create_topics_body("slow", 3)))
            assert stalled.wait(TIMEOUT_S)
            auto_creator.send_frame(encode_request(METADATA, 12, 1, "auto", {
                "topics": [{"topic_id": bytes(16), "name": "slow"}], "allow_auto_topic_creation": True,
                "include_topic_authorized_operations": False}))
            # Served while the logs wait on the disk: no partial topic, no second creation.
            assert _metadata(other, "slow")["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
            again = other.request(CREATE_TOPICS, 7, _create_topics_body("slow", 3))["topics"][0]
            assert again["error_code"] == Errors.TOPIC_ALREADY_EXISTS
            gate.set()
            created = decode_response(CREATE_TOPICS, 7, creator.receive_frame())[1]["topics"][0]
            auto_created = decode_response(METADATA, 12, auto_creator.receive_frame())[1]["topics"][0]
            assert (created["error_code"], created["num_partitions"]) == (Errors.NONE, 3)
            assert auto_created["error_code"] == Errors.NONE
            assert auto_created["topic_id"] == created["topic_id"]  # the same creation, awaited twice
            assert len(_metadata(other, "slow")["partitions"]) == 3
        assert sorted(p.name for p in tmp_path.glob("slow-*")) == ["slow-0", "slow-1", "slow-2"]
    finally:
        gate.set()
        broker.stop()


def test_shutdown_waits_for_an_internal_topic_being_created_in_the_background(tmp_path):
    """FindCoordinator starts __consumer_offsets' creation and answers at once; a shutdown
    meanwhile must let those logs finish before LogManager closes the dir as clean."""
    broker = BrokerOnThread(tmp_path)
    gate, stalled = _stall(broker)
    stopper = threading.Thread(target=broker.stop)
    try:
        with RawClient(broker.bootstrap) as client:
            answer = client.request(FIND_COORDINATOR, 3, {"key": "g", "key_type": 0})
            assert answer["error_code"] == Errors.COORDINATOR_NOT_AVAILABLE
        assert stalled.wait(TIMEOUT_S)
        stopper.start()
        stopper.join(1.0)
        assert stopper.is_alive()  # still waiting for the creation, not closing the logs beneath it
    finally:
        gate.set()
        if stopper.ident is None:
            broker.stop()
        else:
            stopper.join(TIMEOUT_S)
    partitions = broker.server.config["offsets.topic.num.partitions"]
    assert len(list(tmp_path.glob("__consumer_offsets-*"))) == partitions
    assert (tmp_path / ".kafka_cleanshutdown").exists()


CREATE_PARTITIONS, DELETE_TOPICS, INCREMENTAL_ALTER_CONFIGS = 37, 20, 44


def test_partitions_slow_to_create_block_no_other_request_and_a_delete_waits_for_them(tmp_path):
    """CreatePartitions makes its logs on a worker thread: the topic keeps its old count until
    they all exist, other requests are served meanwhile, and a DeleteTopics of it waits, so no
    new partition's log outlives the topic."""
    broker = BrokerOnThread(tmp_path)
    try:
        with RawClient(broker.bootstrap) as grower, RawClient(broker.bootstrap) as deleter, \
                RawClient(broker.bootstrap) as other:
            create_topic(other, "growing", 1)
            gate, stalled = _stall(broker)
            grower.send_frame(encode_request(CREATE_PARTITIONS, 3, 1, "grower", {
                "topics": [{"name": "growing", "count": 3, "assignments": None}], "timeout_ms": 5000,
                "validate_only": False}))
            assert stalled.wait(TIMEOUT_S)
            assert len(_metadata(other, "growing")["partitions"]) == 1  # served, and not yet grown
            deleter.send_frame(encode_request(DELETE_TOPICS, 6, 2, "deleter", {
                "topics": [{"name": "growing", "topic_id": bytes(16)}], "timeout_ms": 5000}))
            assert len(_metadata(other, "growing")["partitions"]) == 1  # the delete waits its turn
            gate.set()
            grown = decode_response(CREATE_PARTITIONS, 3, grower.receive_frame())[1]["results"][0]
            deleted = decode_response(DELETE_TOPICS, 6, deleter.receive_frame())[1]["responses"][0]
            assert (grown["error_code"], deleted["error_code"]) == (Errors.NONE, Errors.NONE)
            assert _metadata(other, "growing")["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
        assert broker.server.log_manager.get_log("growing", 2) is None
        assert not list(tmp_path.glob("growing-[0-9]"))  # every partition dir renamed for deletion
    finally:
        broker.stop()


def test_topic_configs_written_meanwhile_keep_those_of_a_topic_still_being_created(tmp_path):
    """The config file is rewritten whole on every change: a change while a topic with
    overrides is still being created must not drop that topic's overrides."""
    broker = BrokerOnThread(tmp_path)
    try:
        with RawClient(broker.bootstrap) as creator, RawClient(broker.bootstrap) as other:
            create_topic(other, "plain", 1)
            gate, stalled = _stall(broker)
            creator.send_frame(encode_request(CREATE_TOPICS, 7, 1, "creator", {
                "topics": [{"name": "compacted", "num_partitions": 1, "replication_factor": 1,
                            "configs": [{"name": "cleanup.policy", "value": "compact"}]}], "timeout_ms": 5000}))
            assert stalled.wait(TIMEOUT_S)
            altered = other.request(INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [{
                "resource_type": 2, "resource_name": "plain",
                "configs": [{"name": "retention.ms", "config_operation": 0, "value": "1000"}]}],
                "validate_only": False})["responses"][0]
            assert altered["error_code"] == Errors.NONE
            gate.set()
            created = decode_response(CREATE_TOPICS, 7, creator.receive_frame())[1]["topics"][0]
            assert created["error_code"] == Errors.NONE
    finally:
        broker.stop()
    stored = json.loads((tmp_path / "topic-configs.json").read_text())
    assert stored == {"compacted": {"cleanup.policy": "compact"}, "plain": {"retention.ms": "1000"}}


def test_a_topic_slow_to_delete_is_gone_at_once_and_a_new_one_of_its_name_waits_for_its_logs(tmp_path):
    """DeleteTopics closes and renames the logs on a worker thread (each close snapshots and
    fsyncs): the topic is unpublished at once, other requests are served meanwhile, and a
    CreateTopics of the same name waits, so it gets new logs, not the old ones."""
    broker = BrokerOnThread(tmp_path)
    gate, stalled = _stall(broker, "delete_log")
    try:
        with RawClient(broker.bootstrap) as deleter, RawClient(broker.bootstrap) as creator, \
                RawClient(broker.bootstrap) as other:
            create_topic(other, "reborn", 2)
            assert produce(other, "reborn", batch(b"old"))["error_code"] == Errors.NONE
            old_id = _metadata(other, "reborn")["topic_id"]
            deleter.send_frame(encode_request(DELETE_TOPICS, 6, 1, "deleter", {
                "topics": [{"name": "reborn", "topic_id": bytes(16)}], "timeout_ms": 5000}))
            assert stalled.wait(TIMEOUT_S)
            assert _metadata(other, "reborn")["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION  # served
            creator.send_frame(encode_request(CREATE_TOPICS, 7, 2, "creator", _create_topics_body("reborn", 2)))
            assert _metadata(other, "reborn")["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION  # still waiting
            gate.set()
            deleted = decode_response(DELETE_TOPICS, 6, deleter.receive_frame())[1]["responses"][0]
            created = decode_response(CREATE_TOPICS, 7, creator.receive_frame())[1]["topics"][0]
            assert (deleted["error_code"], created["error_code"]) == (Errors.NONE, Errors.NONE)
            assert created["topic_id"] != old_id
            assert broker.server.log_manager.get_log("reborn", 0).log_end_offset == 0  # a new, empty log
    finally:
        gate.set()
        broker.stop()


ELECT_LEADERS = 43


def test_leader_elections_are_never_needed_and_unknown_partitions_are_named(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "elected", 2)
        for version in (0, 2):  # v0 has no election type and no top-level error
            answer = client.request(ELECT_LEADERS, version, {"election_type": 0, "timeout_ms": 5000,
                                                              "topic_partitions": [
                                                                  {"topic": "elected", "partitions": [1, 5]},
                                                                  {"topic": "absent", "partitions": [0]}]})
            results = {(r["topic"], p["partition_id"]): (p["error_code"], p["error_message"])
                       for r in answer["replica_election_results"] for p in r["partition_result"]}
            assert results == {
                ("elected", 1): (Errors.ELECTION_NOT_NEEDED, "Leader election not needed for topic partition."),
                ("elected", 5): (Errors.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as elected-5"),
                ("absent", 0): (Errors.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as absent")}
        every = client.request(ELECT_LEADERS, 2, {"election_type": 1, "timeout_ms": 5000, "topic_partitions": None})
        assert every["error_code"] == Errors.NONE
        assert all(not r["partition_result"] for r in every["replica_election_results"])


# -- a change whose file cannot be stored -------------------------------------------------

INCREMENTAL_ALTER_CONFIGS, DESCRIBE_CONFIGS, API_VERSIONS = 44, 32, 18
DESCRIBE_CLIENT_QUOTAS, ALTER_CLIENT_QUOTAS = 48, 49
DESCRIBE_SCRAM, ALTER_SCRAM, UPDATE_FEATURES = 50, 51, 57
TOPIC_RESOURCE, BROKER_RESOURCE, GROUP_RESOURCE = 2, 4, 32
SCRAM_SHA_256, SAFE_DOWNGRADE = 1, 2


def _config_body(resource_type: int, name: str, key: str, value: str) -> dict:
    return {"resources": [{"resource_type": resource_type, "resource_name": name,
                           "configs": [{"name": key, "config_operation": 0, "value": value}]}], "validate_only": False}


def _config(client: RawClient, resource_type: int, name: str, key: str) -> str | None:
    described = client.request(DESCRIBE_CONFIGS, 4, {"resources": [{
        "resource_type": resource_type, "resource_name": name, "configuration_keys": [key]}],
        "include_synonyms": False, "include_documentation": False})["results"][0]
    return described["configs"][0]["value"] if described["configs"] else None  # a default resource: none set


def _set_config(resource_type: int, name: str, key: str, value: str):
    def change(client: RawClient) -> int:
        return client.request(INCREMENTAL_ALTER_CONFIGS, 1, _config_body(resource_type, name, key, value))[
            "responses"][0]["error_code"]

    return change, lambda client: _config(client, resource_type, name, key)


def _quota_body(user: str) -> dict:
    return {"entries": [{"entity": [{"entity_type": "user", "entity_name": user}],
                         "ops": [{"key": "producer_byte_rate", "value": 1024.0, "remove": False}]}],
            "validate_only": False}


def _quota(client: RawClient, user: str = "alice") -> list:
    entries = client.request(DESCRIBE_CLIENT_QUOTAS, 1, {"components": [
        {"entity_type": "user", "match_type": 0, "match": user}], "strict": False})["entries"]
    return [(value["key"], value["value"]) for entry in entries for value in entry["values"]]


def _set_quota(client: RawClient) -> int:
    return client.request(ALTER_CLIENT_QUOTAS, 1, _quota_body("alice"))["entries"][0]["error_code"]


def _credential_body(user: str) -> dict:
    return {"deletions": [], "upsertions": [{"name": user, "mechanism": SCRAM_SHA_256, "iterations": 4096,
                                             "salt": b"salt" * 4, "salted_password": bytes(32)}]}


def _credential(client: RawClient, user: str = "alice") -> list:
    result = client.request(DESCRIBE_SCRAM, 0, {"users": [{"name": user}]})["results"][0]
    return [(info["mechanism"], info["iterations"]) for info in result["credential_infos"]]


def _set_credential(client: RawClient) -> int:
    return client.request(ALTER_SCRAM, 0, _credential_body("alice"))["results"][0]["error_code"]


def _downgrade_transactions(client: RawClient) -> int:
    return client.request(UPDATE_FEATURES, 1, {"timeout_ms": 5000, "feature_updates": [{
        "feature": "transaction.version", "max_version_level": 1, "upgrade_type": SAFE_DOWNGRADE}],
        "validate_only": False})["error_code"]


def _transaction_version(client: RawClient) -> int:
    answer = client.request(API_VERSIONS, 3, {"client_software_name": "test", "client_software_version": "1"})
    return {f["name"]: f["max_version_level"] for f in answer["finalized_features"]}["transaction.version"]


STORES = {  # what changes: (how, how it reads, before, after, the file that stores it)
    "topic config": (*_set_config(TOPIC_RESOURCE, "kept", "retention.ms", "1234"), "604800000", "1234",
                     "topic-configs.json"),
    "broker config": (*_set_config(BROKER_RESOURCE, "", "log.retention.ms", "4321"), None, "4321",
                      "broker-configs.json"),
    "group config": (*_set_config(GROUP_RESOURCE, "group", "consumer.session.timeout.ms", "50000"), "45000",
                     "50000", "group-configs.json"),
    "client quota": (_set_quota, _quota, [], [("producer_byte_rate", 1024.0)], "client-quotas.json"),
    "SCRAM credential": (_set_credential, _credential, [], [(SCRAM_SHA_256, 4096)], "scram-credentials.json"),
    "feature level": (_downgrade_transactions, _transaction_version, 2, 1, "features.json"),
}


@pytest.mark.parametrize("what", list(STORES))
def test_a_change_is_in_force_only_once_its_file_is_stored(failing_fs, broker_factory, what):
    """Its file cannot be made (EIO, a FUSE filesystem): KAFKA_STORAGE_ERROR, and the change is
    not in force (it was, until a restart lost it). Its file replaced, the fsync of the dir then
    failing: a start finds the change, so it is in force and answered."""
    change, read, before, after, file_name = STORES[what]
    mount, switch = failing_fs
    broker = broker_factory(QUIET_CHECKPOINTS, data_dir=mount / "data")
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "kept")
        switch.arm("create", f"{file_name}.tmp")
        assert (change(client), switch.spent) == (Errors.KAFKA_STORAGE_ERROR, True)
        assert read(client) == before
        switch.arm("fsyncdir")
        assert (change(client), switch.spent) == (Errors.NONE, True)
        assert read(client) == after
    broker.stop()
    broker = broker_factory(QUIET_CHECKPOINTS, data_dir=mount / "data")
    with RawClient(broker.bootstrap) as client:
        assert read(client) == after


BROKER_KEYS = {"log.retention.ms": "4321", "log.retention.bytes": "1073741824",
               "log.cleaner.delete.retention.ms": "86400001", "log.segment.delete.delay.ms": "60001"}
NAMES = [f"n{i}" for i in range(8)]
PIPELINED = {  # what: (its requests, the error code's path in an answer, what reads every change back, the changes)
    "topic configs": ([(INCREMENTAL_ALTER_CONFIGS, 1, _config_body(TOPIC_RESOURCE, name, "retention.ms", str(1000 + i)))
                       for i, name in enumerate(NAMES)], ("responses", 0, "error_code"),
                      lambda c: [_config(c, TOPIC_RESOURCE, name, "retention.ms") for name in NAMES],
                      [str(1000 + i) for i in range(len(NAMES))]),
    "broker configs": ([(INCREMENTAL_ALTER_CONFIGS, 1, _config_body(BROKER_RESOURCE, "", key, value))
                        for key, value in BROKER_KEYS.items()], ("responses", 0, "error_code"),
                       lambda c: [_config(c, BROKER_RESOURCE, "", key) for key in BROKER_KEYS],
                       list(BROKER_KEYS.values())),
    "group configs": ([(INCREMENTAL_ALTER_CONFIGS, 1, _config_body(GROUP_RESOURCE, name, "consumer.session.timeout.ms",
                                                                   "50000")) for name in NAMES],
                      ("responses", 0, "error_code"),
                      lambda c: [_config(c, GROUP_RESOURCE, name, "consumer.session.timeout.ms") for name in NAMES],
                      ["50000"] * len(NAMES)),
    "client quotas": ([(ALTER_CLIENT_QUOTAS, 1, _quota_body(name)) for name in NAMES], ("entries", 0, "error_code"),
                      lambda c: [_quota(c, name) for name in NAMES], [[("producer_byte_rate", 1024.0)]] * len(NAMES)),
    "SCRAM credentials": ([(ALTER_SCRAM, 0, _credential_body(name)) for name in NAMES], ("results", 0, "error_code"),
                          lambda c: [_credential(c, name) for name in NAMES], [[(SCRAM_SHA_256, 4096)]] * len(NAMES)),
}


@pytest.mark.parametrize("what", list(PIPELINED))
def test_changes_sent_together_are_all_stored(broker_factory, tmp_path, what):
    """Requests pipelined on one connection are handled at once; each store writes its whole file,
    so a change built from the state another was still storing left that one out (in force until
    a restart, or undone at once)."""
    requests, error_path, read, expected = PIPELINED[what]
    data = tmp_path / "data"
    broker = broker_factory(data_dir=data)
    with RawClient(broker.bootstrap) as client:
        for name in NAMES:
            create_topic(client, name)
        client.send_frames([encode_request(key, version, 100 + index, "pipelined", body)
                            for index, (key, version, body) in enumerate(requests)])
        for key, version, _body in requests:
            answer = decode_response(key, version, client.receive_frame())[1]
            for step in error_path:
                answer = answer[step]
            assert answer == Errors.NONE
        assert read(client) == expected
    broker.stop()
    broker = broker_factory(data_dir=data)
    with RawClient(broker.bootstrap) as client:
        assert read(client) == expected


ALTER_CONFIGS = 33
REPLACED = {  # resource: (type, name, the key set first and its value, its value once unset, the key replacing it)
    "topic": (TOPIC_RESOURCE, "n0", ("retention.ms", "9000"), "604800000", ("segment.ms", "6000")),
    "cluster default": (BROKER_RESOURCE, "", ("log.retention.ms", "9000"), None, ("log.retention.bytes", "6000")),
    "group": (GROUP_RESOURCE, "n0", ("consumer.session.timeout.ms", "50000"), "45000",
              ("consumer.heartbeat.interval.ms", "6000")),
}


@pytest.mark.parametrize("resource", list(REPLACED))
def test_a_legacy_alter_sent_after_a_change_replaces_it_too(broker_factory, tmp_path, resource):
    """AlterConfigs makes the overrides it names the resource's whole set. Pipelined behind an
    incremental change still being stored, it read the overrides before that change was in force,
    so the change it should have removed survived it."""
    resource_type, name, (first, value), unset, (replacing, replacing_value) = REPLACED[resource]
    broker = broker_factory(data_dir=tmp_path / "data")
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "n0")
        legacy = {"resources": [{"resource_type": resource_type, "resource_name": name,
                                 "configs": [{"name": replacing, "value": replacing_value}]}], "validate_only": False}
        requests = [(INCREMENTAL_ALTER_CONFIGS, 1, _config_body(resource_type, name, first, value)),
                    (ALTER_CONFIGS, 2, legacy)]
        client.send_frames([encode_request(key, version, 100 + index, "pipelined", body)
                            for index, (key, version, body) in enumerate(requests)])
        for key, version, _body in requests:
            assert decode_response(key, version, client.receive_frame())[1]["responses"][0]["error_code"] == \
                Errors.NONE
        assert [_config(client, resource_type, name, key) for key in (first, replacing)] == [unset, replacing_value]
