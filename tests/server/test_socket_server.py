"""SocketServer against a real listening socket on 127.0.0.1, raw sockets as clients.

Every test runs on asyncio's loop and on uvloop (the `loop_kind` fixture)."""

from __future__ import annotations

import asyncio
import contextvars
import gc
import logging
import os
import resource
import socket
import struct
import threading
import time
import tracemalloc

import pytest

from franz.common.config_def import ConfigError
from franz.server.kafka_channel import LARGE_FRAME_BYTES
from franz.server.replica_manager import FileRegion
from franz.server.request_channel import CLOSE_CONNECTION, NO_RESPONSE, FileSlice, Response
from franz.server.socket_server import READ_BUFFER_SIZE_BYTES

PRODUCE, API_VERSIONS = 0, 18

LOGGER = "franz.server.socket_server"


def wait_until(predicate, what: str, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


def open_socket_count() -> int:
    """Socket descriptors of this process (the server's live here too)."""
    count = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{name}").startswith("socket:")
        except OSError:  # closed while listing
            pass
    return count


def log_lines(caplog, level=logging.INFO) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == LOGGER and r.levelno >= level and not r.getMessage().startswith("Listening on")]


async def noting_cancellation(awaitable, outcome: list[str]) -> None:
    """Await `awaitable`, noting in `outcome` a cancellation that reaches it."""
    try:
        await awaitable
    except asyncio.CancelledError:
        outcome.append("cancelled")
        raise


def test_port_zero_binds_a_free_port_and_exposes_it(start_server, raw):
    server = start_server(raw.echo_handler)
    assert server.port > 0
    assert server.server.bound_endpoints[0].port == server.port
    with server.connect() as sock:
        sock.sendall(raw.request_frame(7, b"hello"))
        assert raw.recv_frame(sock) == struct.pack(">i", 7) + b"hello"


def test_accepted_sockets_are_configured_as_kafka_configures_them(start_server, raw):
    """Kafka's Acceptor.configureAcceptedSocketChannel: TCP_NODELAY, SO_KEEPALIVE, and the send
    buffer of socket.send.buffer.bytes (the kernel reports twice what was set)."""
    server = start_server(raw.echo_handler, socket_send_buffer_bytes=65536)
    with server.connect() as sock:
        sock.sendall(raw.request_frame(1))
        raw.recv_frame(sock)

        def options():
            (conn,) = server.server._connections
            accepted = conn._transport.get_extra_info("socket")
            return (accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY),
                    accepted.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),
                    accepted.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF))
        assert server.read(options) == (1, 1, 2 * 65536)


def test_request_carries_header_fields_connection_and_listener(start_server, raw):
    seen = []

    async def handle(request):
        seen.append(request)
        return NO_RESPONSE

    server = start_server(handle)
    with server.connect() as sock:
        sock.sendall(raw.request_frame(42, b"body!", api_key=3, api_version=12, client_id=b"cli"))
        sock.sendall(raw.request_frame(43, b"", client_id=None))
        wait_until(lambda: len(seen) == 2, "two requests")
        local_port = sock.getsockname()[1]
    first, second = seen
    assert (first.api_key, first.api_version, first.correlation_id, first.client_id) == (3, 12, 42, "cli")
    assert bytes(first.body) == b"body!"
    assert first.listener_name == "PLAINTEXT"
    assert first.client_address == ("127.0.0.1", local_port)
    assert first.connection_id.startswith(f"127.0.0.1:{server.port}-127.0.0.1:{local_port}-")
    assert second.client_id is None and bytes(second.body) == b""
    assert second.receive_time_ns >= first.receive_time_ns


def test_garbage_frame_whose_handler_raises_closes_only_that_connection(start_server, raw, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)

    async def handle(request):
        if request.api_key != 18:
            raise ValueError("cannot decode this request")
        return await raw.echo_handler(request)

    server = start_server(handle)
    with server.connect() as bad, server.connect() as good:
        garbage = bytes([0x7A, 0x11, 0, 1, 0, 0, 0, 9, 0, 0]) + os.urandom(200)
        bad.sendall(struct.pack(">i", len(garbage)) + garbage)
        raw.assert_closed_by_server(bad)
        good.sendall(raw.request_frame(1, b"still here"))
        assert raw.recv_frame(good) == struct.pack(">i", 1) + b"still here"
    lines = log_lines(caplog, logging.WARNING)
    assert len(lines) == 1 and "handler failed" in lines[0] and "cannot decode" in lines[0]


def test_frame_too_short_for_a_header_closes_the_connection(start_server, raw):
    server = start_server(raw.echo_handler)
    with server.connect() as sock:
        sock.sendall(struct.pack(">i", 3) + b"abc")
        raw.assert_closed_by_server(sock)


@pytest.mark.parametrize("size, message", [
    (0x7FFFFFFF, "Invalid receive (size = 2147483647 larger than 104857600)"),
    (-(2**31), "Invalid receive (size = -2147483648)"),
    (-1, "Invalid receive (size = -1)"),
])
def test_bad_size_prefix_closes_that_connection_cleanly(start_server, raw, caplog, size, message):
    caplog.set_level(logging.INFO, logger=LOGGER)
    server = start_server(raw.echo_handler)
    with server.connect() as bad, server.connect() as good:
        bad.sendall(struct.pack(">i", size) + b"x" * 100)
        raw.assert_closed_by_server(bad)
        good.sendall(raw.request_frame(5, b"ok"))
        assert raw.recv_frame(good) == struct.pack(">i", 5) + b"ok"
    lines = log_lines(caplog)
    assert len(lines) == 1 and message in lines[0]


def test_size_is_checked_before_the_body_arrives(start_server, raw):
    server = start_server(raw.echo_handler, socket_request_max_bytes=1000)
    with server.connect() as sock:
        sock.sendall(struct.pack(">i", 1001))  # no body at all: refused on the prefix alone
        raw.assert_closed_by_server(sock)


def test_truncated_frame_then_eof_closes_quietly(start_server, raw, caplog):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    server = start_server(raw.echo_handler)
    sock = server.connect()
    sock.sendall(raw.request_frame(1, b"x" * 100)[:60])
    wait_until(lambda: server.read(lambda: server.server.connection_count) == 1, "the connection")
    sock.close()
    wait_until(lambda: server.read(lambda: server.server.connection_count) == 0, "the close")
    assert log_lines(caplog) == []


def test_half_closed_client_still_gets_its_answers(start_server, raw):
    server = start_server(raw.echo_handler)
    with server.connect() as sock:
        sock.sendall(raw.request_frame(1, b"a") + raw.request_frame(2, b"b") + b"\x00\x00")
        sock.shutdown(socket.SHUT_WR)
        assert raw.recv_frame(sock) == struct.pack(">i", 1) + b"a"
        assert raw.recv_frame(sock) == struct.pack(">i", 2) + b"b"
        raw.assert_closed_by_server(sock)


def test_half_closed_client_with_requests_held_by_backpressure_gets_every_answer(start_server, raw):
    handle = raw.GatedEcho()
    server = start_server(handle, queued_max_requests=1)
    with server.connect() as sock:
        sock.sendall(b"".join(raw.request_frame(i, b"q%d" % i) for i in range(5)) + b"\x00\x00\x00")
        sock.shutdown(socket.SHUT_WR)
        wait_until(lambda: server.read(lambda: server.server.outstanding_requests) == 1, "the first request")
        time.sleep(0.05)  # the EOF arrives while four frames wait for a slot
        server.read(handle.gate.set)
        for i in range(5):
            assert raw.recv_frame(sock) == struct.pack(">i", i) + b"q%d" % i
        raw.assert_closed_by_server(sock)



def test_half_closed_client_whose_answers_back_up_gets_every_answer(start_server, raw):
    """Answers over the transport's high mark hold the requests behind them (_must_wait); once
    the client reads, those are taken up after its EOF and none is dropped with the close."""
    answer_bytes = 1536 * 1024
    count = 6

    async def handle(request):
        return Response([struct.pack(">i", request.correlation_id), bytes(answer_bytes)])

    server = start_server(handle)
    with server.connect() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
        sock.sendall(b"".join(raw.request_frame(i) for i in range(count)) + b"\x00\x00")
        sock.shutdown(socket.SHUT_WR)
        time.sleep(0.1)  # the EOF arrives while the frames behind the first answers wait unread
        for i in range(count):
            frame = raw.recv_frame(sock)
            assert (struct.unpack_from(">i", frame)[0], len(frame)) == (i, 4 + answer_bytes)
        raw.assert_closed_by_server(sock)

def test_a_request_that_waits_gives_its_queue_slot_back_unless_it_is_a_produce(start_server, raw):
    """Kafka's queue (queued.max.requests) holds a request until a handler thread takes it; a Fetch
    parked in the purgatory, or any request whose handler waits, has left it. A Produce waiting for
    its append keeps its slot (Kafka's handler thread appends). With a queue of 2, three clients
    each with a waiting request do not stop a fourth from being served."""
    handle = raw.GatedEcho()
    server = start_server(handle, queued_max_requests=2)
    waiting = [server.connect() for _ in range(3)]
    try:
        for index, sock in enumerate(waiting):
            sock.sendall(raw.request_frame(index, b"w"))
        wait_until(lambda: server.read(lambda: len(handle.started)) == 3, "three waiting handlers")
        assert server.read(lambda: (server.server.queued_requests, server.server.outstanding_requests)) == (0, 3)
        with server.connect() as producer:
            producer.sendall(raw.request_frame(7, b"p", api_key=PRODUCE, api_version=3))
            wait_until(lambda: server.read(lambda: server.server.queued_requests) == 1, "the produce's slot")
            with server.connect() as fresh:
                fresh.sendall(raw.request_frame(100, b"f", api_key=API_VERSIONS))
                wait_until(lambda: server.read(lambda: 100 in handle.started), "the fourth client's request")
            server.read(handle.gate.set)
            assert raw.recv_frame(producer) == struct.pack(">i", 7) + b"p"
        for index, sock in enumerate(waiting):
            assert raw.recv_frame(sock) == struct.pack(">i", index) + b"w"
    finally:
        for sock in waiting:
            sock.close()
    wait_until(lambda: server.read(lambda: server.server.outstanding_requests) == 0, "every answer")


def test_a_pipelined_request_starts_once_the_handler_before_it_finished(start_server, raw):
    """Kafka reads a connection's next request only once the last is answered, so that a request
    sees every effect of those before it: one connection's handlers run one at a time, in arrival
    order, while another connection's run beside them."""
    count = 5
    started: list[int] = []
    gates: dict[int, asyncio.Event] = {}

    async def handle(request):
        started.append(request.correlation_id)
        await gates.setdefault(request.correlation_id, asyncio.Event()).wait()
        return await raw.echo_handler(request)

    def pipelined_started() -> list[int]:
        return server.read(lambda: [correlation_id for correlation_id in started if correlation_id < count])

    server = start_server(handle)
    with server.connect() as sock, server.connect() as other:
        sock.sendall(b"".join(raw.request_frame(i, b"r%d" % i) for i in range(count)))
        other.sendall(raw.request_frame(100, b"other"))
        wait_until(lambda: server.read(lambda: 100 in started), "the other connection's handler")
        for i in range(count):
            wait_until(lambda i=i: pipelined_started() == list(range(i + 1)), f"handler {i}")
            time.sleep(0.05)  # the one after it would have started by now
            assert pipelined_started() == list(range(i + 1))
            server.read(lambda i=i: gates.setdefault(i, asyncio.Event()).set())
            assert raw.recv_frame(sock) == struct.pack(">i", i) + b"r%d" % i
        server.read(lambda: gates[100].set())
        assert raw.recv_frame(other) == struct.pack(">i", 100) + b"other"


def test_an_invalid_header_behind_a_running_produce_closes_after_its_answer(start_server, raw, caplog):
    """A Produce behind Produces is dispatched at once; when its header turns out unreadable, the
    answer of the Produce still appending goes out first, then the close, as Kafka reads that frame
    only once the answer before it is sent (closing at once lost an acknowledgement)."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    handle = raw.GatedEcho()
    server = start_server(handle)
    cut_short = struct.pack(">hhi", PRODUCE, 3, 2) + struct.pack(">h", 5000)  # its client id runs past it
    with server.connect() as sock:
        sock.sendall(raw.request_frame(1, b"appending", api_key=PRODUCE, api_version=3)
                     + struct.pack(">i", len(cut_short)) + cut_short + raw.request_frame(3, b"never"))
        wait_until(lambda: any("invalid request header" in line for line in log_lines(caplog)), "the bad header")
        server.read(handle.gate.set)
        assert raw.recv_frame(sock) == struct.pack(">i", 1) + b"appending"
        raw.assert_closed_by_server(sock)
    assert server.read(lambda: list(handle.started)) == [1]


def test_handler_that_never_waits_runs_without_a_task_and_is_answered(start_server, raw):
    tasks = []

    async def handle(request):
        tasks.append(asyncio.current_task())
        return await raw.echo_handler(request)

    server = start_server(handle)
    with server.connect() as sock:
        sock.sendall(b"".join(raw.request_frame(i, b"e%d" % i) for i in range(3)))
        for i in range(3):
            assert raw.recv_frame(sock) == struct.pack(">i", i) + b"e%d" % i
    assert server.read(lambda: list(tasks)) == [None, None, None]


PRODUCES_THEN_ANOTHER = {  # case: (the requests' API keys, the correlation ids whose handlers wait for the gate)
    "every produce waits": ([PRODUCE, PRODUCE, API_VERSIONS, PRODUCE], {0, 1, 3}),
    # the second Produce answered at once (an error answer, say) while the first still appends
    "only the first waits": ([PRODUCE, PRODUCE, API_VERSIONS], {0}),
}


@pytest.mark.parametrize("case", list(PRODUCES_THEN_ANOTHER))
def test_a_produce_behind_a_produce_starts_at_once_and_any_other_request_waits(start_server, raw, case):
    """Appends keep arrival order on their own (ReplicaManager: on the loop, or behind any pending
    one on the append thread), so a Produce need not wait for the Produces before it; any other
    request waits for every handler still running before it, not only the last."""
    keys, gated = PRODUCES_THEN_ANOTHER[case]
    gate = asyncio.Event()
    started: list[int] = []

    async def handle(request):
        started.append(request.correlation_id)
        if request.correlation_id in gated:
            await gate.wait()
        return await raw.echo_handler(request)

    server = start_server(handle)
    with server.connect() as sock:
        sock.sendall(b"".join(raw.request_frame(i, b"k%d" % i, api_key=key, api_version=3)
                              for i, key in enumerate(keys)))
        wait_until(lambda: server.read(lambda: list(started)) == [0, 1], "both produces")
        time.sleep(0.05)  # the ApiVersions would have started by now
        assert server.read(lambda: list(started)) == [0, 1]
        server.read(gate.set)
        for i in range(len(keys)):
            assert raw.recv_frame(sock) == struct.pack(">i", i) + b"k%d" % i
        assert server.read(lambda: list(started)) == list(range(len(keys)))


def test_requests_behind_one_that_waits_are_read_once_it_finishes(start_server, raw):
    gate_holder: list[asyncio.Event] = []

    async def handle(request):
        if request.correlation_id == 0:
            gate = asyncio.Event()
            gate_holder.append(gate)
            await gate.wait()
        return await raw.echo_handler(request)

    server = start_server(handle)
    with server.connect() as sock:
        sock.sendall(b"".join(raw.request_frame(i, b"m%d" % i) for i in range(4)))
        wait_until(lambda: server.read(lambda: len(gate_holder)) == 1, "the first handler")
        sock.settimeout(0.2)
        with pytest.raises(TimeoutError):
            sock.recv(1)  # 1-3, which would finish at once, are not even started
        sock.settimeout(raw.WAIT_S)
        assert server.read(lambda: server.server.outstanding_requests) == 1
        server.read(lambda: gate_holder[0].set())
        for i in range(4):
            assert raw.recv_frame(sock) == struct.pack(">i", i) + b"m%d" % i


UNREAD_ANSWER_BYTES = 8 * 1024 * 1024  # far more than the socket buffers of both ends hold


@pytest.mark.parametrize("answer", ["file region", "bytes"])
def test_a_client_that_reads_no_answers_holds_no_queue_slot_with_its_next_requests(
        start_server, raw, tmp_path, answer):
    """Kafka reads a connection's next request only once the answer to the last is sent. A client
    that pipelines requests and reads none of the answers must not fill queued.max.requests with
    answers that cannot go out, stalling every other connection: its next request waits unread
    while an answer's file region is being sent or the transport's buffer is over its high mark, and
    the answer waiting for it holds no slot either (Kafka's Processor sends it outside the queue)."""
    queued_max = 1
    path = tmp_path / "big.log"
    with open(path, "wb") as out:
        out.truncate(UNREAD_ANSWER_BYTES)  # sparse: zeros
    file = open(path, "rb")
    started: list[int] = []

    async def handle(request):
        started.append(request.correlation_id)
        if request.correlation_id >= 100:
            return await raw.echo_handler(request)
        if answer == "file region":
            if request.correlation_id == 0:
                return Response([struct.pack(">i", 0), FileSlice(file, 0, UNREAD_ANSWER_BYTES)])
            return await raw.echo_handler(request)
        return Response([struct.pack(">i", request.correlation_id), bytes(UNREAD_ANSWER_BYTES // 4)])

    server = start_server(handle, queued_max_requests=queued_max)
    count = 3 * queued_max
    try:
        with server.connect() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
            sock.sendall(b"".join(raw.request_frame(i, b"u%d" % i) for i in range(count)))
            time.sleep(0.2)  # the server reads on as far as it will
            stalled_at = server.read(lambda: len(started))
            assert stalled_at < count, "every request was started, its answers piling up"
            with server.connect() as other:
                other.sendall(raw.request_frame(100, b"other"))
                assert raw.recv_frame(other) == struct.pack(">i", 100) + b"other"
            assert server.read(lambda: (server.server.queued_requests, server.server.outstanding_requests <= 1)) == (
                0, True)
            for i in range(count):  # nothing was lost: every answer, in order
                frame = raw.recv_frame(sock)
                assert struct.unpack_from(">i", frame)[0] == i
                if answer == "bytes" or i == 0:
                    assert len(frame) == 4 + (UNREAD_ANSWER_BYTES if answer == "file region" else
                                              UNREAD_ANSWER_BYTES // 4)
                else:
                    assert frame[4:] == b"u%d" % i
    finally:
        file.close()
    assert server.read(lambda: server.server.outstanding_requests) == 0


def test_handler_that_waits_goes_on_in_a_task_in_the_context_its_first_step_set(start_server, raw):
    variable: contextvars.ContextVar[str] = contextvars.ContextVar("variable", default="unset")
    seen = []

    async def handle(request):
        token = variable.set(f"request {request.correlation_id}")
        seen.append(("first step", asyncio.current_task()))
        await asyncio.sleep(0.01)
        seen.append((variable.get(), asyncio.current_task() is not None))
        variable.reset(token)  # a ValueError if the task ran in another context
        return await raw.echo_handler(request)

    server = start_server(handle)
    with server.connect() as sock:
        sock.sendall(raw.request_frame(5, b"ctx"))
        assert raw.recv_frame(sock) == struct.pack(">i", 5) + b"ctx"
    assert server.read(lambda: list(seen)) == [("first step", None), ("request 5", True)]
    assert server.read(variable.get) == "unset"  # the loop's own context is untouched


def test_handler_task_cancelled_before_its_first_step_gets_the_cancellation(start_server, raw):
    outcome = []

    def cancel_every_handler_task(server):
        for conn in server.server._connections:
            for task, _request in conn._inflight:
                task.cancel()

    async def handle(request):
        # Queued before the task that goes on with this handler takes its first step.
        asyncio.get_running_loop().call_soon(cancel_every_handler_task, server)
        await noting_cancellation(asyncio.sleep(30), outcome)

    server = start_server(handle)
    with server.connect() as sock:
        sock.sendall(raw.request_frame(1))
        wait_until(lambda: server.read(lambda: list(outcome)) == ["cancelled"], "the handler to be cancelled")
        raw.assert_closed_by_server(sock)  # a cancelled handler closes its connection


def test_no_response_and_close_connection_markers(start_server, raw):
    async def handle(request):
        if request.correlation_id == 1:
            return NO_RESPONSE
        if request.correlation_id == 3:
            return CLOSE_CONNECTION
        return await raw.echo_handler(request)

    server = start_server(handle)
    with server.connect() as sock:
        sock.sendall(b"".join(raw.request_frame(i, b"p") for i in range(1, 5)))
        assert raw.recv_frame(sock) == struct.pack(">i", 2) + b"p"
        raw.assert_closed_by_server(sock)  # the answer to 4 never comes


def test_handler_returning_something_else_closes_the_connection(start_server, raw):
    async def handle(request):
        return b"not a Response"

    server = start_server(handle)
    with server.connect() as sock:
        sock.sendall(raw.request_frame(1))
        raw.assert_closed_by_server(sock)


def test_large_frame_arriving_in_pieces_is_reassembled(start_server, raw):
    server = start_server(raw.echo_handler)
    payload = os.urandom(3 * 1024 * 1024 + 17)
    frames = raw.request_frame(1, b"small") + raw.request_frame(2, payload) + raw.request_frame(3, b"tail")
    with server.connect() as sock:
        for start in range(0, len(frames), 99_991):  # odd-sized pieces split frames and prefixes
            sock.sendall(frames[start:start + 99_991])
        assert raw.recv_frame(sock) == struct.pack(">i", 1) + b"small"
        assert raw.recv_frame(sock) == struct.pack(">i", 2) + payload
        assert raw.recv_frame(sock) == struct.pack(">i", 3) + b"tail"


def test_a_frame_begun_in_a_shared_read_is_copied_into_its_buffer_once(start_server, raw):
    """The head of a large frame, read together with the frame before it, goes straight into
    the large frame's buffer: a temporary copy of it would double the copying of every such
    frame (bytearray slice assignment from a memoryview makes one)."""
    async def body_size(request):
        return Response([struct.pack(">ii", request.correlation_id, len(request.body))])

    server = start_server(body_size)
    big = raw.request_frame(2, bytes(2 * 1024 * 1024))
    head_size = 48 * 1024  # well inside a fresh connection's receive window
    first_read, rest = raw.request_frame(1, b"small") + big[:head_size], big[head_size:]
    loop_held, release = threading.Event(), threading.Event()

    def hold_the_loop() -> None:
        loop_held.set()
        release.wait(raw.WAIT_S)

    with server.connect() as sock:
        server.call_soon(hold_the_loop)
        assert loop_held.wait(raw.WAIT_S)
        tracemalloc.start()
        try:
            sock.sendall(first_read)  # all of it waits in the socket for the server's next read
            release.set()
            assert raw.recv_frame(sock)[:4] == struct.pack(">i", 1)
            sock.sendall(rest)
            assert raw.recv_frame(sock)[:4] == struct.pack(">i", 2)
            peak_bytes = tracemalloc.get_traced_memory()[1]
        finally:
            release.set()
            tracemalloc.stop()
    assert len(big) < peak_bytes < len(big) + head_size // 3, peak_bytes


def test_after_a_large_frame_the_next_size_prefix_is_read_alone(start_server, raw):
    """Producers send large frames back to back: after one, the next frame's size is read
    alone so that its body goes straight into its own buffer, not partly into the shared
    one to be copied; after a small frame, reads take whatever the shared buffer holds."""
    async def body_size(request):
        return Response([struct.pack(">ii", request.correlation_id, len(request.body))])

    server = start_server(body_size)

    def next_read_size() -> int:
        [channel] = server.server._connections
        return len(channel.get_buffer(-1))

    large = raw.request_frame(2, bytes(LARGE_FRAME_BYTES))
    with server.connect() as sock:
        sock.sendall(raw.request_frame(1, b"small"))
        assert raw.recv_frame(sock)[:4] == struct.pack(">i", 1)
        assert server.read(next_read_size) == READ_BUFFER_SIZE_BYTES
        sock.sendall(large)
        assert raw.recv_frame(sock)[:4] == struct.pack(">i", 2)
        assert server.read(next_read_size) == 4
        # Frames still arrive whole whatever the reads: a large one, two bytes of the next
        # prefix, the rest of it with two small frames behind.
        stream = large + raw.request_frame(3, bytes(LARGE_FRAME_BYTES * 3)) + raw.request_frame(
            4, b"x") + raw.request_frame(5, b"y")
        cut = len(large) + 2
        sock.sendall(stream[:cut])
        assert raw.recv_frame(sock)[:4] == struct.pack(">i", 2)
        sock.sendall(stream[cut:])
        for correlation_id in (3, 4, 5):
            assert raw.recv_frame(sock)[:4] == struct.pack(">i", correlation_id)
        assert server.read(next_read_size) == READ_BUFFER_SIZE_BYTES


def test_size_prefix_split_across_reads(start_server, raw):
    server = start_server(raw.echo_handler)
    frame = raw.request_frame(9, b"split")
    with server.connect() as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for byte in frame[:6]:
            sock.sendall(bytes([byte]))
            time.sleep(0.002)  # let each byte arrive as its own read
        sock.sendall(frame[6:])
        assert raw.recv_frame(sock) == struct.pack(">i", 9) + b"split"


def test_backpressure_stops_reading_at_queued_max_requests_then_drains(start_server, raw):
    """Produces that wait (for the append thread, say) keep their queue slots until answered;
    with queued.max.requests of them outstanding, nothing more is read from any connection."""
    queued_max = 4
    handle = raw.GatedEcho()
    server = start_server(handle, queued_max_requests=queued_max)
    payload = b"x" * 65536
    frame_count = 1024  # 64 MiB: far more than socket buffers hold
    holders = [server.connect() for _ in range(queued_max)]
    try:
        for index, holder in enumerate(holders):
            holder.sendall(raw.request_frame(10_000 + index, b"held", api_key=PRODUCE, api_version=3))
        wait_until(lambda: server.read(lambda: server.server.outstanding_requests) == queued_max, "a full queue")
        with server.connect() as first:
            first.setblocking(False)
            blob = memoryview(b"".join(raw.request_frame(i, payload, api_key=PRODUCE, api_version=3)
                                       for i in range(frame_count)))
            sent = 0
            stalls = 0
            while sent < len(blob) and stalls < 50:  # the server stops reading, so the sends stall
                try:
                    sent += first.send(blob[sent:sent + 1 << 20])
                    stalls = 0
                except BlockingIOError:
                    stalls += 1
                    time.sleep(0.01)
            assert sent < len(blob), "the server kept reading past queued.max.requests"
            assert server.read(lambda: len(handle.started)) == queued_max
            assert server.read(lambda: server.server.outstanding_requests) == queued_max
            server.read(handle.gate.set)
            first.setblocking(True)
            received = []

            def read_all():
                for _ in range(frame_count):
                    received.append(raw.recv_frame(first))
            reader = threading.Thread(target=read_all)
            reader.start()
            first.sendall(blob[sent:])
            reader.join(60)
            assert len(received) == frame_count
            assert [struct.unpack_from(">i", r)[0] for r in received] == list(range(frame_count))
        for index, holder in enumerate(holders):
            assert raw.recv_frame(holder) == struct.pack(">i", 10_000 + index) + b"held"
    finally:
        for holder in holders:
            holder.close()
    assert server.read(lambda: server.server.outstanding_requests) == 0


def test_idle_connection_is_reaped(start_server, raw):
    # Kafka requires connection.failed.authentication.delay.ms (100) below connections.max.idle.ms
    server = start_server(raw.echo_handler, connections_max_idle_ms=100,
                          **{"connection.failed.authentication.delay.ms": 0})
    with server.connect() as sock:
        sock.sendall(raw.request_frame(1, b"once"))
        assert raw.recv_frame(sock) == struct.pack(">i", 1) + b"once"
        raw.assert_closed_by_server(sock)
    wait_until(lambda: server.read(lambda: server.server.connection_count) == 0, "the reaper")


def test_connection_with_a_request_in_flight_is_not_idle(start_server, raw):
    handle = raw.GatedEcho()
    server = start_server(handle, connections_max_idle_ms=50, **{"connection.failed.authentication.delay.ms": 0})
    with server.connect() as sock:
        sock.sendall(raw.request_frame(1, b"slow"))
        time.sleep(0.4)  # many idle periods pass while the handler waits
        server.read(handle.gate.set)
        assert raw.recv_frame(sock) == struct.pack(">i", 1) + b"slow"



def _big_answer_handler(kind: str, file, size: int):
    """Answers every request with `size` bytes: a file region of `file`, or bytes in memory."""
    async def handle(request):
        body = FileSlice(file, 0, size) if kind == "file region" else bytes(size)
        return Response([struct.pack(">i", request.correlation_id), body])
    return handle


@pytest.mark.parametrize("answer", ["file region", "bytes"])
def test_a_connection_whose_answer_goes_unread_is_closed_after_the_idle_time(
        start_server, raw, tmp_path, caplog, answer):
    """Kafka's idle expiry closes a connection with no I/O for connections.max.idle.ms, an answer
    stuck unsent included. A graceful close would wait forever for the client to read it, so the
    connection is aborted, and its socket (with the duplicate sendfile watches) released."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    path = tmp_path / "big.log"
    with open(path, "wb") as out:
        out.truncate(UNREAD_ANSWER_BYTES)
    file = open(path, "rb")
    server = start_server(_big_answer_handler(answer, file, UNREAD_ANSWER_BYTES), connections_max_idle_ms=200)
    sockets_before = open_socket_count()
    try:
        with server.connect() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
            sock.sendall(raw.request_frame(1))
            wait_until(lambda: server.read(lambda: server.server.selector_metrics["PLAINTEXT"].requests_received) == 1,
                       "the request")
            wait_until(lambda: server.read(lambda: server.server.connection_count) == 0, "the reaper")
            assert any("took none of its answers for more than 200 ms" in line for line in log_lines(caplog))
            with pytest.raises((EOFError, ConnectionResetError)):
                raw.recv_frame(sock)  # what the buffers held, then the close
    finally:
        file.close()
    wait_until(lambda: open_socket_count() <= sockets_before, "socket descriptors to be released")


@pytest.mark.parametrize("answer", ["file region", "bytes"])
def test_a_client_reading_its_answer_slowly_is_not_idle(start_server, raw, tmp_path, answer):
    answer_bytes = 4 * 1024 * 1024  # read 16 KiB every 10 ms: about 2.6 s, over two idle times
    path = tmp_path / "big.log"
    with open(path, "wb") as out:
        out.truncate(answer_bytes)
    file = open(path, "rb")
    server = start_server(_big_answer_handler(answer, file, answer_bytes), connections_max_idle_ms=1000)
    try:
        with server.connect() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
            sock.sendall(raw.request_frame(1))
            received = 0
            while received < 8 + answer_bytes:  # the size, the correlation id and the answer
                chunk = sock.recv(min(16 * 1024, 8 + answer_bytes - received))
                assert chunk, f"closed after {received} bytes"
                received += len(chunk)
                time.sleep(0.01)
            sock.sendall(raw.request_frame(2))  # still open, and answering
            assert len(raw.recv_frame(sock)) == 4 + answer_bytes
    finally:
        file.close()

def test_connections_over_max_connections_wait_unread_until_one_closes(start_server, raw, caplog):
    """Kafka's Acceptor waits in ConnectionQuotas.inc while the broker has max.connections, the new
    socket accepted, and accepts no other meanwhile (the kernel's backlog holds them): a client over
    the limit is answered once a connection closes, in arrival order. Past the backlog's size the
    kernel would refuse more; franz closes those."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    server = start_server(raw.echo_handler, max_connections=3, socket_listen_backlog_size=2)
    held = [server.connect() for _ in range(3)]
    waiting = []
    try:
        for i, sock in enumerate(held):
            sock.sendall(raw.request_frame(i))
            raw.recv_frame(sock)
        for i in range(2):
            waiting.append(server.connect())
            waiting[-1].sendall(raw.request_frame(10 + i))
        with server.connect() as over_the_backlog:
            raw.assert_closed_by_server(over_the_backlog)
        lines = log_lines(caplog)
        assert len(lines) == 1 and "2 connections wait already" in lines[0]
        assert "max.connections (listener 3, broker 3)" in lines[0]
        for sock in waiting:
            sock.settimeout(0.2)
            with pytest.raises(TimeoutError):
                sock.recv(1)  # not read, not answered
            sock.settimeout(raw.WAIT_S)
        assert server.read(lambda: server.server.connection_count) == 3
        for i, sock in enumerate(waiting):
            held.pop().close()
            assert raw.recv_frame(sock) == struct.pack(">i", 10 + i)
            assert server.read(lambda: server.server.connection_count) == 3
    finally:
        for sock in held + waiting:
            sock.close()
    wait_until(lambda: server.read(lambda: server.server.connection_count) == 0, "every close")


def test_a_connection_over_the_broker_connection_rate_waits_its_throttle_time_then_is_served(start_server, raw):
    """max.connection.creation.rate: Kafka's Acceptor counts the connection, then waits the throttle
    time before taking it (and any after it) up. Two one-second samples and a quota of 1: the second
    connection's rate is 2, a throttle of (2 - 1) / 1 * 1000 ms."""
    server = start_server(raw.echo_handler, max_connection_creation_rate=1, quota_window_num=2)
    with server.connect() as first, server.connect() as second, server.connect() as third:
        first.sendall(raw.request_frame(1))
        assert raw.recv_frame(first) == struct.pack(">i", 1)
        second.sendall(raw.request_frame(2))
        third.sendall(raw.request_frame(3))
        wait_until(lambda: server.read(lambda: server.server.connections_awaiting_slot) == 2, "the wait")
        assert server.read(lambda: server.server.connection_count) == 1
        assert raw.recv_frame(second) == struct.pack(">i", 2)  # after its throttle time
        assert raw.recv_frame(third) == struct.pack(">i", 3)  # after its own, behind it
        assert server.read(lambda: server.server.connection_count) == 3


def test_a_connection_over_its_ips_rate_quota_is_closed_unread_after_its_throttle_time(start_server, raw):
    """KIP-612's IP quota (connection_creation_rate): the connection is not counted, and Kafka's
    Acceptor closes it, unread, once its throttle time has passed (DelayedCloseSocket)."""
    server = start_server(raw.echo_handler, quota_window_num=2)
    quotas = {frozenset({("ip", "127.0.0.1")}): {"connection_creation_rate": 1.0}}
    server.read(lambda: server.server.connection_quotas.update_quotas(quotas))
    with server.connect() as allowed, server.connect() as throttled:
        throttled.sendall(raw.request_frame(2))
        throttled.settimeout(raw.WAIT_S)
        try:
            assert throttled.recv(65536) == b""  # closed, and never answered
        except ConnectionResetError:  # closed with its request unread
            pass
        allowed.sendall(raw.request_frame(1))
        assert raw.recv_frame(allowed) == struct.pack(">i", 1)
        assert server.read(lambda: server.server.connection_count) == 1
        assert server.read(lambda: server.server.selector_metrics["PLAINTEXT"].requests_received) == 1


TWO_LISTENERS = {"listeners": "PLAINTEXT://127.0.0.1:0,EXTERNAL://127.0.0.1:0",
                 "listener_security_protocol_map": "PLAINTEXT:PLAINTEXT,EXTERNAL:PLAINTEXT"}


def _connect_to(server, listener: str) -> socket.socket:
    return socket.create_connection(("127.0.0.1", server.server.bound_port(listener)), timeout=10)


def _served_then_waiting(server, raw, first: socket.socket, second: socket.socket) -> None:
    """The first connection answered; the second's request sent, the connection left waiting."""
    first.sendall(raw.request_frame(1))
    assert raw.recv_frame(first) == struct.pack(">i", 1)
    second.sendall(raw.request_frame(2))
    wait_until(lambda: server.read(lambda: server.server.connections_awaiting_slot) == 1, "the wait")


def test_a_listener_over_its_own_max_connections_holds_up_only_its_own_connections(start_server, raw):
    """listener.name.<listener>.max.connections (ListenerConnectionQuota): each of Kafka's
    listeners has its own Acceptor, so a connection waiting for its listener's slot holds up no
    other listener; it is taken up once one of its listener's connections closes."""
    server = start_server(raw.echo_handler, **TWO_LISTENERS, listener_name_external_max_connections=1)
    with _connect_to(server, "EXTERNAL") as held, _connect_to(server, "EXTERNAL") as waiting:
        _served_then_waiting(server, raw, held, waiting)
        with server.connect() as other_listener:
            other_listener.sendall(raw.request_frame(3))
            assert raw.recv_frame(other_listener) == struct.pack(">i", 3)
        held.close()
        assert raw.recv_frame(waiting) == struct.pack(">i", 2)


def test_the_inter_broker_listener_is_spared_the_broker_wide_limit_and_rate(start_server, raw):
    """ConnectionQuotas.protectedListener: beside other listeners, the inter-broker one (here
    PLAINTEXT, security.inter.broker.protocol's) takes connections past max.connections and
    max.connection.creation.rate, so that the cluster's own connections get through, within
    its own limits (which default to the broker-wide values: here set above them). The broker
    then has more than max.connections, so the other listener's connection is closed
    (Processor.closeExcessConnections)."""
    server = start_server(raw.echo_handler, **TWO_LISTENERS, max_connections=1, max_connection_creation_rate=1,
                          quota_window_num=2, listener_name_plaintext_max_connections=10,
                          listener_name_plaintext_max_connection_creation_rate=100)
    with _connect_to(server, "EXTERNAL") as held, _connect_to(server, "EXTERNAL") as waiting:
        _served_then_waiting(server, raw, held, waiting)
        inter_broker = [server.connect() for _ in range(3)]  # over the broker's count and rate
        try:
            for i, sock in enumerate(inter_broker):
                sock.sendall(raw.request_frame(10 + i))
                assert raw.recv_frame(sock) == struct.pack(">i", 10 + i)
        finally:
            for sock in inter_broker:
                sock.close()
        assert server.read(lambda: server.server.connections_awaiting_slot) == 1
        raw.assert_closed_by_server(held)


def test_a_lowered_max_connections_closes_the_least_recently_active_connections(start_server, raw, caplog):
    """Processor.closeExcessConnections: over max.connections after it was lowered, the broker
    closes connections, the least recently active first, until it is within the limit."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    server = start_server(raw.echo_handler)
    static = dict(server.server.config.values)
    socks = [server.connect() for _ in range(3)]
    try:
        for i in (1, 0, 2):  # the second connection is the least recently active, then the first
            socks[i].sendall(raw.request_frame(i))
            assert raw.recv_frame(socks[i]) == struct.pack(">i", i)
        lowered = {**static, "max.connections": 1}
        server.read(lambda: server.server.validate_reconfiguration(static, lowered))
        server.read(lambda: server.server.reconfigure(static, lowered))
        raw.assert_closed_by_server(socks[1])
        raw.assert_closed_by_server(socks[0])
        socks[2].sendall(raw.request_frame(9))
        assert raw.recv_frame(socks[2]) == struct.pack(">i", 9)
    finally:
        for sock in socks:
            sock.close()
    closing = [line for line in log_lines(caplog) if "more than max.connections (1)" in line]
    assert len(closing) == 2


def test_a_connection_closing_gracefully_is_forced_shut_when_the_broker_is_over_max_connections(start_server, raw):
    """Selector.lowestPriorityChannel picks a closing channel first and close() forces it: a
    half-closed client that reads none of its 4 MiB answer is no longer waited for once a lowered
    max.connections puts the broker over it; the connection that is open stays."""
    async def handle(request):
        return Response([struct.pack(">i", request.correlation_id), bytes(4 << 20)])

    server = start_server(handle)
    static = dict(server.server.config.values)
    with server.connect() as stuck, server.connect() as open_one:
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
        stuck.sendall(raw.request_frame(1))
        stuck.shutdown(socket.SHUT_WR)  # answered, then closed gracefully: waiting for it to read
        open_one.sendall(raw.request_frame(2))
        assert struct.unpack_from(">i", raw.recv_frame(open_one))[0] == 2
        wait_until(lambda: server.read(lambda: [c.is_closing() for c in server.server._connections]) == [True, False],
                   "the graceful close")
        lowered = {**static, "max.connections": 1}
        server.read(lambda: server.server.reconfigure(static, lowered))
        wait_until(lambda: server.read(lambda: server.server.connection_count) == 1, "the forced close")
        open_one.sendall(raw.request_frame(3))
        assert struct.unpack_from(">i", raw.recv_frame(open_one))[0] == 3


def test_controller_listeners_are_counted_apart_from_the_brokers(start_server, raw):
    """Kafka serves controller.listener.names from the ControllerServer's own SocketServer: their
    connections count in neither the broker's total nor its listeners, and they make the
    inter-broker listener no listener among others (so not protected)."""
    server = start_server(raw.echo_handler, listeners="PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:0",
                          controller_listener_names="CONTROLLER", max_connections=1)
    with server.connect() as held, server.connect() as waiting, _connect_to(server, "CONTROLLER") as controller:
        _served_then_waiting(server, raw, held, waiting)  # PLAINTEXT is not spared the limit
        controller.sendall(raw.request_frame(3))  # the controller's own count: one of one
        assert raw.recv_frame(controller) == struct.pack(">i", 3)
        held.close()
        assert raw.recv_frame(waiting) == struct.pack(">i", 2)


def test_connections_waiting_on_several_listeners_are_taken_up_in_arrival_order(start_server, raw):
    """When a broker-wide slot frees, every listener waiting for one may take it (Kafka's
    notifyAll): franz takes up the connection that arrived first, whichever its listener."""
    server = start_server(raw.echo_handler, listeners="PLAINTEXT://127.0.0.1:0,OTHER://127.0.0.1:0,"
                          "INTERNAL://127.0.0.1:0", inter_broker_listener_name="INTERNAL",
                          listener_security_protocol_map="PLAINTEXT:PLAINTEXT,OTHER:PLAINTEXT,INTERNAL:PLAINTEXT",
                          max_connections=1)
    with server.connect() as held, _connect_to(server, "OTHER") as first_waiting:
        _served_then_waiting(server, raw, held, first_waiting)
        with server.connect() as second_waiting:  # on the listener named first
            second_waiting.sendall(raw.request_frame(3))
            wait_until(lambda: server.read(lambda: server.server.connections_awaiting_slot) == 2, "the waits")
            held.close()
            assert raw.recv_frame(first_waiting) == struct.pack(">i", 2)
            assert server.read(lambda: server.server.connections_awaiting_slot) == 1
            first_waiting.close()
            assert raw.recv_frame(second_waiting) == struct.pack(">i", 3)


def test_a_listener_over_its_own_connection_rate_waits_while_the_others_accept(start_server, raw):
    """listener.name.<listener>.max.connection.creation.rate: the listener's accepting waits
    the throttle time ((2 - 1) / 1 * 1000 ms for the second connection in two one-second samples);
    another listener's connections are taken up meanwhile."""
    server = start_server(raw.echo_handler, **TWO_LISTENERS, quota_window_num=2,
                          listener_name_external_max_connection_creation_rate=1)
    with _connect_to(server, "EXTERNAL") as first, _connect_to(server, "EXTERNAL") as throttled:
        _served_then_waiting(server, raw, first, throttled)
        with server.connect() as other_listener:
            other_listener.sendall(raw.request_frame(3))
            assert raw.recv_frame(other_listener) == struct.pack(">i", 3)
        assert server.read(lambda: server.server.connections_awaiting_slot) == 1
        assert raw.recv_frame(throttled) == struct.pack(">i", 2)  # after its throttle time


def test_a_connection_waiting_for_a_slot_is_closed_by_shutdown(start_server, raw):
    server = start_server(raw.echo_handler, max_connections=1)
    with server.connect() as held, server.connect() as waiting:
        held.sendall(raw.request_frame(1))
        raw.recv_frame(held)
        waiting.sendall(raw.request_frame(2))
        wait_until(lambda: server.read(lambda: server.server.connections_awaiting_slot) == 1, "the wait")
        server.stop()
        raw.assert_closed_by_server(waiting)


def test_max_connections_per_ip_closes_new_connections_from_that_ip(start_server, raw, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    server = start_server(raw.echo_handler, max_connections_per_ip=2)
    with server.connect() as a, server.connect() as b, server.connect() as c:
        raw.assert_closed_by_server(c)
        for i, sock in enumerate((a, b)):
            sock.sendall(raw.request_frame(i))
            assert raw.recv_frame(sock) == struct.pack(">i", i)
    lines = log_lines(caplog)
    assert len(lines) == 1
    assert "Rejected connection from 127.0.0.1, address already has the configured maximum of 2" in lines[0]


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_max_connections_per_ip_overrides_sets_an_address_its_own_limit(start_server, raw, caplog, host):
    """max.connections.per.ip.overrides: an address, or a host name resolved at start, gets its own
    limit; with max.connections.per.ip 0 every other address is refused."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    server = start_server(raw.echo_handler, max_connections_per_ip=0,
                          max_connections_per_ip_overrides=f"10.1.2.3:1, {host}:3")
    with server.connect() as a, server.connect() as b, server.connect() as c, server.connect() as d:
        raw.assert_closed_by_server(d)
        for i, sock in enumerate((a, b, c)):
            sock.sendall(raw.request_frame(i))
            assert raw.recv_frame(sock) == struct.pack(">i", i)
    lines = log_lines(caplog)
    assert len(lines) == 1
    assert "Rejected connection from 127.0.0.1, address already has the configured maximum of 3" in lines[0]


def test_connection_limits_changed_at_run_time_apply_to_the_next_connections(start_server, raw, caplog):
    """Kafka's SocketServer.reconfigure: a raised max.connections takes up the connection waiting
    for it at once; a lowered max.connections.per.ip, or an override, refuses the next connection
    over it and closes none of those open."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    server = start_server(raw.echo_handler, max_connections=1)
    static = dict(server.server.config.values)  # typed values, as the controller hands them over

    def reconfigure(old, **changes):
        new = {**old, **{key.replace("_", "."): value for key, value in changes.items()}}
        server.read(lambda: server.server.validate_reconfiguration(old, new))
        server.read(lambda: server.server.reconfigure(old, new))
        return new

    with server.connect() as held, server.connect() as waiting:
        held.sendall(raw.request_frame(1))
        raw.recv_frame(held)
        waiting.sendall(raw.request_frame(2))
        wait_until(lambda: server.read(lambda: server.server.connections_awaiting_slot) == 1, "the wait")
        config = reconfigure(static, max_connections=3)
        assert raw.recv_frame(waiting) == struct.pack(">i", 2)
        config = reconfigure(config, max_connections_per_ip=1)
        with server.connect() as over:
            raw.assert_closed_by_server(over)
        config = reconfigure(config, max_connections_per_ip_overrides="localhost:3")
        with server.connect() as third:
            third.sendall(raw.request_frame(3))
            assert raw.recv_frame(third) == struct.pack(">i", 3)
        for i, sock in enumerate((held, waiting)):  # open before the limits went down: still served
            sock.sendall(raw.request_frame(10 + i))
            assert raw.recv_frame(sock) == struct.pack(">i", 10 + i)
    assert [line for line in log_lines(caplog) if line.startswith("Updating")] == [
        "Updating broker-wide maxConnections: 3", "Updating maxConnectionsPerIp: 1",
        "Updating maxConnectionsPerIpOverrides: localhost=3"]
    for bad, message in (({"max.connections": 0}, "Invalid max.connections 0"),
                         ({"max.connection.creation.rate": 0}, "Invalid max.connection.creation.rate 0"),
                         ({"max.connections.per.ip": 0}, "only if max.connections.per.ip.overrides"),
                         ({"max.connections.per.ip.overrides": "no-such-host.invalid:2"},
                          "max.connections.per.ip.overrides")):
        with pytest.raises(ConfigError, match=message):
            server.read(lambda: server.server.validate_reconfiguration(static, {**static, **bad}))


def test_a_broker_connection_rate_set_at_run_time_meets_the_rate_measured_before(start_server, raw):
    """The broker's connection rate is measured while it is unbounded (Kafka's sensor records
    every connection), so a bound set later throttles at once when the rate so far is over it."""
    server = start_server(raw.echo_handler, quota_window_num=2)
    static = dict(server.server.config.values)  # typed values, as the controller hands them over
    for i in range(3):
        with server.connect() as sock:
            sock.sendall(raw.request_frame(i))
            raw.recv_frame(sock)
    bounded = {**static, "max.connection.creation.rate": 1}
    server.read(lambda: server.server.reconfigure(static, bounded))
    with server.connect() as throttled:
        throttled.sendall(raw.request_frame(9))
        wait_until(lambda: server.read(lambda: server.server.connections_awaiting_slot) == 1, "the wait")
        assert raw.recv_frame(throttled) == struct.pack(">i", 9)  # after its throttle time


def test_thousand_idle_connections_then_a_request_is_served(start_server, raw):
    count = 1000
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    needed = 2 * count + 200  # both ends live in this process
    if soft < needed:
        if hard != resource.RLIM_INFINITY and hard < needed:
            pytest.skip(f"RLIMIT_NOFILE hard limit {hard} < {needed}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (needed, hard))
    # A burst of connects from one process outruns Kafka's default backlog of 50
    # whenever the server thread waits for the GIL: each overflow costs a 1 s SYN retry.
    server = start_server(raw.echo_handler, socket_listen_backlog_size=count)
    idle = []
    try:
        for _ in range(count):
            idle.append(server.connect())
        wait_until(lambda: server.read(lambda: server.server.connection_count) == count, "all accepted")
        with server.connect() as sock:
            sock.sendall(raw.request_frame(1, b"busy broker"))
            assert raw.recv_frame(sock) == struct.pack(">i", 1) + b"busy broker"
        idle[0].sendall(raw.request_frame(2))
        assert raw.recv_frame(idle[0]) == struct.pack(">i", 2)
    finally:
        for sock in idle:
            sock.close()
        if soft < needed:
            resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def test_file_region_is_sent_byte_exact(start_server, raw, tmp_path):
    content = os.urandom(12 * 1024 * 1024)
    path = tmp_path / "segment.log"
    path.write_bytes(content)
    regions = [(0, 10), (1, 9 * 1024 * 1024 + 3), (len(content) - 5, 5), (77, 0)]
    file = open(path, "rb")

    async def handle(request):
        position, size = regions[request.correlation_id]
        return Response([struct.pack(">i", request.correlation_id), b"head",
                         FileSlice(file, position, size), memoryview(b"tail")])

    server = start_server(handle)
    try:
        with server.connect() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 32 * 1024)
            sock.sendall(b"".join(raw.request_frame(i) for i in range(len(regions))))
            for i, (position, size) in enumerate(regions):
                time.sleep(0.05)  # a slow reader: the kernel send buffer fills
                expected = struct.pack(">i", i) + b"head" + content[position:position + size] + b"tail"
                assert raw.recv_frame(sock) == expected
    finally:
        file.close()


def _cork_of(fd: int) -> int:
    """TCP_CORK of the socket behind `fd`, read through a duplicate descriptor."""
    with socket.socket(fileno=os.dup(fd)) as sock:
        return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_CORK)


@pytest.mark.skipif(not hasattr(socket, "TCP_CORK"), reason="TCP_CORK is Linux's")
def test_file_region_is_sent_corked_and_the_socket_uncorked_after_it(start_server, raw, tmp_path, monkeypatch):
    content = os.urandom(2 * 1024 * 1024)
    path = tmp_path / "segment.log"
    path.write_bytes(content)
    file = open(path, "rb")
    corks_at_sendfile = []
    real_sendfile = os.sendfile

    def observed_sendfile(out_fd, in_fd, offset, count):
        corks_at_sendfile.append(_cork_of(out_fd))
        return real_sendfile(out_fd, in_fd, offset, count)

    monkeypatch.setattr(os, "sendfile", observed_sendfile)

    async def handle(request):
        if request.correlation_id == 1:
            return Response([struct.pack(">i", 1), b"head", FileSlice(file, 0, len(content)), b"tail"])
        return Response([struct.pack(">i", request.correlation_id) + b"small"])

    server = start_server(handle)
    try:
        with server.connect() as sock:
            sock.sendall(raw.request_frame(1) + raw.request_frame(2))
            assert raw.recv_frame(sock) == struct.pack(">i", 1) + b"head" + content + b"tail"
            assert raw.recv_frame(sock) == struct.pack(">i", 2) + b"small"
            assert corks_at_sendfile and set(corks_at_sendfile) == {1}
            # Uncorked once the region is out: a later small answer is not held back.
            server_fds = server.read(lambda: [conn._sendfile_fd for conn in server.server._connections])
            assert len(server_fds) == 1 and _cork_of(server_fds[0]) == 0
    finally:
        file.close()


def test_file_region_past_end_of_file_closes_the_connection(start_server, raw, tmp_path, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)
    path = tmp_path / "short.log"
    path.write_bytes(b"0123456789")
    file = open(path, "rb")

    async def handle(request):
        return Response([FileSlice(file, 5, 100)])

    server = start_server(handle)
    try:
        with server.connect() as sock:
            sock.sendall(raw.request_frame(1))
            raw.assert_closed_by_server(sock)
        wait_until(lambda: len(log_lines(caplog, logging.WARNING)) == 1, "the log line")
    finally:
        file.close()


def test_graceful_shutdown_stops_accepting_and_finishes_in_flight_requests(start_server, raw):
    handle = raw.GatedEcho()
    server = start_server(handle)
    with server.connect() as sock:
        sock.sendall(raw.request_frame(1, b"in flight"))
        wait_until(lambda: server.read(lambda: len(handle.started)) == 1, "the handler")
        stopping = asyncio.run_coroutine_threadsafe(server.server.shutdown(5000), server.loop)
        wait_until(lambda: server.read(lambda: server.server._shutting_down), "shutdown to begin")
        with pytest.raises(OSError):
            late = socket.create_connection(("127.0.0.1", server.port), timeout=1)
            late.sendall(raw.request_frame(2))
            raw.recv_frame(late)  # closed without an answer if it got in at all
        sock.sendall(raw.request_frame(3, b"too late"))
        server.read(handle.gate.set)
        assert raw.recv_frame(sock) == struct.pack(">i", 1) + b"in flight"
        raw.assert_closed_by_server(sock)
        stopping.result(10)
    assert server.read(lambda: list(handle.started)) == [1]
    server.stop()


def test_shutdown_closes_connections_whose_requests_outlast_the_drain_bound(start_server, raw, caplog):
    caplog.set_level(logging.INFO, logger=LOGGER)

    outcome = []

    async def handle(request):
        await noting_cancellation(asyncio.Event().wait(), outcome)  # never answers

    server = start_server(handle)
    with server.connect() as sock:
        sock.sendall(raw.request_frame(1))
        wait_until(lambda: server.read(lambda: server.server.outstanding_requests) == 1, "the request")
        server.stop(drain_timeout_ms=100)
        raw.assert_closed_by_server(sock)
    assert any("still outstanding" in line for line in log_lines(caplog))
    assert outcome == ["cancelled"]  # the cancellation reaches a handler started outside its task


def _descriptors_on(path) -> int:
    count = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{name}") == str(path)
        except OSError:  # closed while listing
            pass
    return count


def test_a_reset_during_a_file_region_closes_the_regions_descriptor_at_once(start_server, raw, tmp_path):
    """A client that resets while its fetch answer is being sent: the answer's FileRegion (a
    descriptor of its own on the segment) is closed then, not when a cyclic collection finds the
    reference cycle its exception left (the broker makes those rare: each reset kept one open)."""
    path = tmp_path / "segment.log"
    with open(path, "wb") as out:
        out.truncate(UNREAD_ANSWER_BYTES)
    fd = os.open(path, os.O_RDONLY)

    async def handle(request):
        return Response([struct.pack(">i", request.correlation_id), FileRegion(fd, 0, UNREAD_ANSWER_BYTES)])

    server = start_server(handle)
    gc.disable()  # as rare as the broker makes it
    try:
        for i in range(3):
            with server.connect() as sock:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                sock.sendall(raw.request_frame(i))
                sock.recv(1000)  # the region is being sent
                wait_until(lambda: _descriptors_on(path) == 2, "the region's descriptor")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            wait_until(lambda: server.read(lambda: server.server.connection_count) == 0, "the reset")
            wait_until(lambda: _descriptors_on(path) == 1, "the region's descriptor to be closed")
    finally:
        gc.enable()
        os.close(fd)


def test_shutdown_during_a_stalled_file_region_closes_the_socket_and_leaks_no_descriptor(
        start_server, raw, tmp_path):
    path = tmp_path / "big.log"
    with open(path, "wb") as out:
        out.truncate(64 * 1024 * 1024)  # sparse: 64 MiB of zeros
    file = open(path, "rb")
    sockets_before = open_socket_count()

    async def handle(request):
        return Response([FileSlice(file, 0, 64 * 1024 * 1024)])

    server = start_server(handle)
    try:
        with server.connect() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 * 1024)
            sock.sendall(raw.request_frame(1))
            wait_until(lambda: server.read(lambda: server.server.outstanding_requests) == 1, "the send")
            time.sleep(0.1)  # the client reads nothing: the kernel buffers fill and sendfile stalls
            server.stop(drain_timeout_ms=100)
            raw.assert_closed_by_server(sock)
    finally:
        file.close()
    wait_until(lambda: open_socket_count() <= sockets_before, "socket descriptors to be released")
