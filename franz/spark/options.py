"""Options of the `franz` data source, with the names and meanings of Spark's Kafka source.

Everything is checked on the driver before a job starts, so a bad option is a
clear error naming it, never a failed task: `kafka.bootstrap.servers`; exactly
one of `subscribe`, `subscribePattern`, `assign` (JSON {"topic":[0,1]});
`startingOffsets` / `endingOffsets` ("earliest", "latest" or JSON
{"topic":{"0":23,"1":-2}} with -2 earliest and -1 latest); `startingTimestamp`
and `startingOffsetsByTimestamp` (JSON {"topic":{"0":ms}}), which win over
startingOffsets as in Spark, with `startingOffsetsByTimestampStrategy` (error,
the default, or latest) for a partition with no record that late;
`endingTimestamp` and `endingOffsetsByTimestamp` likewise for a batch query's end
(no record that late: the partition's end); `minPartitions`; `maxOffsetsPerTrigger`;
`minOffsetsPerTrigger` with `maxTriggerDelay` (a duration as Spark writes one, 15m by default);
`failOnDataLoss`; `includeHeaders`; `kafka.isolation.level`; and the security
options `kafka.security.protocol`, `kafka.sasl.*` and `kafka.ssl.*`
(client_security), for the sink too.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from typing import Any, Final

from franz.cli.command_config import UNKNOWN_PROPERTY, CommandConfigError, librdkafka_config
from franz.spark.client_security import MECHANISMS, PROTOCOLS, ClientSecurity

EARLIEST, LATEST = -2, -1


class OptionError(ValueError):
    """A data source option that cannot be used; the message names it."""


class _Options(dict):
    """Spark hands options over case-insensitively (lower-cased keys): look them up that way."""

    def __init__(self, options: Mapping[str, str]) -> None:
        super().__init__({str(k).lower(): v for k, v in options.items()})

    def get(self, key: str, default: Any = None) -> Any:
        return super().get(key.lower(), default)

    def __getitem__(self, key: str) -> Any:
        return super().__getitem__(key.lower())

    def __contains__(self, key: object) -> bool:
        return super().__contains__(str(key).lower())


def _bool(options: Mapping[str, str], key: str, default: bool) -> bool:
    raw = options.get(key)
    if raw is None:
        return default
    if str(raw).lower() not in ("true", "false"):
        raise OptionError(f"Option {key!r} must be true or false, got {raw!r}")
    return str(raw).lower() == "true"


def _positive_int(options: Mapping[str, str], key: str) -> int | None:
    raw = options.get(key)
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise OptionError(f"Option {key!r} must be a positive integer, got {raw!r}") from None
    if value <= 0:
        raise OptionError(f"Option {key!r} must be a positive integer, got {raw!r}")
    return value


def _json(options: Mapping[str, str], key: str) -> Any:
    try:
        return json.loads(options[key])
    except json.JSONDecodeError as exc:
        raise OptionError(f"Option {key!r} is not valid JSON ({exc.msg} at {exc.pos}): {options[key]!r}") from None


def parse_offsets_spec(options: Mapping[str, str], key: str, allowed: tuple[str, ...]) -> str | dict:
    """'earliest' / 'latest' or {(topic, partition): offset} from Spark's JSON form."""
    options = _Options(options)
    raw = options.get(key)
    if raw is None:
        return allowed[0]
    if raw.strip().lower() in allowed:
        return raw.strip().lower()
    spec = _json(options, key)
    if not isinstance(spec, dict):
        raise OptionError(f"Option {key!r} must be {' or '.join(allowed)} or JSON like "
                          f'{{"topic":{{"0":23}}}}, got {raw!r}')
    offsets = {}
    for topic, partitions in spec.items():
        if not isinstance(partitions, dict):
            raise OptionError(f"Option {key!r}: the value of topic {topic!r} must be an object of partitions")
        for partition, offset in partitions.items():
            try:
                offsets[(topic, int(partition))] = int(offset)
            except (TypeError, ValueError):
                raise OptionError(f"Option {key!r}: bad partition/offset {partition!r}: {offset!r}") from None
    return offsets


@dataclasses.dataclass
class SourceOptions:
    bootstrap_servers: str
    subscribe: list[str] | None
    subscribe_pattern: re.Pattern | None
    assign: dict[str, list[int]] | None
    starting: str | dict
    ending: str | dict
    starting_timestamp: int | None
    starting_by_timestamp: dict | None
    ending_timestamp: int | None
    ending_by_timestamp: dict | None
    no_match_strategy: str  # startingOffsetsByTimestampStrategy: "error" or "latest"
    min_partitions: int | None
    max_offsets_per_trigger: int | None
    min_offsets_per_trigger: int | None
    max_trigger_delay_ms: int
    fail_on_data_loss: bool
    include_headers: bool
    isolation_level: int
    security: ClientSecurity

    @classmethod
    def parse(cls, options: Mapping[str, str], streaming: bool) -> SourceOptions:
        options = _Options(options)
        bootstrap = options.get("kafka.bootstrap.servers")
        if not bootstrap:
            raise OptionError("Option 'kafka.bootstrap.servers' must be specified for the franz source")
        chosen = [k for k in ("subscribe", "subscribePattern", "assign") if options.get(k)]
        if len(chosen) != 1:
            raise OptionError("Exactly one of the options 'subscribe', 'subscribePattern' or 'assign' must be "
                              f"specified for the franz source, got {chosen or 'none'}")
        subscribe = pattern = assign = None
        if chosen[0] == "subscribe":
            subscribe = [t.strip() for t in options["subscribe"].split(",") if t.strip()]
            if not subscribe:
                raise OptionError("Option 'subscribe' names no topic")
        elif chosen[0] == "subscribePattern":
            try:
                pattern = re.compile(options["subscribePattern"])
            except re.error as exc:
                raise OptionError(f"Option 'subscribePattern' is not a valid regex: {exc}") from None
        else:
            spec = _json(options, "assign")
            if not isinstance(spec, dict) or not all(isinstance(v, list) for v in spec.values()):
                raise OptionError(f'Option \'assign\' must be JSON like {{"topic":[0,1]}}, got {options["assign"]!r}')
            assign = {topic: [int(p) for p in parts] for topic, parts in spec.items()}
        starting = parse_offsets_spec(options, "startingOffsets",
                                      ("latest", "earliest") if streaming else ("earliest", "latest"))
        ending = parse_offsets_spec(options, "endingOffsets", ("latest",))
        if streaming and "endingOffsets" in options:
            raise OptionError("Option 'endingOffsets' is for batch queries only")
        if isinstance(starting, dict) and any(o == LATEST for o in starting.values()) and not streaming:
            raise OptionError("Option 'startingOffsets' may not use -1 (latest) for a partition in a batch query")
        if isinstance(ending, dict) and any(o == EARLIEST for o in ending.values()):
            raise OptionError("Option 'endingOffsets' may not use -2 (earliest) for a partition")
        starting_timestamp = _timestamp(options, "startingTimestamp")
        by_timestamp = None
        if options.get("startingOffsetsByTimestamp") is not None:
            by_timestamp = parse_offsets_spec(options, "startingOffsetsByTimestamp", ())
        ending_timestamp = _timestamp(options, "endingTimestamp")
        ending_by_timestamp = None
        if options.get("endingOffsetsByTimestamp") is not None:
            ending_by_timestamp = parse_offsets_spec(options, "endingOffsetsByTimestamp", ())
        for key in ("endingTimestamp", "endingOffsetsByTimestamp"):
            if streaming and key in options:
                raise OptionError(f"Option {key!r} is for batch queries only")
        if isinstance(by_timestamp, dict) and isinstance(ending_by_timestamp, dict):
            _check_timestamp_ranges(by_timestamp, ending_by_timestamp)
        strategy = str(options.get("startingOffsetsByTimestampStrategy", "error")).strip().lower()
        if strategy not in ("error", "latest"):
            raise OptionError(f"Option 'startingOffsetsByTimestampStrategy' must be error or latest, got "
                              f"{options['startingOffsetsByTimestampStrategy']!r}")
        max_offsets = _positive_int(options, "maxOffsetsPerTrigger")
        min_offsets = _positive_int(options, "minOffsetsPerTrigger")
        if max_offsets is not None and min_offsets is not None and min_offsets > max_offsets:
            raise OptionError(f"The value of minOffsetPerTrigger({min_offsets}) is higher than the "
                              f"maxOffsetsPerTrigger({max_offsets}).")
        for name, message in SOURCE_REFUSED.items():
            if f"kafka.{name}" in options:
                raise OptionError(message)
        isolation = options.get("kafka.isolation.level", "read_uncommitted")
        if isolation not in ("read_uncommitted", "read_committed"):
            raise OptionError(f"Option 'kafka.isolation.level' must be read_uncommitted or read_committed, "
                              f"got {isolation!r}")
        return cls(bootstrap, subscribe, pattern, assign, starting, ending, starting_timestamp, by_timestamp,
                   ending_timestamp, ending_by_timestamp, strategy, _positive_int(options, "minPartitions"),
                   max_offsets, min_offsets, _duration_ms(options, "maxTriggerDelay", "15m"),
                   _bool(options, "failOnDataLoss", True), _bool(options, "includeHeaders", False),
                   1 if isolation == "read_committed" else 0, parse_security(options))


# JavaUtils.timeStringAsMs: a number with a unit (ms when none)
_DURATION = re.compile(r"(-?[0-9]+)([a-z]+)?")
_DURATION_UNITS_MS = {"us": 0.001, "ms": 1, "s": 1000, "m": 60_000, "min": 60_000, "h": 3_600_000,
                      "d": 86_400_000}


def _duration_ms(options: Mapping[str, str], key: str, default: str) -> int:
    raw = str(options.get(key, default))
    match = _DURATION.fullmatch(raw.strip().lower())
    if match is None or (match.group(2) or "ms") not in _DURATION_UNITS_MS:
        raise OptionError(f"Option {key!r} must be a duration such as 500ms, 30s, 15m or 1h, got {raw!r}")
    return int(int(match.group(1)) * _DURATION_UNITS_MS[match.group(2) or "ms"])


def _timestamp(options: Mapping[str, str], key: str) -> int | None:
    raw = options.get(key)
    if raw is None:
        return None
    try:
        return int(str(raw).strip())
    except ValueError:
        raise OptionError(f"Option {key!r} must be milliseconds, got {raw!r}") from None


def _check_timestamp_ranges(starting: dict, ending: dict) -> None:
    """KafkaSourceProvider.checkOffsetLimitValidity for timestamps by partition: the same
    partitions at both ends, none starting after it ends."""
    if set(starting) != set(ending):
        raise OptionError("Options 'startingOffsetsByTimestamp' and 'endingOffsetsByTimestamp' must name the same "
                          f"partitions, got {_names(starting)} and {_names(ending)}")
    for (topic, partition), start in sorted(starting.items()):
        if start > ending[(topic, partition)]:
            raise OptionError(f"The starting timestamp {start} of {topic}-{partition} is after its ending timestamp "
                              f"{ending[(topic, partition)]}")


def _names(offsets: dict) -> list[str]:
    return [f"{topic}-{partition}" for topic, partition in sorted(offsets)]


# KafkaSourceProvider refuses these: the source reads bytes and keeps its own offsets
SOURCE_REFUSED: Final = {
    "auto.offset.reset": "Kafka option 'auto.offset.reset' is not supported. Instead set the source option "
                         "'startingOffsets' to 'earliest' or 'latest' to specify where to start.",
    "key.deserializer": "Kafka option 'key.deserializer' is not supported as keys are deserialized as byte "
                        "arrays with ByteArrayDeserializer. Use DataFrame operations to explicitly deserialize the "
                        "keys.",
    "value.deserializer": "Kafka option 'value.deserializer' is not supported as values are deserialized as byte "
                          "arrays with ByteArrayDeserializer. Use DataFrame operations to explicitly deserialize the "
                          "values.",
    "enable.auto.commit": "Kafka option 'enable.auto.commit' is not supported",
    "interceptor.classes": "Kafka option 'interceptor.classes' is not supported",
}
SINK_REFUSED: Final = {
    "key.serializer": "Kafka option 'key.serializer' is not supported as keys are serialized with "
                      "ByteArraySerializer.",
    "value.serializer": "Kafka option 'value.serializer' is not supported as values are serialized with "
                        "ByteArraySerializer.",
}


def producer_settings(options: Mapping[str, str]) -> dict[str, str]:
    """The sink's `kafka.*` options, which Spark hands its producer, as librdkafka settings (the
    security ones refused as parse_security refuses them for the source); a setting librdkafka
    lacks is refused, naming it."""
    options = _Options(options)
    for name, message in SINK_REFUSED.items():
        if f"kafka.{name}" in options:
            raise OptionError(message)
    parse_security(options)
    properties = {key[len("kafka."):]: value for key, value in options.items()
                  if key.startswith("kafka.") and key != "kafka.bootstrap.servers"}
    try:
        config = librdkafka_config(properties, "producer")
    except CommandConfigError as exc:  # parse_security read the JAAS entry and stores already
        raise OptionError(f"Option 'kafka.*': {exc}") from None
    from confluent_kafka import KafkaException, Producer  # noqa: PLC0415 - the sink's client
    try:
        Producer({**config, "bootstrap.servers": options["kafka.bootstrap.servers"]})  # checks every setting
    except KafkaException as exc:
        unknown = UNKNOWN_PROPERTY.search(str(exc.args[0].str() if exc.args else exc))
        if unknown is not None:
            raise OptionError(f"Option 'kafka.{unknown.group(1)}' is a Java client setting that the franz sink's "
                              "producer (librdkafka) does not have") from None
        raise OptionError(f"The franz sink's producer refused its kafka.* options: {exc}") from None
    return config


def _is_security_setting(name: str) -> bool:
    return name == "security.protocol" or name.startswith(("sasl.", "ssl."))


def parse_security(options: Mapping[str, str]) -> ClientSecurity:
    """The Java client's security settings among the options (client_security's module doc)."""
    properties = {key[len("kafka."):]: value for key, value in _Options(options).items()
                  if key.startswith("kafka.") and _is_security_setting(key[len("kafka."):])}
    protocol = properties.get("security.protocol", "PLAINTEXT").upper()
    if protocol not in PROTOCOLS:
        raise OptionError(f"Option 'kafka.security.protocol' must be one of {', '.join(PROTOCOLS)}, "
                          f"got {properties['security.protocol']!r}")
    try:
        config = librdkafka_config(properties, "consumer")
    except CommandConfigError as exc:  # the JAAS entry or the TLS stores
        if '"sasl.jaas.config"' in str(exc):
            raise OptionError("Option 'kafka.sasl.jaas.config' must be a PlainLoginModule or ScramLoginModule entry "
                              f"with username and password ({exc})") from None
        raise OptionError(f"Options 'kafka.ssl.*': {exc}") from None
    mechanism = None
    if protocol.startswith("SASL_"):
        mechanism = properties.get("sasl.mechanism", "GSSAPI").upper()
        if mechanism not in MECHANISMS:
            default = "" if "sasl.mechanism" in properties else " (the Java client's default)"
            raise OptionError(f"Option 'kafka.sasl.mechanism' must be one of {', '.join(MECHANISMS)} for the franz "
                              f"data source, got {mechanism!r}{default}")
        if "sasl.username" not in config:
            raise OptionError(f"Option 'kafka.sasl.jaas.config' must give the username and password of the "
                              f"{mechanism} login module")
    algorithm = properties.get("ssl.endpoint.identification.algorithm", "https")
    if algorithm not in ("https", ""):
        raise OptionError(f"Option 'kafka.ssl.endpoint.identification.algorithm' must be https or empty, "
                          f"got {algorithm!r}")
    return ClientSecurity(protocol, mechanism, config.get("sasl.username"), config.get("sasl.password"),
                          config.get("ssl.ca.pem"), config.get("ssl.certificate.pem"), config.get("ssl.key.pem"),
                          algorithm == "https")
