"""RequestMetrics: per API, the request and error rates and where its requests spent their time
(org.apache.kafka.network.metrics.RequestMetrics, updated as RequestChannel.Request's
updateRequestMetrics and RequestChannel.updateErrorMetrics update it).

Series, named after Kafka's MBeans as broker_metrics.py names them (`request` is the API's name,
or one of RequestChannel's override names: FetchConsumer, AddPartitionsToTxnVerification, ...):

- kafka_network_RequestMetrics_RequestsPerSec_total{request,version}
- kafka_network_RequestMetrics_ErrorsPerSec_total{request,error}: per error code in each answer
  (AbstractResponse.errorCounts, NONE included; franz.protocol.error_counts), under the API's
  own name only
- kafka_network_RequestMetrics_<time>{request}, histograms in ms, for <time> in
  RequestQueueTimeMs, LocalTimeMs, RemoteTimeMs, ThrottleTimeMs, ResponseQueueTimeMs,
  ResponseSendTimeMs and TotalTimeMs
- kafka_network_RequestMetrics_RequestBytes{request}: histogram of request body sizes
- kafka_network_RequestMetrics_{MessageConversionsTimeMs,TemporaryMemoryBytes}{request}, for
  Produce and Fetch only: what validating a produce's batches cost (a rebuild's time; memory for
  decompressed and rebuilt records). Kafka 4.x converts no fetch: Fetch's stay at 0.

The times, on franz's one event loop (Request's time fields; Kafka's in brackets):

- RequestQueueTimeMs: from the read that completed the frame to its handler's start (a Kafka
  handler thread taking it from the request queue). Frames of one read start one after the
  other, and a frame waits while no queued.max.requests slot is free.
- LocalTimeMs: from there to the end of the handler's own work: its answer, or its first wait
  on others (request_channel.waiting_on_others: a purgatory, a rebalance, records for a share
  fetch), as a Kafka handler thread returns there. Work on the append thread is its own.
- RemoteTimeMs: that wait, to the answer (encoded) being ready.
- ResponseQueueTimeMs: from then to the answer being taken for sending, which waits for the
  connection's earlier answers (they go first).
- ResponseSendTimeMs: from then until the socket or the transport's buffer holds the answer
  (a file region: its last sendfile).
- TotalTimeMs: read whole to sent. ThrottleTimeMs: the quota throttle the answer carried.

Updated on the loop thread only, without locks: a histogram is a list of bucket counts and a
sum. A scrape, on the HTTP thread, copies the maps before walking them and may see a request
half recorded (a count without its sum), never a count that goes back.
"""

from __future__ import annotations

import logging
from bisect import bisect_left
from collections.abc import Iterable, Iterator
from typing import Final

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from franz.protocol.errors import Errors
from franz.server.request_channel import REQUEST_LOGGER, Request
from franz.server.request_convert_to_json import request_desc_metrics

TIME_BUCKETS_MS: Final = (0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000)
REQUEST_BYTES_BUCKETS: Final = (64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216,
                                67108864)
# In the order RequestMetrics.update records them.
TIME_HISTOGRAMS: Final = ("RequestQueueTimeMs", "LocalTimeMs", "RemoteTimeMs", "ThrottleTimeMs",
                          "ResponseQueueTimeMs", "ResponseSendTimeMs", "TotalTimeMs")
_PREFIX: Final = "kafka_network_RequestMetrics_"
_CONVERTING_REQUESTS: Final = frozenset(("Produce", "Fetch"))
logger = logging.getLogger(__name__)
_MS_PER_NS: Final = 1e-6


class Histogram:
    """Observations counted into fixed buckets (a value counts in the first bucket whose upper
    bound is >= it, Prometheus' `le`), and their sum."""

    __slots__ = ("bounds", "counts", "total")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last: above every bound (+Inf)
        self.total = 0.0

    def update(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.total += value

    def cumulative(self) -> list[tuple[str, int]]:
        rows, running = [], 0
        for bound, count in zip((*map(str, self.bounds), "+Inf"), list(self.counts)):
            running += count
            rows.append((bound, running))
        return rows


class RequestMetrics:
    """One request name's rates and histograms."""

    __slots__ = ("name", "requests_by_version", "errors", "times", "request_bytes", "conversions")

    def __init__(self, name: str) -> None:
        self.name = name
        self.requests_by_version: dict[int, int] = {}
        self.errors: dict[int, int] = {}  # error code -> answers' count of it
        self.times = tuple(Histogram(TIME_BUCKETS_MS) for _ in TIME_HISTOGRAMS)
        self.request_bytes = Histogram(REQUEST_BYTES_BUCKETS)
        # MessageConversionsTimeMs and TemporaryMemoryBytes, which only these two have (isFetchOrProduce)
        self.conversions = ((Histogram(TIME_BUCKETS_MS), Histogram(REQUEST_BYTES_BUCKETS))
                            if name in _CONVERTING_REQUESTS else None)

    def update(self, version: int, times_ms: Iterable[float], body_bytes: int, conversion_ms: float = 0.0,
               temporary_memory_bytes: int = 0) -> None:
        self.requests_by_version[version] = self.requests_by_version.get(version, 0) + 1
        for histogram, value in zip(self.times, times_ms):  # Histogram.update inlined: once per request
            histogram.counts[bisect_left(TIME_BUCKETS_MS, value)] += 1
            histogram.total += value
        self.request_bytes.update(body_bytes)
        if self.conversions is not None:
            self.conversions[0].update(conversion_ms)
            self.conversions[1].update(temporary_memory_bytes)

    def mark_errors(self, counts: dict[int, int]) -> None:
        errors = self.errors
        for code, count in counts.items():
            errors[code] = errors.get(code, 0) + count


class _ByName(dict):
    def __missing__(self, name: str) -> RequestMetrics:
        metrics = self[name] = RequestMetrics(name)
        return metrics


def _error_name(code: int) -> str:
    try:
        return Errors(code).name
    except ValueError:  # Errors.forCode: a code Kafka does not know reads as UNKNOWN_SERVER_ERROR
        return Errors.UNKNOWN_SERVER_ERROR.name


class RequestChannelMetrics(Collector):
    """Every request name's RequestMetrics (RequestChannelMetrics), as a Prometheus collector."""

    def __init__(self) -> None:
        self.by_name: dict[str, RequestMetrics] = _ByName()

    def update(self, request: Request, end_time_ns: int) -> None:
        """Record one request that ended at `end_time_ns` (sent, not answered, or closed its
        connection); one that never reached its handler's decoding counts nowhere. Never raises:
        the channel calls it between its own steps."""
        try:
            self._update(request, end_time_ns)
        except Exception:  # noqa: BLE001 - a metric or log line lost, the connection kept
            logger.exception("Recording the metrics of %r failed", request)

    def _update(self, request: Request, end_time_ns: int) -> None:
        names = request.metric_names
        if names is None:
            return
        # Each stamp is taken after the one before it on one monotonic clock: no difference is
        # negative. A stamp not reached (a request answered without a response step) is the next.
        start = request.receive_time_ns
        dequeue = request.dequeue_time_ns or start
        complete = request.response_complete_time_ns or end_time_ns
        local = request.api_local_complete_time_ns or complete
        taken = request.response_dequeue_time_ns or end_time_ns
        times_ms = ((dequeue - start) * _MS_PER_NS, (local - dequeue) * _MS_PER_NS, (complete - local) * _MS_PER_NS,
                    request.throttle_time_ms, (taken - complete) * _MS_PER_NS, (end_time_ns - taken) * _MS_PER_NS,
                    (end_time_ns - start) * _MS_PER_NS)
        body_bytes = len(request.body)
        conversion_ms = request.message_conversions_time_ns * _MS_PER_NS
        for name in names:
            self.by_name[name].update(request.api_version, times_ms, body_bytes, conversion_ms,
                                      request.temporary_memory_bytes)
        if request.request_log is not None and REQUEST_LOGGER.isEnabledFor(logging.DEBUG):
            REQUEST_LOGGER.debug("Completed request:%s", request_desc_metrics(request, times_ms))

    def mark_errors(self, name: str, counts: dict[int, int]) -> None:
        """An answer's error counts, under its API's name (never an override name)."""
        self.by_name[name].mark_errors(counts)

    def collect(self) -> Iterator:
        requests = CounterMetricFamily(_PREFIX + "RequestsPerSec", "Requests by API and version",
                                       labels=["request", "version"])
        errors = CounterMetricFamily(_PREFIX + "ErrorsPerSec", "Error codes in answers, by API and error",
                                     labels=["request", "error"])
        times = [HistogramMetricFamily(_PREFIX + name, f"{name} of requests, by API", labels=["request"])
                 for name in TIME_HISTOGRAMS]
        sizes = HistogramMetricFamily(_PREFIX + "RequestBytes", "Request body bytes, by API", labels=["request"])
        conversion_times = HistogramMetricFamily(_PREFIX + "MessageConversionsTimeMs", "Time rebuilding produced "
                                                 "batches, by API (Produce and Fetch)", labels=["request"])
        memory = HistogramMetricFamily(_PREFIX + "TemporaryMemoryBytes", "Memory for decompressed and rebuilt "
                                       "records, by API (Produce and Fetch)", labels=["request"])
        for name, metrics in list(self.by_name.items()):
            for version, count in list(metrics.requests_by_version.items()):
                requests.add_metric([name, str(version)], count)
            by_error: dict[str, int] = {}
            for code, count in list(metrics.errors.items()):
                error = _error_name(code)
                by_error[error] = by_error.get(error, 0) + count
            for error, count in by_error.items():
                errors.add_metric([name, error], count)
            for family, histogram in zip(times, metrics.times):
                family.add_metric([name], histogram.cumulative(), histogram.total)
            sizes.add_metric([name], metrics.request_bytes.cumulative(), metrics.request_bytes.total)
            if metrics.conversions is not None:
                for family, histogram in zip((conversion_times, memory), metrics.conversions):
                    family.add_metric([name], histogram.cumulative(), histogram.total)
        yield requests
        yield errors
        yield from times
        yield sizes
        yield conversion_times
        yield memory
