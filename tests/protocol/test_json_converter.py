"""Messages as the JsonConverters Kafka generates write them, and that JSON as Jackson prints it
(franz/protocol/json_converter.py): the request log and dump-log's record decoders print through it."""

from __future__ import annotations

import random

import pytest

from franz.coordinator.group import consumer_protocol
from franz.protocol import api_keys
from franz.protocol.codec import decode_request
from franz.protocol.json_converter import camel_case, json_text, message_json
from franz.protocol.schema import ApiSchema, Field
from franz.records import MemoryRecords
from tests.support.random_messages import random_message
from tests.support.raw_client import batch

# Strings Jackson and Python's json print differently unless told: text beyond ASCII, quotes,
# backslashes, control characters with and without a short escape, a backslash before a "u".
TRICKY_STRINGS = ("", "plain", "topic-é", "日本", 'a"b', "back\\slash", "tab\tnew\nline\r", "\x00\x01\x1f\x7f",
                  "\\u001f", "\x08\x0c", "emoji-\U0001F600")


def test_names_are_kafkas_camel_case():
    assert camel_case("topic_id") == "topicId" and camel_case("v3_and_below_topics") == "v3AndBelowTopics"


def test_records_are_their_size_when_asked_and_an_empty_byte_array_otherwise():
    schema = api_keys.SCHEMAS_BY_NAME["ShareFetch"]
    records = MemoryRecords(bytearray(batch(b"v")))
    body = {"responses": [{"topic_id": bytes(16), "partitions": [{"partition_index": 0, "records": records}]}]}
    partition = message_json(schema.response, 1, body)["responses"][0]["partitions"][0]
    assert partition["records"] == "" and "recordsSizeInBytes" not in partition
    sized = message_json(schema.response, 1, body, records_size=lambda value: value.size_in_bytes)
    assert sized["responses"][0]["partitions"][0]["recordsSizeInBytes"] == records.size_in_bytes


def test_uuids_bytes_and_tagged_fields_as_kafkas_json_converters_write_them():
    schema = api_keys.SCHEMAS_BY_NAME["Metadata"]
    topic_id = bytes(range(16))
    answer = message_json(schema.response, 12, {"throttle_time_ms": 0, "brokers": [], "cluster_id": "c",
                                                "controller_id": 1, "topics": [{
                                                    "error_code": 0, "name": "t", "topic_id": topic_id,
                                                    "is_internal": False, "partitions": [],
                                                    "topic_authorized_operations": -2147483648}]})
    assert answer["topics"][0]["topicId"] == "AAECAwQFBgcICQoLDA0ODw"  # Uuid.toString: URL-safe base64
    api_versions = api_keys.SCHEMAS_BY_NAME["ApiVersions"]
    body = {"error_code": 0, "api_keys": [], "throttle_time_ms": 0, "supported_features": [],
            "finalized_features_epoch": -1, "finalized_features": [], "zk_migration_ready": False}
    assert "finalizedFeaturesEpoch" not in message_json(api_versions.response, 3, body)  # tagged, at its default
    body["finalized_features_epoch"] = 7
    assert message_json(api_versions.response, 3, body)["finalizedFeaturesEpoch"] == 7
    sasl = api_keys.SCHEMAS_BY_NAME["SaslAuthenticate"]
    assert message_json(sasl.request, 2, {"auth_bytes": b"\x00user\x00pw"}) == {"authBytes": "AHVzZXIAcHc="}


def test_json_text_escapes_as_jackson_does():
    assert json_text({"a": "é\n\x1f", "b": [1, None, True]}) == '{"a":"é\\n\\u001F","b":[1,null,true]}'
    assert json_text("\\u001f") == '"\\\\u001f"'  # escaped text, not an escape: left as it is
    assert json_text("\\\x1f") == '"\\\\\\u001F"'


# -- against kafka-clients' own JsonConverters ---------------------------------------


def _with_tricky_strings(fields: tuple[Field, ...], message: dict, rng: random.Random) -> dict:
    out = dict(message)
    for field in fields:
        value = out.get(field.name)
        if value is None:
            continue
        if field.type == "string":
            out[field.name] = rng.choice(TRICKY_STRINGS)
        elif field.type == "[]string":
            out[field.name] = [rng.choice(TRICKY_STRINGS) for _ in value]
        elif field.type == "[]":
            out[field.name] = [_with_tricky_strings(field.fields, row, rng) for row in value]
        elif field.type == "{}":
            out[field.name] = _with_tricky_strings(field.fields, value, rng)
    return out


def _no_floats(field: Field) -> bool:
    # Jackson prints a double with Java's Double.toString (1.0E7, and on Java 17 not always the
    # shortest digits), Python with repr: the generated values keep their default, 0.0.
    return field.type == "float64"


def _encode(codec, kind: str, version: int, message: dict) -> bytes:
    chunks = [bytearray()]
    codec.encode(kind, version, message, chunks)
    return b"".join(bytes(chunk) for chunk in chunks)


API_CASES = [(schema, kind, version) for schema in api_keys.SCHEMAS.values() for kind in ("request", "response")
             for version in range(schema.min_version, schema.max_version + 1)]


@pytest.mark.interop
@pytest.mark.parametrize("schema", list(api_keys.SCHEMAS.values()), ids=lambda schema: schema.name)
def test_every_apis_json_is_kafka_clients_json_to_the_character(oracle, schema: ApiSchema):
    """Each version of each API's request and response, random values with tricky strings: franz's
    JSON of what it decodes, printed, is the text kafka-clients' JsonConverter prints for the same bytes."""
    rng = random.Random(f"{schema.name}")
    codec = api_keys.CODECS[schema.api_key]
    for version in range(schema.min_version, schema.max_version + 1):
        for kind, fields in (("request", schema.request), ("response", schema.response)):
            for _ in range(3):
                message = _with_tricky_strings(fields, random_message(fields, version, rng, _no_floats), rng)
                data = _encode(codec, kind, version, message)
                decoded = decode_request(schema.api_key, version, data) if kind == "request" else \
                    codec.decode(kind, version, data)[0]
                theirs = oracle.ask("json-text", f"{schema.name}{kind.capitalize()}Data", str(version),
                                    data.hex())["text"]
                assert json_text(message_json(fields, version, decoded)) == theirs, (kind, version)


@pytest.mark.interop
@pytest.mark.parametrize("name", ["ConsumerProtocolSubscription", "ConsumerProtocolAssignment"])
def test_the_consumer_protocols_json_is_kafka_clients_json(oracle, name: str):
    """dump-log's offsets decoder prints a classic group member's subscription and assignment so."""
    codec = consumer_protocol._CODECS[name]
    rng = random.Random(name)
    for version in range(codec.schema.min_version, codec.schema.max_version + 1):
        for _ in range(10):
            message = _with_tricky_strings(codec.schema.request, random_message(codec.schema.request, version, rng),
                                           rng)
            data = _encode(codec, "request", version, message)
            theirs = oracle.ask("json-text", name, str(version), data.hex())["text"]
            decoded = codec.decode("request", version, data)[0]
            assert json_text(message_json(codec.schema.request, version, decoded)) == theirs
