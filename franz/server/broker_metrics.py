"""Broker metrics under Kafka's names, served for Prometheus on `metrics.port`.

Kafka publishes its metrics through JMX (kafka.server:type=BrokerTopicMetrics,
name=BytesInPerSec, ...); franz publishes the same ones as Prometheus series
named `<domain>_<type>_<name>` after them, so dashboards built for Kafka's JMX
exporter find familiar names:

- kafka_server_BrokerTopicMetrics_{BytesInPerSec,BytesOutPerSec,MessagesInPerSec,...}_total, per
  topic and for all topics (franz.storage.broker_topic_stats)
- kafka_network_RequestMetrics_{RequestsPerSec,ErrorsPerSec,TotalTimeMs,LocalTimeMs,...}: per
  API (franz.server.request_metrics)
- kafka_network_RequestChannel_RequestQueueSize
- kafka_server_socket_server_metrics_*{listener,networkProcessor} and the loop's idle share,
  kafka_network_SocketServer_NetworkProcessorAvgIdlePercent (franz.server.socket_server_metrics)
- kafka_server_KafkaRequestHandlerPool_{RequestHandlerAvgIdlePercent,BrokerRequestHandlerAvgIdlePercent}_total:
  seconds the handler threads had spare, so that its rate() is Kafka's meter rate
- kafka_server_group_coordinator_metrics_* and kafka_coordinator_group_GroupMetadataManager_*
  (franz.coordinator.group.group_coordinator_metrics, registered by KafkaServer)
- kafka_server_ReplicaManager_{UnderReplicatedPartitions,PartitionCount,LeaderCount,...}
- kafka_cluster_Partition_{UnderReplicated,InSyncReplicasCount,UnderMinIsr,AtMinIsr,ReplicasCount,
  LastStableOffsetLag}{topic,partition}: each partition this broker leads
- kafka_log_LogFlushStats_LogFlushRateAndTimeMs (histogram, ms)
- kafka_log_Log_{Size,NumLogSegments,LogEndOffset,LogStartOffset}{topic,partition}, and
  is_future="true" for the log a move between log dirs is filling
- kafka_log_LogCleaner_{max_buffer_utilization_percent,cleaner_recopy_percent,max_clean_time_secs,
  max_compaction_delay_secs,DeadThreadCount} and kafka_log_LogCleanerManager_{max_dirty_percent,
  time_since_last_run_ms} and, per log dir, ..._{uncleanable_partitions_count,uncleanable_bytes}
- kafka_server_{Produce,Fetch}_{byte_rate,throttle_time}{user,client_id} and
  kafka_server_Request_{request_time,throttle_time}{user,client_id}: clients under a quota
  (Kafka's quota sensors: bytes/s or percent of a thread over the quota window, mean throttle ms)

The traffic meters are plain counts kept by their own collectors (prometheus_client's
labeled children check their values and take a lock on every update: 1.8-2.7 us here
per call, where a produce of eight partitions made eighteen). Gauges are read at scrape
time from the live objects, so they cost nothing between scrapes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Final

from prometheus_client import CollectorRegistry, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector
from prometheus_client.samples import Sample

from franz.server.append_thread import AppendThread
from franz.server.metadata_cache import MetadataCache
from franz.server.request_metrics import RequestChannelMetrics
from franz.server.socket_server import SocketServer
from franz.server.socket_server_metrics import SocketServerMetrics
from franz.storage import log_flush_stats
from franz.storage.broker_topic_stats import BrokerTopicStats
from franz.storage.log_manager import LogManager

logger = logging.getLogger(__name__)


# BrokerState's values (org.apache.kafka.metadata.BrokerState) by BrokerServer's status; franz has
# no fenced phase after catching up (RECOVERY) and no controlled shutdown to wait for.
BROKER_STATES: Final = {"SHUTDOWN": 0, "STARTING": 1, "STARTED": 3, "SHUTTING_DOWN": 7}



class _LiveCollector(Collector):
    """Gauges read from the log manager, the metadata and the socket server at scrape time."""

    def __init__(self, log_manager: LogManager, queue_size: Callable[[], int], quotas: dict,
                 metadata: MetadataCache | None, broker_status: Callable[[], str] | None) -> None:
        self.log_manager = log_manager
        self.queue_size = queue_size
        self.quotas = quotas  # "Produce" / "Fetch" -> its ClientQuotaManager
        self.metadata = metadata
        self.broker_status = broker_status

    def collect(self) -> Iterator:
        queue = GaugeMetricFamily("kafka_network_RequestChannel_RequestQueueSize",
                                  "Requests holding a queued.max.requests slot (read, and not yet "
                                  "answered or waiting in a purgatory)")
        queue.add_metric([], self.queue_size())
        yield queue
        # A partition moving between log dirs has a future log too: counted once, and its
        # future log's series carry is_future="true" (Kafka's is-future tag).
        logs, future_logs = self.log_manager.current_and_future_logs()
        under = GaugeMetricFamily("kafka_server_ReplicaManager_UnderReplicatedPartitions",
                                  "Led partitions whose ISR is smaller than their replica set")
        under.add_metric([], 0)  # one node: every ISR is the whole replica set
        yield under
        count = GaugeMetricFamily("kafka_server_ReplicaManager_PartitionCount", "Partitions on this broker")
        count.add_metric([], len(logs))
        yield count
        if self.metadata is not None:
            yield from self._leadership(logs)
        if self.broker_status is not None:
            yield GaugeMetricFamily("kafka_server_KafkaServer_BrokerState", "The broker's state (BrokerState's values)",
                                    value=BROKER_STATES[self.broker_status()])
        families = {name: GaugeMetricFamily(f"kafka_log_Log_{name}", help_text, labels=["topic", "partition"])
                    for name, help_text in (("Size", "Bytes of the partition's segments"),
                                            ("NumLogSegments", "Segments of the partition"),
                                            ("LogEndOffset", "Next offset to be written"),
                                            ("LogStartOffset", "First offset readable"))}
        for partition_log, future in [(log, False) for log in logs] + [(log, True) for log in future_logs]:
            if partition_log.offline:  # its gauges go with it (LogManager.handleLogDirFailure: removeLogMetrics)
                continue
            topic, _, partition = partition_log.topic_partition.rpartition("-")
            labels = {"topic": topic, "partition": partition, **({"is_future": "true"} if future else {})}
            for name, value in (("Size", partition_log.size()), ("NumLogSegments", partition_log.number_of_segments()),
                                ("LogEndOffset", partition_log.log_end_offset),
                                ("LogStartOffset", partition_log.log_start_offset)):
                families[name].samples.append(Sample(f"kafka_log_Log_{name}", labels, value))
        yield from families.values()
        flushes, total_ms, buckets = log_flush_stats.snapshot()
        flush = HistogramMetricFamily("kafka_log_LogFlushStats_LogFlushRateAndTimeMs", "Log flushes and their time",
                                      unit="")
        cumulative, rows = 0, []
        for bound, bucket in zip((*log_flush_stats.BUCKETS_MS, float("inf")), buckets):
            cumulative += bucket
            rows.append((str(bound) if bound != float("inf") else "+Inf", cumulative))
        flush.add_metric([], rows, total_ms)
        yield flush
        assert cumulative == flushes
        yield from self._cleaner_metrics()
        now_ms = time.monotonic_ns() // 1_000_000  # the quota managers' clock
        for kind, manager in self.quotas.items():
            # Request quotas measure time (percent of a thread), the others bytes per second.
            measure, unit = ("request_time", "percent of a thread") if kind == "Request" else ("byte_rate", "bytes/s")
            rates = GaugeMetricFamily(f"kafka_server_{kind}_{measure}", f"{kind} {unit} of a client under a "
                                      "quota, over the quota window", labels=["user", "client_id"])
            throttle = GaugeMetricFamily(f"kafka_server_{kind}_throttle_time", f"Mean ms a client's {kind} "
                                         "requests were throttled, over the quota window",
                                         labels=["user", "client_id"])
            for user, client_id, rate, throttle_ms in manager.metrics(now_ms):
                rates.add_metric([user, client_id], rate)
                throttle.add_metric([user, client_id], throttle_ms)
            yield rates
            yield throttle


    def _leadership(self, logs) -> Iterator:
        """The controller's view of the cluster (ControllerMetadataMetrics) and this broker's
        leaderships (ReplicaManager): this node is the active controller and the leader of
        every partition whose log it has; one without a log, or whose log a disk error took
        offline, has no leader (offline), and loses its partition gauges as Kafka's
        markPartitionOffline removes them."""
        topics = list(self.metadata.topics.values())
        partitions = sum(topic.num_partitions for topic in topics)
        in_metadata = {f"{topic.name}-{index}" for topic in topics for index in range(topic.num_partitions)}
        led_logs = [partition_log for partition_log in logs
                    if partition_log.topic_partition in in_metadata and not partition_log.offline]
        led = len(led_logs)
        for name, help_text, value in (
                ("kafka_controller_KafkaController_ActiveControllerCount",
                 "1 on the node that is the active controller", 1),
                ("kafka_controller_KafkaController_GlobalTopicCount", "Topics in the cluster", len(topics)),
                ("kafka_controller_KafkaController_GlobalPartitionCount", "Partitions in the cluster", partitions),
                ("kafka_controller_KafkaController_OfflinePartitionsCount", "Partitions without a leader",
                 partitions - led),
                ("kafka_server_ReplicaManager_LeaderCount", "Partitions this broker leads", led),
                # Each ISR is this one replica, which is the effective min ISR, min(min.insync.replicas, 1).
                ("kafka_server_ReplicaManager_AtMinIsrPartitionCount",
                 "Led partitions whose ISR is at their effective min.insync.replicas", led),
                ("kafka_server_ReplicaManager_UnderMinIsrPartitionCount",
                 "Led partitions whose ISR is below their effective min.insync.replicas", 0)):
            yield GaugeMetricFamily(name, help_text, value=value)
        yield from self._partition_gauges(led_logs)

    @staticmethod
    def _partition_gauges(led_logs) -> Iterator:
        """kafka.cluster Partition's gauges of each partition this broker leads. On one node a
        partition's replica set and ISR are this replica, so its effective min ISR,
        min(min.insync.replicas, replicas), is 1: at it, never under it, never under-replicated."""
        families = {name: GaugeMetricFamily(f"kafka_cluster_Partition_{name}", help_text,
                                            labels=["topic", "partition"])
                    for name, help_text in (("UnderReplicated", "1 when the ISR is smaller than the replica set"),
                                            ("InSyncReplicasCount", "Replicas in the ISR"),
                                            ("UnderMinIsr", "1 when the ISR is below the effective min ISR"),
                                            ("AtMinIsr", "1 when the ISR is at the effective min ISR"),
                                            ("ReplicasCount", "Replicas assigned (the replication factor)"),
                                            ("LastStableOffsetLag", "High watermark minus last stable offset"))}
        for partition_log in led_logs:
            topic, _, partition = partition_log.topic_partition.rpartition("-")
            values = {"UnderReplicated": 0, "InSyncReplicasCount": 1, "UnderMinIsr": 0, "AtMinIsr": 1,
                      "ReplicasCount": 1,
                      "LastStableOffsetLag": partition_log.last_stable_offset_lag()}
            for name, value in values.items():
                families[name].add_metric([topic, partition], value)
        yield from families.values()

    def _cleaner_metrics(self) -> Iterator:
        cleaner = self.log_manager.cleaner
        if cleaner is None:
            return
        for name, value in cleaner.metrics().items():
            family = GaugeMetricFamily(f"kafka_log_LogCleaner_{name.replace('-', '_')}", f"LogCleaner {name}")
            family.add_metric([], value)
            yield family
        manager = cleaner.cleaner_manager
        dirty = GaugeMetricFamily("kafka_log_LogCleanerManager_max_dirty_percent",
                                  "Cleanable percent of the dirtiest compacted log at the last choice")
        dirty.add_metric([], int(100 * manager.dirtiest_log_cleanable_ratio))
        yield dirty
        since = GaugeMetricFamily("kafka_log_LogCleanerManager_time_since_last_run_ms",
                                  "Milliseconds since a cleaner last looked for a log to clean")
        since.add_metric([], manager.time_since_last_run_ms())
        yield since
        count = GaugeMetricFamily("kafka_log_LogCleanerManager_uncleanable_partitions_count",
                                  "Partitions whose cleaning failed", labels=["logDirectory"])
        size = GaugeMetricFamily("kafka_log_LogCleanerManager_uncleanable_bytes",
                                 "Cleanable bytes of the partitions whose cleaning failed", labels=["logDirectory"])
        for log_dir in self.log_manager.log_dirs:
            count.add_metric([str(log_dir)], len(manager.uncleanable_partitions(log_dir)))
            size.add_metric([str(log_dir)], manager.uncleanable_bytes(log_dir))
        yield count
        yield size


class _RequestHandlerPoolCollector(Collector):
    """KafkaRequestHandlerPool's RequestHandlerAvgIdlePercent (and the broker pool's own,
    BrokerRequestHandlerAvgIdlePercent): a Kafka handler thread is idle while it waits for a
    request, and the meter adds each thread's idle time over the number of threads, so its
    rate is the pool's spare share. franz's request work runs on two threads that cannot
    stand in for each other: every request on the loop (idle as socket_server_metrics.LoopIdle
    says), appends that may block on the append thread (idle while it waits for a job). The
    pool's spare share is the smaller of theirs: between two scrapes the counter grows by
    the lesser of the two threads' idle times, so that either one saturated reads as a busy
    pool, as busy handler threads do in Kafka. The counter holds seconds, so that
    Prometheus' rate() of it is the share Kafka's meter rates give."""

    NAMES: Final = ("RequestHandlerAvgIdlePercent", "BrokerRequestHandlerAvgIdlePercent")

    def __init__(self, socket_server: SocketServer, append_thread: AppendThread) -> None:
        self.socket_server = socket_server
        self.append_thread = append_thread
        self._lock = threading.Lock()  # scrapes may run on several HTTP threads
        self._last: tuple[int, int] | None = None  # (loop, append thread) idle ns at the last scrape
        self._idle_ns = 0

    def collect(self) -> Iterator:
        loop_idle = self.socket_server.loop_idle.idle_ns()
        if loop_idle is None:
            return
        current = (loop_idle[1], self.append_thread.idle_ns())
        with self._lock:
            last = self._last if self._last is not None else (0, 0)
            self._idle_ns += max(0, min(current[0] - last[0], current[1] - last[1]))
            self._last = current
            idle_s = self._idle_ns / 1e9
        for name in self.NAMES:
            family = CounterMetricFamily(f"kafka_server_KafkaRequestHandlerPool_{name}",
                                         "Seconds the request handler pool had spare, as its busier thread saw it")
            family.add_metric([], idle_s)
            yield family


class BrokerMetrics:
    def __init__(self, topic_stats: BrokerTopicStats | None = None) -> None:
        self.registry = CollectorRegistry()
        self.topic_stats = topic_stats if topic_stats is not None else BrokerTopicStats()
        self.registry.register(self.topic_stats)
        self.request_metrics = RequestChannelMetrics()
        self.registry.register(self.request_metrics)
        self._server = None

    def remove_topic(self, topic: str) -> None:
        """Drop a deleted topic's BrokerTopicMetrics series (BrokerTopicStats.removeMetrics)."""
        self.topic_stats.remove_metrics(topic)

    def watch(self, log_manager: LogManager, queue_size: Callable[[], int], quotas: dict | None = None,
              metadata: MetadataCache | None = None, broker_status: Callable[[], str] | None = None) -> None:
        self.registry.register(_LiveCollector(log_manager, queue_size, quotas or {}, metadata, broker_status))

    def watch_network(self, socket_server: SocketServer, append_thread: AppendThread) -> None:
        self.registry.register(SocketServerMetrics(socket_server))
        self.registry.register(_RequestHandlerPoolCollector(socket_server, append_thread))

    def serve(self, host: str, port: int) -> int:
        """Start the HTTP endpoint on its own thread; returns the bound port."""
        server, _thread = start_http_server(port, addr=host, registry=self.registry)
        self._server = server
        bound = server.server_address[1]
        logger.info("Serving Prometheus metrics on http://%s:%d/metrics", host, bound)
        return bound

    def shutdown(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
