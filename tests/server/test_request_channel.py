"""Request header reading and Response accounting (no sockets: pure bytes)."""

from __future__ import annotations

import struct

import pytest

from franz.server.request_channel import (
    CLOSE_CONNECTION,
    NO_RESPONSE,
    FileRegion,
    FileSlice,
    InvalidRequestError,
    Request,
    Response,
    read_uvarint,
)


def header_v1(api_key=1, api_version=13, correlation_id=99, client_id: bytes | None = b"consumer-1") -> bytes:
    fixed = struct.pack(">hhi", api_key, api_version, correlation_id)
    if client_id is None:
        return fixed + struct.pack(">h", -1)
    return fixed + struct.pack(">h", len(client_id)) + client_id


def make(frame: bytes, header_version_of=None) -> Request:
    return Request("conn-1", "PLAINTEXT", ("127.0.0.1", 5555), frame, 123, header_version_of)


def test_header_v1_fields_and_body_view():
    frame = header_v1() + b"BODY"
    request = make(frame)
    assert (request.api_key, request.api_version, request.correlation_id) == (1, 13, 99)
    assert request.client_id == "consumer-1"
    assert request.header_version == 1 and request.header_tagged_fields is None
    assert isinstance(request.body, memoryview) and bytes(request.body) == b"BODY"
    assert request.body.obj is request.frame.obj  # a view over the frame, not a copy
    assert request.size_bytes == len(frame)
    assert (request.connection_id, request.listener_name, request.receive_time_ns) == ("conn-1", "PLAINTEXT", 123)


def test_null_and_empty_client_id():
    assert make(header_v1(client_id=None)).client_id is None
    assert make(header_v1(client_id=b"")).client_id == ""


def test_negative_api_fields_are_read_signed():
    request = make(header_v1(api_key=-1, api_version=-2, correlation_id=-3))
    assert (request.api_key, request.api_version, request.correlation_id) == (-1, -2, -3)


def test_header_v2_tagged_field_varints_are_java_ints():
    """ByteUtils.readUnsignedVarint gives an int: a count of 2^31 is negative and reads no field, a
    five-byte size keeps its low 32 bits; a size past the frame fails."""
    v2 = {"header_version_of": lambda key, version: 2}
    request = make(header_v1() + b"\x80\x80\x80\x80\x08" + b"BODY", **v2)
    assert request.header_tagged_fields == {} and bytes(request.body) == b"BODY"
    request = make(header_v1() + b"\x01\x07\x83\x80\x80\x80\x10abc" + b"BODY", **v2)  # size 2^32 + 3
    assert {tag: bytes(data) for tag, data in request.header_tagged_fields.items()} == {7: b"abc"}
    with pytest.raises(InvalidRequestError, match="runs past the end"):
        make(header_v1() + b"\x01\x07\xff\xff\xff\xff\x0f" + b"BODY", **v2)  # size -1


def test_header_v2_tagged_fields_are_skipped_before_the_body():
    tagged = bytes([2, 0, 3]) + b"abc" + bytes([5, 0])  # two fields: tag 0 (3 bytes), tag 5 (empty)
    request = make(header_v1() + tagged + b"BODY", header_version_of=lambda key, version: 2)
    assert request.header_version == 2
    assert {tag: bytes(data) for tag, data in request.header_tagged_fields.items()} == {0: b"abc", 5: b""}
    assert bytes(request.body) == b"BODY"


def test_header_version_is_asked_per_api_key_and_version():
    asked = []

    def header_version_of(api_key, api_version):
        asked.append((api_key, api_version))
        return 1

    request = make(header_v1(api_key=18, api_version=3) + b"\x00rest", header_version_of)
    assert asked == [(18, 3)]
    assert bytes(request.body) == b"\x00rest"  # v1: nothing is taken as tagged fields


@pytest.mark.parametrize("frame, reason", [
    (b"", "shorter than a request header"),
    (header_v1()[:9], "shorter than a request header"),
    (struct.pack(">hhih", 1, 0, 1, 50) + b"short", "runs past the end"),
])
def test_malformed_header_is_refused(frame, reason):
    with pytest.raises(InvalidRequestError, match=reason):
        make(frame)


def test_the_client_id_is_read_as_kafkas_generated_reader_reads_it():
    """RequestHeaderData: any negative length is null; bytes that are not UTF-8 decode as
    java.lang.String decodes them, each malformed sequence one U+FFFD."""
    assert make(struct.pack(">hhih", 1, 0, 1, -2)).client_id is None
    assert make(struct.pack(">hhih", 1, 0, 1, 4) + b"a\xff\xfeb").client_id == "a\ufffd\ufffdb"


@pytest.mark.parametrize("tagged, reason", [
    (b"", "Truncated varint"),
    (bytes([1, 0, 10]) + b"abc", "runs past the end"),
    (bytes([0x80] * 6), "longer than 5 bytes"),
])
def test_malformed_tagged_fields_are_refused(tagged, reason):
    with pytest.raises(InvalidRequestError, match=reason):
        make(header_v1() + tagged, header_version_of=lambda key, version: 2)


def test_read_uvarint():
    assert read_uvarint(memoryview(bytes([0])), 0) == (0, 1)
    assert read_uvarint(memoryview(bytes([0x96, 0x01])), 0) == (150, 2)
    assert read_uvarint(memoryview(bytes([9, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F])), 1) == (2**32 - 1, 6)


def test_response_size_counts_bytes_views_and_file_regions(tmp_path):
    path = tmp_path / "f"
    path.write_bytes(b"x" * 100)
    with open(path, "rb") as file:
        region = FileSlice(file, 10, 50)
        assert isinstance(region, FileRegion) and region.fileno() == file.fileno()
        response = Response([b"abc", bytearray(b"de"), memoryview(b"0123456789")[2:5], region])
        assert response.size_bytes == 3 + 2 + 3 + 50
        assert response.has_file_regions and response.kind == Response.SEND
        assert not Response([b"x"]).has_file_regions


def test_markers_carry_no_chunks():
    assert NO_RESPONSE.kind == Response.NO_RESPONSE_KIND and NO_RESPONSE.chunks == []
    assert CLOSE_CONNECTION.kind == Response.CLOSE_CONNECTION_KIND and CLOSE_CONNECTION.size_bytes == 0


def test_a_chunk_that_is_neither_bytes_nor_region_is_refused():
    with pytest.raises(AssertionError):
        Response(["text is not bytes"])
