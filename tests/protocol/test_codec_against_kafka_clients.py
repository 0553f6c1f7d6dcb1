"""franz's codecs against kafka-clients 4.3's generated message classes, for APIs kafka-python lacks.

java/MessageOracle.java reads and writes bytes with the StreamsGroup*Data classes themselves
(their Readable constructors and SCHEMAS, their JsonConverters, MessageUtil): a message franz
encodes must be read by them and written back to the same bytes, and one they build from the same
values must be franz's bytes and decode to those values. Nulls, defaults and unknown tagged fields
are checked one by one.
"""

from __future__ import annotations

import base64
import json
import random
import uuid

import pytest

from franz.protocol import api_keys
from franz.protocol.codec import decode_request
from franz.protocol.schema import ApiSchema, Field
from tests.support.message_oracle import Oracle
from tests.support.random_messages import random_message

pytestmark = pytest.mark.interop

CHECKED_APIS = ("StreamsGroupHeartbeat", "StreamsGroupDescribe")
CASES = [(api_keys.SCHEMAS_BY_NAME[name], version, kind)
         for name in CHECKED_APIS
         for kind in ("request", "response")
         for version in range(api_keys.SCHEMAS_BY_NAME[name].min_version,
                              api_keys.SCHEMAS_BY_NAME[name].max_version + 1)]
IDS = [f"{s.name}-{k}-v{v}" for s, v, k in CASES]


def _class_name(schema: ApiSchema, kind: str) -> str:
    return f"{schema.name}{kind.capitalize()}Data"


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)


def _to_kafka_json(fields: tuple[Field, ...], message: dict, version: int):
    """franz's dict -> the JSON Kafka's JsonConverters read (camelCase names, uuids and bytes as base64)."""
    out = {}
    for field in fields:
        if field.present_in(version) and field.name in message:
            out[_camel(field.name)] = _value_to_json(field, message[field.name], version)
    return out


def _value_to_json(field: Field, value, version: int):
    if value is None:
        return None
    if field.type == "[]":
        return [_to_kafka_json(field.fields, item, version) for item in value]
    if field.type == "{}":
        return _to_kafka_json(field.fields, value, version)
    if field.element_type == "uuid":
        as_text = (lambda v: base64.urlsafe_b64encode(v).decode().rstrip("="))
        return [as_text(v) for v in value] if field.is_array else as_text(value)
    if field.element_type in ("bytes", "records"):
        return base64.b64encode(value).decode()
    return value


def _from_kafka_json(fields: tuple[Field, ...], node: dict, version: int) -> dict:
    """The inverse of _to_kafka_json, for what the converters write."""
    out = {}
    for field in fields:
        if not field.present_in(version):
            continue
        value = node[_camel(field.name)]
        if value is not None and field.type == "[]":
            value = [_from_kafka_json(field.fields, item, version) for item in value]
        elif value is not None and field.type == "{}":
            value = _from_kafka_json(field.fields, value, version)
        elif value is not None and field.element_type == "uuid":
            as_bytes = (lambda v: uuid.UUID(bytes=base64.urlsafe_b64decode(v + "==")).bytes)
            value = [as_bytes(v) for v in value] if field.is_array else as_bytes(value)
        elif value is not None and field.element_type in ("bytes", "records"):
            value = base64.b64decode(value)
        out[field.name] = value
    return out


def _fields(schema: ApiSchema, kind: str) -> tuple[Field, ...]:
    return schema.request if kind == "request" else schema.response


def _encode(schema: ApiSchema, kind: str, version: int, message: dict) -> bytes:
    chunks = [bytearray()]
    api_keys.CODECS[schema.api_key].encode(kind, version, message, chunks)
    return bytes(chunks[0])


def _decode(schema: ApiSchema, kind: str, version: int, data: bytes) -> dict:
    if kind == "request":
        return decode_request(schema.api_key, version, data)
    decoded, end = api_keys.CODECS[schema.api_key].decode(kind, version, data)
    assert end == len(data)
    return decoded


def _with_nullables(fields: tuple[Field, ...], message: dict, version: int, null: bool) -> dict:
    """`message` with every nullable field null (null=True) or, recursively, the others only."""
    out = {}
    for field in fields:
        if not field.present_in(version):
            continue
        value = message[field.name]
        if null and field.nullable_in(version):
            value = None
        elif value is not None and field.type == "[]":
            value = [_with_nullables(field.fields, item, version, null) for item in value]
        elif value is not None and field.type == "{}":
            value = _with_nullables(field.fields, value, version, null)
        out[field.name] = value
    return out


def _both_ways(oracle: Oracle, schema: ApiSchema, kind: str, version: int, message: dict) -> None:
    fields = _fields(schema, kind)
    name = _class_name(schema, kind)
    ours = _encode(schema, kind, version, message)
    parsed = oracle.ask("parse", name, str(version), ours.hex())
    assert _from_kafka_json(fields, parsed["json"], version) == message
    assert bytes.fromhex(parsed["bytes"]) == ours
    theirs = bytes.fromhex(oracle.ask("build", name, str(version),
                                      json.dumps(_to_kafka_json(fields, message, version)))["bytes"])
    assert theirs == ours
    assert _decode(schema, kind, version, theirs) == message


@pytest.mark.parametrize(("schema", "version", "kind"), CASES, ids=IDS)
def test_kafka_clients_and_franz_write_and_read_the_same_bytes(oracle, schema, version, kind):
    rng = random.Random(f"{schema.name}{kind}{version}")
    for _ in range(12):
        _both_ways(oracle, schema, kind, version, random_message(_fields(schema, kind), version, rng))


@pytest.mark.parametrize(("schema", "version", "kind"), CASES, ids=IDS)
def test_every_nullable_field_null_and_every_one_present(oracle, schema, version, kind):
    fields = _fields(schema, kind)
    full = random_message(fields, version, random.Random(f"full {schema.name}{kind}{version}"), full=True)
    _both_ways(oracle, schema, kind, version, full)
    _both_ways(oracle, schema, kind, version, _with_nullables(fields, full, version, null=True))


@pytest.mark.parametrize(("schema", "version", "kind"), CASES, ids=IDS)
def test_a_message_left_empty_is_written_with_kafkas_defaults(oracle, schema, version, kind):
    """franz's encoder fills a missing field with its default as the Java constructor does."""
    theirs = oracle.ask("default", _class_name(schema, kind), str(version))["bytes"]
    assert _encode(schema, kind, version, {}).hex() == theirs


@pytest.mark.parametrize(("schema", "version", "kind"), CASES, ids=IDS)
def test_an_unknown_tagged_field_is_skipped(oracle, schema, version, kind):
    fields = _fields(schema, kind)
    message = random_message(fields, version, random.Random(f"tagged {schema.name}{kind}{version}"), full=True)
    payload = json.dumps(_to_kafka_json(fields, message, version))
    tagged = bytes.fromhex(oracle.ask("build-tagged", _class_name(schema, kind), str(version), "9999", "c0ffee",
                                      payload)["bytes"])
    plain = _encode(schema, kind, version, message)
    assert len(tagged) > len(plain)
    assert _decode(schema, kind, version, tagged) == message


def test_4_3_heartbeats_carry_the_endpoint_information_epoch():
    """A field the first KIP-1071 specs lacked: without it every later field would be misread."""
    heartbeat = api_keys.SCHEMAS_BY_NAME["StreamsGroupHeartbeat"]
    assert [f.name for f in heartbeat.request[:4]] == ["group_id", "member_id", "member_epoch",
                                                        "endpoint_information_epoch"]
    assert "endpoint_information_epoch" in [f.name for f in heartbeat.response]
