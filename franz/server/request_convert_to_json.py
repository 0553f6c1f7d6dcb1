"""The JSON of a request and its response for the request log
(org.apache.kafka.network.RequestConvertToJson, and the JsonConverter classes Kafka
generates from its message specs).

`kafka.request.logger` at DEBUG logs one line per request once it is done,
"Completed request:{...}", as RequestChannel.Request.updateRequestMetrics does: the
request header, the request and the response as JSON, the connection, the request's
times (RequestChannelMetrics), the security protocol, the principal, the listener and
the client's software. A message's JSON is its fields in spec order, by their camelCase
names, in the version sent: a tagged field only when it is not its default, records as
their size (`<name>SizeInBytes`, KIP-673: a Produce request's and a Fetch answer's) or
as "" (the others'), bytes in base64, a uuid in Kafka's Uuid text (URL-safe base64
without padding). Compact separators, as Jackson writes it.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable
from typing import Any, Final

from franz.coordinator.group.group_config import GROUP_CONFIG_DEF
from franz.protocol import api_keys
from franz.protocol.schema import Field
from franz.server.kafka_config import config_type
from franz.records import MemoryRecords
from franz.server.replica_manager import response_records_size
from franz.server.request_channel import Request
from franz.storage.log_config import TOPIC_CONFIG_DEF

_PRODUCE: Final = api_keys.SCHEMAS_BY_NAME["Produce"].api_key
_FETCH: Final = api_keys.SCHEMAS_BY_NAME["Fetch"].api_key
_ALTER_CONFIGS_KEYS: Final = frozenset(api_keys.SCHEMAS_BY_NAME[name].api_key
                                       for name in ("AlterConfigs", "IncrementalAlterConfigs"))
# ConfigResource.Type ids: a broker's keys, and those whose types these definitions give
_BROKER: Final = 4
_CONFIG_DEFS: Final = {2: TOPIC_CONFIG_DEF, 32: GROUP_CONFIG_DEF}
_NEVER_SENSITIVE: Final = frozenset((8, 16))  # BROKER_LOGGER, CLIENT_METRICS
_HIDDEN: Final = "[hidden]"  # Password.HIDDEN
_CAMEL_BREAK: Final = re.compile(r"_([a-z0-9])")
_WORD_START: Final = re.compile(r"(?<!^)(?=[A-Z])")


def camel_case(name: str) -> str:
    """A snake_case field name in Kafka's camelCase (FieldSpec.camelCaseName)."""
    return _CAMEL_BREAK.sub(lambda match: match.group(1).upper(), name)


def api_key_name(api_name: str) -> str:
    """The ApiKeys constant of an API: "ApiVersions" -> "API_VERSIONS"."""
    return _WORD_START.sub("_", api_name).upper()


def _uuid_text(value: bytes) -> str:
    return base64.urlsafe_b64encode(bytes(value)).rstrip(b"=").decode("ascii")


def _value(field_type: str, value: Any) -> Any:
    if value is None:
        return None
    if field_type == "uuid":
        return _uuid_text(value)
    if field_type == "bytes":
        return base64.b64encode(bytes(value)).decode("ascii")
    if field_type == "float64":
        return float(value)
    if field_type == "string":
        return value
    return int(value) if not isinstance(value, bool) else value


def message_json(fields: Iterable[Field], version: int, data: dict | None, serialize_records: bool = True) -> dict:
    """A message (or struct) as Kafka's generated JsonConverter writes it. `data` is the message
    dict the codec reads; a field left out is its default. Records are written as their size
    when not `serialize_records`, else as JsonConverter's placeholder, an empty byte array."""
    node: dict[str, Any] = {}
    data = data or {}
    for field in fields:
        if not field.present_in(version):
            continue
        value = data.get(field.name, field.default)
        if field.tag is not None and value == field.default:
            continue
        name = camel_case(field.name)
        if field.type == "records":
            if value is None:
                node[name] = None
            elif serialize_records:
                node[name] = ""  # BinaryNode(new byte[]{}), in base64
            else:
                node[name + "SizeInBytes"] = (value.size_in_bytes if isinstance(value, MemoryRecords)
                                              else response_records_size(value))
        elif field.type == "{}":
            node[name] = None if value is None else message_json(field.fields, version, value, serialize_records)
        elif field.type == "[]":
            node[name] = None if value is None else [message_json(field.fields, version, row, serialize_records)
                                                     for row in value]
        elif field.is_array:
            node[name] = None if value is None else [_value(field.element_type, item) for item in value]
        else:
            node[name] = _value(field.type, value)
    return node


def request_json(request: Request, body: dict) -> dict:
    """RequestConvertToJson.request of Request.loggableRequest: a Produce's records as their size
    (KIP-673), and the values of (Incremental)AlterConfigs through loggable_value."""
    schema = api_keys.SCHEMAS[request.api_key]
    node = message_json(schema.request, request.api_version, body, serialize_records=request.api_key != _PRODUCE)
    if request.api_key in _ALTER_CONFIGS_KEYS:
        for resource in node["resources"]:
            for config in resource["configs"]:
                config["value"] = loggable_value(resource["resourceType"], config["name"], config["value"])
    return node


def loggable_value(resource_type: int, name: str, value: str | None) -> str | None:
    """KafkaConfig.loggableValue: "[hidden]" for a value that may be secret, a password or a
    config whose type is not known (to be safe); broker loggers' and client metrics' shown."""
    if resource_type == _BROKER:
        kind = config_type(name)
    elif resource_type in _CONFIG_DEFS:
        definition = _CONFIG_DEFS[resource_type].keys.get(name)
        kind = None if definition is None else definition.type
    else:
        return value if resource_type in _NEVER_SENSITIVE else _HIDDEN
    return _HIDDEN if kind is None or kind == "password" else value  # KafkaConfig.maybeSensitive


def response_json(request: Request, body: dict) -> dict:
    """RequestConvertToJson.response: a Fetch's records as their size (KIP-673)."""
    schema = api_keys.SCHEMAS[request.api_key]
    return message_json(schema.response, request.api_version, body, serialize_records=request.api_key != _FETCH)


def request_header_json(request: Request) -> dict:
    """RequestHeaderDataJsonConverter's fields of the request's header version, then the API's name."""
    node: dict[str, Any] = {"requestApiKey": request.api_key, "requestApiVersion": request.api_version,
                            "correlationId": request.correlation_id, "clientId": request.client_id}
    node["requestApiKeyName"] = api_key_name(api_keys.SCHEMAS[request.api_key].name)
    return node


def request_desc_metrics(request: Request, times_ms: tuple[float, ...]) -> str:
    """The "Completed request:" line's JSON (requestDescMetrics); `times_ms` in
    RequestChannelMetrics' order, each to the microsecond as Kafka rounds them."""
    queue, local, remote, throttle, response_queue, send, total = times_ms
    node = {"isForwarded": False, "requestHeader": request_header_json(request),
            "request": request.request_log if request.request_log is not None else "",
            "response": request.response_log if request.response_log is not None else "",
            "connection": request.connection_id, "totalTimeMs": _micros(total),
            "requestQueueTimeMs": _micros(queue), "localTimeMs": _micros(local), "remoteTimeMs": _micros(remote),
            "throttleTimeMs": int(throttle), "responseQueueTimeMs": _micros(response_queue),
            "sendTimeMs": _micros(send), "securityProtocol": request.session.security_protocol,
            "principal": request.session.principal,
            "listener": request.listener_name,
            "clientInformation": {"softwareName": request.client_information[0],
                                  "softwareVersion": request.client_information[1]}}
    if request.temporary_memory_bytes > 0:
        node["temporaryMemoryBytes"] = request.temporary_memory_bytes
    if request.message_conversions_time_ns > 0:
        node["messageConversionsTime"] = _micros(request.message_conversions_time_ns / 1e6)
    return json.dumps(node, separators=(",", ":"))


def _micros(ms: float) -> float:
    """Kafka's nanosToMs: whole microseconds, as a double of milliseconds."""
    return int(ms * 1000) / 1000
