"""The compiled codecs on hostile and unusual input: truncation, garbage,
unknown tagged fields, records as views and file regions."""

from __future__ import annotations

import os
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from franz.protocol import api_keys
from franz.protocol.codec import decode_request, decode_response, encode_request, encode_response
from franz.protocol.codegen import MessageDecodeError, uvarint_bytes
from franz.protocol.schema import SchemaError, parse_schemas

PRODUCE, FETCH, METADATA, FIND_COORDINATOR = 0, 1, 3, 10

PRODUCE_V9 = {"transactional_id": None, "acks": -1, "timeout_ms": 1000,
              "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": b"\x01\x02\x03"}]}]}


def _body(frame: bytes) -> memoryview:
    """The body of a request frame built by encode_request (header v2, client id 'c')."""
    return memoryview(frame)[4 + 4 + 2 + 1 + 1:]


def test_records_decode_as_a_view_over_the_request_buffer():
    frame = bytearray(encode_request(PRODUCE, 9, 1, "c", PRODUCE_V9))
    body = decode_request(PRODUCE, 9, _body(bytes(frame)))
    records = body["topic_data"][0]["partition_data"][0]["records"]
    assert isinstance(records, memoryview)
    assert bytes(records) == b"\x01\x02\x03"


def test_every_truncation_of_a_request_raises_decode_error_only():
    frame = encode_request(PRODUCE, 9, 1, "c", PRODUCE_V9)
    body = bytes(_body(frame))
    for cut in range(len(body)):
        with pytest.raises(MessageDecodeError):
            decode_request(PRODUCE, 9, body[:cut])


@settings(max_examples=300, deadline=None)
@given(api=st.sampled_from(sorted(api_keys.SCHEMAS)), data=st.binary(max_size=200), version_pick=st.integers(0, 99))
def test_garbage_never_escapes_as_another_exception(api, data, version_pick):
    schema = api_keys.SCHEMAS[api]
    version = schema.min_version + version_pick % (schema.max_version - schema.min_version + 1)
    try:
        decode_request(api, version, data)
    except MessageDecodeError:
        pass


def test_an_array_count_beyond_the_frame_is_refused_before_allocating():
    # Metadata v1: topics array with a count of 2**31 - 1 and nothing after it.
    with pytest.raises(MessageDecodeError, match="exceeds the frame"):
        decode_request(METADATA, 1, struct.pack(">i", 2**31 - 1))


def test_strings_are_read_as_kafkas_generated_readers_read_them():
    """Malformed UTF-8 decodes as java.lang.String decodes it (U+FFFD, no error); a string longer
    than 0x7fff bytes is refused even in compact form, where its length could say more."""
    def find_coordinator_v4(key: bytes) -> bytes:  # flexible: key type, then compact keys
        return bytes([0]) + uvarint_bytes(2) + uvarint_bytes(len(key) + 1) + key + bytes([0])
    assert decode_request(FIND_COORDINATOR, 4, find_coordinator_v4(b"g\xc3("))["coordinator_keys"] == ["g\ufffd("]
    assert decode_request(FIND_COORDINATOR, 4, find_coordinator_v4(b"k" * 0x7FFF))["coordinator_keys"] == [
        "k" * 0x7FFF]
    with pytest.raises(MessageDecodeError, match="string field coordinator_keys had invalid length 32768"):
        decode_request(FIND_COORDINATOR, 4, find_coordinator_v4(b"k" * 0x8000))


def test_a_string_no_reader_would_take_is_not_written():
    """Kafka's writers refuse a string over 0x7fff bytes ("too long to be serialized"): written
    in compact form it would reach the client as a response no reader parses."""
    answer = {"throttle_time_ms": 0, "coordinators": [
        {"key": "g", "error_code": 15, "error_message": "x" * 0x7FFF, "node_id": -1, "host": "", "port": -1}]}
    encode_response(FIND_COORDINATOR, 4, 1, answer)
    answer["coordinators"][0]["error_message"] += "x"
    with pytest.raises(ValueError, match="error_message is too long to be serialized"):
        encode_response(FIND_COORDINATOR, 4, 1, answer)


def test_unknown_tagged_fields_are_skipped():
    known = encode_request(METADATA, 12, 1, "c", {"topics": None})
    body = bytearray(_body(known))
    assert body[-1] == 0  # no tagged fields
    body[-1:] = uvarint_bytes(2) + uvarint_bytes(90) + uvarint_bytes(3) + b"abc" \
        + uvarint_bytes(91) + uvarint_bytes(0)
    decoded = decode_request(METADATA, 12, bytes(body))
    assert decoded["topics"] is None


def test_tagged_fields_are_read_as_kafkas_generated_readers_read_them():
    """Count, tag and size are Java ints (a count of 2^31 reads no field, a five-byte size keeps
    its low 32 bits); a known field is read by its own encoding, its declared size unused; a tag
    the struct has only in other versions is refused ("Tag 1 is not valid for version 12")."""
    fetch = {"max_wait_ms": 0, "min_bytes": 1, "topics": [], "forgotten_topics_data": [], "rack_id": ""}
    plain = bytearray(_body(encode_request(1, 13, 1, "c", fetch)))
    assert plain[-1] == 0
    assert decode_request(1, 13, bytes(plain[:-1] + b"\x80\x80\x80\x80\x08"))["cluster_id"] is None
    skipped = plain[:-1] + b"\x01\x09\x83\x80\x80\x80\x10abc"
    assert decode_request(1, 13, bytes(skipped))["topics"] == []
    for declared in (3, 9):  # the value takes 4 bytes
        tagged = plain[:-1] + bytes([1, 0, declared, 4]) + b"abc"
        assert decode_request(1, 13, bytes(tagged))["cluster_id"] == "abc"
    with pytest.raises(MessageDecodeError, match="Tag 1 is not valid for version 12"):
        decode_request(1, 12, bytes(_body(encode_request(1, 12, 1, "c", fetch))[:-1]) + bytes([1, 1, 0]))


def test_a_tagged_field_is_written_only_when_it_differs_from_its_default():
    partition = {"partition_index": 0, "records": b""}
    plain = encode_response(FETCH, 12, 7, {"responses": [{"topic": "t", "partitions": [partition]}]})
    tagged = encode_response(FETCH, 12, 7, {"responses": [{"topic": "t", "partitions": [
        dict(partition, diverging_epoch={"epoch": 3, "end_offset": 10})]}]})
    plain_bytes = b"".join(bytes(c) for c in plain)
    tagged_bytes = b"".join(bytes(c) for c in tagged)
    assert len(tagged_bytes) > len(plain_bytes)
    _, decoded = decode_response(FETCH, 12, tagged_bytes)
    assert decoded["responses"][0]["partitions"][0]["diverging_epoch"] == {"epoch": 3, "end_offset": 10}
    _, decoded_plain = decode_response(FETCH, 12, plain_bytes)
    assert decoded_plain["responses"][0]["partitions"][0]["diverging_epoch"] == {"epoch": -1, "end_offset": -1}


class _Region:
    def __init__(self, fd: int, position: int, size: int) -> None:
        self._fd, self.position, self.size = fd, position, size

    def fileno(self) -> int:
        return self._fd


def test_file_regions_stand_between_byte_runs_with_their_size_prefixed(tmp_path):
    path = tmp_path / "records"
    path.write_bytes(b"0123456789")
    fd = os.open(path, os.O_RDONLY)
    try:
        region = _Region(fd, 2, 5)
        chunks = encode_response(FETCH, 12, 7, {"responses": [{"topic": "t", "partitions": [
            {"partition_index": 0, "records": region}, {"partition_index": 1, "records": b"xy"}]}]})
        assert region in chunks
        flat = b"".join(os.pread(c.fileno(), c.size, c.position) if c is region else bytes(c) for c in chunks)
        _, decoded = decode_response(FETCH, 12, flat)
        partitions = decoded["responses"][0]["partitions"]
        assert bytes(partitions[0]["records"]) == b"23456"
        assert bytes(partitions[1]["records"]) == b"xy"
    finally:
        os.close(fd)


def test_response_header_versions_follow_flexibility_except_api_versions():
    assert api_keys.response_header_version(PRODUCE, 8) == 0
    assert api_keys.response_header_version(PRODUCE, 9) == 1
    assert api_keys.response_header_version(18, 3) == 0
    assert api_keys.request_header_version(18, 3) == 2
    assert api_keys.request_header_version(PRODUCE, 8) == 1


def test_produce_is_advertised_from_version_zero_but_served_from_three():
    rows = {key: (low, high) for key, low, high in api_keys.advertised_ranges()}
    assert rows[PRODUCE][0] == 0
    assert api_keys.SCHEMAS[PRODUCE].min_version == 3
    assert not api_keys.is_supported(PRODUCE, 2)


def test_schema_errors_name_the_line():
    with pytest.raises(SchemaError, match="unknown type"):
        parse_schemas("X key=1 versions=0-1\n request\n    a int99\n response\n    b int8\n")
    with pytest.raises(SchemaError, match="unknown attribute"):
        parse_schemas("X key=1 versions=0-1\n request\n    a int8 bogus\n response\n    b int8\n")
