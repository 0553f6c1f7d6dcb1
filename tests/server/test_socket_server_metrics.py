"""The socket server's metrics count what crossed its sockets and how long its loop waited.

The SocketServer tests run on asyncio's loop and on uvloop (the `loop_kind` fixture)."""

from __future__ import annotations

import math
import re
import struct
import tempfile
import threading
import time

from prometheus_client import CollectorRegistry, generate_latest

from franz.server.request_channel import CLOSE_CONNECTION, NO_RESPONSE, FileSlice, Response
from franz.server.socket_server_metrics import LoopIdle, SelectorMetrics, SocketServerMetrics
from tests.server.test_socket_server import wait_until

ECHO, FILE, SILENT = 18, 1, 0


def test_selector_counts_follow_the_bytes_frames_and_connections(start_server, raw):
    content = b"0123456789" * 1000
    with tempfile.TemporaryFile() as file:
        file.write(content)
        file.flush()

        async def handle(request):
            if request.api_key == FILE:  # sent with sendfile where the transport allows
                return Response([struct.pack(">i", request.correlation_id), FileSlice(file, 0, len(content))])
            if request.api_key == SILENT:  # acks=0: no answer, nothing sent
                return NO_RESPONSE
            return await raw.echo_handler(request)

        server = start_server(handle, listeners="PLAINTEXT://127.0.0.1:0,OTHER://127.0.0.1:0",
                              listener_security_protocol_map="PLAINTEXT:PLAINTEXT,OTHER:PLAINTEXT")
        frames = [raw.request_frame(1, b"x" * 300, api_key=ECHO), raw.request_frame(2, api_key=FILE),
                  raw.request_frame(3, b"y" * 50, api_key=SILENT)]
        received = 0
        with server.connect() as sock, server.connect():
            for frame in frames[:2]:
                sock.sendall(frame)
                received += 4 + len(raw.recv_frame(sock))
            sock.sendall(frames[2])
            wait_until(lambda: server.read(lambda: server.server.selector_metrics["PLAINTEXT"].requests_received)
                       == 3, "the third frame")
            assert server.read(lambda: server.server.open_connections()[0]) == {"PLAINTEXT": 2}
        wait_until(lambda: server.read(lambda: server.server.selector_metrics["PLAINTEXT"].connections_closed) == 2,
                   "both closes")
        plaintext, other = server.server.selector_metrics["PLAINTEXT"], server.server.selector_metrics["OTHER"]
        assert (plaintext.connections_created, plaintext.connections_closed) == (2, 2)
        assert plaintext.bytes_received == sum(len(frame) for frame in frames)
        assert received == 4 + 304 + 4 + 4 + len(content)
        assert plaintext.bytes_sent == received
        assert (plaintext.requests_received, plaintext.answers_sent) == (3, 2)
        assert (other.network_processor, other.connections_created, other.bytes_received) == (1, 0, 0)

        registry = CollectorRegistry()
        registry.register(SocketServerMetrics(server.server))
        text = generate_latest(registry).decode()
    series = 'kafka_server_socket_server_metrics_%s{listener="%s",networkProcessor="%d"} %s'
    for line in (series % ("connection_creation_total", "PLAINTEXT", 0, "2.0"),
                 series % ("connection_close_total", "PLAINTEXT", 0, "2.0"),
                 series % ("connection_count", "PLAINTEXT", 0, "0.0"),
                 series % ("incoming_byte_total", "PLAINTEXT", 0, f"{float(plaintext.bytes_received)}"),
                 series % ("outgoing_byte_total", "PLAINTEXT", 0, f"{float(received)}"),
                 series % ("request_total", "PLAINTEXT", 0, "2.0"),
                 series % ("response_total", "PLAINTEXT", 0, "3.0"),
                 series % ("successful_authentication_total", "PLAINTEXT", 0, "2.0"),
                 series % ("successful_authentication_no_reauth_total", "PLAINTEXT", 0, "2.0"),
                 series % ("failed_authentication_total", "PLAINTEXT", 0, "0.0"),
                 series % ("successful_reauthentication_total", "PLAINTEXT", 0, "0.0"),
                 series % ("failed_reauthentication_total", "PLAINTEXT", 0, "0.0"),
                 series % ("expired_connections_killed_count", "PLAINTEXT", 0, "0.0"),
                 series % ("connection_creation_total", "OTHER", 1, "0.0")):
        assert line in text.splitlines(), line
    ratio = re.search(r"^kafka_network_SocketServer_NetworkProcessorAvgIdlePercent (\S+)$", text, re.MULTILINE)
    assert ratio and 0 <= float(ratio.group(1)) <= 1
    assert 'kafka_network_Processor_IdlePercent{networkProcessor="1"}' in text


def test_loop_idle_is_the_wall_time_its_thread_did_not_run():
    """Measured on the thread that started it, whichever thread reads it: time it spent on the
    CPU is not idle, time it slept is."""
    idle = LoopIdle()
    assert idle.idle_ns() is None and idle.idle_ratio() is None  # not started
    marks: dict[str, tuple[int, int]] = {}
    ready, go, slept, finish = threading.Event(), threading.Event(), threading.Event(), threading.Event()

    def loop_thread() -> None:
        idle.start()
        ready.set()
        go.wait(10)
        start_cpu_s = time.thread_time()
        while time.thread_time() - start_cpu_s < 0.2:  # 0.2 s of this thread's CPU
            pass
        marks["after_spin"] = idle.idle_ns()
        time.sleep(0.2)
        slept.set()
        finish.wait(10)  # alive while read: a thread's CPU clock ends with it

    thread = threading.Thread(target=loop_thread)
    thread.start()
    ready.wait(10)
    marks["before_spin"] = idle.idle_ns()  # read from this thread while the other one waits
    go.set()
    slept.wait(10)
    marks["after_sleep"] = idle.idle_ns()
    ratio = idle.idle_ratio()
    finish.set()
    thread.join(10)
    (before_ns, before_idle), (spun_ns, spun_idle) = marks["before_spin"], marks["after_spin"]
    (slept_ns, slept_idle) = marks["after_sleep"]
    assert spun_idle - before_idle <= (spun_ns - before_ns) - 190_000_000  # the spin's CPU is not idle
    assert slept_idle - spun_idle >= 190_000_000  # the sleep is
    assert ratio is not None and 0 <= ratio <= 1
    idle.stop()
    assert idle.idle_ns() is None


def test_closes_the_server_makes_count_and_a_refused_connection_counts_nowhere(start_server, raw):
    """Kafka's Selector counts every close of a connection it registered; one the acceptor
    refused (over max.connections.per.ip) it never registered. A frame counts as received even when
    its header cannot be read."""
    async def handle(request):
        if request.api_key == SILENT:
            return CLOSE_CONNECTION
        return await raw.echo_handler(request)

    server = start_server(handle, max_connections_per_ip=3, socket_request_max_bytes=1000)
    metrics = server.server.selector_metrics["PLAINTEXT"]
    unreadable, oversized, closing = server.connect(), server.connect(), server.connect()
    with unreadable, oversized, closing:
        unreadable.sendall(struct.pack(">i", 2) + b"\x00\x12")  # too short for a request header
        oversized.sendall(struct.pack(">i", 5000))  # over socket.request.max.bytes
        closing.sendall(raw.request_frame(1, api_key=SILENT))  # answered by closing
        for sock in (unreadable, oversized, closing):
            raw.assert_closed_by_server(sock)
        wait_until(lambda: server.read(lambda: metrics.connections_closed) == 3, "the three closes")
        kept = [server.connect() for _ in range(3)]
        wait_until(lambda: server.read(lambda: server.server.open_connections()[0]) == {"PLAINTEXT": 3},
                   "three open")
        with server.connect() as refused:
            raw.assert_closed_by_server(refused)
        for sock in kept:
            sock.close()
    wait_until(lambda: server.read(lambda: metrics.connections_closed) == 6, "every close")
    assert metrics.connections_created == 6  # the refused one neither made nor closed
    assert (metrics.requests_received, metrics.answers_sent, metrics.bytes_sent) == (2, 0, 0)


def test_an_answer_cut_off_midway_counts_the_bytes_that_went_and_no_answer(start_server, raw):
    with tempfile.TemporaryFile() as file:
        file.write(b"z" * 100_000)
        file.flush()

        async def handle(request):  # the region runs past the file's end: the send fails there
            return Response([struct.pack(">i", request.correlation_id), FileSlice(file, 0, 200_000)])

        server = start_server(handle)
        metrics = server.server.selector_metrics["PLAINTEXT"]
        received = 0
        with server.connect() as sock:
            sock.sendall(raw.request_frame(1, api_key=FILE))
            for _ in range(10_000):  # bounded: the server closes after 100,008 bytes
                chunk = sock.recv(65536)
                if not chunk:
                    break
                received += len(chunk)
        wait_until(lambda: server.read(lambda: metrics.connections_closed) == 1, "the close")
    assert received == 4 + 4 + 100_000
    assert (metrics.bytes_sent, metrics.answers_sent) == (received, 0)


class _ScriptedLoopIdle(LoopIdle):
    """LoopIdle over scripted (monotonic ns, busy ns) readings."""

    def __init__(self, readings: list[tuple[float, float]]) -> None:
        super().__init__()
        self.readings = [(int(now_s * 1e9), int(busy_s * 1e9)) for now_s, busy_s in readings]

    def start(self) -> None:
        self._schedstat_path = "scripted"
        super().start()

    def _read_clocks(self):
        return self.readings.pop(0) if self._schedstat_path else None


def test_the_idle_ratio_spans_the_last_window_or_everything_since_the_start():
    idle = _ScriptedLoopIdle([(0, 0), (10, 5), (12, 7), (45, 7), (46, 7.5)])
    idle.start()
    assert idle.idle_ratio() == 0.5  # since the start: 5 s idle of 10
    assert idle.idle_ratio() == 5 / 12  # no scrape 30 s old yet: still since the start
    assert idle.idle_ratio() == 1.0  # from the newest scrape at least 30 s old (12 s): idle since
    assert idle.idle_ns() == (46_000_000_000, 38_500_000_000)


def test_the_handler_pool_has_spare_what_its_busier_thread_has():
    """Between two scrapes the pool's idle time grows by the lesser of the loop's and the append
    thread's: either one saturated is a busy pool."""
    from franz.server.broker_metrics import _RequestHandlerPoolCollector
    loop_idle_s, append_idle_s = [10, 11, 19, 19], [50, 55, 57, 90]

    class Readings:
        def idle_ns(self):  # the loop's, as LoopIdle gives it
            return 0, int(loop_idle_s.pop(0) * 1e9)

    class AppendThreadReadings:
        def idle_ns(self):
            return int(append_idle_s.pop(0) * 1e9)

    class Server:
        loop_idle = Readings()

    collector = _RequestHandlerPoolCollector(Server(), AppendThreadReadings())
    totals = []
    for _ in range(4):
        families = {family.name: family.samples[0].value for family in collector.collect()}
        assert len(set(families.values())) == 1  # the pool's meter and the broker pool's
        totals.append(families["kafka_server_KafkaRequestHandlerPool_RequestHandlerAvgIdlePercent"])
    assert totals == [10, 11, 13, 13]


def test_reauthentication_latency_is_averaged_and_maxed_over_the_window_and_nan_without_one():
    """Kafka's Avg and Max of the reauthentication-latency sensor over metrics.num.samples x
    metrics.sample.window.ms (2 x 30 s); an empty window measures NaN."""
    selector = SelectorMetrics("SASL_PLAINTEXT", 0)
    assert all(math.isnan(value) for value in selector.reauthentication_latency(0))
    second = 1_000_000_000
    selector.reauthenticated(4, 10 * second)
    selector.reauthenticated(8, 40 * second)
    assert selector.reauthentication_latency(41 * second) == (6.0, 8.0)
    assert selector.reauthentication_latency(75 * second) == (8.0, 8.0)  # the first is 65 s old
    assert all(math.isnan(value) for value in selector.reauthentication_latency(100 * second))
    assert selector.successful_reauthentications == 2
