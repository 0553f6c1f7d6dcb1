"""GroupCoordinatorMetrics: the group coordinator's metrics under Kafka 4.3's names
(org.apache.kafka.coordinator.group.metrics.GroupCoordinatorMetrics, with the coordinator
runtime's num-partitions), served on the broker's Prometheus endpoint.

Series (broker_metrics.py's naming):

- kafka_coordinator_group_GroupMetadataManager_NumOffsets: committed offsets (a transaction's
  pending ones are not); NumGroups: classic groups; NumGroups{PreparingRebalance,
  CompletingRebalance,Stable,Dead,Empty}: classic groups in that state
- kafka_server_group_coordinator_metrics_group_count{protocol=classic|consumer|share|streams}; a
  simple group (offsets committed with no members) is a classic one
- ..._consumer_group_count{state=Empty|Assigning|Reconciling|Stable|Dead},
  ..._share_group_count{state=Empty|Stable|Dead} and
  ..._streams_group_count{state=Empty|NotReady|Assigning|Reconciling|Stable|Dead}
- ..._num_partitions{state=loading|active|failed}: __consumer_offsets partitions being
  loaded, loaded and serving, or whose load failed
- the cumulative counts of Kafka's meters (their windowed -rate twins are left to
  Prometheus' rate()):
  - ..._offset_commit_count: partition offsets accepted by OffsetCommit and TxnOffsetCommit
    (one over its metadata size limit is not), counted when their records are made, before
    the write, as Kafka counts them
  - ..._offset_deletion_count: offsets OffsetDelete tombstoned (not DeleteGroups', not a
    deleted topic's)
  - ..._offset_expiration_count: offsets expired by retention
  - ..._group_completed_rebalance_count: classic groups that went from CompletingRebalance to
    Stable (the leader's assignment written)
  - ..._consumer_group_rebalance_count, ..._share_group_rebalance_count and
    ..._streams_group_rebalance_count: group epoch bumps by a member's heartbeat or join (a
    member fenced or leaving bumps it uncounted)

Where franz differs from Kafka, on purpose: the gauges are counted at scrape time from the
groups and offsets there are; Kafka recounts group states every 60 s and moves NumOffsets
when the partition's high watermark does, so its figures lag these. Kafka's expiration
count adds the size of a list of records shared by all groups of a cleanup pass, group
tombstones included; franz counts each expired offset once.

The counts are ints bumped on the loop thread and read by the scrape's thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from franz.coordinator.group.consumer_group import ConsumerGroupState
from franz.coordinator.group.group_metadata import GroupState

if TYPE_CHECKING:
    from franz.coordinator.group.group_coordinator_service import GroupCoordinatorService

GROUP_PREFIX: Final = "kafka_server_group_coordinator_metrics_"
MANAGER_PREFIX: Final = "kafka_coordinator_group_GroupMetadataManager_"
SHARE_GROUP_STATES: Final = ("Empty", "Stable", "Dead")  # ShareGroupState, Unknown left out as Kafka leaves it
STREAMS_GROUP_STATES: Final = ("Empty", "NotReady", "Assigning", "Reconciling", "Stable", "Dead")
PARTITION_STATES: Final = ("loading", "active", "failed")


class GroupCoordinatorMetrics(Collector):
    """The coordinator's counts, and the gauges read from its groups at scrape time."""

    def __init__(self) -> None:
        self.service: GroupCoordinatorService | None = None  # set by the service that keeps these
        self.offset_commits = 0
        self.offset_deletions = 0
        self.offset_expirations = 0
        self.classic_rebalances_completed = 0
        self.consumer_group_rebalances = 0
        self.share_group_rebalances = 0
        self.streams_group_rebalances = 0

    def collect(self) -> Iterator:
        service = self.service
        if service is None:
            return
        classic_states = {state: 0 for state in GroupState}
        for group in list(service.coordinator.groups.values()):
            classic_states[group.state] += 1
        consumer_states = {state: 0 for state in ConsumerGroupState}
        for consumer_group in list(service.consumer_groups.groups.values() if service.consumer_groups else ()):
            consumer_states[consumer_group.state] += 1
        share_states = dict.fromkeys(SHARE_GROUP_STATES, 0)
        for share_group in list(service.share_groups.groups.values() if service.share_groups else ()):
            share_states[share_group.state] += 1
        streams_states = dict.fromkeys(STREAMS_GROUP_STATES, 0)
        for streams_group in list(service.streams_groups.groups.values()):
            streams_states[streams_group.state.value] += 1
        num_offsets = sum(len(offsets) for offsets in list(service.offsets.offsets.values()))
        yield GaugeMetricFamily(MANAGER_PREFIX + "NumOffsets", "Committed offsets", value=num_offsets)
        yield GaugeMetricFamily(MANAGER_PREFIX + "NumGroups", "Classic groups", value=sum(classic_states.values()))
        for state, count in classic_states.items():
            yield GaugeMetricFamily(MANAGER_PREFIX + "NumGroups" + state.value, f"Classic groups {state.value}",
                                    value=count)
        groups = GaugeMetricFamily(GROUP_PREFIX + "group_count", "Groups by protocol", labels=["protocol"])
        for protocol, states in (("classic", classic_states), ("consumer", consumer_states),
                                 ("share", share_states), ("streams", streams_states)):
            groups.add_metric([protocol], sum(states.values()))
        yield groups
        streams = GaugeMetricFamily(GROUP_PREFIX + "streams_group_count", "Streams groups by state",
                                    labels=["state"])
        for streams_state, count in streams_states.items():
            streams.add_metric([streams_state], count)
        yield streams
        consumer = GaugeMetricFamily(GROUP_PREFIX + "consumer_group_count", "Consumer groups by state",
                                     labels=["state"])
        for consumer_state, count in consumer_states.items():
            consumer.add_metric([consumer_state.value], count)
        yield consumer
        share = GaugeMetricFamily(GROUP_PREFIX + "share_group_count", "Share groups by state", labels=["state"])
        for share_state, count in share_states.items():
            share.add_metric([share_state], count)
        yield share
        partitions = GaugeMetricFamily(GROUP_PREFIX + "num_partitions", "__consumer_offsets partitions by state",
                                       labels=["state"])
        by_state = service.partition_states()
        for partition_state in PARTITION_STATES:
            partitions.add_metric([partition_state], by_state.get(partition_state, 0))
        yield partitions
        for name, help_text, value in (
                ("offset_commit_count", "Partition offsets committed", self.offset_commits),
                ("offset_deletion_count", "Offsets deleted by OffsetDelete", self.offset_deletions),
                ("offset_expiration_count", "Offsets expired by retention", self.offset_expirations),
                ("group_completed_rebalance_count", "Classic group rebalances completed",
                 self.classic_rebalances_completed),
                ("consumer_group_rebalance_count", "Consumer group epoch bumps by members",
                 self.consumer_group_rebalances),
                ("share_group_rebalance_count", "Share group epoch bumps by members", self.share_group_rebalances),
                ("streams_group_rebalance_count", "Streams group epoch bumps", self.streams_group_rebalances)):
            yield GaugeMetricFamily(GROUP_PREFIX + name, help_text, value=value)

