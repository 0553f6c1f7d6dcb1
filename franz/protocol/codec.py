"""Request and response frames: header plus body, for the broker and for clients.

The broker side decodes request bodies (the header is read by the network
layer, franz/server/request_channel.py) and encodes responses as chunk lists
that may hold file regions; the client side (franz's own tools and tests)
encodes requests and decodes responses. None of these add the 4-byte size
prefix: the transport owns framing.
"""

from __future__ import annotations

import struct
from typing import Any, Final

from franz.protocol.api_keys import CODECS, request_header_version, response_header_version
from franz.protocol.codegen import read_uvarint

_CORRELATION: Final = struct.Struct(">i")
_REQUEST_HEADER: Final = struct.Struct(">hhi")
_I16: Final = struct.Struct(">h")


class UnsupportedApiError(LookupError):
    """An API key franz does not implement."""


def _codec(api_key: int):
    codec = CODECS.get(api_key)
    if codec is None:
        raise UnsupportedApiError(f"unsupported API key {api_key}")
    return codec


def decode_request(api_key: int, version: int, body: Any) -> dict:
    """Decode a request body (the bytes after the request header).

    Bytes after the body are ignored, as Kafka's parser ignores them: librdkafka
    sends Metadata v12 with a field that only v8-10 has, and Kafka serves it.
    """
    data, _ = _codec(api_key).decode("request", version, body)
    return data


def encode_response(api_key: int, version: int, correlation_id: int, data: dict) -> list:
    """Response header and body as chunks (bytearrays and file regions)."""
    head = bytearray(_CORRELATION.pack(correlation_id))
    if response_header_version(api_key, version) >= 1:
        head += b"\x00"
    chunks: list = [head]
    _codec(api_key).encode("response", version, data, chunks)
    return [chunk for chunk in chunks if not isinstance(chunk, bytearray) or chunk]


def encode_request(api_key: int, version: int, correlation_id: int, client_id: str | None,
                   data: dict) -> bytes:
    """A whole request frame without its size prefix; records must be bytes-like."""
    head = bytearray(_REQUEST_HEADER.pack(api_key, version, correlation_id))
    if client_id is None:
        head += _I16.pack(-1)
    else:
        encoded = client_id.encode("utf-8")
        head += _I16.pack(len(encoded)) + encoded
    if request_header_version(api_key, version) >= 2:
        head += b"\x00"
    chunks: list = [head]
    _codec(api_key).encode("request", version, data, chunks)
    if len(chunks) != 1:
        raise TypeError("a request's records must be bytes-like, not file regions")
    return bytes(head)


def decode_response(api_key: int, version: int, frame: Any) -> tuple[int, dict]:
    """(correlation_id, body) of a response frame without its size prefix."""
    correlation_id = _CORRELATION.unpack_from(frame, 0)[0]
    pos = 4
    if response_header_version(api_key, version) >= 1:
        count, pos = read_uvarint(frame, pos)
        for _ in range(count):
            _, pos = read_uvarint(frame, pos)
            size, pos = read_uvarint(frame, pos)
            pos += size
    data, _ = _codec(api_key).decode("response", version, memoryview(frame)[pos:])
    return correlation_id, data
