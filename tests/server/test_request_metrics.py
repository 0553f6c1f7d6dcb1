"""RequestChannelMetrics: one request's times split as Kafka's updateRequestMetrics splits them."""

from __future__ import annotations

import asyncio
import contextvars
import re

from prometheus_client import CollectorRegistry, generate_latest

from franz.protocol.codec import encode_request
from franz.server.request_channel import Request, handling, waiting_on_others
from franz.server.request_metrics import TIME_HISTOGRAMS, Histogram, RequestChannelMetrics

MS = 1_000_000


def _request(start_ns: int) -> Request:
    frame = encode_request(0, 9, 7, "client", {"acks": 1, "timeout_ms": 1000, "topic_data": []})
    request = Request("conn", "PLAINTEXT", ("127.0.0.1", 1), frame, start_ns)
    request.metric_names = ("Produce",)
    return request


def _exported(metrics: RequestChannelMetrics) -> str:
    registry = CollectorRegistry()
    registry.register(metrics)
    return generate_latest(registry).decode()


def _sum(text: str, name: str) -> float:
    match = re.search(rf'^kafka_network_RequestMetrics_{name}_sum\{{request="Produce"\}} (\S+)$', text, re.M)
    assert match, name
    return float(match.group(1))


def test_each_stage_of_a_requests_life_goes_to_its_histogram():
    request = _request(100 * MS)
    request.dequeue_time_ns = 101 * MS            # 1 ms queued
    request.api_local_complete_time_ns = 104 * MS  # 3 ms local
    request.response_complete_time_ns = 114 * MS   # 10 ms remote
    request.response_dequeue_time_ns = 116 * MS    # 2 ms behind earlier answers
    request.throttle_time_ms = 7
    metrics = RequestChannelMetrics()
    metrics.update(request, 121 * MS)              # 5 ms sending
    text = _exported(metrics)
    expected = {"RequestQueueTimeMs": 1, "LocalTimeMs": 3, "RemoteTimeMs": 10, "ThrottleTimeMs": 7,
                "ResponseQueueTimeMs": 2, "ResponseSendTimeMs": 5, "TotalTimeMs": 21}
    assert set(expected) == set(TIME_HISTOGRAMS)
    for name, value in expected.items():
        assert _sum(text, name) == value, name
    assert _sum(text, "RequestBytes") == len(request.body)
    assert 'kafka_network_RequestMetrics_RequestsPerSec_total{request="Produce",version="9"} 1.0' in text


def test_a_request_that_never_waited_on_others_has_no_remote_time():
    request = _request(0)
    request.dequeue_time_ns = 1 * MS
    request.response_complete_time_ns = 4 * MS  # local until the answer: api_local_complete left unset
    metrics = RequestChannelMetrics()
    metrics.update(request, 5 * MS)
    text = _exported(metrics)
    assert _sum(text, "LocalTimeMs") == 3 and _sum(text, "RemoteTimeMs") == 0


def test_a_request_unread_by_its_handler_counts_nowhere():
    request = _request(0)
    request.metric_names = None
    metrics = RequestChannelMetrics()
    metrics.update(request, MS)
    assert "request=" not in _exported(metrics)


def test_only_the_first_wait_on_others_ends_the_local_time():
    request = _request(0)

    def handle() -> None:  # in a context of its own, as a handler's task runs
        handling(request)
        waiting_on_others()
        first = request.api_local_complete_time_ns
        assert first > 0
        waiting_on_others()
        assert request.api_local_complete_time_ns == first

    contextvars.copy_context().run(handle)
    waiting_on_others()  # outside: no request is being handled here


def test_a_task_the_handler_started_does_not_end_its_local_time():
    """Such a task inherits the handler's context (a group's write, say): its waits are its own."""
    request = _request(0)

    async def started_by_the_handler() -> None:
        waiting_on_others()

    async def handler() -> None:
        request.handler_task = asyncio.current_task()
        handling(request)
        await asyncio.get_running_loop().create_task(started_by_the_handler())
        assert request.api_local_complete_time_ns == 0
        waiting_on_others()
        assert request.api_local_complete_time_ns > 0

    asyncio.run(handler())


def test_errors_count_per_code_with_unknown_codes_as_unknown_server_error():
    metrics = RequestChannelMetrics()
    metrics.mark_errors("Fetch", {0: 3, 3: 1})
    metrics.mark_errors("Fetch", {-1: 1, 9999: 2})
    text = _exported(metrics)
    line = 'kafka_network_RequestMetrics_ErrorsPerSec_total{error="%s",request="%s"} %s'
    assert line % ("NONE", "Fetch", "3.0") in text
    assert line % ("UNKNOWN_TOPIC_OR_PARTITION", "Fetch", "1.0") in text
    assert line % ("UNKNOWN_SERVER_ERROR", "Fetch", "3.0") in text


def test_a_failure_to_record_is_logged_not_raised(caplog):
    request = _request(0)
    request.metric_names = ("Produce",)
    request.body = None  # len() fails
    RequestChannelMetrics().update(request, MS)
    assert "Recording the metrics of" in caplog.text


def test_histogram_buckets_hold_values_up_to_their_bound():
    histogram = Histogram((1, 10))
    for value in (0.5, 1, 1.5, 10, 11):
        histogram.update(value)
    assert histogram.cumulative() == [("1", 2), ("10", 4), ("+Inf", 5)]
    assert histogram.total == 24
