"""TopicJournal against real broker processes that crash in the middle of a topic's deletion
or creation: the next start finishes the change the way Kafka's metadata decides it."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json

import pytest

from franz.protocol.codec import encode_request
from franz.protocol.errors import Errors
from franz.server.controller import _write_json
from franz.server.topic_journal import ChangeStillRecorded, JournalWriteError, TopicJournal
from tests.support.crashing_broker import CRASH_EXIT_CODE, CrashingBroker
from tests.support.failing_disk import immutable_dir
from tests.support.failing_fs import QUIET_CHECKPOINTS
from tests.support.raw_client import CREATE_TOPICS, RawClient, batch, create_topic, produce

TIMEOUT_S = 30
METADATA, DELETE_TOPICS, DESCRIBE_CONFIGS, CREATE_PARTITIONS = 3, 20, 32, 37
TOPIC_RESOURCE = 2


def _metadata(client: RawClient, name: str) -> dict:
    return client.request(METADATA, 12, {"topics": [{"topic_id": bytes(16), "name": name}],
                                         "allow_auto_topic_creation": False,
                                         "include_topic_authorized_operations": False})["topics"][0]


def _crash_during(broker: CrashingBroker, api_key: int, version: int, body: dict, setup=None) -> None:
    """Start `broker`, run `setup(client)`, send the request and wait for the crash it causes."""
    broker.start()
    try:
        with RawClient(broker.bootstrap) as client:
            if setup is not None:
                setup(client)
            client.send_frame(encode_request(api_key, version, 1, "crash", body))
            assert broker.wait_for_crash(TIMEOUT_S) == CRASH_EXIT_CODE
    finally:
        broker.stop()


def test_a_deletion_cut_short_by_a_crash_is_finished_at_the_next_start(tmp_path, broker_factory):
    data = tmp_path / "data"

    def fill(client: RawClient) -> None:
        create_topic(client, "doomed", 4)
        assert produce(client, "doomed", batch(b"gone"))["error_code"] == Errors.NONE

    _crash_during(CrashingBroker(data, "delete_log", 2), DELETE_TOPICS, 6,
                  {"topics": [{"name": "doomed", "topic_id": bytes(16)}], "timeout_ms": 5000}, fill)
    # Two partitions were renamed for deletion before the crash, two were not.
    assert sorted(path.name for path in data.glob("doomed-[0-9]")) == ["doomed-2", "doomed-3"]

    broker = broker_factory(data_dir=data)
    with RawClient(broker.bootstrap) as client:
        assert _metadata(client, "doomed")["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
        assert not list(data.glob("doomed-[0-9]"))
        assert broker.wait_for_line("The deletion of topic doomed")
        create_topic(client, "doomed", 4)  # the name is free again, and the new topic empty
        assert produce(client, "doomed", batch(b"new"))["base_offset"] == 0


def test_a_creation_cut_short_by_a_crash_is_rolled_back_at_the_next_start(tmp_path, broker_factory):
    data = tmp_path / "data"
    _crash_during(CrashingBroker(data, "get_or_create_log", 2), CREATE_TOPICS, 7,
                  {"topics": [{"name": "half", "num_partitions": 4, "replication_factor": 1,
                               "configs": [{"name": "retention.ms", "value": "5000"}]}], "timeout_ms": 5000})
    assert sorted(path.name for path in data.glob("half-[0-9]")) == ["half-0", "half-1"]

    broker = broker_factory(data_dir=data)
    with RawClient(broker.bootstrap) as client:
        assert _metadata(client, "half")["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
        assert broker.wait_for_line("The creation of topic half")
        create_topic(client, "half", 4)  # the client's retry gets the whole topic, without the old overrides
        assert len(_metadata(client, "half")["partitions"]) == 4
    assert "half" not in (data / "topic-configs.json").read_text()


def test_a_growth_cut_short_by_a_crash_is_rolled_back_at_the_next_start(tmp_path, broker_factory):
    data = tmp_path / "data"

    def two_partitions(client: RawClient) -> None:
        create_topic(client, "grows", 2)  # the first two log creations; the growth makes the next

    _crash_during(CrashingBroker(data, "get_or_create_log", 4), CREATE_PARTITIONS, 3,
                  {"topics": [{"name": "grows", "count": 5, "assignments": None}], "timeout_ms": 5000,
                   "validate_only": False}, two_partitions)
    assert sorted(path.name for path in data.glob("grows-[0-9]")) == ["grows-0", "grows-1", "grows-2", "grows-3"]

    broker = broker_factory(data_dir=data)
    with RawClient(broker.bootstrap) as client:
        assert len(_metadata(client, "grows")["partitions"]) == 2
        assert sorted(path.name for path in data.glob("grows-[0-9]")) == ["grows-0", "grows-1"]
        assert broker.wait_for_line("The growth of topic grows")


def _delete(client: RawClient, name: str) -> dict:
    return client.request(DELETE_TOPICS, 6, {"topics": [{"name": name, "topic_id": bytes(16)}],
                                             "timeout_ms": 5000})["responses"][0]


def test_a_deletion_the_journal_cannot_record_leaves_the_topic_whole(tmp_path, broker_factory):
    """The journal's write fails for real: its temporary file's name is taken by a directory."""
    data = tmp_path / "data"
    broker = broker_factory(data_dir=data)
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "kept", 2)
        assert produce(client, "kept", batch(b"first"))["error_code"] == Errors.NONE
        blocker = data / "topic-changes.json.tmp"
        blocker.mkdir()
        answer = _delete(client, "kept")
        assert answer["error_code"] == Errors.KAFKA_STORAGE_ERROR
        assert "Could not record the deletion of topic kept" in answer["error_message"]
        assert _metadata(client, "kept")["error_code"] == Errors.NONE  # still published, still served
        assert produce(client, "kept", batch(b"second"))["base_offset"] == 1
        assert sorted(path.name for path in data.glob("kept-[0-9]")) == ["kept-0", "kept-1"]
        blocker.rmdir()
        create_topic(client, "other")  # a journal write that must not record the failed deletion
    broker.stop()

    broker = broker_factory(data_dir=data)
    with RawClient(broker.bootstrap) as client:
        assert len(_metadata(client, "kept")["partitions"]) == 2
        assert produce(client, "kept", batch(b"third"))["base_offset"] == 2  # the records stayed
        assert _delete(client, "kept")["error_code"] == Errors.NONE
        create_topic(client, "kept", 2)  # made again under the name: empty
        assert produce(client, "kept", batch(b"new"))["base_offset"] == 0


def test_a_deleted_topic_whose_log_cannot_be_removed_keeps_its_name_until_a_start_removes_it(
        tmp_path, broker_factory):
    first, second = tmp_path / "d1", tmp_path / "d2"  # the journal lives in the first
    overrides = {"log.dirs": f"{first},{second}"}
    broker = broker_factory(overrides, data_dir=first)
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "elsewhere")  # in the first dir, so the next partition goes to the second
        create_topic(client, "stuck", 2)
        assert (second / "stuck-0").is_dir() and (first / "stuck-1").is_dir()
        assert produce(client, "stuck", batch(b"old-1", b"old-2"))["error_code"] == Errors.NONE
        with immutable_dir(second):  # stuck-0's directory cannot be renamed for deletion
            assert _delete(client, "stuck")["error_code"] == Errors.NONE  # the deletion stands
            assert broker.wait_for_line("could not be removed")
            assert _metadata(client, "stuck")["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
            assert not (first / "stuck-1").exists()  # the other partition went all the same
            # The name is not free: a new stuck-0 would go to the first dir, beside the old one.
            answer = _create(client, "stuck")
            assert answer["error_code"] == Errors.KAFKA_STORAGE_ERROR
            assert "kept the deletion of the topic of this name from finishing" in answer["error_message"]
            auto = client.request(METADATA, 12, {
                "topics": [{"topic_id": bytes(16), "name": name} for name in ("elsewhere", "stuck")],
                "allow_auto_topic_creation": True, "include_topic_authorized_operations": False})
            assert [(t["name"], t["error_code"]) for t in auto["topics"]] == [
                ("elsewhere", Errors.NONE), ("stuck", Errors.UNKNOWN_TOPIC_OR_PARTITION)]  # AutoTopicCreationManager
            assert auto["brokers"]
            broker.stop()
            broker = broker_factory(overrides, data_dir=first)  # starts, though the dir still refuses
            assert broker.wait_for_line("the next start tries again")
            with RawClient(broker.bootstrap) as again:
                assert _metadata(again, "stuck")["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
                assert _create(again, "stuck")["error_code"] == Errors.KAFKA_STORAGE_ERROR
        assert (second / "stuck-0").is_dir()
    broker.stop()

    broker = broker_factory(overrides, data_dir=first)
    with RawClient(broker.bootstrap) as client:
        assert broker.wait_for_line("The deletion of topic stuck")
        assert not list(first.glob("stuck-[0-9]")) and not list(second.glob("stuck-[0-9]"))
        create_topic(client, "stuck", 2)  # the name is free again, and the new topic empty
        assert produce(client, "stuck", batch(b"new"))["base_offset"] == 0


def _create(client: RawClient, name: str) -> dict:
    return client.request(CREATE_TOPICS, 7, {"topics": [{
        "name": name, "num_partitions": 1, "replication_factor": 1, "configs": []}], "timeout_ms": 5000})["topics"][0]


# Below, the journal's replacements fail on a FUSE filesystem (tests.support.failing_fs) at the
# call the test arms.
JOURNAL_TEMPORARY = "topic-changes.json.tmp"


def _grow(client: RawClient, name: str, count: int) -> dict:
    return client.request(CREATE_PARTITIONS, 3, {"topics": [{"name": name, "count": count, "assignments": None}],
                                                  "timeout_ms": 5000, "validate_only": False})["results"][0]


@pytest.mark.parametrize("fault, logged, name_refused", [
    # The journal's new file took the old one's place, then the fsync of their directory failed: a
    # start would find the deletion and finish it, so answering "not deleted" and serving on
    # would lose every record acknowledged meanwhile.
    (("fsyncdir", "*", 1), "lists the deletion of topic gone", False),
    # The journal cannot be written once the logs are gone (the second time its temporary file
    # is made): it still lists the deletion, which the next start finishes again.
    (("create", JOURNAL_TEMPORARY, 2), "could not remove the deletion from the journal", True),
], ids=["entry-landed-unsynced", "entry-not-removed"])
def test_a_deletion_the_journal_half_records_stands(failing_fs, broker_factory, fault, logged, name_refused):
    mount, switch = failing_fs
    data = mount / "data"
    broker = broker_factory(QUIET_CHECKPOINTS, data_dir=data)
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "gone", 2)
        assert produce(client, "gone", batch(b"old"))["error_code"] == Errors.NONE
        switch.arm(*fault)
        assert _delete(client, "gone")["error_code"] == Errors.NONE
        assert switch.spent
        assert broker.wait_for_line(logged)
        assert _metadata(client, "gone")["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
        assert not list(data.glob("gone-[0-9]"))
        if name_refused:  # until a start has finished the deletion the journal still lists
            assert _create(client, "gone")["error_code"] == Errors.KAFKA_STORAGE_ERROR
    broker.stop()

    broker = broker_factory(QUIET_CHECKPOINTS, data_dir=data)
    with RawClient(broker.bootstrap) as client:
        assert _metadata(client, "gone")["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
        create_topic(client, "gone", 2)  # the name is free, and the new topic empty
        assert produce(client, "gone", batch(b"new"))["base_offset"] == 0
    broker.stop()


def test_a_deleted_topic_whose_configs_cannot_be_dropped_leaves_them_to_the_next_start(failing_fs, broker_factory):
    """The deleted topic's entry of topic-configs.json cannot be dropped (the file cannot be
    made, EIO): the deletion stands, and until the next start drops the entry the name is
    refused, so that no new topic of the name is given the old configs."""
    mount, switch = failing_fs
    data = mount / "data"
    broker = broker_factory(QUIET_CHECKPOINTS, data_dir=data)
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "configured", configs={"retention.ms": "1234"})
        switch.arm("create", "topic-configs.json.tmp")
        assert _delete(client, "configured")["error_code"] == Errors.NONE
        assert switch.spent
        assert broker.wait_for_line("its configs: Could not store topic-configs.json")
        assert _create(client, "configured")["error_code"] == Errors.KAFKA_STORAGE_ERROR
    broker.stop()

    broker = broker_factory(QUIET_CHECKPOINTS, data_dir=data)
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "configured")
        described = client.request(DESCRIBE_CONFIGS, 4, {"resources": [{
            "resource_type": TOPIC_RESOURCE, "resource_name": "configured", "configuration_keys": ["retention.ms"]}],
            "include_synonyms": False, "include_documentation": False})["results"][0]["configs"][0]
        assert described["value"] == "604800000"  # the default: the old override is gone
    assert "configured" not in (data / "topic-configs.json").read_text()


def test_a_creation_whose_journal_entry_landed_before_a_disk_error_goes_ahead(failing_fs, broker_factory):
    mount, switch = failing_fs
    data = mount / "data"
    broker = broker_factory(QUIET_CHECKPOINTS, data_dir=data)
    with RawClient(broker.bootstrap) as client:
        switch.arm("fsyncdir")
        assert _create(client, "landed")["error_code"] == Errors.NONE
        assert switch.spent
        assert produce(client, "landed", batch(b"kept"))["error_code"] == Errors.NONE
    broker.stop()

    broker = broker_factory(QUIET_CHECKPOINTS, data_dir=data)
    with RawClient(broker.bootstrap) as client:
        assert produce(client, "landed", batch(b"next"))["base_offset"] == 1  # its first record stayed
    broker.stop()


def test_a_creation_or_growth_whose_entry_cannot_be_removed_is_rolled_back_at_once(failing_fs, broker_factory):
    """The journal cannot be written once the logs are made (the second time its temporary file is
    made, EIO): it still lists the change, so the next start would roll it back. A topic
    published now would lose its records then; it is rolled back now and the client told."""
    mount, switch = failing_fs
    data = mount / "data"
    broker = broker_factory(QUIET_CHECKPOINTS, data_dir=data)
    with RawClient(broker.bootstrap) as client:
        switch.arm("create", JOURNAL_TEMPORARY, nth=2)
        answer = _create(client, "undone")
        assert (answer["error_code"], switch.spent) == (Errors.KAFKA_STORAGE_ERROR, True)
        assert "Could not record the creation of topic undone" in answer["error_message"]
        assert _metadata(client, "undone")["error_code"] == Errors.UNKNOWN_TOPIC_OR_PARTITION
        assert not list(data.glob("undone-[0-9]"))
        assert _create(client, "undone")["error_code"] == Errors.NONE  # the client's retry
        assert produce(client, "undone", batch(b"kept"))["error_code"] == Errors.NONE

        switch.arm("create", JOURNAL_TEMPORARY, nth=2)
        answer = _grow(client, "undone", 3)
        assert (answer["error_code"], switch.spent) == (Errors.KAFKA_STORAGE_ERROR, True)
        assert "Could not record the growth of topic undone" in answer["error_message"]
        assert len(_metadata(client, "undone")["partitions"]) == 1
        assert sorted(path.name for path in data.glob("undone-[0-9]")) == ["undone-0"]
    broker.stop()

    broker = broker_factory(QUIET_CHECKPOINTS, data_dir=data)
    with RawClient(broker.bootstrap) as client:
        assert len(_metadata(client, "undone")["partitions"]) == 1
        assert produce(client, "undone", batch(b"next"))["base_offset"] == 1  # the retry's topic stayed
    broker.stop()


@pytest.mark.parametrize("change, key, value, still_recorded", [
    ("creating", "made", "ID", True), ("growing", "grown", ("ID", 1), True), ("deleting", "ID", "gone", False)])
def test_a_removal_that_lands_before_its_fsync_fails_keeps_a_creation_or_growth_recorded(
        failing_fs, change, key, value, still_recorded):
    """The removal's file took the old one's place, then the fsync of their directory failed:
    the file no longer lists the change, but a crash may bring the old file back. A start
    would then roll a creation or a growth back, after the client was answered: so they count
    as still recorded (the controller rolls them back at once). A deletion is finished either way."""
    mount, switch = failing_fs

    async def write(path, content) -> None:
        await asyncio.to_thread(_write_json, path, content)

    journal = TopicJournal(mount / "topic-changes.json", write)
    changes = getattr(journal, change)

    async def change_then_fail_the_removal() -> None:
        async with journal.recording(changes, key, value):
            switch.arm("fsyncdir")

    if still_recorded:
        with pytest.raises(ChangeStillRecorded):
            asyncio.run(change_then_fail_the_removal())
        assert changes == {key: value}
    else:
        asyncio.run(change_then_fail_the_removal())
        assert changes == {}
    assert switch.spent
    assert json.loads((mount / "topic-changes.json").read_text())[change] == {}


def test_a_change_written_while_another_entry_fails_does_not_carry_that_entry(failing_fs):
    """Two changes at once on the controller's one writer thread; the first entry's file cannot
    be made (EIO), so its topic stays as it was. The second change's write must not put that
    entry in the file after all: a start would then delete a topic answered "not deleted"."""
    mount, switch = failing_fs
    writer = concurrent.futures.ThreadPoolExecutor(1)

    async def write(path, content) -> None:
        await asyncio.get_running_loop().run_in_executor(writer, _write_json, path, content)

    journal = TopicJournal(mount / "topic-changes.json", write)

    async def delete_kept() -> str:
        try:
            async with journal.recording(journal.deleting, "ID-KEPT", "kept"):
                return "deleted"
        except JournalWriteError:
            return "not deleted"

    async def create_new() -> str:
        async with journal.recording(journal.creating, "new", "ID-NEW"):
            return json.loads((mount / "topic-changes.json").read_text())["deleting"]

    async def both() -> list:
        return await asyncio.gather(delete_kept(), create_new())

    switch.arm("create", JOURNAL_TEMPORARY)
    try:
        assert asyncio.run(both()) == ["not deleted", {}]
    finally:
        writer.shutdown()
    assert switch.spent
    assert json.loads((mount / "topic-changes.json").read_text())["deleting"] == {}
