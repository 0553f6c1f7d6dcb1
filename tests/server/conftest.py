"""Fixtures for the network layer: a real SocketServer on 127.0.0.1 port 0,
run on its own event loop thread, with raw blocking sockets as clients."""

from __future__ import annotations

import asyncio
import concurrent.futures
import socket
import struct
import threading
from collections.abc import Callable, Iterator

import pytest

from franz.server.kafka_config import KafkaConfig
from franz.server.request_channel import Request, Response
from franz.server.socket_server import SocketServer

WAIT_S = 10.0  # every blocking wait in these tests gives up after this


class ServerThread:
    """A SocketServer on a private loop in a thread; `call` runs code on that loop."""

    def __init__(self, loop_kind: str, handle: Callable, overrides: dict[str, str]) -> None:
        props = {"node.id": "1", "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": "/nonexistent"}
        props.update(overrides)
        self.config = KafkaConfig(props)
        if loop_kind == "uvloop":
            import uvloop
            self.loop = uvloop.new_event_loop()
        else:
            self.loop = asyncio.new_event_loop()
        self.server = SocketServer(self.config, handle)
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        self.call(self.server.start())
        self.port = self.server.bound_port("PLAINTEXT")

    def call(self, coro, timeout_s: float = WAIT_S):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout_s)

    def call_soon(self, fn, *args) -> None:
        self.loop.call_soon_threadsafe(fn, *args)

    def read(self, fn):
        """Evaluate fn() on the loop thread (for reading server state)."""
        future: concurrent.futures.Future = concurrent.futures.Future()

        def run() -> None:
            try:
                future.set_result(fn())
            except BaseException as exc:  # pragma: no cover - surfaced to the test
                future.set_exception(exc)
        self.loop.call_soon_threadsafe(run)
        return future.result(WAIT_S)

    def connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=WAIT_S)
        return sock

    def stop(self, drain_timeout_ms: int = 2000) -> None:
        try:
            self.call(self.server.shutdown(drain_timeout_ms), timeout_s=WAIT_S + drain_timeout_ms / 1000)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(WAIT_S)
            self.loop.close()


@pytest.fixture(params=["asyncio", "uvloop"])
def loop_kind(request) -> str:
    return request.param


@pytest.fixture
def start_server(loop_kind) -> Iterator[Callable[..., ServerThread]]:
    started: list[ServerThread] = []

    def start(handle: Callable, **overrides: str) -> ServerThread:
        server = ServerThread(loop_kind, handle, {k.replace("_", "."): str(v) for k, v in overrides.items()})
        started.append(server)
        return server

    yield start
    for server in started:
        if not server.loop.is_closed():
            server.stop()


# -- raw client helpers ---------------------------------------------------------

def request_frame(correlation_id: int, payload: bytes = b"", api_key: int = 18, api_version: int = 0,
                  client_id: bytes | None = b"test") -> bytes:
    """A v1 request header and payload, with its size prefix."""
    header = struct.pack(">hhi", api_key, api_version, correlation_id)
    header += struct.pack(">h", -1) if client_id is None else struct.pack(">h", len(client_id)) + client_id
    body = header + payload
    return struct.pack(">i", len(body)) + body


def recv_exactly(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        data = sock.recv(min(size - len(chunks), 1 << 20))
        if not data:
            raise EOFError(f"connection closed after {len(chunks)} of {size} bytes")
        chunks += data
    return bytes(chunks)


def recv_frame(sock: socket.socket) -> bytes:
    size = struct.unpack(">i", recv_exactly(sock, 4))[0]
    return recv_exactly(sock, size)


def assert_closed_by_server(sock: socket.socket) -> None:
    """The server closes: the next read returns EOF (or a reset), within WAIT_S."""
    sock.settimeout(WAIT_S)
    try:
        while sock.recv(65536):
            pass
    except ConnectionResetError:
        pass


async def echo_handler(request: Request) -> Response:
    """Answers with the correlation id (as a response header v0) and the body."""
    return Response([struct.pack(">i", request.correlation_id), request.body])


class GatedEcho:
    """An echo handler that holds every request until `gate` is set (on the
    server loop: `server.read(gated.gate.set)`); `started` lists the
    correlation ids whose handlers began, in order."""

    def __init__(self) -> None:
        self.gate = asyncio.Event()
        self.started: list[int] = []

    async def __call__(self, request: Request) -> Response:
        self.started.append(request.correlation_id)
        await self.gate.wait()
        return await echo_handler(request)


class RawClient:
    """The helpers above, handed to tests by the `raw` fixture."""

    request_frame = staticmethod(request_frame)
    recv_exactly = staticmethod(recv_exactly)
    recv_frame = staticmethod(recv_frame)
    assert_closed_by_server = staticmethod(assert_closed_by_server)
    echo_handler = staticmethod(echo_handler)
    GatedEcho = GatedEcho
    WAIT_S = WAIT_S


@pytest.fixture
def raw() -> type[RawClient]:
    return RawClient
