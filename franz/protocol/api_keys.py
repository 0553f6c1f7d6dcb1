"""The APIs franz serves and their version ranges (org.apache.kafka.common.protocol.ApiKeys).

The registry is built from the schema modules; each API's range starts at Kafka
4.x's baseline (KIP-896) and ends at the newest version franz implements.
Produce is advertised from version 0 as Kafka 4.x does (KAFKA-18659: older
librdkafka refuses a broker whose Produce range starts above 0), while
versions below 3 are still answered with UNSUPPORTED_VERSION.

Header versions: a request in a flexible version has header v2 (client id and
tagged fields), else v1; its response has header v1 (tagged fields), else v0.
ApiVersions responses always use header v0, so that a client speaking a newer
version than the broker can still read the error and the ranges.
"""

from __future__ import annotations

from typing import Final

from franz.protocol.codegen import MessageCodec
from franz.protocol.messages import admin, core, group, share, streams, txn
from franz.protocol.schema import ApiSchema, parse_schemas

API_VERSIONS_KEY: Final = 18
PRODUCE_KEY: Final = 0
PRODUCE_ADVERTISED_MIN_VERSION: Final = 0
# The *_authorized_operations fields when the request did not ask for them (Integer.MIN_VALUE).
AUTHORIZED_OPERATIONS_OMITTED: Final = -2147483648


def _load() -> dict[int, ApiSchema]:
    apis: dict[int, ApiSchema] = {}
    for module in (core, admin, group, share, streams, txn):
        for schema in parse_schemas(module.SCHEMAS):
            assert schema.api_key not in apis, f"API key {schema.api_key} defined twice"
            apis[schema.api_key] = schema
    return apis


SCHEMAS: Final[dict[int, ApiSchema]] = _load()
SCHEMAS_BY_NAME: Final[dict[str, ApiSchema]] = {s.name: s for s in SCHEMAS.values()}
CODECS: Final[dict[int, MessageCodec]] = {key: MessageCodec(s) for key, s in SCHEMAS.items()}


def is_supported(api_key: int, version: int) -> bool:
    schema = SCHEMAS.get(api_key)
    return schema is not None and schema.min_version <= version <= schema.max_version


def request_header_version(api_key: int, version: int) -> int:
    schema = SCHEMAS.get(api_key)
    if schema is None or not schema.is_flexible(version):
        return 1
    return 2


def response_header_version(api_key: int, version: int) -> int:
    if api_key == API_VERSIONS_KEY:
        return 0
    schema = SCHEMAS.get(api_key)
    return 1 if schema is not None and schema.is_flexible(version) else 0


def advertised_ranges(api_keys: set[int] | None = None) -> list[tuple[int, int, int]]:
    """(api_key, min_version, max_version) rows for an ApiVersions answer."""
    rows = []
    for key in sorted(SCHEMAS):
        if api_keys is not None and key not in api_keys:
            continue
        schema = SCHEMAS[key]
        low = PRODUCE_ADVERTISED_MIN_VERSION if key == PRODUCE_KEY else schema.min_version
        rows.append((key, low, schema.max_version))
    return rows
