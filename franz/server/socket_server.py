"""SocketServer: the broker's network layer on one asyncio loop (kafka.network.SocketServer).

Owns the listening sockets (one per entry of `listeners`; port 0 allowed, the
bound port is in `bound_endpoints`), the checks of a new connection against
its ConnectionQuotas (connection_quotas.py) in Kafka's order, the broker-wide
bound on outstanding requests, idle reaping and graceful shutdown. Each
accepted socket gets a KafkaChannel (kafka_channel.py)
that frames requests, runs the async `handle(request) -> Response` callable on
each and writes the responses back in request order.

Invariants and limits:
- A new connection waits, accepted and unread, while its listener or the
  broker has `max.connections` or a `max.connection.creation.rate` makes
  accepting wait, and so does every connection after it on its listener:
  each listener is one of Kafka's Acceptors, which waits in
  ConnectionQuotas.inc and accepts nothing meanwhile. Waiting connections are
  taken up in arrival order; past `socket.listen.backlog.size` of them on a
  listener (the kernel's backlog, which holds Kafka's) one is closed with one
  log line. Then one over its IP's `connection_creation_rate` is closed unread
  after its throttle time, and one over `max.connections.per.ip` at once, with
  one log line. A broker over `max.connections` (a lowered limit, or the
  inter-broker listener's connections, which it spares) closes the least
  recently active connections of its other listeners.
- At most `queued.max.requests` requests hold a slot in the whole broker: read
  and not yet answered, handed to a waiting handler (a Produce excepted) or
  sending their answer, as Kafka's request queue holds them (KafkaChannel). A
  channel with a complete frame when the limit is reached parks it and stops
  reading (pause_reading) until a slot frees; parked channels are woken in FIFO
  order. Outstanding requests (dispatched, not yet answered) are counted apart:
  shutdown drains those.
- A connection that for `connections.max.idle.ms` (negative: never) has neither
  sent anything, nor taken any answer bytes, nor had a handler running or a
  request waiting for a slot, is closed: gracefully when nothing is left to
  send, else aborted (its answers would never go).
- A handler that raises closes its connection (one log line); the broker keeps
  serving every other connection.
- Shutdown stops accepting and reading, lets outstanding requests finish within
  a bound, then closes every connection.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import socket
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Final

from franz.common.config_def import ConfigError
from franz.server.connection_quotas import ConnectionQuotas, listener_limits, resolve_overrides
from franz.server.kafka_channel import KafkaChannel
from franz.server.kafka_config import (
    LISTENER_CONNECTION_KEYS,
    SOCKET_SERVER_RECONFIGURABLE_KEYS,
    Endpoint,
    KafkaConfig,
    connections_per_ip_overrides,
    listener_key,
)
from franz.server.request_channel import ANONYMOUS_SESSION, HeaderVersionOf, Request, Response, Session
from franz.server.sasl_server_authenticator import CredentialOf, SaslServerAuthenticator, TokenCredentialOf
from franz.server.socket_server_metrics import LoopIdle, SelectorMetrics
from franz.server.ssl_channel_builder import TLS_HANDSHAKE_TIMEOUT_S, SslListenerConfig

logger = logging.getLogger(__name__)

Handler = Callable[[Request], Awaitable[Response]]

READ_BUFFER_SIZE_BYTES: Final = 256 * 1024
SHUTDOWN_DRAIN_TIMEOUT_MS_DEFAULT: Final = 10_000
REAPER_INTERVAL_MS_MAX: Final = 1000


def _ignore_completed(request: Request, end_time_ns: int) -> None:
    pass


def new_event_loop() -> asyncio.AbstractEventLoop:
    """The broker's loop: uvloop when importable, else asyncio's default."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class SocketServer:
    """Listeners, connection quotas, the broker-wide request bound, idle reaping."""

    def __init__(self, config: KafkaConfig, handle: Handler, *,
                 header_version_of: HeaderVersionOf | None = None,
                 scram_credential_of: CredentialOf = lambda user, mechanism: None,
                 token_credential_of: TokenCredentialOf = lambda token_id, mechanism: None) -> None:
        self.config = config
        self._handle = handle
        self._scram_credential_of = scram_credential_of
        self._token_credential_of = token_credential_of
        self.header_version_of = header_version_of
        self.request_max_bytes: int = config["socket.request.max.bytes"]
        # called with a connection's id once it is gone (share sessions end with their connection)
        self.close_listeners: list[Callable[[str], None]] = []
        # called once per request whose answer was sent, not sent (acks=0) or closed its connection,
        # with the monotonic ns it ended at: RequestMetrics' update (Request.updateRequestMetrics)
        self.request_completed: Callable[[Request, int], None] = _ignore_completed
        self.queued_requests_max: int = config["queued.max.requests"]
        self.idle_ms: int = config["connections.max.idle.ms"]
        # A TLS handshake is bounded as asyncio bounds one, and within the idle time Kafka gives it.
        self.tls_handshake_timeout_s = (min(TLS_HANDSHAKE_TIMEOUT_S, self.idle_ms / 1000) if self.idle_ms > 0
                                        else TLS_HANDSHAKE_TIMEOUT_S)
        # The broker's listeners' quotas, and the controller listeners' own (Kafka's ControllerServer
        # has a SocketServer of its own): each listener is counted in one of them.
        names = [endpoint.listener_name for endpoint in config.listeners]
        controller = [name for name in names if name in config.controller_listener_names]
        self.connection_quotas = ConnectionQuotas(config, [name for name in names if name not in controller])
        self._quotas_of = dict.fromkeys(self.connection_quotas.listeners, self.connection_quotas)
        if controller:
            self._quotas_of.update(dict.fromkeys(controller, ConnectionQuotas(config, controller)))
        self._resolved_overrides: tuple[dict[str, int], dict[str, int]] | None = None  # see reconfigure
        self._arrivals = 0
        # the keys of Kafka's SocketServer and of each listener's ListenerConnectionQuota
        self.reconfigurable_configs = SOCKET_SERVER_RECONFIGURABLE_KEYS + tuple(
            listener_key(endpoint.listener_name, key)
            for endpoint in config.listeners for key in LISTENER_CONNECTION_KEYS)
        # each SSL and SASL_SSL listener's TLS settings, as a new connection takes them: replaced when
        # a listener's stores change (SslListenerReconfigurable)
        self.ssl_listeners: dict[str, SslListenerConfig] = dict(config.ssl_listeners)
        self.send_buffer_bytes: int = config["socket.send.buffer.bytes"]
        self.receive_buffer_bytes: int = config["socket.receive.buffer.bytes"]
        self.listen_backlog: int = config["socket.listen.backlog.size"]
        self.bound_endpoints: list[Endpoint] = []
        self._loop: asyncio.AbstractEventLoop = None  # type: ignore[assignment]
        self._servers: list[asyncio.AbstractServer] = []
        # Least recently active first: the idle reaper looks only at the front.
        self._connections: collections.OrderedDict[KafkaChannel, None] = collections.OrderedDict()
        # By listener (each is one of Kafka's Acceptors): accepted while the listener or the broker
        # had max.connections or a connection rate made accepting wait; each waits, unread, in
        # arrival order (_arrived).
        self._awaiting_connection_slot: dict[str, collections.deque[KafkaChannel]] = {
            endpoint.listener_name: collections.deque() for endpoint in config.listeners}
        # loop time until which a listener's accepting waits out a max.connection.creation.rate
        self._accept_blocked_until = dict.fromkeys(self._awaiting_connection_slot, 0.0)
        self._connection_index = 0
        self._outstanding = 0  # requests dispatched and not yet answered (shutdown drains them)
        self._queued = 0  # of those, the ones holding a queued.max.requests slot
        self._waiters: collections.deque[KafkaChannel] = collections.deque()
        self._wake_scheduled = False
        self._idle_event: asyncio.Event | None = None
        self._reaper: asyncio.Task[None] | None = None
        self._shutting_down = False
        # Each listener is one processor of Kafka's, numbered in listener order.
        self.selector_metrics = {endpoint.listener_name: SelectorMetrics(endpoint.listener_name, index)
                                 for index, endpoint in enumerate(config.listeners)}
        self.loop_idle = LoopIdle()
        self._read_buffer = bytearray(READ_BUFFER_SIZE_BYTES)
        self._read_view = memoryview(self._read_buffer)

    # -- public --------------------------------------------------------------

    async def start(self) -> None:
        """Bind every listener and start accepting."""
        assert not self._servers, "already started"
        self._loop = asyncio.get_running_loop()
        self.loop_idle.start()
        self._idle_event = asyncio.Event()
        try:
            for endpoint in self.config.listeners:
                sock = self._bind(endpoint)
                server = await self._loop.create_server(
                    lambda endpoint=endpoint: KafkaChannel(self, endpoint), sock=sock,
                    backlog=self.listen_backlog)
                self._servers.append(server)
                port = sock.getsockname()[1]
                self.bound_endpoints.append(Endpoint(endpoint.listener_name, endpoint.host, port))
                logger.info("Listening on %s://%s:%d", endpoint.listener_name, endpoint.host, port)
        except BaseException:
            for server in self._servers:
                server.close()
            raise
        if self.idle_ms >= 0:
            self._reaper = self._loop.create_task(self._reap_idle())

    def bound_port(self, listener_name: str) -> int:
        for endpoint in self.bound_endpoints:
            if endpoint.listener_name == listener_name.upper():
                return endpoint.port
        raise KeyError(listener_name)

    @property
    def connection_count(self) -> int:
        return len(self._connections)

    @property
    def outstanding_requests(self) -> int:
        return self._outstanding

    @property
    def queued_requests(self) -> int:
        """Requests holding a queued.max.requests slot: Kafka's RequestQueueSize."""
        return self._queued

    def open_connections(self) -> tuple[dict[str, int], dict[tuple[str, tuple[str, str]], int]]:
        """Open connections by listener, and by listener and client software (from any thread)."""
        by_listener: dict[str, int] = {}
        by_software: dict[tuple[str, tuple[str, str]], int] = {}
        for conn in list(self._connections):  # a copy: the loop may change the map meanwhile
            listener = conn.listener_name
            by_listener[listener] = by_listener.get(listener, 0) + 1
            key = (listener, conn.client_information)
            by_software[key] = by_software.get(key, 0) + 1
        return by_listener, by_software

    async def shutdown(self, drain_timeout_ms: int = SHUTDOWN_DRAIN_TIMEOUT_MS_DEFAULT) -> None:
        """Stop accepting and reading, let outstanding requests finish within
        `drain_timeout_ms`, then close every connection."""
        if self._shutting_down:
            return
        self._shutting_down = True
        for server in self._servers:
            server.close()
        for waiting in self._awaiting_connection_slot.values():
            while waiting:  # never read: nothing of theirs to finish
                waiting.popleft().abort()
        for conn in list(self._connections):
            conn._update_reading()
        if self._outstanding > 0:
            assert self._idle_event is not None
            self._idle_event.clear()
            try:
                await asyncio.wait_for(self._idle_event.wait(), drain_timeout_ms / 1000)
            except asyncio.TimeoutError:
                logger.warning("Shutdown: %d requests still outstanding after %d ms; closing anyway",
                               self._outstanding, drain_timeout_ms)
        if self._reaper is not None:
            self._reaper.cancel()
        handlers = [task for conn in self._connections for task, _ in conn._inflight]
        for conn in list(self._connections):
            if conn.is_idle() and conn._transport.get_write_buffer_size() == 0:
                conn._close()
            else:
                conn.abort()
        for task in handlers:
            task.cancel()
        if handlers:
            await asyncio.wait(handlers, timeout=1.0)
        for server in self._servers:
            await server.wait_closed()
        # Let the transports deliver connection_lost before returning.
        for _ in range(100):
            if not self._connections:
                break
            await asyncio.sleep(0.001)
        self.loop_idle.stop()

    # -- used by KafkaChannel --------------------------------------------------

    def new_session(self, listener: str) -> Session:
        """A new connection's session: ANONYMOUS on a PLAINTEXT listener; on a SASL one, none
        until its authenticator completes; on an SSL one, none until its handshake names it."""
        protocol = self.config.listener_security_protocols[listener]
        sasl = self.config.sasl_listeners.get(listener)
        if sasl is not None:
            return Session(None, SaslServerAuthenticator(sasl, self._scram_credential_of,
                                                         self.selector_metrics[listener],
                                                         token_credential_of=self._token_credential_of), protocol)
        return ANONYMOUS_SESSION if protocol == "PLAINTEXT" else Session(None, security_protocol=protocol)

    def _bind(self, endpoint: Endpoint) -> socket.socket:
        if not endpoint.host and socket.has_dualstack_ipv6():  # Kafka: empty host = every interface
            sock = socket.create_server(("", endpoint.port), family=socket.AF_INET6,
                                        backlog=self.listen_backlog, dualstack_ipv6=True)
        else:
            family, _, _, _, address = socket.getaddrinfo(
                endpoint.host or "0.0.0.0", endpoint.port, type=socket.SOCK_STREAM,
                flags=socket.AI_PASSIVE)[0]
            sock = socket.create_server(address[:2], family=family, backlog=self.listen_backlog)
        if self.receive_buffer_bytes != -1:  # inherited by accepted sockets
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.receive_buffer_bytes)
        sock.setblocking(False)
        return sock

    @property
    def all_connection_quotas(self) -> list[ConnectionQuotas]:
        """The broker's listeners' quotas, then the controller listeners' if any."""
        return list(dict.fromkeys(self._quotas_of.values()))

    @property
    def connections_awaiting_slot(self) -> int:
        return sum(len(waiting) for waiting in self._awaiting_connection_slot.values())

    def _arrived(self, conn: KafkaChannel) -> None:
        """A new connection: taken up now, or kept waiting, accepted and unread, behind those
        already waiting on its listener (Kafka's Acceptor waits in ConnectionQuotas.inc with the
        socket accepted, and accepts no other meanwhile: the kernel's backlog holds them). Past
        socket.listen.backlog.size waiting, where the kernel would refuse it, it is closed."""
        listener = conn.listener_name
        self._arrivals += 1
        conn.arrival = self._arrivals
        waiting = self._awaiting_connection_slot[listener]
        if not waiting and self._may_take_up(listener) and self._take_up(conn):
            return
        conn.wait_unread()
        if waiting and len(waiting) >= self.listen_backlog:
            quotas = self._quotas_of[listener]
            quota = quotas.listeners[listener]
            logger.info("Rejected connection from %s, %d connections wait already (socket.listen.backlog.size) "
                        "on listener %s, for max.connections (listener %d, broker %d) or "
                        "max.connection.creation.rate (listener %d, broker %d).", conn.client_address[0],
                        self.listen_backlog, listener, quota.max_connections, quotas.max_connections,
                        quota.rate_max, quotas.broker_rate_max)
            conn.refuse()
            return
        waiting.append(conn)

    def _may_take_up(self, listener: str) -> bool:
        return (self._quotas_of[listener].slot_available(listener)
                and self._loop.time() >= self._accept_blocked_until[listener])

    def _take_up(self, conn: KafkaChannel) -> bool:
        """ConnectionQuotas.inc once a connection slot is free: the broker's and listener's rates,
        the IP's rate, then the IP's count. False when a rate makes this connection (counted)
        and every one after it on its listener wait; else it is taken up, or closed (at once,
        or after its IP's throttle time)."""
        listener = conn.listener_name
        quotas = self._quotas_of[listener]
        now_ms = time.monotonic_ns() // 1_000_000
        if not conn.rate_counted:
            conn.rate_counted = True
            throttle_ms = quotas.record_connection(listener, now_ms)
            if throttle_ms > 0:
                blocked_until = self._accept_blocked_until[listener] = self._loop.time() + throttle_ms / 1000
                self._loop.call_at(blocked_until, self._admit_awaiting)
                return False
        ip = conn.client_address[0]
        throttle_ms = quotas.record_ip_connection(listener, ip, now_ms)
        if throttle_ms > 0:
            logger.debug("Delaying closing of connection from %s for %d ms", ip, throttle_ms)
            conn.close_after(throttle_ms)
            return True
        reason = quotas.inc(listener, ip)
        if reason is not None:
            logger.info("Rejected connection from %s, %s", ip, reason)
            conn.refuse()
            return True
        try:
            conn.configure_socket()
        except OSError as exc:  # uncounted and closed, as Acceptor.accept closes it (closeChannel)
            quotas.dec(listener, ip)
            logger.info("Closing connection from %s: configuring its socket failed: %r", ip, exc)
            conn.abort()
            return True
        conn.take_up()
        if quotas.is_protected(listener) and quotas.excess():
            self._close_excess_connections(quotas)
        return True

    def _close_excess_connections(self, quotas: ConnectionQuotas) -> None:
        """Processor.closeExcessConnections: while the broker has more connections than
        max.connections, close the least recently active ones of its unprotected listeners."""
        excess = quotas.excess()
        open_ones = []
        for conn in list(self._connections):  # least recently active first
            listener = conn.listener_name
            if self._quotas_of[listener] is not quotas:
                continue
            if conn.is_closing():  # uncounted once its transport is gone; Kafka forces these first
                excess -= 1
                if not quotas.is_protected(listener):
                    conn.abort()
            elif not quotas.is_protected(listener):
                open_ones.append(conn)
        for conn in open_ones[:max(excess, 0)]:
            logger.info("Closing connection %s: the broker has more than max.connections (%d) connections",
                        conn.connection_id, quotas.max_connections)
            conn.abort()

    def _forget_awaiting(self, conn: KafkaChannel) -> None:
        try:
            self._awaiting_connection_slot[conn.listener_name].remove(conn)
        except ValueError:
            pass

    def _admit_awaiting(self) -> None:
        """Take up connections that waited while they may be, the one that arrived first among
        the listeners that may take one next: a slot freed anywhere may be the broker-wide one
        several listeners wait for, and none goes first by its name."""
        while not self._shutting_down:
            heads = [waiting for listener, waiting in self._awaiting_connection_slot.items()
                     if waiting and self._may_take_up(listener)]
            if not heads:
                return
            waiting = min(heads, key=lambda queue: queue[0].arrival)
            conn = waiting.popleft()  # before taking it up, which may close a connection and come back here
            if conn.is_closing():
                continue
            if not self._take_up(conn):
                waiting.appendleft(conn)  # its listener now waits out a rate: no longer a head

    # -- dynamic connection limits (Kafka's SocketServer as a BrokerReconfigurable) -------

    def validate_reconfiguration(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        """ConfigError for values KafkaConfig or a listener's quota would refuse, and for a new
        override whose host does not resolve (Kafka would take it and fail applying it); the
        addresses resolved are kept for reconfigure, so that it neither resolves on the loop
        nor fails half-way."""
        overrides = connections_per_ip_overrides(new)
        if overrides != connections_per_ip_overrides(old):
            self._resolved_overrides = (overrides, resolve_overrides(overrides))
        for listener in self._quotas_of:
            # ListenerConnectionQuota.validateReconfiguration, when the listener's values change
            before, after = listener_limits(old, listener), listener_limits(new, listener)
            if before == after:
                continue
            for key, value in zip(LISTENER_CONNECTION_KEYS, after):
                if value <= 0:
                    raise ConfigError(key, value, "", f"Invalid {key} {value}")

    def reconfigure(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        """Put values validated by validate_reconfiguration in force. A raised limit lets waiting
        connections in at once; a lowered max.connections closes the excess connections, the
        least recently active first (Processor.closeExcessConnections)."""
        overrides = connections_per_ip_overrides(new)
        changed_overrides = overrides != connections_per_ip_overrides(old)
        if changed_overrides:
            assert self._resolved_overrides is not None and self._resolved_overrides[0] == overrides, "not validated"
            logger.info("Updating maxConnectionsPerIpOverrides: %s", ",".join(f"{k}={v}" for k, v in overrides.items()))
        for key, words in (("max.connections.per.ip", "maxConnectionsPerIp"),
                           ("max.connections", "broker-wide maxConnections"),
                           ("max.connection.creation.rate", "broker-wide maxConnectionCreationRate")):
            if new[key] != old[key]:
                logger.info("Updating %s: %d", words, new[key])
        for quotas in self.all_connection_quotas:
            quotas.update_max_connections_per_ip(new["max.connections.per.ip"])
            if changed_overrides:
                quotas.update_max_connections_per_ip_overrides(self._resolved_overrides[1])
            quotas.update_broker_max_connections(new["max.connections"])
            quotas.update_broker_max_connection_rate(new["max.connection.creation.rate"])
            quotas.update_listener_limits(new)
            if quotas.excess():
                self._close_excess_connections(quotas)
        if self.connections_awaiting_slot:
            self._admit_awaiting()

    def _next_index(self) -> int:
        self._connection_index += 1
        return self._connection_index

    def _register(self, conn: KafkaChannel) -> None:
        conn.last_active_ns = time.monotonic_ns()
        self._connections[conn] = None

    def _deregister(self, conn: KafkaChannel) -> None:
        if conn in self._connections:
            del self._connections[conn]
            for listener in self.close_listeners:
                listener(conn.connection_id)
            self._quotas_of[conn.listener_name].dec(conn.listener_name, conn.client_address[0])
            if self.connections_awaiting_slot:
                self._admit_awaiting()

    def _touch(self, conn: KafkaChannel) -> None:
        conn.last_active_ns = time.monotonic_ns()
        if conn in self._connections:
            self._connections.move_to_end(conn)

    def _try_acquire_slot(self) -> bool:
        if self._queued >= self.queued_requests_max or self._shutting_down:
            return False
        self._queued += 1
        self._outstanding += 1
        return True

    def _leave_queue(self) -> None:
        """A request gives its queued.max.requests slot back and stays outstanding."""
        self._queued -= 1
        assert self._queued >= 0, "a request slot was released twice"
        if self._waiters and not self._wake_scheduled:
            self._wake_scheduled = True
            self._loop.call_soon(self._wake_waiters)

    def _release_slot(self, left_queue: bool = False) -> None:
        """A request ended: its slot freed, unless it gave that back already (left_queue)."""
        if not left_queue:
            self._leave_queue()
        self._outstanding -= 1
        assert self._outstanding >= 0, "a request ended twice"
        if self._outstanding == 0 and self._idle_event is not None:
            self._idle_event.set()

    def _wake_waiters(self) -> None:
        self._wake_scheduled = False
        while self._waiters and self._queued < self.queued_requests_max and not self._shutting_down:
            self._waiters.popleft().unpark()

    async def _reap_idle(self) -> None:
        """Close connections idle for connections.max.idle.ms (Kafka's IdleExpiryManager)."""
        interval_s = min(REAPER_INTERVAL_MS_MAX, max(1, self.idle_ms // 4)) / 1000
        idle_ns = self.idle_ms * 1_000_000
        while True:
            await asyncio.sleep(interval_s)
            now_ns = time.monotonic_ns()
            for _ in range(len(self._connections)):  # bounded: each is looked at once
                conn = next(iter(self._connections), None)
                if conn is None or now_ns - conn.last_active_ns < idle_ns:
                    break
                if conn.is_busy() or conn.took_answers():  # a slow request, or a slow reader
                    self._touch(conn)
                elif conn.is_idle() and not conn.unsent_bytes():
                    logger.debug("Closing connection %s: idle for more than %d ms",
                                 conn.connection_id, self.idle_ms)
                    self._connections.move_to_end(conn)
                    conn._close()
                else:
                    # Answers the client does not read: a graceful close would wait for them
                    # forever, holding the socket (Kafka's idle expiry closes it all the same).
                    logger.info("Closing connection %s: it took none of its answers for more than %d ms",
                                conn.connection_id, self.idle_ms)
                    self._connections.move_to_end(conn)
                    conn.abort()
