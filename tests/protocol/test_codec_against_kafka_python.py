"""franz's codecs against an independent implementation of the same specs.

kafka-python 3.x ships Kafka's message JSON specs and a codec of its own built
on them. For every API and version franz serves, a message filled with random
values of every field is encoded by one side and decoded by the other, both
ways, and must come back equal: a field franz lost, misordered, mistyped or
encoded with the wrong (compact or classic) form shows up here.
"""

from __future__ import annotations

import importlib
import pkgutil
import random
import uuid

import pytest

import kafka.protocol

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
from franz.protocol import api_keys
from franz.protocol.codec import decode_request
from franz.protocol.schema import Field
from tests.support.random_messages import random_message


def _kafka_python_classes() -> dict[tuple[int, str], type]:
    found: dict[tuple[int, str], type] = {}
    for module_info in pkgutil.walk_packages(kafka.protocol.__path__, "kafka.protocol."):
        if module_info.name.endswith(("old", "stubs")) or ".old" in module_info.name:
            continue
        try:
            module = importlib.import_module(module_info.name)
        except Exception:
            continue
        for value in vars(module).values():
            api_key = getattr(value, "_api_key", None) if isinstance(value, type) else None
            try:
                key = value.API_KEY if isinstance(value, type) else None
                kind = value.type if isinstance(value, type) else None
            except Exception:
                continue
            if isinstance(key, int) and kind in ("request", "response") and getattr(value, "_valid_versions", None):
                found.setdefault((key, kind), value)
            del api_key
    return found


CLASSES = _kafka_python_classes()


def _kafka_python_keeps(field: Field) -> bool:
    return field.name.endswith("authorized_operations")  # kafka-python turns these into sets of operations


def _normalize(value):
    """kafka-python's dict form -> franz's: uuids as 16 bytes, bytes-likes as bytes."""
    if isinstance(value, dict):
        return {k: _normalize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalize(v) for v in value]
    if isinstance(value, uuid.UUID):
        return value.bytes
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    return value


def _present(fields: tuple[Field, ...], data: dict, version: int, flexible: bool) -> dict:
    """Only the fields present in `version` (tagged ones only in flexible versions)."""
    out = {}
    for field in fields:
        if not field.present_in(version) or (field.tag is not None and not flexible):
            continue
        if field.name.endswith("authorized_operations"):
            continue  # kafka-python renames these; the byte comparison still covers them
        value = data.get(field.name)
        if field.type == "[]" and value is not None:
            value = [_present(field.fields, item, version, flexible) for item in value]
        elif field.type == "{}" and value is not None:
            value = _present(field.fields, value, version, flexible)
        out[field.name] = _normalize(value)
    return out


# kafka-python 3.0 cannot decode a DeleteTopics request (its decoder looks for a
# header attribute); real clients drive DeleteTopics in the interop tests.
ORACLE_CANNOT_DECODE = {("DeleteTopics", "request")}

CASES = [(schema, version, kind)
         for schema in api_keys.SCHEMAS.values()
         for kind in ("request", "response")
         if (schema.api_key, kind) in CLASSES and (schema.name, kind) not in ORACLE_CANNOT_DECODE
         for version in range(schema.min_version, schema.max_version + 1)
         if CLASSES[(schema.api_key, kind)].min_version <= version <= CLASSES[(schema.api_key, kind)].max_version]


# kafka-python 3.0 has no KIP-848 consumer-group messages, no KIP-932 share-group messages,
# no delegation token messages and no UnregisterBroker; their schemas are checked by the group
# coordinator's interop tests and by the Java client (tests/interop/test_java_client.py,
# tests/interop/test_java_share_consumer.py) instead.
WITHOUT_ORACLE = {"ConsumerGroupDescribe", "ConsumerGroupHeartbeat", "CreateDelegationToken",
                  "DescribeDelegationToken", "ExpireDelegationToken", "RenewDelegationToken", "UnregisterBroker",
                  "ShareAcknowledge", "ShareFetch", "ShareGroupDescribe", "ShareGroupHeartbeat",
                  "DescribeShareGroupOffsets", "AlterShareGroupOffsets", "DeleteShareGroupOffsets",
                  # the share-group state RPCs: kafka-clients' own classes read and write them in
                  # tests/interop/test_java_share_consumer.py
                  "InitializeShareGroupState", "ReadShareGroupState", "WriteShareGroupState",
                  "DeleteShareGroupState", "ReadShareGroupStateSummary",
                  # KIP-1071's: kafka-clients' generated classes check them (test_codec_against_kafka_clients.py)
                  "StreamsGroupHeartbeat", "StreamsGroupDescribe"}


def test_every_served_api_has_an_oracle():
    covered = {s.name for s, _, _ in CASES} | WITHOUT_ORACLE | {"DeleteTopics"}
    missing = sorted({s.name for s in api_keys.SCHEMAS.values()} - covered)
    assert not missing, f"kafka-python has no codec for {missing}"


@pytest.mark.parametrize(("schema", "version", "kind"), CASES,
                         ids=[f"{s.name}-{k}-v{v}" for s, v, k in CASES])
def test_franz_and_kafka_python_read_each_others_bytes(schema, version, kind):
    oracle = CLASSES[(schema.api_key, kind)][version]
    codec = api_keys.CODECS[schema.api_key]
    fields = schema.request if kind == "request" else schema.response
    flexible = schema.is_flexible(version)
    rng = random.Random(f"{schema.name}{kind}{version}")
    for _ in range(8):
        message = random_message(fields, version, rng, _kafka_python_keeps)
        if schema.name == "ApiVersions" and kind == "response":
            message["error_code"] = 0  # kafka-python reads an error answer as v0
        expected = _present(fields, message, version, flexible)
        chunks = [bytearray()]
        codec.encode(kind, version, message, chunks)
        ours = bytes(chunks[0])
        theirs_view = oracle.decode(ours)
        assert _present(fields, _normalize(theirs_view.to_dict(json=False)), version, flexible) == expected
        encoded_by_oracle = bytes(theirs_view.encode())
        assert encoded_by_oracle == ours
        if kind == "request":
            decoded = decode_request(schema.api_key, version, encoded_by_oracle)
        else:
            decoded, _ = codec.decode(kind, version, encoded_by_oracle)
        assert _present(fields, decoded, version, flexible) == expected
