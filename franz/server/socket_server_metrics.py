"""The socket server's metrics: what a Kafka broker's network Processors report
(common.network.Selector's socket-server-metrics, and SocketServer's and Processor's
idle gauges), for franz's one event loop.

Kafka runs num.network.threads Processors per listener, each a Selector over its
connections. franz's loop serves every listener, so each listener counts as one
processor, numbered in the order of `listeners` as Kafka numbers its processors,
and the loop's idle time is every processor's.

Series (broker_metrics.py's naming: `kafka_server_socket_server_metrics_<metric>` for
the kafka-metrics group, each with `listener` and `networkProcessor` labels):

- connection_count (gauge), connection_creation_total, connection_close_total
- incoming_byte_total, outgoing_byte_total: frame bytes read, and answer bytes handed
  to the transport (size prefix included)
- request_total and response_total, named from the client's side as Kafka's Selector
  names them: answers sent whole, and request frames received
- io_wait_time_ns_total (counter) and io_wait_ratio (gauge): the loop's idle time, and
  its share of the last window
- connections{clientSoftwareName,clientSoftwareVersion} (gauge): open connections by the
  client software their last ApiVersions named ("unknown" before one)
- successful_authentication_total, successful_authentication_no_reauth_total and
  failed_authentication_total: connections that became ready (a PLAINTEXT or SSL one once
  taken up, a SASL one once its mechanism completed; "no reauth": its client cannot
  re-authenticate, which is every PLAINTEXT and SSL client and a SASL one that used
  SaslAuthenticate v0), and those whose SASL authentication or TLS handshake failed or whose
  certificate no principal mapping rule maps.
- successful_reauthentication_total and failed_reauthentication_total: SASL re-authentications
  (KIP-368) of connections already authenticated, which the counts above leave out
- expired_connections_killed_count (SocketServer's): connections closed because a request came
  after their SASL session expired
- reauthentication_latency_avg and reauthentication_latency_max (gauges, ms): of the SASL
  re-authentications completed in the window below, NaN with none, as Kafka's Avg and Max
  measure an empty window (Selector's reauthentication-latency sensor)
- kafka_network_SocketServer_NetworkProcessorAvgIdlePercent and
  kafka_network_Processor_IdlePercent{networkProcessor}: io_wait_ratio, at most 1

Kafka's windowed -rate metrics are left to Prometheus (rate() over the totals). The loop
is idle when its thread neither runs nor waits for a CPU (LoopIdle).
io_wait_ratio spans Kafka's window, metrics.sample.window.ms x metrics.num.samples
(30 s x 2): from the newest scrape at least 30 s old, or from the loop's start when
none is that old.

The counters are plain ints bumped on the loop thread; a scrape reads them from the
HTTP thread, and may see one of them a read behind another, never one going back.
"""

from __future__ import annotations

import collections
import math
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from franz.server.socket_server import SocketServer

GROUP_PREFIX: Final = "kafka_server_socket_server_metrics_"
WINDOW_NS: Final = 30 * 1_000_000_000  # metrics.sample.window.ms' default
SAMPLES: Final = 2  # metrics.num.samples' default
SAMPLE_SPACING_NS: Final = 1_000_000_000
_LABELS: Final = ["listener", "networkProcessor"]


class SelectorMetrics:
    """One listener's counts, kept by its connections (KafkaChannel)."""

    __slots__ = ("listener", "network_processor", "connections_created", "connections_closed", "bytes_received",
                 "bytes_sent", "answers_sent", "requests_received", "successful_authentications",
                 "successful_authentications_no_reauth", "failed_authentications", "successful_reauthentications",
                 "failed_reauthentications", "expired_connections_killed", "reauthentication_latencies")

    def __init__(self, listener: str, network_processor: int) -> None:
        self.listener = listener
        self.network_processor = network_processor
        self.connections_created = 0
        self.connections_closed = 0
        self.bytes_received = 0
        self.bytes_sent = 0
        self.answers_sent = 0  # Kafka's request-total: completed sends
        self.requests_received = 0  # Kafka's response-total: completed receives
        self.successful_authentications = 0
        self.successful_authentications_no_reauth = 0
        self.failed_authentications = 0
        self.successful_reauthentications = 0
        self.failed_reauthentications = 0
        self.expired_connections_killed = 0
        # (monotonic ns, ms) of each re-authentication, the oldest first, kept for the window
        self.reauthentication_latencies: collections.deque[tuple[int, int]] = collections.deque()

    def authenticated(self, client_supports_reauthentication: bool = False) -> None:
        self.successful_authentications += 1
        if not client_supports_reauthentication:
            self.successful_authentications_no_reauth += 1

    def reauthenticated(self, latency_ms: int, now_ns: int) -> None:
        self.successful_reauthentications += 1
        latencies = self.reauthentication_latencies
        latencies.append((now_ns, latency_ms))
        while latencies and now_ns - latencies[0][0] >= WINDOW_NS * SAMPLES:
            latencies.popleft()

    def reauthentication_latency(self, now_ns: int) -> tuple[float, float]:
        """(avg, max) in ms over the window; NaN for both with no re-authentication in it. Read
        from a scrape's thread: a copy of the deque, which the loop only appends to and trims."""
        live = [latency for at, latency in list(self.reauthentication_latencies) if now_ns - at < WINDOW_NS * SAMPLES]
        if not live:
            return math.nan, math.nan
        return sum(live) / len(live), float(max(live))

    @property
    def labels(self) -> list[str]:
        return [self.listener, str(self.network_processor)]


class LoopIdle:
    """The time the event loop's thread has not wanted the CPU since `start()`, read from any
    thread: wall time less the time the thread ran or waited in the run queue for a CPU
    (/proc's schedstat). A thread blocked in a system call (a pread or sendfile of pages not
    in memory, a lock, the GIL) counts as idle, where Kafka counts only a Processor's wait
    in select as idle: franz keeps blocking work off the loop, so that time stays small."""

    def __init__(self) -> None:
        self._schedstat_path: str | None = None
        self._start_ns = 0
        self._start_busy_ns = 0
        self._samples: collections.deque[tuple[int, int]] = collections.deque()  # (monotonic ns, idle ns)
        self._idle_ns_max = 0  # the most ever read: a counter never goes back
        self._lock = threading.Lock()  # scrapes may run on several HTTP threads

    def start(self) -> None:
        """Called on the loop's thread."""
        self._schedstat_path = f"/proc/self/task/{threading.get_native_id()}/schedstat"
        clocks = self._read_clocks()
        if clocks is None:  # no schedstat here: no idle metrics
            self._schedstat_path = None
            return
        self._start_ns, self._start_busy_ns = clocks
        self._samples.append((self._start_ns, 0))  # until a scrape is a window old, the window starts here

    def stop(self) -> None:
        """Before the loop's thread ends: its task id may be another thread's after."""
        self._schedstat_path = None

    def _read_clocks(self) -> tuple[int, int] | None:
        """(monotonic ns, ns the thread has run or waited to run), busy read first so that a
        read's busy time is never ahead of its wall time."""
        path = self._schedstat_path
        if path is None:
            return None
        try:
            with open(path, "rb") as schedstat:
                on_cpu_ns, run_queue_ns = schedstat.read().split()[:2]
        except (OSError, ValueError):
            return None
        return time.monotonic_ns(), int(on_cpu_ns) + int(run_queue_ns)

    def idle_ns(self) -> tuple[int, int] | None:
        """(now, idle ns since the start), or None when not measured."""
        clocks = self._read_clocks()
        if clocks is None:
            return None
        now_ns, busy_ns = clocks
        with self._lock:
            # Clocks read one after the other may put a read a few ns behind the last one.
            self._idle_ns_max = max(self._idle_ns_max, (now_ns - self._start_ns) - (busy_ns - self._start_busy_ns))
            return now_ns, self._idle_ns_max

    def idle_ratio(self) -> float | None:
        """Idle share of the window ending now (Kafka's io-wait-ratio), at most 1: from the newest
        sample at least WINDOW_NS old, else from the start."""
        current = self.idle_ns()
        if current is None:
            return None
        now_ns, idle_ns = current
        with self._lock:
            samples = self._samples
            while len(samples) > 1 and samples[1][0] <= now_ns - WINDOW_NS:
                samples.popleft()
            base_ns, base_idle_ns = samples[0]
            if now_ns - samples[-1][0] >= SAMPLE_SPACING_NS:  # bounds the samples kept
                samples.append(current)
        if now_ns <= base_ns:
            return 1.0
        return max(0.0, min(1.0, (idle_ns - base_idle_ns) / (now_ns - base_ns)))


class SocketServerMetrics(Collector):
    """The series above, read at scrape time from the socket server."""

    def __init__(self, socket_server: SocketServer) -> None:
        self.socket_server = socket_server

    def collect(self) -> Iterator:
        server = self.socket_server
        listeners = list(server.selector_metrics.values())
        counters = {name: CounterMetricFamily(GROUP_PREFIX + name, help_text, labels=_LABELS)
                    for name, help_text in (
                        ("connection_creation", "Connections accepted"),
                        ("connection_close", "Connections closed, by either side"),
                        ("incoming_byte", "Bytes read from clients"),
                        ("outgoing_byte", "Bytes of answers handed to the sockets"),
                        ("request", "Answers sent whole (the client's requests)"),
                        ("response", "Request frames received (the client's responses)"),
                        ("successful_authentication", "Connections with successful authentication"),
                        ("successful_authentication_no_reauth", "Connections with successful authentication "
                                                                "whose client does not support re-authentication"),
                        ("failed_authentication", "Connections with failed authentication"),
                        ("successful_reauthentication", "Successful re-authentications of connections"),
                        ("failed_reauthentication", "Failed re-authentications of connections"))}
        # a CumulativeSum in Kafka, so a gauge under its own name (no _total)
        expired = GaugeMetricFamily(GROUP_PREFIX + "expired_connections_killed_count",
                                    "Connections closed because a request came after their session expired",
                                    labels=_LABELS)
        latency_avg = GaugeMetricFamily(GROUP_PREFIX + "reauthentication_latency_avg",
                                        "Mean re-authentication latency (ms) in the window", labels=_LABELS)
        latency_max = GaugeMetricFamily(GROUP_PREFIX + "reauthentication_latency_max",
                                        "Longest re-authentication latency (ms) in the window", labels=_LABELS)
        live = GaugeMetricFamily(GROUP_PREFIX + "connection_count", "Open connections", labels=_LABELS)
        software = GaugeMetricFamily(GROUP_PREFIX + "connections", "Open connections by client software",
                                     labels=["clientSoftwareName", "clientSoftwareVersion", *_LABELS])
        open_by_listener, open_by_software = server.open_connections()
        for selector in listeners:
            for name, value in (("connection_creation", selector.connections_created),
                                ("connection_close", selector.connections_closed),
                                ("incoming_byte", selector.bytes_received), ("outgoing_byte", selector.bytes_sent),
                                ("request", selector.answers_sent), ("response", selector.requests_received),
                                ("successful_authentication", selector.successful_authentications),
                                ("successful_authentication_no_reauth", selector.successful_authentications_no_reauth),
                                ("failed_authentication", selector.failed_authentications),
                                ("successful_reauthentication", selector.successful_reauthentications),
                                ("failed_reauthentication", selector.failed_reauthentications)):
                counters[name].add_metric(selector.labels, value)
            expired.add_metric(selector.labels, selector.expired_connections_killed)
            average, longest = selector.reauthentication_latency(time.monotonic_ns())
            latency_avg.add_metric(selector.labels, average)
            latency_max.add_metric(selector.labels, longest)
            live.add_metric(selector.labels, open_by_listener.get(selector.listener, 0))
        by_listener = {selector.listener: selector for selector in listeners}
        for (listener, (name, version)), count in sorted(open_by_software.items()):
            software.add_metric([name, version, *by_listener[listener].labels], count)
        yield from counters.values()
        yield expired
        yield latency_avg
        yield latency_max
        yield live
        yield software
        idle = server.loop_idle.idle_ns()
        ratio = server.loop_idle.idle_ratio()
        if idle is None or ratio is None:
            return
        wait_ns = CounterMetricFamily(GROUP_PREFIX + "io_wait_time_ns", "Nanoseconds the loop waited for work",
                                      labels=_LABELS)
        wait_ratio = GaugeMetricFamily(GROUP_PREFIX + "io_wait_ratio", "Share of the last window the loop waited",
                                       labels=_LABELS)
        per_processor = GaugeMetricFamily("kafka_network_Processor_IdlePercent",
                                          "Share of the last window the processor waited", labels=["networkProcessor"])
        for selector in listeners:
            wait_ns.add_metric(selector.labels, idle[1])
            wait_ratio.add_metric(selector.labels, ratio)
            per_processor.add_metric([str(selector.network_processor)], ratio)
        yield wait_ns
        yield wait_ratio
        yield per_processor
        average = GaugeMetricFamily("kafka_network_SocketServer_NetworkProcessorAvgIdlePercent",
                                    "Processors' average share of the last window spent waiting")
        average.add_metric([], ratio if listeners else 1.0)
        yield average
