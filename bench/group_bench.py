"""Group coordinator figures: rebalance after a member leaves, and commits per second.

Run:  .venv/bin/python bench/group_bench.py [--runs 5] [--seconds 2.0]

A real broker process (group.initial.rebalance.delay.ms=0) serves every scenario:

- rebalance (raw):  two members speaking the protocol directly are Stable; one
  sends LeaveGroup; the other's next heartbeat hears REBALANCE_IN_PROGRESS, it
  rejoins and syncs. Time from the LeaveGroup to the SyncGroup answer: the
  broker's part of a rebalance (the limit: one round trip per step).
- rebalance (librdkafka): three confluent-kafka consumers own 8 partitions; one
  closes; time until the other two own all 8 again (bounded below by their
  heartbeat.interval.ms=100), in the classic protocol and in KIP-848's
  (group.protocol=consumer; the broker's group.consumer.heartbeat.interval.ms=100).
- commits/s: one connection committing one offset per OffsetCommit v8, beside
  acks=1 produces of one small record per request on the same kind of
  connection (the limit: both are one append to one log per round trip), and
  confluent-kafka's synchronous commit().

Figures are medians of --runs runs. Not a timed test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, TopicPartition  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from tests.support.broker import BrokerProcess  # noqa: E402
from tests.support.raw_client import RawClient, batch, create_topic, produce  # noqa: E402

JOIN, HEARTBEAT, LEAVE, SYNC, COMMIT = 11, 12, 13, 14, 8
DEADLINE_S = 30.0


def _join(client: RawClient, group: str, member_id: str = "") -> dict:
    body = {"group_id": group, "session_timeout_ms": 10_000, "rebalance_timeout_ms": 10_000, "member_id": member_id,
            "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b""}], "reason": None}
    answer = client.request(JOIN, 9, body)
    if answer["error_code"] == 79:  # MEMBER_ID_REQUIRED
        body["member_id"] = answer["member_id"]
        answer = client.request(JOIN, 9, body)
    assert answer["error_code"] == 0, answer
    return answer


def _sync(client: RawClient, group: str, joined: dict) -> dict:
    assignments = [{"member_id": m["member_id"], "assignment": b""} for m in joined["members"]]
    answer = client.request(SYNC, 5, {"group_id": group, "generation_id": joined["generation_id"],
                                      "member_id": joined["member_id"], "group_instance_id": None,
                                      "protocol_type": "consumer", "protocol_name": "range",
                                      "assignments": assignments})
    assert answer["error_code"] == 0, answer
    return answer


def raw_rebalance_ms(bootstrap: str, group: str) -> float:
    import threading
    with RawClient(bootstrap) as a, RawClient(bootstrap) as b:
        a_join = _join(a, group)
        _sync(a, group, a_join)
        joined: dict = {}
        b_thread = threading.Thread(target=lambda: joined.update(_join(b, group)))
        b_thread.start()
        deadline = time.monotonic() + DEADLINE_S
        while a.request(HEARTBEAT, 4, {"group_id": group, "generation_id": a_join["generation_id"],
                                       "member_id": a_join["member_id"], "group_instance_id": None}
                        )["error_code"] != 27:
            assert time.monotonic() < deadline
        a_join = _join(a, group, a_join["member_id"])
        b_thread.join(DEADLINE_S)
        _sync(a, group, a_join)
        _sync(b, group, joined)
        start = time.perf_counter()
        b.request(LEAVE, 5, {"group_id": group, "members": [{"member_id": joined["member_id"],
                                                             "group_instance_id": None, "reason": None}]})
        heartbeat = {"group_id": group, "generation_id": a_join["generation_id"], "member_id": a_join["member_id"],
                     "group_instance_id": None}
        while a.request(HEARTBEAT, 4, heartbeat)["error_code"] != 27:
            assert time.monotonic() < deadline
        _sync(a, group, _join(a, group, a_join["member_id"]))
        return (time.perf_counter() - start) * 1000


CLASSIC = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 100}
CONSUMER_PROTOCOL = {"group.protocol": "consumer"}  # the broker sets the session and heartbeat


def librdkafka_rebalance_ms(bootstrap: str, group: str, topic: str, protocol: dict) -> float:
    consumers = [Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False,
                           **protocol}) for _ in range(3)]
    try:
        for consumer in consumers:
            consumer.subscribe([topic])
        deadline = time.monotonic() + DEADLINE_S
        while sorted(len(c.assignment()) for c in consumers) != [2, 3, 3]:
            assert time.monotonic() < deadline
            for consumer in consumers:
                consumer.poll(0.01)
        start = time.perf_counter()
        consumers[0].close()
        while sorted(len(c.assignment()) for c in consumers[1:]) != [4, 4]:
            assert time.monotonic() < deadline
            for consumer in consumers[1:]:
                consumer.poll(0.01)
        return (time.perf_counter() - start) * 1000
    finally:
        for consumer in consumers[1:]:
            consumer.close()


def per_second(seconds: float, step) -> float:
    count = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        step(count)
        count += 1
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as data:
        broker = BrokerProcess(Path(data), {"group.initial.rebalance.delay.ms": "0",
                                            "group.consumer.heartbeat.interval.ms": "100",
                                            "group.consumer.min.heartbeat.interval.ms": "100",
                                            "offsets.topic.num.partitions": "5"}).start()
        try:
            bootstrap = broker.bootstrap
            admin = AdminClient({"bootstrap.servers": bootstrap})
            admin.create_topics([NewTopic("bench", 8, 1)])["bench"].result(10)
            raw = [raw_rebalance_ms(bootstrap, f"raw-{i}") for i in range(args.runs)]
            rdkafka = [librdkafka_rebalance_ms(bootstrap, f"rd-{i}", "bench", CLASSIC) for i in range(args.runs)]
            kip848 = [librdkafka_rebalance_ms(bootstrap, f"cg-{i}", "bench", CONSUMER_PROTOCOL)
                      for i in range(args.runs)]
            print(f"rebalance after leave, raw protocol client : {statistics.median(raw):8.1f} ms")
            print(f"rebalance after leave, 3 librdkafka members: {statistics.median(rdkafka):8.1f} ms")
            print(f"  the same, group.protocol=consumer (KIP-848): {statistics.median(kip848):8.1f} ms")
            with RawClient(bootstrap) as client:
                create_topic(client, "limit")
                record = batch(b"x")
                produces = [per_second(args.seconds, lambda _: produce(client, "limit", record))
                            for _ in range(args.runs)]

                def commit(i: int) -> None:
                    client.request(COMMIT, 8, {"group_id": "committer", "generation_id_or_member_epoch": -1,
                                               "member_id": "", "group_instance_id": None, "topics": [
                                                   {"name": "bench", "partitions": [{
                                                       "partition_index": 0, "committed_offset": i,
                                                       "committed_leader_epoch": -1, "committed_metadata": ""}]}]})
                commits = [per_second(args.seconds, commit) for _ in range(args.runs)]
            consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "rd-committer"})
            try:
                rd_commits = [per_second(args.seconds, lambda i: consumer.commit(
                    offsets=[TopicPartition("bench", 0, i)], asynchronous=False)) for _ in range(args.runs)]
            finally:
                consumer.close()
            print(f"acks=1 produce of 1 record per request (limit): {statistics.median(produces):8.0f} /s")
            print(f"OffsetCommit of 1 offset per request         : {statistics.median(commits):8.0f} /s "
                  f"(ratio {statistics.median(commits) / statistics.median(produces):.2f})")
            print(f"confluent-kafka commit(asynchronous=False)   : {statistics.median(rd_commits):8.0f} /s")
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
