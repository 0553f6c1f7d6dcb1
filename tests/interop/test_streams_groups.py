"""KIP-1071 streams groups driven by Kafka's own Java client (kafka-clients 4.3.0).

No Kafka Streams jar can be had here, so the member is what Kafka Streams' StreamThread makes
for group.protocol=streams: kafka-clients' AsyncKafkaConsumer given a StreamsRebalanceData,
whose StreamsMembershipManager speaks StreamsGroupHeartbeat (java/StreamsDriver.java). The
admin side is Admin's streams group calls. Heartbeats come every 500 ms here, and the first
members are assigned at once (Kafka's defaults, 5 s and a 3 s initial delay, only slow tests).
"""

from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, ConfigResource, NewTopic

from tests.support.java_client import JSON_JARS, compile_driver_or_skip

pytestmark = pytest.mark.interop

DRIVER = Path(__file__).parent / "java" / "StreamsDriver.java"
TIMEOUT_S = 120
BROKER = {"group.streams.heartbeat.interval.ms": "500", "group.streams.min.heartbeat.interval.ms": "500",
          "group.streams.session.timeout.ms": "6000", "group.streams.min.session.timeout.ms": "6000",
          "group.streams.initial.rebalance.delay.ms": "0"}
APP = "wordcount"
CHANGELOG = f"{APP}-counts-changelog"
TOPOLOGY = json.dumps({"subtopologies": {"0": {
    "source_topics": ["words"],
    "state_changelog_topics": {CHANGELOG: {"configs": {"cleanup.policy": "compact"}}}}}})


@pytest.fixture(scope="session")
def streams_driver() -> list[str]:
    return compile_driver_or_skip(DRIVER, JSON_JARS)


def _admin(driver: list[str], *args: str) -> list[dict]:
    result = subprocess.run([*driver, *args], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-3000:]
    return [json.loads(line) for line in result.stdout.splitlines()]


class Member:
    """A streams group member process; its JSON lines read on a thread into a queue."""

    def __init__(self, driver: list[str], bootstrap: str, *options: str) -> None:
        self.process = subprocess.Popen(
            [*driver, "member", bootstrap, "--group", APP, "--topology-json", TOPOLOGY, "--stdin",
             "--run-seconds", str(TIMEOUT_S), *options],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[dict] = queue.Queue()
        self.seen: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.put(json.loads(line))

    def wait_for(self, predicate, what: str) -> dict:
        deadline = time.monotonic() + TIMEOUT_S
        while True:
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"gave up waiting for {what}; saw {self.seen[-10:]}"
            try:
                line = self.lines.get(timeout=min(remaining, 1))
            except queue.Empty:
                assert self.process.poll() is None, f"member exited waiting for {what}: {self.process.stderr.read()}"
                continue
            self.seen.append(line)
            assert line.get("event") != "error", line
            if predicate(line):
                return line

    def active_tasks(self, count: int) -> list[list]:
        """Waits for an assignment of `count` active tasks; their [subtopology, partition] pairs."""
        return self.wait_for(lambda e: e.get("event") == "assigned" and len(e["active"]) == count,
                             f"{count} active tasks")["active"]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.write("stop\n")
            self.process.stdin.flush()
            self.wait_for(lambda e: e.get("event") == "closed", "the member to close")
        assert self.process.wait(timeout=TIMEOUT_S) == 0, self.process.stderr.read()

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=TIMEOUT_S)


@pytest.fixture
def members():
    started: list[Member] = []
    yield started
    for member in started:
        if member.process.poll() is None:
            member.kill()


def _produce(bootstrap: str, topic: str, count: int) -> None:
    producer = Producer({"bootstrap.servers": bootstrap})
    for i in range(count):
        producer.produce(topic, key=f"k{i}", value=f"word-{i}", partition=i % 3)
    assert producer.flush(TIMEOUT_S) == 0


def _offsets(answer: dict) -> list[tuple[str, int, int]]:
    assert "error" not in answer, answer
    return sorted((o["topic"], o["partition"], o["offset"]) for o in answer["offsets"])


def _create(bootstrap: str, topic: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(TIMEOUT_S)


def test_a_java_streams_member_gets_its_changelog_created_runs_every_task_and_commits(
        broker_factory, streams_driver, members):
    broker = broker_factory(BROKER)
    _create(broker.bootstrap, "words", 3)
    _produce(broker.bootstrap, "words", 30)
    member = Member(streams_driver, broker.bootstrap, "--commit")
    members.append(member)
    # its first heartbeat finds the changelog missing, and the broker creates it (the member may
    # poll too late to see that status: the in-process tests check it)
    assert member.active_tasks(3) == [["0", 0], ["0", 1], ["0", 2]]
    statuses = {s["code"] for e in member.seen if e.get("event") == "status" for s in e["statuses"]}
    assert statuses <= {3, 5}, statuses  # MISSING_INTERNAL_TOPICS, ASSIGNMENT_DELAYED (the 1 s interval)
    records = [member.wait_for(lambda e: e.get("event") == "record", "records") for _ in range(30)]
    assert sorted(r["value"] for r in records) == sorted(f"word-{i}" for i in range(30))
    member.wait_for(lambda e: e.get("event") == "committed" and sum(o[2] for o in e["offsets"]) >= 10,
                    "a commit")
    described = _admin(streams_driver, "describe", broker.bootstrap, APP)[0]
    listed = _admin(streams_driver, "list", broker.bootstrap)[0]
    member.stop()
    offsets = _admin(streams_driver, "offsets", broker.bootstrap, APP)[0]
    after = _admin(streams_driver, "describe", broker.bootstrap, APP)[0]
    deleted = _admin(streams_driver, "delete", broker.bootstrap, APP)
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    changelog = admin.list_topics(timeout=30).topics[CHANGELOG]
    resource = ConfigResource("topic", CHANGELOG)
    policy = admin.describe_configs([resource])[resource].result(TIMEOUT_S)["cleanup.policy"].value

    assert described["state"].lower() == "stable" and len(described["members"]) == 1, described
    assert described["subtopologies"][0]["state_changelog_topics"][CHANGELOG]["partitions"] == 3, described
    assert [(g["group_id"], g["type"].lower(), g["state"].lower()) for g in listed["groups"]] == [
        (APP, "streams", "stable")], listed
    assert _offsets(offsets) == [("words", 0, 10), ("words", 1, 10), ("words", 2, 10)]
    assert after["state"].lower() == "empty" and after["members"] == [], after
    assert deleted == [{"group_id": APP, "deleted": True}], deleted
    assert (len(changelog.partitions), policy) == (3, "compact")


def test_two_java_streams_processes_split_the_tasks_and_one_takes_over_when_the_other_dies(
        broker_factory, streams_driver, members):
    broker = broker_factory(BROKER)
    _create(broker.bootstrap, "words", 4)
    first = Member(streams_driver, broker.bootstrap)
    members.append(first)
    assert len(first.active_tasks(4)) == 4
    second = Member(streams_driver, broker.bootstrap)
    members.append(second)
    # the first gives up two tasks, and the second gets them only once they are revoked
    kept = first.active_tasks(2)
    given = second.active_tasks(2)
    assert sorted(kept + given) == [["0", p] for p in range(4)]
    revoked = [e for e in first.seen if e.get("event") == "revoked"]
    assert revoked and sorted(t for e in revoked for t in e["tasks"]) == sorted(given)
    second.kill()  # no leave: its session runs out on the broker
    assert sorted(first.active_tasks(4)) == [["0", p] for p in range(4)]
    first.stop()


def test_a_streams_group_and_its_offsets_survive_a_broker_restart(broker_factory, streams_driver, members):
    broker = broker_factory(BROKER)
    _create(broker.bootstrap, "words", 3)
    _produce(broker.bootstrap, "words", 6)
    member = Member(streams_driver, broker.bootstrap, "--commit")
    members.append(member)
    member.active_tasks(3)
    member.wait_for(lambda e: e.get("event") == "committed" and sum(o[2] for o in e["offsets"]) >= 2, "a commit")
    member.stop()
    broker.restart(signal.SIGKILL)
    described = _admin(streams_driver, "describe", broker.bootstrap, APP)[0]
    offsets = _admin(streams_driver, "offsets", broker.bootstrap, APP)[0]
    assert described["state"].lower() == "empty", described
    assert described["subtopologies"][0]["source_topics"] == ["words"], described
    assert _offsets(offsets) == [("words", 0, 2), ("words", 1, 2), ("words", 2, 2)]
    # the offsets tools of an empty group: words-0 reset to 0, words-1 deleted
    altered = _admin(streams_driver, "alter-offsets", broker.bootstrap, APP, "words:0=0")
    dropped = _admin(streams_driver, "delete-offsets", broker.bootstrap, APP, "words:1")
    assert [line.get("ok") for line in altered + dropped] == [True, True], altered + dropped
    assert _offsets(_admin(streams_driver, "offsets", broker.bootstrap, APP)[0]) == [("words", 0, 0), ("words", 2, 2)]
    # a new member carries on from the committed offsets (words-1 from the start: earliest)
    again = Member(streams_driver, broker.bootstrap)
    members.append(again)
    again.active_tasks(3)
    records = [again.wait_for(lambda e: e.get("event") == "record", "records") for _ in range(4)]
    assert sorted((r["partition"], r["offset"]) for r in records) == [(0, 0), (0, 1), (1, 0), (1, 1)], records
    again.stop()
