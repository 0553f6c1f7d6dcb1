"""KafkaChannel: one client connection of the SocketServer (kafka.network's
Processor work for one socket, with common.network's KafkaChannel and NetworkReceive).

Owns the connection's receive state (cutting the byte stream into frames: a
4-byte big-endian size, then the request), the in-order queue of its handler
tasks, and the sending of their responses, with file regions sent by
os.sendfile on the transport's own socket when the transport carries plain TCP.
On an SSL or SASL_SSL listener the connection is TLS (ssl_channel_builder): it
passes the server's connection quotas as plain TCP, unread, and then shakes
hands (_start_tls); only once that is done are its bytes requests.

Invariants:
- A frame's size is checked against `socket.request.max.bytes` before any of
  its body is read; a negative or oversized size closes the connection with one
  log line (Kafka's InvalidReceiveException text).
- Handlers start in arrival order and one at a time: a handler's first step
  runs when its frame is dispatched, and the next frame is dispatched only once
  every handler before it has finished (until then the channel holds what it
  read and stops reading), so a request sees every effect of those before it on
  its connection, as in Kafka, whose SocketServer mutes a channel until its
  answer is sent. Only a Produce behind Produces starts at once (_must_wait).
  Handlers that finish in their first step cost no wait: a read's frames then
  all run in it. Responses are written in arrival order.
- Nothing more is dispatched while an answer cannot go out (a file region being
  sent, the transport's buffer over its high mark): a client that reads no
  answers holds no queue slot beyond the one being sent, and its answers built
  but unsent stay within about OUT_SIZE_BYTES_MAX plus the transport's buffer.
- Each dispatched request holds one of the broker's `queued.max.requests`
  slots from dispatch until its response is handed to the transport (or
  dropped), starts sending its file regions, or, a request other than Produce,
  until its handler first waits (Kafka's queue holds a request only until a
  handler thread takes it: a fetch parked in the purgatory holds none); a slot
  is released exactly once, and the request ends (_request_ended) once.
- With no slot free, a complete frame stays here (parked) and the channel stops
  reading until the server wakes it: TCP flow control pushes back on the client.
- A request's life is stamped here (Request's *_time_ns: the read that completed
  its frame, its handler's start, its answer taken for sending) and, once it
  ended (its answer sent or dropped, no answer due, or its connection closed on
  purpose), handed to the server's request_completed exactly once.
- Its listener's SelectorMetrics (socket_server_metrics.py) count its opening and
  close, the bytes it read, each frame received, the bytes it hands to the transport
  or sendfile (as they go: an answer cut off midway counts what went), and each
  answer handed over whole.

Buffers: every channel reads into the server's one shared read buffer (the
loop is single-threaded and each read is consumed before the next begins); a
complete frame is copied out once. A frame that arrives in pieces gets a buffer
of exactly its size and the socket reads the rest straight into it. After a
frame of LARGE_FRAME_BYTES or more, the next read takes the next size prefix
alone: producers send large frames back to back, and a full shared read would
take up to socket_server.READ_BUFFER_SIZE_BYTES of the next one's body, only
to copy it into that frame's buffer (a quarter of a 1 MiB produce). The answers
of handlers that finish in their first step go out together at the end of the
read that brought their frames; answers of handlers that waited, when they
finish in one loop iteration, are corked and written together in the next (one
syscall for many pipelined answers either way). A file region goes out with
os.sendfile on the socket once the transport's buffer is empty; when the kernel
buffer is full, a writer callback sends the rest each time the socket takes
more, watching a duplicate of the socket's descriptor (loops refuse add_writer
on a transport's own) that is closed with the connection, since it keeps the
socket open. While a response with
file regions goes out the socket is corked (TCP_CORK, where the platform has
it) and uncorked before anything else is written: its prefix, the bytes between
regions and the end of each sendfile call then leave in full segments, where
TCP_NODELAY sent each piece on its own (the bench's raw fetch of one partition
on loopback: 30-40 KB per segment uncorked, 51 KB corked; docs/TEAM_NOTES.md).
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import errno
import logging
import os
import socket
import ssl
from asyncio import sslproto
import struct
import time
from collections.abc import Coroutine, Generator
from typing import TYPE_CHECKING, Any, Final

from franz.server.allocator import new_request_buffer
from franz.server.kafka_config import Endpoint
from franz.server.request_channel import (CLOSE_CONNECTION, NO_RESPONSE, UNKNOWN_CLIENT_INFORMATION, FileRegion,
                                         InvalidRequestError, Request, Response, Session)
from franz.server.sasl_server_authenticator import BareTokenFailure
from franz.server.ssl_channel_builder import peer_principal_name

if TYPE_CHECKING:
    from franz.server.socket_server import SocketServer

# Log lines about connections come from the socket server's logger: one place to tune.
logger = logging.getLogger("franz.server.socket_server")

# Corked responses up to this size in all are joined into one write; past
# OUT_SIZE_BYTES_MAX they are written without waiting for the next iteration.
COALESCE_SIZE_BYTES_MAX: Final = 256 * 1024
OUT_SIZE_BYTES_MAX: Final = 1024 * 1024
# Transport write-buffer limits: past the high mark a connection stops sending
# further responses until the buffer is back under the low mark.
WRITE_BUFFER_HIGH_BYTES: Final = 1024 * 1024
WRITE_BUFFER_LOW_BYTES: Final = 256 * 1024
# When the kernel send buffer is full, a file region goes on in copied chunks of this size.
REGION_CHUNK_SIZE_BYTES: Final = 256 * 1024
_SIZE: Final = struct.Struct(">i")
# From this frame size on, the next frame is expected large too: its size prefix is read
# alone and its body straight into its own buffer. One more read per frame (a syscall,
# ~1-2 us) against copying a shared read's worth of it (256 KiB: ~9 us warm, more cold).
LARGE_FRAME_BYTES: Final = 64 * 1024
_SIZE_MAX: Final = 2**31 - 1
# os.sendfile errors that mean "this pair of descriptors cannot do sendfile".
_SENDFILE_UNSUPPORTED: Final = {errno.EINVAL, errno.ENOSYS, errno.ENOTSOCK, errno.EOPNOTSUPP}
# Transports whose socket carries plain TCP bytes, so sendfile may write to it.
_PLAIN_TCP_TRANSPORTS: Final = {"_SelectorSocketTransport", "TCPTransport"}
_CAN_CORK: Final = hasattr(socket, "TCP_CORK")  # Linux
_API_VERSIONS_KEY: Final = 18
_SASL_HANDSHAKE_KEY: Final = 17
_PRODUCE_KEY: Final = 0
_API_KEY: Final = struct.Struct(">h")  # a request header's first field


class _Resumed(Coroutine):
    """The rest of a handler whose first step ran outside a task, for a task to run: the
    task's first send gets what that step yielded (as if the handler yielded it now);
    after that, sends and throws (a cancellation included, even one that comes before
    the task's first step) go to the handler."""

    __slots__ = ("_handling", "_first_yield", "_started")

    def __init__(self, handling: Coroutine[Any, Any, Response], first_yield: Any) -> None:
        self._handling, self._first_yield, self._started = handling, first_yield, False

    def send(self, value: Any) -> Any:
        if not self._started:
            self._started = True
            first_yield, self._first_yield = self._first_yield, None
            return first_yield
        return self._handling.send(value)

    def throw(self, *exc_info: Any) -> Any:
        self._started, self._first_yield = True, None
        return self._handling.throw(*exc_info)

    def close(self) -> None:
        self._handling.close()

    def __await__(self) -> Generator[Any, Any, Response]:
        raise TypeError("a resumed handler is run by its task, not awaited")


class KafkaChannel(asyncio.BufferedProtocol):
    """One client connection: framing, in-order dispatch and response writing."""

    def __init__(self, server: SocketServer, endpoint: Endpoint) -> None:
        self._server = server
        self._endpoint = endpoint
        self._metrics = server.selector_metrics[endpoint.listener_name]
        self._loop = server._loop
        self.connection_id = ""
        self.client_address: tuple[str, int] = ("", 0)
        self._transport: Any = None
        self._accepted = False
        # The server's connection quotas: waiting unread to be taken up, counted in the
        # broker's connection rate already.
        self._waiting = False
        self.rate_counted = False
        self.arrival = 0  # the server's count of connections when this one arrived (its place in line)
        self._closing = False
        self._eof = False
        self.last_active_ns = 0
        self._read_time_ns = 0  # when the last read arrived: its frames' receive time
        self.client_information = UNKNOWN_CLIENT_INFORMATION  # from the last valid ApiVersions
        self.session = server.new_session(endpoint.listener_name)
        # An SSL or SASL_SSL listener's TLS settings; _handshaking from the accept until the TLS
        # transport is made (_tls_established), while the TCP transport is its SSL protocol's.
        self._tls = server.ssl_listeners.get(endpoint.listener_name)
        self._handshaking = self._tls is not None
        # Receive state: `_pending` holds bytes read but not yet framed (a partial
        # size prefix, or data left unparsed while parked); `_frame` is a frame
        # of known size being filled in place; `_ready_frame` a complete frame
        # waiting for a queue slot or for the handler before it to finish.
        self._pending = bytearray()
        self._frame: bytearray | None = None
        self._frame_view: memoryview | None = None
        self._frame_filled = 0
        self._ready_frame: bytes | bytearray | None = None
        self._read_prefix_alone = False  # the last frame was large: see LARGE_FRAME_BYTES
        self._parked = False
        # Handlers not yet finished, the last request's API key, and whether the next frame
        # waits for them (_hold). Those running are one request, or only Produces (_must_wait).
        self._running = 0
        self._last_api_key = -1
        self._held = False
        self._close_after_answers = False  # an invalid frame came behind answers still to go
        self._reading = True
        # A quota throttle: nothing more is read until the timer ends it (KIP-219).
        self._throttle_timer: asyncio.TimerHandle | None = None
        # Send state.
        self._inflight: collections.deque[tuple[asyncio.Task[Response], Request]] = collections.deque()
        self._sending = False  # a response with file regions is being sent
        # Corked output: responses that became ready in one loop iteration go
        # out in one write in the next (one syscall for many pipelined answers).
        self._out: list[bytes | bytearray | memoryview] = []
        self._out_size_bytes = 0
        self._out_requests: list[Request] = []  # whose answers are in `_out`
        self._out_scheduled = False
        # A handler finished in its first step during this callback: its answer goes out
        # at the callback's end, with the others of the same read.
        self._answered_now = False
        self._write_paused = False
        self._drain_waiters: list[asyncio.Future[None]] = []
        self._sendfile_fd: int | None = None
        self._duplicate: socket.socket | None = None  # see _socket_duplicate
        self._unsent_noted = 0  # the transport's unsent bytes when last noted: see took_answers

    # -- lifecycle ---------------------------------------------------------

    def connection_made(self, transport: Any) -> None:
        if self._transport is not None:  # the TLS transport, made by _start_tls's SSL protocol
            self._tls_established(transport)
            return
        self._transport = transport
        peer = transport.get_extra_info("peername") or ("?", 0)
        self.client_address = (peer[0], peer[1])
        if self._handshaking:  # the client's hello is the handshake's: nothing is read as a request
            transport.pause_reading()
            self._reading = False
        self._server._arrived(self)

    def _start_tls(self) -> None:
        """The TLS handshake of a connection the server's quotas took up. asyncio's SSL protocol
        (also under uvloop, whose start_tls cannot be used here: uvloop reads once before a
        pause takes, so the client's first TLS bytes may already be in `_pending`) takes over the
        TCP transport, gets those bytes first, then reads on; it makes the TLS transport
        (connection_made again) or fails the waiter (_handshake_done)."""
        tls, transport = self._tls, self._transport
        assert tls is not None
        waiter = self._loop.create_future()
        protocol = sslproto.SSLProtocol(self._loop, self, tls.context, waiter, server_side=True,
                                        ssl_handshake_timeout=self._server.tls_handshake_timeout_s)
        transport.set_protocol(protocol)
        protocol.connection_made(transport)
        early, self._pending = self._pending, bytearray()
        with memoryview(early) as view:
            while view:
                buffer = protocol.get_buffer(len(view))
                taken = min(len(buffer), len(view))
                buffer[:taken] = view[:taken]
                protocol.buffer_updated(taken)
                view = view[taken:]
        transport.resume_reading()
        waiter.add_done_callback(self._handshake_done)

    def _handshake_done(self, waiter: asyncio.Future) -> None:
        """A failed handshake is logged as Kafka's Selector logs a failed authentication (one whose
        client went away, or that outlasted its bound, at debug); the SSL protocol closed the TCP
        transport and never tells this channel, so it ends here."""
        exc = waiter.exception() if not waiter.cancelled() else None
        if exc is None or not self._handshaking:
            return
        if not self._closing:
            if isinstance(exc, ssl.SSLError):
                self._metrics.failed_authentications += 1
                logger.info("Failed authentication with /%s (channelId=%s) (SSL handshake failed)",
                            self.client_address[0], self.connection_id)
            else:
                logger.debug("Connection with /%s (channelId=%s) closed during the TLS handshake: %s",
                             self.client_address[0], self.connection_id, exc)
        self._closing = True
        if not self._transport.is_closing():
            self._transport.abort()
        self.connection_lost(exc)

    def _tls_established(self, transport: Any) -> None:
        """The handshake is done: the connection reads and answers through the TLS transport. On
        SSL the client's certificate names the principal (DefaultKafkaPrincipalBuilder); a name no
        mapping rule maps fails the authentication."""
        tls = self._tls
        assert tls is not None
        self._transport, self._handshaking = transport, False
        if self.session.authenticator is None:
            try:
                name = peer_principal_name(transport.get_extra_info("ssl_object"), tls.principal_mapper)
            except ValueError as exc:
                self._metrics.failed_authentications += 1
                logger.info("Failed authentication with /%s (channelId=%s) (%s)", self.client_address[0],
                            self.connection_id, exc)
                self.abort()
                return
            self.session = Session(name, security_protocol=self.session.security_protocol)
            self._metrics.authenticated()
        transport.set_write_buffer_limits(high=WRITE_BUFFER_HIGH_BYTES, low=WRITE_BUFFER_LOW_BYTES)
        if self._closing:
            transport.abort()
            return
        self._resume_dispatch()  # reading, through the TLS transport

    # -- the server's connection quotas (SocketServer._arrived, _take_up) --------

    def wait_unread(self) -> None:
        """Kept accepted and unread until the server takes it up (take_up) or refuses it."""
        self._waiting = True
        self._transport.pause_reading()
        self._reading = False

    def refuse(self) -> None:
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def close_after(self, throttle_ms: int) -> None:
        """Over its IP's connection rate: closed, unread, once the throttle time has passed
        (Kafka's Acceptor keeps it as a DelayedCloseSocket)."""
        self.wait_unread()
        self._loop.call_later(throttle_ms / 1000, self._transport.close)

    def configure_socket(self) -> None:
        """Kafka's Acceptor.configureAcceptedSocketChannel, once the connection passed the
        server's quotas; OSError when the socket refuses an option (then take_up is not called)."""
        transport, server = self._transport, self._server
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            # As Kafka's Acceptor configures each socket: a client whose host vanished without a
            # FIN is found out by the kernel's probes, not only by the idle reaper.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            if server.send_buffer_bytes != -1:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, server.send_buffer_bytes)
            if hasattr(os, "sendfile") and self._tls is None and type(transport).__name__ in _PLAIN_TCP_TRANSPORTS:
                self._sendfile_fd = sock.fileno()

    def take_up(self) -> None:
        """The connection passed the server's quotas and is configured: it is registered and read."""
        transport, server = self._transport, self._server
        local = transport.get_extra_info("sockname") or ("?", 0)
        peer = self.client_address
        self._accepted = True
        self._metrics.connections_created += 1
        self.connection_id = f"{local[0]}:{local[1]}-{peer[0]}:{peer[1]}-{server._next_index()}"
        transport.set_write_buffer_limits(high=WRITE_BUFFER_HIGH_BYTES, low=WRITE_BUFFER_LOW_BYTES)
        server._register(self)
        if self.session.authenticator is None and self._tls is None:  # PLAINTEXT: ready once taken up
            self._metrics.authenticated()
        if server._shutting_down:
            self._close()
        elif self._handshaking:
            self._waiting = False
            self._start_tls()
        elif self._waiting:
            self._waiting = False
            self._resume_dispatch()  # anything read before the pause took, then reading

    def connection_lost(self, exc: Exception | None) -> None:
        if not self._accepted:
            self._server._forget_awaiting(self)
            return
        self._metrics.connections_closed += 1
        self._closing = True
        self._cancel_throttle()
        self._write_out()  # nothing is written once closing: this frees the slots
        self._release_done()
        self._wake_drain_waiters()
        if not self._sending:  # else the sender closes it when it stops
            self._close_duplicate()
        self._server._deregister(self)

    def eof_received(self) -> bool:
        # Half-closed by the client: answer what was received whole, then close.
        # A partial frame left behind is dropped quietly.
        self._eof = True
        self._frame = self._frame_view = None
        if not (self._parked or self._held):
            self._pending.clear()
        if self._tls is not None:
            return False  # TLS has no half-close: the transport closes (asyncio warns at a True)
        return not self.is_idle() or self._parked or self._held

    def _close(self) -> None:
        """Close after whatever is already in the transport's buffer is sent."""
        if self._closing:
            return
        self._cancel_throttle()
        self._write_out()  # answers before the close still go out
        self._closing = True
        self._release_done()
        self._wake_drain_waiters()
        if self._transport is not None:
            self._transport.close()

    def abort(self) -> None:
        self._closing = True
        self._write_out()
        self._release_done()
        if self._transport is not None:
            self._transport.abort()

    @property
    def listener_name(self) -> str:
        return self._endpoint.listener_name

    def is_idle(self) -> bool:
        return not self._inflight and not self._sending and not self._out and self._ready_frame is None

    def is_busy(self) -> bool:
        """A handler is running, or a request waits for a queue slot: the broker's time, which
        is no idleness of the client's."""
        return self._running > 0 or self._parked

    def unsent_bytes(self) -> int:
        """Answer bytes in the transport's buffer, not yet taken by the kernel."""
        return self._transport.get_write_buffer_size() if self._transport is not None else 0

    def took_answers(self) -> bool:
        """Whether the client took answer bytes out of the transport's buffer since its size was
        last noted (at each write, and here): a slow reader is active, not idle. Bytes the kernel
        takes by sendfile, and a buffer drained under its low mark, touch the connection."""
        unsent = self.unsent_bytes()
        took, self._unsent_noted = unsent < self._unsent_noted, unsent
        return took

    # -- receiving ---------------------------------------------------------

    def get_buffer(self, sizehint: int) -> memoryview:
        if self._frame_view is not None:
            return self._frame_view[self._frame_filled:]
        if self._read_prefix_alone and len(self._pending) < _SIZE.size:
            return self._server._read_view[:_SIZE.size - len(self._pending)]
        return self._server._read_view

    def buffer_updated(self, nbytes: int) -> None:
        if not self._accepted:  # waiting for a connection slot: uvloop reads once before a pause takes
            self._pending += self._server._read_view[:nbytes]
            self._transport.pause_reading()
            return
        self._metrics.bytes_received += nbytes
        self._receive(nbytes)
        if self._answered_now:
            self._answered_now = False
            self._flush(now=True)

    def _receive(self, nbytes: int) -> None:
        server = self._server
        server._touch(self)
        self._read_time_ns = self.last_active_ns
        if self._closing:
            return
        if self._frame_view is not None:
            self._frame_filled += nbytes
            if self._frame_filled < len(self._frame_view):
                return
            frame = self._frame
            assert frame is not None and self._frame_filled == len(frame)
            self._frame = self._frame_view = None
            self._read_prefix_alone = len(frame) >= LARGE_FRAME_BYTES
            if self._must_wait(frame, 0):
                self._ready_frame = frame
                self._hold()
            elif server._try_acquire_slot():
                self._dispatch(frame)
            else:
                self._ready_frame = frame
                self._park()
            return
        data = server._read_view[:nbytes]
        if self._pending:
            self._pending += data
            self._consume_pending()
        else:
            consumed = self._consume(data)
            self._keep_rest(data[consumed:])

    def _consume_pending(self) -> None:
        with memoryview(self._pending) as view:
            consumed = self._consume(view)
            rest = bytes(view[consumed:])
        self._pending.clear()
        self._keep_rest(memoryview(rest))

    def _keep_rest(self, rest: memoryview) -> None:
        """Keep the bytes after the last complete frame for the next read."""
        if not rest or self._closing or (self._eof and not (self._parked or self._held)):
            return
        if self._parked or self._held or len(rest) < 4:
            self._pending += rest
            return
        # The size prefix is complete and was checked by _consume: read the rest
        # of this frame straight into a buffer of its exact size.
        size = _SIZE.unpack_from(rest, 0)[0]
        frame = new_request_buffer(size)  # not zeroed: dispatched only once every byte is read in
        frame_view = memoryview(frame)
        filled = len(rest) - 4
        # Through the view: a bytearray's slice assignment copies a memoryview operand into a
        # temporary bytearray first. That extra copy was 3.9% of the broker's CPU samples (perf)
        # with two producers sending 1 KiB records at full speed.
        frame_view[:filled] = rest[4:]
        self._frame, self._frame_view, self._frame_filled = frame, frame_view, filled

    def _consume(self, data: memoryview) -> int:
        """Dispatch the complete frames at the start of `data`; return bytes used."""
        server = self._server
        authenticator = self.session.authenticator
        offset, end = 0, len(data)
        while end - offset >= 4 and not self._parked and not self._held and not self._closing:
            size = _SIZE.unpack_from(data, offset)[0]
            # Until a SASL connection has authenticated, each frame is bound by sasl.server.max.receive.size
            # (Kafka's authenticator reads it), not socket.request.max.bytes: decided frame by frame, as
            # the frame after a SaslAuthenticate in the same read comes after the authentication.
            request_max_bytes = (server.request_max_bytes if authenticator is None or authenticator.complete
                                 else authenticator.config.max_receive_size)
            if size < 0 or size > request_max_bytes:
                self._invalid_receive(size, request_max_bytes)
                return end
            if end - offset - 4 < size:
                break
            if self._must_wait(data, offset + 4):
                self._hold()
                break
            if not server._try_acquire_slot():
                self._park()
                break
            start = offset + 4
            offset = start + size
            self._read_prefix_alone = size >= LARGE_FRAME_BYTES
            self._dispatch(bytes(data[start:offset]))
        return offset

    def _invalid_receive(self, size: int, limit: int) -> None:
        detail = (f"Invalid receive (size = {size})" if size < 0
                  else f"Invalid receive (size = {size} larger than {limit})")
        logger.warning("Unexpected error from %s:%d (connection %s); closing connection: %s",
                       self.client_address[0], self.client_address[1], self.connection_id, detail)
        self._close()

    def _park(self) -> None:
        """No queue slot: hold what was read and stop reading until one frees."""
        assert not self._parked
        self._parked = True
        self._server._waiters.append(self)
        self._update_reading()

    def unpark(self) -> None:
        """A queue slot freed (called by the server, waiters in FIFO order)."""
        assert self._parked
        self._parked = False
        self._resume_dispatch()

    def _must_wait(self, data: bytes | bytearray | memoryview, start: int) -> bool:
        """Whether the frame at data[start:] waits for the requests before it (see _hold).

        Every frame waits while an answer cannot go out: a file region being sent, or the
        transport's buffer over its high mark. Kafka reads on only once an answer is sent, so a
        client that reads none of its answers holds one request; here its next requests would
        each pin a queue slot with an answer that cannot go, until queued.max.requests was
        full and every other connection stalled.

        Otherwise a frame waits for the handlers still running before it. A Produce behind
        Produces need not: appends run in arrival order on their own (on the loop, or queued
        on the append thread behind any pending one; ReplicaManager), so it sees those before
        it all the same, and producers keep their pipelined requests' appends back to back.
        Anything else waits for every one still running, not only the last: a Produce
        answered at once may follow one still appending."""
        if self._sending or self._write_paused:
            return True
        if not self._running:
            return False
        return not (self._last_api_key == _PRODUCE_KEY and len(data) - start >= _API_KEY.size
                    and _API_KEY.unpack_from(data, start)[0] == _PRODUCE_KEY)

    def _hold(self) -> None:
        """A request before is still running, or an answer cannot go out yet (_must_wait): hold
        what was read and stop reading until that ends (_end_hold). Kafka's SocketServer reads a
        connection's next request only once the answer to the last is sent, so a request sees
        every effect of the ones before it on its connection (an OffsetFetch pipelined behind an
        OffsetCommit still being written read the offsets from before it)."""
        self._held = True
        self._update_reading()

    def _end_hold(self) -> None:
        """Take up what was held once nothing it waits for is left: no handler running, no
        answer stuck (_must_wait is then False for any frame)."""
        if (not self._held or self._running or self._sending or self._write_paused
                or self._closing or self._close_after_answers):
            return
        self._held = False
        # A held frame counts as read now: Kafka reads it only once the channel is unmuted,
        # so its wait behind the request before it is the client's, in no queue's time.
        self._read_time_ns = time.monotonic_ns()
        self._resume_dispatch()

    def _resume_dispatch(self) -> None:
        """Dispatch what was held back (by a full queue or a running handler) as far as may."""
        if self._closing:
            return
        if self._ready_frame is not None:
            if self._must_wait(self._ready_frame, 0):
                self._hold()
                return
            if not self._server._try_acquire_slot():
                self._park()
                return
            frame, self._ready_frame = self._ready_frame, None
            self._dispatch(frame)
        if self._pending and not self._closing:
            self._consume_pending()
        self._update_reading()
        waiting = self._parked or self._held
        if self._eof and not waiting:
            self._pending.clear()  # a partial frame after EOF never completes
        if self._answered_now or (self._eof and not waiting):
            self._answered_now = False
            self._flush(now=True)

    def _throttle(self, throttle_ms: int) -> None:
        """Read nothing from this client for `throttle_ms` (a quota violation: the answer that
        says so is already on its way); a longer throttle meanwhile extends it."""
        when = self._loop.time() + throttle_ms / 1000.0
        if self._throttle_timer is not None:
            if self._throttle_timer.when() >= when:
                return
            self._throttle_timer.cancel()
        self._throttle_timer = self._loop.call_at(when, self._end_throttle)
        self._update_reading()

    def _cancel_throttle(self) -> None:
        if self._throttle_timer is not None:
            self._throttle_timer.cancel()
            self._throttle_timer = None

    def _end_throttle(self) -> None:
        self._throttle_timer = None
        self._update_reading()

    def _update_reading(self) -> None:
        want = not (self._parked or self._held or self._closing or self._eof or self._server._shutting_down
                    or self._throttle_timer is not None or self._handshaking)
        if want != self._reading and self._transport is not None and not self._transport.is_closing():
            self._reading = want
            if want:
                self._transport.resume_reading()
            else:
                self._transport.pause_reading()

    def _dispatch(self, frame: bytes | bytearray) -> None:
        """Start the handler of one frame; its queue slot is already held.

        The handler's first step runs here, as Python 3.12's eager tasks run it: most
        requests (a produce appended on the loop, a metadata or a fetch with data) never
        wait, and are answered without a task and the two loop iterations its step and
        done-callback would take. A handler that does wait goes on in a task, in the
        context its first step ran in."""
        server = self._server
        authenticator = self.session.authenticator
        if authenticator is not None and authenticator.reads_bare_tokens:
            # Kafka's authenticator reads these itself, so its Selector never counts them as requests
            request = Request.bare_sasl_token(self.connection_id, self._endpoint.listener_name, self.client_address,
                                              frame, self._read_time_ns)
            self._start_handler(request, self._answer_bare_token(request, authenticator))
            return
        self._metrics.requests_received += 1
        try:
            request = Request(self.connection_id, self._endpoint.listener_name, self.client_address,
                              frame, self._read_time_ns, server.header_version_of)
        except InvalidRequestError as exc:
            server._release_slot()
            logger.warning("Closing connection %s: invalid request header: %s", self.connection_id, exc)
            self._close_when_answered()
            return
        if authenticator is not None and authenticator.complete and self._session_expired(request, authenticator):
            server._release_slot()
            self._close_when_answered()
            return
        if authenticator is not None and authenticator.principal_error is not None:
            # Processor.processCompletedReceives: the request's context needs the principal
            logger.error("Closing socket for %s because of error: Exception while processing request from %s: %s",
                         self.connection_id, self.connection_id, authenticator.principal_error)
            server._release_slot()
            self._close_when_answered()
            return
        try:
            handling = server._handle(request)
        except Exception as exc:  # a handler that is not a coroutine function raised at once
            self._request_ended(request)
            self._handler_failed(request, exc)
            return
        self._start_handler(request, handling)

    def _start_handler(self, request: Request, handling: Any) -> None:
        """Run the request's handler (its first step now, see _dispatch) and queue its answer."""
        request.client_information = self.client_information
        request.session = self.session
        request.dequeue_time_ns = time.monotonic_ns()
        try:
            if not asyncio.iscoroutine(handling):
                task = self._loop.create_task(handling)
            else:
                task = self._start_eagerly(handling)
            if request.api_key == _API_VERSIONS_KEY:  # answered in its first step: later frames see it
                self.client_information = request.client_information
        except Exception as exc:  # noqa: BLE001 - closed as a failed handler is
            self._request_ended(request)
            self._handler_failed(request, exc)
            return
        self._last_api_key = request.api_key
        self._inflight.append((task, request))
        if task.done():
            self._answered_now = True
            # Taken now, so that the next frame's _must_wait sees whether it can go out: an
            # answer with file regions starts sending, large answers reach the transport.
            self._take_answers()
        else:
            self._running += 1
            request.handler_task = task
            task.add_done_callback(self._on_handler_done)
            if request.api_key != _PRODUCE_KEY:
                # Kafka's queue holds a request until a handler thread takes it; one that then
                # waits (a fetch or a join in a purgatory, a coordinator's write) has left it.
                # A Produce keeps its slot while its append waits for the append thread, where
                # Kafka's handler thread appends: that bounds a producer's pipelined bytes.
                self._leave_queue(request)

    async def _answer_bare_token(self, request: Request, authenticator: Any) -> Response:
        """A bare SASL token (sasl_server_authenticator's module doc): the challenge goes back
        bare, the answer's size prefix being the token's; a failure closes the connection
        unanswered, logged as Kafka's Selector logs it."""
        try:
            challenge = await authenticator.authenticate_bare(request.body)
        except BareTokenFailure as exc:
            client = f"/{self.client_address[0]} (channelId={self.connection_id})"
            if exc.failed_authentication:
                logger.info("Failed %sauthentication with %s (%s)",
                            "re-" if authenticator.successful_authentications else "", client, exc)
            elif exc.unexpected:
                logger.warning("Unexpected error from %s; closing connection: %s", client, exc)
            else:
                logger.debug("Connection with %s disconnected: %s", client, exc)
            return CLOSE_CONNECTION
        if authenticator.complete:
            logger.debug("Successfully %sauthenticated with /%s", "re-" if authenticator.successful_authentications > 1
                         else "", self.client_address[0])
        return NO_RESPONSE if challenge is None else Response((challenge,))

    def _close_when_answered(self) -> None:
        """Close without reading the frame just read. Kafka reads it only once the answers before
        it are sent (a Produce behind Produces comes here while one still appends): they go
        out first."""
        if self._inflight or self._sending:
            self._close_after_answers = True
            self._hold()
        else:
            self._close()

    def _session_expired(self, request: Request, authenticator: Any) -> bool:
        """Processor.processCompletedReceives for a request of an authenticated SASL connection: a
        SaslHandshake may begin a re-authentication (KafkaChannel.maybeBeginServerReauthentication;
        the authenticator then takes the requests until it completes); any other request after
        the session expired closes the connection, uncounted as a request."""
        now_ns = time.monotonic_ns()
        if request.api_key == _SASL_HANDSHAKE_KEY and authenticator.maybe_begin_reauthentication(now_ns):
            logger.debug("Begin re-authentication: %s", self.connection_id)
            return False
        if not authenticator.session_expired(now_ns):
            return False
        logger.debug("Disconnecting expired channel: %s : api_key=%d, api_version=%d, correlation_id=%d, "
                     "client_id=%s", self.connection_id, request.api_key, request.api_version, request.correlation_id,
                     request.client_id)
        self._metrics.expired_connections_killed += 1
        return True

    def _start_eagerly(self, handling: Coroutine[Any, Any, Response]) -> asyncio.Future[Response]:
        """Run the handler's first step now: a finished future when it ends there, else its task."""
        context = contextvars.copy_context()
        finished = self._loop.create_future()
        try:
            yielded = context.run(handling.send, None)
        except StopIteration as stop:
            finished.set_result(stop.value)
        except asyncio.CancelledError:
            finished.cancel()
        except Exception as exc:  # noqa: BLE001 - the handler failed: answered as a failed task is
            finished.set_exception(exc)
        else:
            return self._loop.create_task(_Resumed(handling, yielded), context=context)
        return finished

    # -- sending -----------------------------------------------------------

    def _on_handler_done(self, task: asyncio.Task[Response]) -> None:
        self._running -= 1
        if self._closing:
            for entry in self._inflight:
                if entry[0] is task:
                    self._inflight.remove(entry)
                    self._discard(*entry)
                    break
            return
        self._flush()
        self._end_hold()

    def _request_ended(self, request: Request) -> None:
        """The request ended (answered, dropped, or failed): it is no longer outstanding, and
        its queued.max.requests slot is freed unless it left the queue already."""
        self._server._release_slot(left_queue=not request.holds_queue_slot)
        request.holds_queue_slot = False

    def _leave_queue(self, request: Request) -> None:
        """The request's handler waits: its queued.max.requests slot is freed (see _dispatch)."""
        if request.holds_queue_slot:
            request.holds_queue_slot = False
            self._server._leave_queue()

    def _discard(self, task: asyncio.Task[Response], request: Request) -> None:
        """A finished request whose connection is gone: its slot freed, and its answer, which
        goes nowhere, counted as Kafka counts a response for a closed connection."""
        failed = task.cancelled() or task.exception() is not None  # retrieved: nobody else will read it
        self._request_ended(request)
        if not failed:
            request.response_dequeue_time_ns = now_ns = time.monotonic_ns()
            self._server.request_completed(request, now_ns)

    def _release_done(self) -> None:
        """On close: free the slots of finished requests whose answers go nowhere."""
        keep = collections.deque()
        for entry in self._inflight:
            if entry[0].done():
                self._discard(*entry)
            else:
                keep.append(entry)
        self._inflight = keep

    def _flush(self, now: bool = False) -> None:
        """Send the answers at the head of the queue that are ready, in order: `now`, or
        corked until the next loop iteration so that answers finishing in this one go
        out in the same write."""
        if not self._take_answers():
            return
        if self._out:
            if now:
                self._write_out()
            elif not self._out_scheduled:
                self._out_scheduled = True
                self._loop.call_soon(self._write_out)
        if self._done_after_eof() or (self._close_after_answers and not self._inflight and not self._sending):
            self._close()

    def _done_after_eof(self) -> bool:
        """Half-closed by the client, and every request it sent whole is answered: none left to
        read (held, parked or mid-consume), run or send."""
        return (self._eof and not self._inflight and not self._sending and not self._parked and not self._held
                and not self._out and not self._pending)

    def _take_answers(self) -> bool:
        """Move the answers ready at the head of the queue into the corked output, in order
        (written out at once past OUT_SIZE_BYTES_MAX). False when one stopped it: a failed
        handler, a close, or an answer with file regions, whose sending now begins."""
        inflight = self._inflight
        server = self._server
        while inflight and inflight[0][0].done():
            if self._closing or self._sending or self._write_paused:
                return False
            task, request = inflight.popleft()
            response = self._result_of(task, request)
            if response is None:
                return False
            request.response_dequeue_time_ns = now_ns = time.monotonic_ns()
            if response.throttle_ms > 0:
                request.throttle_time_ms = response.throttle_ms
                self._throttle(response.throttle_ms)
            if response.kind == Response.NO_RESPONSE_KIND:
                self._request_ended(request)
                server.request_completed(request, now_ns)
            elif response.kind == Response.CLOSE_CONNECTION_KIND:
                self._request_ended(request)
                server.request_completed(request, now_ns)
                self._close()
                return False
            elif response.has_file_regions:
                self._write_out()
                self._sending = True
                # An answer waiting for its client holds no slot: Kafka's Processor sends it
                # from outside the request queue (a client that reads none pinned one).
                self._leave_queue(request)
                self._loop.create_task(self._send_with_regions(request, response))
                return False
            else:
                self._out.append(_SIZE.pack(response.size_bytes))
                self._out.extend(response.chunks)
                self._out_size_bytes += response.size_bytes
                self._out_requests.append(request)
                if self._out_size_bytes >= OUT_SIZE_BYTES_MAX:
                    self._write_out()
                if response.close_after:  # nothing more is read; closed once this answer is out
                    self._close_after_answers = True
                    self._hold()
        return True

    def _result_of(self, task: asyncio.Task[Response], request: Request) -> Response | None:
        if task.cancelled():
            self._request_ended(request)
            self._handler_failed(request, asyncio.CancelledError())
            return None
        exc = task.exception()
        response = task.result() if exc is None else None
        if exc is None and not isinstance(response, Response):
            exc = TypeError(f"handler returned {type(response).__name__}, not a Response")
        if exc is not None:
            self._request_ended(request)
            self._handler_failed(request, exc)
            return None
        if response.size_bytes > _SIZE_MAX:
            self._request_ended(request)
            self._handler_failed(request, ValueError(f"response of {response.size_bytes} bytes"))
            return None
        return response

    def _handler_failed(self, request: Request, exc: BaseException) -> None:
        logger.error("Closing connection %s after its handler failed on %r: %s: %s",
                     self.connection_id, request, type(exc).__name__, exc)
        logger.debug("Handler failure on connection %s", self.connection_id, exc_info=exc)
        self._close()

    def _write_out(self) -> None:
        """Hand the corked responses to the transport and free their queue slots."""
        self._out_scheduled = False
        if not self._out:
            return
        out, requests, size_bytes = self._out, self._out_requests, self._out_size_bytes
        self._out, self._out_size_bytes, self._out_requests = [], 0, []
        server = self._server
        if not self._closing:
            if size_bytes <= COALESCE_SIZE_BYTES_MAX:
                self._transport.write(b"".join(out))
            else:  # one vectored write on uvloop, no copy into one buffer
                self._transport.writelines(out)
            self._unsent_noted = self._transport.get_write_buffer_size()
            server._touch(self)
            metrics = self._metrics
            metrics.answers_sent += len(requests)
            metrics.bytes_sent += size_bytes + _SIZE.size * len(requests)
        # Sent: in the kernel, or in the transport's buffer, which sends on its own (a Kafka
        # Send is complete once the socket took its last byte). Answers dropped by a close
        # count too, as Kafka counts a response whose connection is gone.
        end_ns = time.monotonic_ns()
        for request in requests:
            self._request_ended(request)
            server.request_completed(request, end_ns)
        if self._done_after_eof():
            self._close()

    async def _send_with_regions(self, request: Request, response: Response) -> None:
        corked = self._sendfile_fd is not None and self._set_cork(True)
        metrics = self._metrics
        try:
            self._transport.write(_SIZE.pack(response.size_bytes))
            metrics.bytes_sent += _SIZE.size
            for chunk in response.chunks:
                if self._closing:
                    return
                if isinstance(chunk, (bytes, bytearray, memoryview)):
                    self._transport.write(chunk)
                    metrics.bytes_sent += len(chunk)
                else:
                    await self._send_region(chunk)
            metrics.answers_sent += 1
        except (ConnectionError, EOFError, OSError) as exc:
            if not self._closing:
                logger.warning("Closing connection %s: sending a file region failed: %s: %s",
                               self.connection_id, type(exc).__name__, exc)
                self._close()
        finally:
            if corked and not self._closing:
                self._set_cork(False)  # pushes the last partial segment now
            self._sending = False
            if self._closing:
                self._close_duplicate()
            for chunk in response.chunks:  # regions with descriptors of their own (FileRegion)
                close = getattr(chunk, "close", None)
                if close is not None:
                    close()
            self._request_ended(request)
            self._server._touch(self)
            self._server.request_completed(request, self.last_active_ns)
            if not self._closing:
                self._flush()
                self._end_hold()

    def _set_cork(self, corked: bool) -> bool:
        """Cork or uncork the socket; False when it could not be (no TCP_CORK here, or the
        connection is going away, when nothing is left to push)."""
        if not _CAN_CORK:
            return False
        try:
            self._socket_duplicate().setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, int(corked))
        except OSError:
            return False
        return True

    async def _send_region(self, region: FileRegion) -> None:
        """Send region bytes with os.sendfile on the transport's socket (zero
        copy) once the transport's own buffer is empty, the rest from a writer
        callback when the kernel buffer fills (_sendfile_when_writable); else copy them."""
        in_fd, pos, remaining = region.fileno(), region.position, region.size
        while remaining > 0:
            if self._closing:
                raise ConnectionError("connection closed while sending a file region")
            if self._sendfile_fd is not None:
                await self._wait_write_buffer_empty()
                if self._closing:
                    continue
                try:
                    sent = os.sendfile(self._sendfile_fd, in_fd, pos, remaining)
                except BlockingIOError:
                    sent = None
                except OSError as exc:
                    if exc.errno not in _SENDFILE_UNSUPPORTED:
                        raise
                    self._sendfile_fd = None  # fall back to copying for this connection
                    continue
                if sent == 0:
                    raise EOFError(f"file ends before the region does, at position {pos}")
                if sent is not None:
                    pos += sent
                    remaining -= sent
                    self._metrics.bytes_sent += sent
                if remaining > 0:
                    await self._sendfile_when_writable(in_fd, pos, remaining)
                return
            chunk = os.pread(in_fd, min(remaining, REGION_CHUNK_SIZE_BYTES), pos)
            if not chunk:
                raise EOFError(f"file ends before the region does, at position {pos}")
            self._transport.write(chunk)
            self._metrics.bytes_sent += len(chunk)
            pos += len(chunk)
            remaining -= len(chunk)
            if self._write_paused:
                await self._drained()

    async def _sendfile_when_writable(self, in_fd: int, pos: int, remaining: int) -> None:
        """Send the rest of a region from a callback the loop runs each time the socket takes
        more bytes, registered until the region is out: one sendfile call per kernel buffer's
        worth, where a task woken per buffer also paid its wakeup and an epoll_ctl to watch and
        unwatch (a 1 MiB fetch fills Kafka's 100 KiB send buffer about eight times)."""
        writable_fd = self._socket_duplicate().fileno()
        out_fd, metrics, server = self._sendfile_fd, self._metrics, self._server
        done = self._loop.create_future()

        def send_more() -> None:
            nonlocal pos, remaining
            if done.done():
                return
            try:
                sent = os.sendfile(out_fd, in_fd, pos, remaining)
            except BlockingIOError:
                return
            except OSError as exc:
                done.set_exception(exc)
                return
            if sent == 0:
                done.set_exception(EOFError(f"file ends before the region does, at position {pos}"))
                return
            pos += sent
            remaining -= sent
            metrics.bytes_sent += sent
            server._touch(self)  # the client reads: not idle, however slowly it goes
            if remaining == 0:
                done.set_result(None)

        self._drain_waiters.append(done)  # a close wakes it too
        self._loop.add_writer(writable_fd, send_more)
        try:
            await done
        finally:
            self._loop.remove_writer(writable_fd)
        if remaining > 0:
            raise ConnectionError("connection closed while sending a file region")

    def _socket_duplicate(self) -> socket.socket:
        """A socket object on a duplicate of the transport's descriptor, made on first use and
        kept while the connection lives: neither loop lets add_writer watch a transport's own
        descriptor, and uvloop's transport socket makes a new socket object for each
        setsockopt (two corks per fetch). The duplicate keeps the socket open, so it is closed
        with the connection, once no sending uses it (_close_duplicate)."""
        if self._duplicate is None:
            assert self._sendfile_fd is not None
            self._duplicate = socket.socket(fileno=os.dup(self._sendfile_fd))
        return self._duplicate

    def _close_duplicate(self) -> None:
        duplicate, self._duplicate = self._duplicate, None
        if duplicate is not None:
            duplicate.close()

    async def _wait_write_buffer_empty(self) -> None:
        transport = self._transport
        if transport.get_write_buffer_size() == 0:
            return
        # Limits of zero make the transport pause us now and resume us only once empty.
        transport.set_write_buffer_limits(high=0, low=0)
        try:
            while transport.get_write_buffer_size() > 0 and not self._closing:
                await self._drained()
        finally:
            if not self._closing:
                transport.set_write_buffer_limits(high=WRITE_BUFFER_HIGH_BYTES, low=WRITE_BUFFER_LOW_BYTES)

    def _drained(self) -> asyncio.Future[None]:
        future = self._loop.create_future()
        if not self._write_paused or self._closing:
            future.set_result(None)
        else:
            self._drain_waiters.append(future)
        return future

    def _wake_drain_waiters(self) -> None:
        waiters, self._drain_waiters = self._drain_waiters, []
        for future in waiters:
            if not future.done():
                future.set_result(None)

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        self._server._touch(self)  # the client read what the transport held
        self._wake_drain_waiters()
        if not self._sending and not self._closing:
            self._flush()
            self._end_hold()
