"""Client metrics subscriptions: the CLIENT_METRICS config resources of KIP-714
(org.apache.kafka.server.metrics.ClientMetricsConfigs, kept as Kafka's ConfigurationControlManager keeps them).

`kafka-client-metrics.sh` and Admin's incrementalAlterConfigs / describeConfigs /
listConfigResources name a subscription and set three keys:

    metrics      list of metric name prefixes ("*" for all), no duplicates
    interval.ms  the push interval, 100 ms to one hour (default 5 minutes)
    match        list of client_instance_id, client_id, client_software_name,
                 client_software_version, client_source_address or
                 client_source_port = a java.util.regex pattern

Alterations are checked as ClientMetricsConfigs.validate checks them (an empty
name or an unknown key: INVALID_REQUEST; a bad list or pattern: INVALID_CONFIG),
a subscription with no key left is gone, and a subscription never set describes
with the defaults, as in Kafka. franz has no telemetry receiver, so, like a
Kafka broker without one, it advertises neither GetTelemetrySubscriptions nor
PushTelemetry: the subscriptions are kept for the tools, and no client pushes.

They live in `client-metrics.json` in the first log dir, replaced atomically
through the controller's writer.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final

from franz.common.config_def import ConfigDef, ConfigError, ConfigKey
from franz.common.java_regex import java_pattern
from franz.protocol.errors import Errors
from franz.server.controller import (APPEND, OP_NAMES, SUBTRACT, ApiError, apply_operations, read_json, replacing,
                                     store_overrides)

CLIENT_METRICS_FILE: Final = "client-metrics.json"
METRICS: Final = "metrics"
INTERVAL_MS: Final = "interval.ms"
MATCH: Final = "match"
INTERVAL_MS_MIN: Final = 100
INTERVAL_MS_MAX: Final = 3_600_000
ALLOWED_MATCH_PARAMS: Final = frozenset(("client_instance_id", "client_id", "client_software_name",
                                         "client_software_version", "client_source_address", "client_source_port"))
CLIENT_METRICS_CONFIG: Final = 7  # DescribeConfigs' ConfigSource.CLIENT_METRICS_CONFIG
DEFAULT_CONFIG: Final = 5
CONFIG_TYPES: Final = {"int": 3, "list": 7}

logger = logging.getLogger(__name__)


def _non_duplicate_values(key: str, values: Any) -> None:
    """ConfigDef.ValidList.anyNonDuplicateValues(emptyAllowed=true, nullAllowed=false)."""
    if values is None:
        raise ConfigError(key, values, "", f"Configuration '{key}' values must not be null.")
    if len(set(values)) != len(values):
        raise ConfigError(key, values, "", f"Configuration '{key}' values must not be duplicated.")
    if any(value == "" for value in values):
        raise ConfigError(key, values, "", f"Configuration '{key}' values must not be empty.")


CLIENT_METRICS_CONFIG_DEF: Final = ConfigDef([
    ConfigKey(METRICS, "list", [], _non_duplicate_values),
    ConfigKey(INTERVAL_MS, "int", 300_000),
    ConfigKey(MATCH, "list", [], _non_duplicate_values),
])

Writer = Callable[[Path, object], Awaitable[None]]


def validate(name: str, configs: dict[str, str]) -> None:
    """ClientMetricsConfigs.validate; raises ApiError with Kafka's code and words."""
    if not name:
        raise ApiError(Errors.INVALID_REQUEST, "Subscription name can't be empty")
    for key in configs:
        if key not in CLIENT_METRICS_CONFIG_DEF:
            raise ApiError(Errors.INVALID_REQUEST, f"Unknown client metrics configuration: {key}")
    try:
        values, _unknown = CLIENT_METRICS_CONFIG_DEF.parse(configs)
    except ConfigError as exc:
        raise ApiError(Errors.INVALID_CONFIG, str(exc)) from None
    interval = values[INTERVAL_MS]
    if INTERVAL_MS in configs and not INTERVAL_MS_MIN <= interval <= INTERVAL_MS_MAX:
        raise ApiError(Errors.INVALID_REQUEST, f"Invalid value {interval} for {INTERVAL_MS}, interval must be between "
                                               f"{INTERVAL_MS_MIN} and {INTERVAL_MS_MAX} (1 hour)")
    if MATCH in configs:
        parse_matching_patterns(values[MATCH])


def parse_matching_patterns(patterns: list[str]) -> dict[str, re.Pattern]:
    """ClientMetricsConfigs.parseMatchingPatterns: each `param=regex`, param one of the allowed."""
    parsed = {}
    for pattern in patterns:
        pair = _java_split(pattern, "=")
        if len(pair) != 2 or pair[0].strip() not in ALLOWED_MATCH_PARAMS:
            raise ApiError(Errors.INVALID_CONFIG, f"Illegal client matching pattern: {pattern}")
        try:
            parsed[pair[0].strip()] = java_pattern(pair[1].strip())
        except re.error:
            raise ApiError(Errors.INVALID_CONFIG, f"Illegal client matching pattern: {pattern}") from None
    return parsed


def _java_split(text: str, separator: str) -> list[str]:
    """Java's String.split: trailing empty strings are dropped."""
    parts = text.split(separator)
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def _render(value: Any) -> str:
    return ",".join(value) if isinstance(value, list) else str(value)


class ClientMetricsConfigManager:
    def __init__(self, path: Path, write: Writer) -> None:
        self.path = path
        self._write = write
        # One change at a time, from reading what is in force to putting it in force (see Controller._storing).
        self._altering = asyncio.Lock()
        self.overrides: dict[str, dict[str, str]] = read_json(path)  # subscription -> key -> value

    async def alter(self, name: str, operations: list[tuple[str, int, str | None]], validate_only: bool,
                    replace_all: bool = False) -> None:
        """IncrementalAlterConfigs on a CLIENT_METRICS resource: SET and DELETE. The controller's
        config schema has only broker and topic keys, so no client metrics key is a list to
        APPEND to or SUBTRACT from there (KafkaConfigSchema.isSplittable), its lists included.
        replace_all (the legacy AlterConfigs): every override the operations leave out goes too."""
        async with self._altering:
            current = self.overrides.get(name, {})
            if replace_all:
                operations = replacing(current, operations)
            for key, op, _value in operations:
                if op in (APPEND, SUBTRACT):
                    raise ApiError(Errors.INVALID_CONFIG,
                                   f"Can't {OP_NAMES[op]} to key {key} because its type is not LIST.")
            configs = apply_operations(current, operations, lambda key: key, lambda key: "", CLIENT_METRICS_CONFIG_DEF)
            validate(name, configs)
            if validate_only:
                return
            await store_overrides(self.overrides, name, configs, self.path, self._write)
            logger.info("Updated client metrics subscription %s: %s", name, configs)

    def describe(self, name: str, keys: set[str] | None, include_synonyms: bool) -> list[dict]:
        """ConfigHelper.createClientMetricsConfigEntry of each key: the subscription's value
        (CLIENT_METRICS_CONFIG), else the default (DEFAULT_CONFIG, no synonym)."""
        if not name:
            raise ApiError(Errors.INVALID_REQUEST, "Client metrics subscription name must not be empty")
        overrides = self.overrides.get(name, {})
        values, _unknown = CLIENT_METRICS_CONFIG_DEF.parse(overrides)
        entries = []
        for key, definition in CLIENT_METRICS_CONFIG_DEF.keys.items():
            if keys is not None and key not in keys:
                continue
            value = _render(values[key])
            synonyms = [{"name": key, "value": value, "source": CLIENT_METRICS_CONFIG}] if key in overrides else []
            entries.append({"name": key, "value": value, "read_only": False,
                            "config_source": CLIENT_METRICS_CONFIG if synonyms else DEFAULT_CONFIG,
                            "is_sensitive": False, "config_type": CONFIG_TYPES[definition.type], "documentation": None,
                            "synonyms": synonyms if include_synonyms else []})
        return entries
