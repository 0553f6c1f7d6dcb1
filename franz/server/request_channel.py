"""RequestChannel: what passes between the network layer and the request handlers.

Owns the two message shapes of kafka.network.RequestChannel:

- `Request`: one received frame of one connection, with the request header's
  routing fields (api_key, api_version, correlation_id, client_id) read from the
  frame's first bytes, and the body as a memoryview over the frame (no copy). A
  frame that is a bare SASL token (after a SaslHandshake v0) has no header:
  `Request.bare_sasl_token` makes it with api_key BARE_SASL_TOKEN.
- `Response`: what a handler gives back. Either a list of chunks to send (bytes,
  bytearray, memoryview, or a file region: anything with `fileno()`, `position`
  and `size`, sent with os.sendfile where the transport allows), or one of the
  two markers `NO_RESPONSE` (acks=0 produce: answer nothing) and
  `CLOSE_CONNECTION` (close after the responses before it are sent).

Request header grammar (Kafka's RequestHeader.json; all integers big-endian):

    frame          := size:int32 header body          (size counts header + body)
    header_v1      := api_key:int16 api_version:int16 correlation_id:int32
                      client_id:nullable_string        (int16 length, -1 = null)
    header_v2      := header_v1 tagged_fields          (flexible versions)
    tagged_fields  := count:uvarint (tag:uvarint size:uvarint data:byte[size])*

Header v0 (no client_id) only ever served ControlledShutdown v0, which Kafka
4.x no longer accepts, so every frame is read as v1 at least. Whether a request
uses header v2 depends on its api_key/api_version, which only the protocol
codec knows: the caller passes `header_version_of`; without it the header is
read as v1 and any tagged fields stay at the start of `body`.

The chunks of a Response carry the response header and body; the network layer
adds the 4-byte size prefix.

Invariants: `body` and `frame` are views over one immutable-size buffer owned
by the Request; a malformed header raises InvalidRequestError, never returns a
partial Request.
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import logging
import struct
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Final, Protocol, runtime_checkable

from franz.protocol import codegen
from franz.protocol.codegen import java_int

# int16 api_key, int16 api_version, int32 correlation_id, int16 client_id length.
_HEADER_V1_FIXED: Final = struct.Struct(">hhih")
HEADER_V1_FIXED_SIZE_BYTES: Final = _HEADER_V1_FIXED.size
SIZE_PREFIX_BYTES: Final = 4

HeaderVersionOf = Callable[[int, int], int]
# Logs each request once done, at DEBUG (RequestChannel's requestLogger: the name Kafka's users
# set a level for, kafka-configs.sh --entity-type broker-loggers).
REQUEST_LOGGER: Final = logging.getLogger("kafka.request.logger")
UNKNOWN_CLIENT_INFORMATION: Final = ("unknown", "unknown")  # ClientInformation.EMPTY
BARE_SASL_TOKEN: Final = -1  # the api_key of a frame that is no request (Request.bare_sasl_token)


class InvalidRequestError(ValueError):
    """A frame whose request header cannot be read; the connection is closed."""


@runtime_checkable
class FileRegion(Protocol):
    """A byte range of an open file: what FileRecords hands out for a fetch."""

    position: int
    size: int

    def fileno(self) -> int: ...


@dataclasses.dataclass(frozen=True, slots=True)
class FileSlice:
    """A ready-made FileRegion over an open file object or descriptor."""

    file: Any
    position: int
    size: int

    def __post_init__(self) -> None:
        assert self.position >= 0 and self.size >= 0, (self.position, self.size)

    def fileno(self) -> int:
        return self.file if isinstance(self.file, int) else self.file.fileno()


Chunk = bytes | bytearray | memoryview | FileRegion


def read_uvarint(view: memoryview, pos: int) -> tuple[int, int]:
    """The codec's varint reader, its failures answered as a malformed header's."""
    try:
        return codegen.read_uvarint(view, pos)
    except IndexError:
        raise InvalidRequestError("Truncated varint in request header") from None
    except codegen.MessageDecodeError:
        raise InvalidRequestError("Varint in request header is longer than 5 bytes") from None


def _read_tagged_fields(view: memoryview, pos: int) -> tuple[dict[int, memoryview], int]:
    # Kafka reads each varint into a Java int (ByteUtils.readUnsignedVarint): a count of 2^31 or
    # more is negative and reads no field; a size past the frame or negative fails.
    count, pos = read_uvarint(view, pos)
    fields: dict[int, memoryview] = {}
    for _ in range(java_int(count)):  # bounded: each field takes >= 2 bytes of the frame
        tag, pos = read_uvarint(view, pos)
        size, pos = read_uvarint(view, pos)
        tag, size = java_int(tag), java_int(size)
        if size < 0 or pos + size > len(view):
            raise InvalidRequestError(f"Tagged field {tag} runs past the end of the frame")
        fields[tag] = view[pos:pos + size]
        pos += size
    return fields, pos


class Session:
    """RequestChannel.Session: who a connection's requests come from. A connection of a SASL
    listener has its authenticator, and no principal until it has authenticated."""

    __slots__ = ("principal_type", "_principal_name", "authenticator", "security_protocol")

    def __init__(self, principal_name: str | None, authenticator: Any = None,
                 security_protocol: str | None = None) -> None:
        self.principal_type = "User"
        self._principal_name = principal_name
        self.authenticator = authenticator
        self.security_protocol = security_protocol or ("PLAINTEXT" if authenticator is None else "SASL_PLAINTEXT")

    @property
    def principal_name(self) -> str | None:
        """The fixed name of a PLAINTEXT or SSL session (an SSL one's from its client's certificate,
        None until the handshake); a SASL one's authenticated name, None before."""
        return self._principal_name if self.authenticator is None else self.authenticator.principal_name

    @property
    def principal(self) -> str:
        """KafkaPrincipal.toString: ANONYMOUS until a SASL or SSL connection has authenticated."""
        name = self.principal_name
        return f"{self.principal_type}:{name if name is not None else 'ANONYMOUS'}"

    @property
    def token_authenticated(self) -> bool:
        """KafkaPrincipal.tokenAuthenticated: the SASL session authenticated with a delegation token."""
        return self.authenticator is not None and self.authenticator.token_authenticated

    @property
    def user(self) -> str:
        """The quota entity's user: the principal's name (ANONYMOUS on a PLAINTEXT listener, and
        for an SSL client without a certificate)."""
        return self.principal_name or ""


ANONYMOUS_SESSION: Final = Session("ANONYMOUS")


class Request:
    """One request frame of one connection. The frame buffer is owned here."""

    __slots__ = ("connection_id", "listener_name", "client_address", "api_key", "api_version",
                 "correlation_id", "client_id", "header_version", "header_tagged_fields",
                 "frame", "body", "receive_time_ns", "dequeue_time_ns", "api_local_complete_time_ns",
                 "response_complete_time_ns", "response_dequeue_time_ns", "throttle_time_ms", "metric_names",
                 "client_information", "request_log", "response_log", "handler_task", "message_conversions_time_ns",
                 "temporary_memory_bytes", "holds_queue_slot", "session", "__weakref__")

    def __init__(self, connection_id: str, listener_name: str, client_address: tuple[str, int],
                 frame: bytes | bytearray, receive_time_ns: int,
                 header_version_of: HeaderVersionOf | None = None) -> None:
        self._start(connection_id, listener_name, client_address, frame, receive_time_ns)
        view = self.frame
        if len(view) < HEADER_V1_FIXED_SIZE_BYTES:
            raise InvalidRequestError(
                f"Request frame of {len(view)} bytes is shorter than a request header")
        self.api_key, self.api_version, self.correlation_id, client_id_size = \
            _HEADER_V1_FIXED.unpack_from(view, 0)
        pos = HEADER_V1_FIXED_SIZE_BYTES
        if client_id_size < 0:  # RequestHeaderData: any negative length is a null client id
            self.client_id = None
        else:
            end = pos + client_id_size
            if end > len(view):
                raise InvalidRequestError(
                    f"Client id of {client_id_size} bytes runs past the end of the frame")
            # Java's new String(bytes, UTF_8): malformed bytes become U+FFFD, never an error.
            self.client_id = str(view[pos:end], "utf-8", "replace")
            pos = end
        self.header_version = 1
        self.header_tagged_fields: dict[int, memoryview] | None = None
        if header_version_of is not None:
            self.header_version = header_version_of(self.api_key, self.api_version)
            if self.header_version >= 2:
                self.header_tagged_fields, pos = _read_tagged_fields(view, pos)
        self.body = view[pos:]

    @classmethod
    def bare_sasl_token(cls, connection_id: str, listener_name: str, client_address: tuple[str, int],
                        frame: bytes | bytearray, receive_time_ns: int) -> Request:
        """A frame that is a SASL token alone, after a SaslHandshake v0: no header, no API. Its
        api_key is BARE_SASL_TOKEN and its body the whole frame."""
        request = cls.__new__(cls)
        request._start(connection_id, listener_name, client_address, frame, receive_time_ns)
        request.api_key, request.api_version, request.correlation_id, request.client_id = BARE_SASL_TOKEN, 0, -1, None
        request.header_version, request.header_tagged_fields = 0, None
        request.body = request.frame
        return request

    def _start(self, connection_id: str, listener_name: str, client_address: tuple[str, int],
               frame: bytes | bytearray, receive_time_ns: int) -> None:
        self.connection_id = connection_id
        self.listener_name = listener_name
        self.client_address = client_address
        # The request's life in monotonic ns, as RequestChannel.Request keeps it for RequestMetrics:
        # read whole, its handler started, its handler's own work done (the rest is waiting on
        # others), its answer ready, its answer taken for sending; 0 until reached.
        self.receive_time_ns = receive_time_ns
        self.dequeue_time_ns = 0
        self.api_local_complete_time_ns = 0
        self.response_complete_time_ns = 0
        self.response_dequeue_time_ns = 0
        self.throttle_time_ms = 0
        # The RequestMetrics names the request counts under; None until the handler has read
        # the request (one that never is, an unknown API say, counts under none).
        self.metric_names: tuple[str, ...] | None = None
        # The client's software (name, version) as its connection's last valid ApiVersions gave it
        # (ClientInformation), and the JSON of this request and its answer while REQUEST_LOGGER logs.
        self.client_information = UNKNOWN_CLIENT_INFORMATION
        self.session = ANONYMOUS_SESSION  # its connection's (KafkaChannel sets it)
        self.request_log: dict | None = None
        self.response_log: dict | None = None
        self.handler_task: Any = None  # the task its handler goes on in after its first step, if any
        self.holds_queue_slot = True  # one of queued.max.requests, until KafkaChannel frees it
        # What validating a produce's batches cost (RecordValidationStats), for RequestMetrics.
        self.message_conversions_time_ns = 0
        self.temporary_memory_bytes = 0
        self.frame = memoryview(frame)

    @property
    def size_bytes(self) -> int:
        return len(self.frame)

    def __repr__(self) -> str:
        return (f"Request(connection_id={self.connection_id!r}, api_key={self.api_key}, "
                f"api_version={self.api_version}, correlation_id={self.correlation_id}, "
                f"client_id={self.client_id!r}, size_bytes={self.size_bytes})")


class Response:
    """A handler's answer: chunks to send in order, or a marker (see module doc)."""

    __slots__ = ("chunks", "kind", "size_bytes", "has_file_regions", "throttle_ms", "close_after")

    SEND: Final = "send"
    NO_RESPONSE_KIND: Final = "no_response"
    CLOSE_CONNECTION_KIND: Final = "close_connection"

    def __init__(self, chunks: Sequence[Chunk], kind: str = SEND) -> None:
        assert kind in (Response.SEND, Response.NO_RESPONSE_KIND, Response.CLOSE_CONNECTION_KIND)
        self.kind = kind
        self.chunks = list(chunks)
        size = 0
        regions = False
        for chunk in self.chunks:
            if isinstance(chunk, (bytes, bytearray, memoryview)):
                size += chunk.nbytes if isinstance(chunk, memoryview) else len(chunk)
            else:
                # Not isinstance(chunk, FileRegion): a Protocol's check took ~10 us, per fetch.
                assert hasattr(chunk, "fileno"), f"not a chunk: {type(chunk).__name__}"
                size += chunk.size
                regions = True
        self.size_bytes = size
        self.has_file_regions = regions
        self.throttle_ms = 0  # > 0: read nothing more from the connection for this long (a quota)
        self.close_after = False  # close the connection once this answer is sent (a failed authentication)
        assert kind == Response.SEND or not self.chunks

    def __repr__(self) -> str:
        if self.kind != Response.SEND:
            return f"Response.{self.kind.upper()}"
        return f"Response(chunks={len(self.chunks)}, size_bytes={self.size_bytes})"


# A weak reference: tasks and timers a handler starts inherit its context, and some outlive it.
_HANDLING: contextvars.ContextVar[weakref.ref[Request] | None] = contextvars.ContextVar("request_being_handled",
                                                                                        default=None)


def handling(request: Request) -> None:
    """Make `request` the one being handled in the current context (its handler's task)."""
    _HANDLING.set(weakref.ref(request))


def waiting_on_others() -> None:
    """The request being handled waits from here on for something other than its own work: a
    purgatory, a group's rebalance, records for a share fetch. Its local time ends here and its
    remote time begins, as where a Kafka handler thread returns before the answer exists
    (apiLocalCompleteTimeNanos). Only the first call of a request counts, and only from its
    handler: outside one, or from a task the handler started (which inherits its context),
    it does nothing."""
    reference = _HANDLING.get()
    request = reference() if reference is not None else None
    if request is None or request.api_local_complete_time_ns:
        return
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no loop running: not a task
        task = None
    if task is None or task is request.handler_task:  # its first step runs outside any task
        request.api_local_complete_time_ns = time.monotonic_ns()


NO_RESPONSE: Final = Response((), Response.NO_RESPONSE_KIND)
CLOSE_CONNECTION: Final = Response((), Response.CLOSE_CONNECTION_KIND)
