"""The JSON of a request and its response for the request log
(org.apache.kafka.network.RequestConvertToJson).

`kafka.request.logger` at DEBUG logs one line per request once it is done,
"Completed request:{...}", as RequestChannel.Request.updateRequestMetrics does: the
request header, the request and the response as JSON (franz.protocol.json_converter:
a Produce request's and a Fetch answer's records as their size, KIP-673), the connection,
the request's times (RequestChannelMetrics), the security protocol, the principal, the
listener and the client's software, printed as Jackson prints it.
"""

from __future__ import annotations

import re
from typing import Any, Final

from franz.coordinator.group.group_config import GROUP_CONFIG_DEF
from franz.protocol import api_keys
from franz.protocol.json_converter import json_text, message_json
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
_WORD_START: Final = re.compile(r"(?<!^)(?=[A-Z])")


def api_key_name(api_name: str) -> str:
    """The ApiKeys constant of an API: "ApiVersions" -> "API_VERSIONS"."""
    return _WORD_START.sub("_", api_name).upper()


def _records_size(records: Any) -> int:
    return records.size_in_bytes if isinstance(records, MemoryRecords) else response_records_size(records)


def request_json(request: Request, body: dict) -> dict:
    """RequestConvertToJson.request of Request.loggableRequest: a Produce's records as their size
    (KIP-673), and the values of (Incremental)AlterConfigs through loggable_value."""
    schema = api_keys.SCHEMAS[request.api_key]
    node = message_json(schema.request, request.api_version, body,
                        records_size=_records_size if request.api_key == _PRODUCE else None)
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
    return message_json(schema.response, request.api_version, body,
                        records_size=_records_size if request.api_key == _FETCH else None)


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
    return json_text(node)


def _micros(ms: float) -> float:
    """Kafka's nanosToMs: whole microseconds, as a double of milliseconds."""
    return int(ms * 1000) / 1000
