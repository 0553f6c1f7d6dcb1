"""LogConfig: the per-topic configuration of a log, as Kafka 4.x's LogConfig.

Topic keys (`segment.bytes`, `retention.ms`, ...) have broker-level synonyms
(`log.segment.bytes`, `log.retention.ms`, ...) whose values are the defaults
for every topic that does not override them (ServerTopicConfigSynonyms).
`LogConfig.from_props(topic_overrides, broker_defaults)` resolves both.

Deliberate difference: Kafka 4.x refuses `segment.bytes` below 1 MiB and keeps
an internal key, `internal.segment.bytes`, for smaller test segments. franz
accepts both keys down to the v0 record overhead (14 bytes) so that tests and
laptops can roll segments quickly; `internal.segment.bytes`, when set, wins.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from franz.common.config_def import (
    INT64_MAX,
    ConfigDef,
    ConfigError,
    ConfigKey,
    at_least,
    between,
    each_of,
    one_of,
)

LOG_OVERHEAD = 12
LEGACY_RECORD_OVERHEAD_V0 = 14

DEFAULT_SEGMENT_BYTES = 1024 * 1024 * 1024
DEFAULT_SEGMENT_MS = 7 * 24 * 60 * 60 * 1000
DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000
DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024 + LOG_OVERHEAD
DEFAULT_INDEX_BYTES = 10 * 1024 * 1024
DEFAULT_INDEX_INTERVAL_BYTES = 4096
DEFAULT_FILE_DELETE_DELAY_MS = 60_000
DEFAULT_TIMESTAMP_AFTER_MAX_MS = 3_600_000  # Kafka 4.0 (KIP-1030): one hour

COMPRESSION_TYPES = ("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")

TOPIC_CONFIG_DEF = ConfigDef([
    ConfigKey("segment.bytes", "int", DEFAULT_SEGMENT_BYTES, at_least(LEGACY_RECORD_OVERHEAD_V0)),
    ConfigKey("internal.segment.bytes", "int", None, at_least(LEGACY_RECORD_OVERHEAD_V0)),
    ConfigKey("segment.ms", "long", DEFAULT_SEGMENT_MS, at_least(1)),
    ConfigKey("segment.jitter.ms", "long", 0, at_least(0)),
    ConfigKey("segment.index.bytes", "int", DEFAULT_INDEX_BYTES, at_least(4)),
    ConfigKey("flush.messages", "long", INT64_MAX, at_least(1)),
    ConfigKey("flush.ms", "long", INT64_MAX, at_least(0)),
    ConfigKey("retention.bytes", "long", -1),
    ConfigKey("retention.ms", "long", DEFAULT_RETENTION_MS, at_least(-1)),
    ConfigKey("max.message.bytes", "int", DEFAULT_MAX_MESSAGE_BYTES, at_least(0)),
    ConfigKey("index.interval.bytes", "int", DEFAULT_INDEX_INTERVAL_BYTES, at_least(0)),
    ConfigKey("delete.retention.ms", "long", 24 * 60 * 60 * 1000, at_least(0)),
    ConfigKey("min.compaction.lag.ms", "long", 0, at_least(0)),
    ConfigKey("max.compaction.lag.ms", "long", INT64_MAX, at_least(1)),
    ConfigKey("file.delete.delay.ms", "long", DEFAULT_FILE_DELETE_DELAY_MS, at_least(0)),
    ConfigKey("min.cleanable.dirty.ratio", "double", 0.5, between(0, 1)),
    ConfigKey("cleanup.policy", "list", ["delete"], each_of("compact", "delete")),
    ConfigKey("unclean.leader.election.enable", "boolean", False),
    ConfigKey("min.insync.replicas", "int", 1, at_least(1)),
    ConfigKey("compression.type", "string", "producer", one_of(*COMPRESSION_TYPES)),
    ConfigKey("compression.gzip.level", "int", -1),
    ConfigKey("compression.lz4.level", "int", 9, between(1, 17)),
    ConfigKey("compression.zstd.level", "int", 3, between(-131072, 22)),
    ConfigKey("preallocate", "boolean", False),
    ConfigKey("message.timestamp.type", "string", "CreateTime", one_of("CreateTime", "LogAppendTime")),
    ConfigKey("message.timestamp.before.max.ms", "long", INT64_MAX, at_least(0)),
    ConfigKey("message.timestamp.after.max.ms", "long", DEFAULT_TIMESTAMP_AFTER_MAX_MS, at_least(0)),
    ConfigKey("leader.replication.throttled.replicas", "list", []),
    ConfigKey("follower.replication.throttled.replicas", "list", []),
    ConfigKey("remote.storage.enable", "boolean", False),
    ConfigKey("remote.log.copy.disable", "boolean", False),
    ConfigKey("remote.log.delete.on.disable", "boolean", False),
    ConfigKey("local.retention.ms", "long", -2, at_least(-2)),
    ConfigKey("local.retention.bytes", "long", -2, at_least(-2)),
])

# Broker key -> topic key (ServerTopicConfigSynonyms). The broker value is the
# default of every topic that does not override the topic key.
BROKER_SYNONYMS: dict[str, str] = {
    "log.segment.bytes": "segment.bytes",
    "log.roll.ms": "segment.ms",
    "log.roll.jitter.ms": "segment.jitter.ms",
    "log.index.size.max.bytes": "segment.index.bytes",
    "log.flush.interval.messages": "flush.messages",
    "log.flush.interval.ms": "flush.ms",
    "log.retention.bytes": "retention.bytes",
    "log.retention.ms": "retention.ms",
    "message.max.bytes": "max.message.bytes",
    "log.index.interval.bytes": "index.interval.bytes",
    "log.cleaner.delete.retention.ms": "delete.retention.ms",
    "log.cleaner.min.compaction.lag.ms": "min.compaction.lag.ms",
    "log.cleaner.max.compaction.lag.ms": "max.compaction.lag.ms",
    "log.segment.delete.delay.ms": "file.delete.delay.ms",
    "log.cleaner.min.cleanable.ratio": "min.cleanable.dirty.ratio",
    "log.cleanup.policy": "cleanup.policy",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
    "min.insync.replicas": "min.insync.replicas",
    "compression.type": "compression.type",
    "compression.gzip.level": "compression.gzip.level",
    "compression.lz4.level": "compression.lz4.level",
    "compression.zstd.level": "compression.zstd.level",
    "log.preallocate": "preallocate",
    "log.message.timestamp.type": "message.timestamp.type",
    "log.message.timestamp.before.max.ms": "message.timestamp.before.max.ms",
    "log.message.timestamp.after.max.ms": "message.timestamp.after.max.ms",
}


@dataclasses.dataclass(frozen=True, slots=True)
class LogConfig:
    """Typed, validated topic configuration. Field names are the keys in snake_case."""

    segment_bytes: int
    segment_ms: int
    segment_jitter_ms: int
    segment_index_bytes: int
    flush_messages: int
    flush_ms: int
    retention_bytes: int
    retention_ms: int
    max_message_bytes: int
    index_interval_bytes: int
    delete_retention_ms: int
    min_compaction_lag_ms: int
    max_compaction_lag_ms: int
    file_delete_delay_ms: int
    min_cleanable_dirty_ratio: float
    cleanup_policy: tuple[str, ...]
    unclean_leader_election_enable: bool
    min_insync_replicas: int
    compression_type: str
    compression_gzip_level: int
    compression_lz4_level: int
    compression_zstd_level: int
    preallocate: bool
    message_timestamp_type: str
    message_timestamp_before_max_ms: int
    message_timestamp_after_max_ms: int
    # The topic keys that were set explicitly (as DescribeConfigs reports them).
    overrides: Mapping[str, Any] = dataclasses.field(default_factory=dict, compare=False)
    # Derived from cleanup_policy once, not per read: every produce reads `compact`.
    compact: bool = dataclasses.field(init=False, repr=False, compare=False)
    delete: bool = dataclasses.field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compact", "compact" in self.cleanup_policy)
        object.__setattr__(self, "delete", "delete" in self.cleanup_policy)

    @classmethod
    def from_props(cls, topic_props: Mapping[str, Any] | None = None,
                   broker_defaults: Mapping[str, Any] | None = None) -> LogConfig:
        """Resolve topic overrides over broker-level defaults; raises ConfigError naming the key."""
        topic_props = dict(topic_props or {})
        merged: dict[str, Any] = {}
        for broker_key, value in (broker_defaults or {}).items():
            topic_key = BROKER_SYNONYMS.get(broker_key)
            if topic_key is not None and value is not None:
                merged[topic_key] = value
        merged.update(topic_props)
        values, _unknown = TOPIC_CONFIG_DEF.parse(merged)
        min_lag, max_lag = values["min.compaction.lag.ms"], values["max.compaction.lag.ms"]
        if min_lag > max_lag:  # LogConfig.validateValues
            conflict = f"conflict topic config setting min.compaction.lag.ms ({min_lag}) > max.compaction.lag.ms ({max_lag})"
            raise ConfigError("min.compaction.lag.ms", min_lag, conflict, message=conflict)  # Kafka's words, bare
        internal_segment_bytes = values.pop("internal.segment.bytes")
        if internal_segment_bytes is not None:
            values["segment.bytes"] = internal_segment_bytes
        fields = {f.name for f in dataclasses.fields(cls)}
        kwargs = {key.replace(".", "_"): value for key, value in values.items()
                  if key.replace(".", "_") in fields}
        kwargs["cleanup_policy"] = tuple(kwargs["cleanup_policy"])
        return cls(**kwargs, overrides=topic_props)

    @staticmethod
    def validate_topic_props(props: Mapping[str, Any]) -> list[str]:
        """Check topic overrides; returns unknown keys, raises ConfigError on a bad value."""
        _values, unknown = TOPIC_CONFIG_DEF.parse(props)
        return unknown

    def overridden_configs_as_loggable_string(self) -> str:
        """The topic's own keys as Kafka logs them (ConfigUtils.configMapToRedactedString): sorted,
        `key=value` joined by ", " in braces, STRING values quoted, an unknown key's value redacted."""
        shown = []
        for key in sorted(self.overrides):
            definition, value = TOPIC_CONFIG_DEF.keys.get(key), self.overrides[key]
            if definition is None:
                shown.append(f"{key}=(redacted)")
            elif value is None:
                shown.append(f"{key}=null")
            elif definition.type == "string":
                shown.append(f'{key}="{value}"')
            else:
                shown.append(f"{key}={value}")
        return "{" + ", ".join(shown) + "}"

    @property
    def max_index_size(self) -> int:
        return self.segment_index_bytes

    def with_overrides(self, **changes: Any) -> LogConfig:
        """A copy with some fields replaced (tests, dynamic config)."""
        return dataclasses.replace(self, **changes)
