"""The group coordinator's metrics follow its groups and offsets on a real in-process KafkaServer,
read as its Prometheus endpoint serves them."""

from __future__ import annotations

import re

from prometheus_client import generate_latest

from franz.protocol.errors import Errors
from tests.coordinator.group.test_consumer_group_coordinator import beat as consumer_beat
from tests.coordinator.group.test_group_coordinator import (
    _commit_body, _Request, run, stable_single_member_group,
)
from tests.coordinator.group.test_share_group_coordinator import OVERRIDES
from tests.coordinator.group.test_share_group_coordinator import beat as share_beat

GROUP = "kafka_server_group_coordinator_metrics_"
MANAGER = "kafka_coordinator_group_GroupMetadataManager_"


def _values(server) -> dict[str, float]:
    text = generate_latest(server.metrics.registry).decode()
    return {match.group(1): float(match.group(2))
            for match in re.finditer(r"^((?:kafka_server_group_coordinator_metrics_|"
                                     r"kafka_coordinator_group_)\S*) (\S+)$", text, re.MULTILINE)}


def test_groups_offsets_and_rebalances_are_counted_as_kafka_counts_them(tmp_path):
    async def scenario(server):
        service = server.group_coordinator
        await server.controller.create_topic("t", 2, {})
        values = _values(server)
        assert values[GROUP + 'num_partitions{state="active"}'] == 0  # no __consumer_offsets yet
        assert values[MANAGER + "NumGroups"] == 0 and values[GROUP + "offset_commit_count"] == 0

        member_id, generation = await stable_single_member_group(server, "g")
        answer = await service.handle_offset_commit(_Request(), _commit_body("g", generation, member_id, 5))
        assert answer["topics"][0]["partitions"][0]["error_code"] == Errors.NONE
        two = _commit_body("simple", -1, "", 9)
        two["topics"][0]["partitions"].append({"partition_index": 1, "committed_offset": 3,
                                               "committed_leader_epoch": -1, "committed_metadata": "x" * 5000})
        answer = await service.handle_offset_commit(_Request(), two)  # the second is over its metadata limit
        assert [p["error_code"] for p in answer["topics"][0]["partitions"]] == [
            Errors.NONE, Errors.OFFSET_METADATA_TOO_LARGE]
        values = _values(server)
        assert values[GROUP + 'num_partitions{state="active"}'] == 3  # offsets.topic.num.partitions
        assert values[GROUP + 'num_partitions{state="loading"}'] == 0
        assert values[GROUP + "group_completed_rebalance_count"] == 1
        assert values[GROUP + "offset_commit_count"] == 2
        assert values[MANAGER + "NumOffsets"] == 2
        assert values[MANAGER + "NumGroups"] == 2  # "simple" is a classic group with no members
        assert (values[MANAGER + "NumGroupsStable"], values[MANAGER + "NumGroupsEmpty"]) == (1, 1)
        assert values[GROUP + 'group_count{protocol="classic"}'] == 2

        deleted = await service.handle_offset_delete(_Request(), {"group_id": "simple", "topics": [
            {"name": "t", "partitions": [{"partition_index": 0}, {"partition_index": 1}]}]})
        assert deleted["error_code"] == Errors.NONE
        await service.handle_offset_commit(_Request(), _commit_body("simple", -1, "", 10))
        expired = await service.cleanup_group_metadata(service._clock_ms() + service.config.offsets_retention_ms
                                                       + 1000)
        values = _values(server)
        assert values[GROUP + "offset_deletion_count"] == 1  # partition 1 had no offset to delete
        assert expired == 1 and values[GROUP + "offset_expiration_count"] == 1
        assert values[MANAGER + "NumOffsets"] == 1  # g's, kept while g is Stable

        assert (await consumer_beat(server, "m1", 0, group_id="c"))["member_epoch"] == 2
        await consumer_beat(server, "m1", 2, group_id="c", topics=None, owned=None, rebalance_timeout_ms=-1)
        assert (await consumer_beat(server, "m2", 0, group_id="c"))["error_code"] == Errors.NONE
        left = await consumer_beat(server, "m2", -1, group_id="c", topics=None, owned=None)  # a leave: uncounted
        assert left["error_code"] == Errors.NONE
        assert (await share_beat(server, "s1", 0, group_id="s"))["error_code"] == Errors.NONE
        values = _values(server)
        assert values[GROUP + "consumer_group_rebalance_count"] == 2  # the two joins
        assert values[GROUP + 'group_count{protocol="consumer"}'] == 1
        states = {state: values[GROUP + f'consumer_group_count{{state="{state}"}}']
                  for state in ("Empty", "Assigning", "Reconciling", "Stable", "Dead")}
        assert sum(states.values()) == 1 and states["Empty"] == 0
        assert values[GROUP + "share_group_rebalance_count"] == 1
        assert values[GROUP + 'share_group_count{state="Stable"}'] == 1
        assert values[GROUP + 'group_count{protocol="share"}'] == 1
    run(tmp_path, scenario, **OVERRIDES)


def test_a_scrape_reads_group_states_while_the_loop_changes_members():
    """The scrape runs on the HTTP server's thread: a group's state must not walk its members
    while the loop adds and removes them (prometheus_client fails the whole scrape on it)."""
    import threading
    import types

    from franz.coordinator.group.consumer_group import ConsumerGroup, ConsumerGroupMember
    from franz.coordinator.group.group_coordinator_metrics import GroupCoordinatorMetrics

    group = ConsumerGroup("c")
    for index in range(2000):
        group.members[f"m{index}"] = ConsumerGroupMember(f"m{index}")
    metrics = GroupCoordinatorMetrics()
    metrics.service = types.SimpleNamespace(
        coordinator=types.SimpleNamespace(groups={}), consumer_groups=types.SimpleNamespace(groups={"c": group}),
        share_groups=None, streams_groups=types.SimpleNamespace(groups={}), offsets=types.SimpleNamespace(offsets={}),
        partition_states=dict)
    stop = threading.Event()

    def join_and_leave() -> None:
        index = 0
        while not stop.is_set():
            if index % 2:
                group.members[f"x{index}"] = ConsumerGroupMember(f"x{index}")
            else:
                group.members.pop(f"x{index - 1}", None)
            index += 1

    churn = threading.Thread(target=join_and_leave)
    churn.start()
    try:
        for _ in range(1500):  # without the copy, about one scrape in a hundred failed here
            list(metrics.collect())
    finally:
        stop.set()
        churn.join(10)
