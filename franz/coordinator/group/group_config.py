"""Dynamic configs of one group (org.apache.kafka.coordinator.group.GroupConfig, GroupConfigManager).

`kafka-configs.sh --entity-type groups` sets, per group id, the consumer
group's session timeout, heartbeat interval and assignment interval (KIP-848,
KIP-1263), the share-group keys and the streams-group keys (KIP-1071: session
timeout, heartbeat interval, standby replicas, initial rebalance delay,
assignment interval). A key a group does not override takes the broker's value
(`group.consumer.session.timeout.ms`, ...). Values are checked as
GroupConfig.validate checks them: known names only, ints, each within the
broker's `group.*.min.*` / `group.*.max.*` bounds (the standby replicas have
only a maximum, the initial rebalance delay no bound), a session timeout above
the heartbeat interval. Keys left out of an alteration are checked at
GroupConfig's own defaults, as Kafka does. A group needs no members to have
configs; the name must not be empty ("Default group resources are not
allowed.").

The overrides live in `group-configs.json` in the first log dir, replaced
atomically through the controller's config writer. The consumer group
coordinator reads a group's session timeout and heartbeat interval here on
every heartbeat, so a change applies to the next one; the share group coordinator
and the share-partitions read the share keys the same way.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

import re

from franz.common.config_def import ConfigDef, ConfigError, ConfigKey, at_least, one_of
from franz.protocol.errors import Errors
from franz.server.controller import DELETE, OP_NAMES, SET, ApiError, replacing, store_overrides

GROUP_CONFIGS_FILE: Final = "group-configs.json"
CONSUMER_SESSION_TIMEOUT_MS: Final = "consumer.session.timeout.ms"
CONSUMER_HEARTBEAT_INTERVAL_MS: Final = "consumer.heartbeat.interval.ms"
CONSUMER_ASSIGNMENT_INTERVAL_MS: Final = "consumer.assignment.interval.ms"
SHARE_SESSION_TIMEOUT_MS: Final = "share.session.timeout.ms"
SHARE_HEARTBEAT_INTERVAL_MS: Final = "share.heartbeat.interval.ms"
SHARE_RECORD_LOCK_DURATION_MS: Final = "share.record.lock.duration.ms"
SHARE_DELIVERY_COUNT_LIMIT: Final = "share.delivery.count.limit"
SHARE_PARTITION_MAX_RECORD_LOCKS: Final = "share.partition.max.record.locks"
SHARE_ASSIGNMENT_INTERVAL_MS: Final = "share.assignment.interval.ms"
SHARE_AUTO_OFFSET_RESET: Final = "share.auto.offset.reset"
SHARE_ISOLATION_LEVEL: Final = "share.isolation.level"
SHARE_RENEW_ACKNOWLEDGE_ENABLE: Final = "share.renew.acknowledge.enable"
STREAMS_SESSION_TIMEOUT_MS: Final = "streams.session.timeout.ms"
STREAMS_HEARTBEAT_INTERVAL_MS: Final = "streams.heartbeat.interval.ms"
STREAMS_NUM_STANDBY_REPLICAS: Final = "streams.num.standby.replicas"
STREAMS_INITIAL_REBALANCE_DELAY_MS: Final = "streams.initial.rebalance.delay.ms"
STREAMS_ASSIGNMENT_INTERVAL_MS: Final = "streams.assignment.interval.ms"
# java.time.Duration.parse's ISO-8601 form, PnDTnHnMn.nS, as by_duration:<duration> takes it
_DURATION: Final = re.compile(r"([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?"
                              r"(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?", re.IGNORECASE)


def by_duration_ms(text: str) -> int | None:
    """The milliseconds of `by_duration:<ISO-8601 duration>` (the prefix exactly so, as
    AutoOffsetResetStrategy.fromString matches it), None when `text` is not one."""
    prefix = "by_duration:"
    if not text.startswith(prefix):
        return None
    found = _DURATION.fullmatch(text[len(prefix):])
    if found is None or text[len(prefix):].upper() in ("P", "PT") or text.upper().endswith("T"):
        return None
    sign, days, hours, minutes, seconds, fraction = found.groups()
    total_ms = ((int(days or 0) * 24 + int(hours or 0)) * 60 + int(minutes or 0)) * 60_000 + int(seconds or 0) * 1000
    if fraction:
        total_ms += int(fraction.ljust(9, "0")[:3]) * (-1 if (seconds or "").startswith("-") else 1)
    return -total_ms if sign == "-" else total_ms


def _auto_offset_reset(key: str, value: object) -> None:
    """ShareGroupAutoOffsetResetStrategy.Validator: earliest, latest or a duration that is not
    negative, written exactly so (no case folding, no spaces)."""
    text = str(value)
    if text in ("earliest", "latest"):
        return
    duration = by_duration_ms(text)
    if duration is None or duration < 0:
        raise ConfigError(key, value, "must be either 'earliest', 'latest' or of the format "
                                      "'by_duration:<PnDTnHnMn.nS>'")

# Defaults are GroupCoordinatorConfig's / ShareGroupConfig's, as in GroupConfig's own ConfigDef.
GROUP_CONFIG_DEF: Final = ConfigDef([
    ConfigKey(CONSUMER_SESSION_TIMEOUT_MS, "int", 45_000, at_least(1)),
    ConfigKey(CONSUMER_HEARTBEAT_INTERVAL_MS, "int", 5000, at_least(1)),
    ConfigKey(CONSUMER_ASSIGNMENT_INTERVAL_MS, "int", 1000, at_least(0)),
    ConfigKey(SHARE_SESSION_TIMEOUT_MS, "int", 45_000, at_least(1)),
    ConfigKey(SHARE_HEARTBEAT_INTERVAL_MS, "int", 5000, at_least(1)),
    ConfigKey(SHARE_RECORD_LOCK_DURATION_MS, "int", 30_000, at_least(1000)),
    ConfigKey(SHARE_DELIVERY_COUNT_LIMIT, "int", 5, at_least(2)),
    ConfigKey(SHARE_PARTITION_MAX_RECORD_LOCKS, "int", 2000, at_least(100)),
    ConfigKey(SHARE_AUTO_OFFSET_RESET, "string", "latest", _auto_offset_reset),
    ConfigKey(SHARE_ISOLATION_LEVEL, "string", "read_uncommitted", one_of("read_committed", "read_uncommitted")),
    ConfigKey(SHARE_RENEW_ACKNOWLEDGE_ENABLE, "boolean", True),
    ConfigKey(SHARE_ASSIGNMENT_INTERVAL_MS, "int", 1000, at_least(0)),
    ConfigKey(STREAMS_SESSION_TIMEOUT_MS, "int", 45_000, at_least(1)),
    ConfigKey(STREAMS_HEARTBEAT_INTERVAL_MS, "int", 5000, at_least(1)),
    ConfigKey(STREAMS_NUM_STANDBY_REPLICAS, "int", 0, at_least(0)),
    ConfigKey(STREAMS_INITIAL_REBALANCE_DELAY_MS, "int", 3000, at_least(0)),
    ConfigKey(STREAMS_ASSIGNMENT_INTERVAL_MS, "int", 1000, at_least(0)),
])
# group key -> (the broker key of its default, of its lower bound, of its upper bound); None: no such bound
BROKER_KEYS: Final = {
    CONSUMER_SESSION_TIMEOUT_MS: ("group.consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms",
                                  "group.consumer.max.session.timeout.ms"),
    CONSUMER_HEARTBEAT_INTERVAL_MS: ("group.consumer.heartbeat.interval.ms",
                                     "group.consumer.min.heartbeat.interval.ms",
                                     "group.consumer.max.heartbeat.interval.ms"),
    CONSUMER_ASSIGNMENT_INTERVAL_MS: ("group.consumer.assignment.interval.ms",
                                      "group.consumer.min.assignment.interval.ms",
                                      "group.consumer.max.assignment.interval.ms"),
    SHARE_SESSION_TIMEOUT_MS: ("group.share.session.timeout.ms", "group.share.min.session.timeout.ms",
                               "group.share.max.session.timeout.ms"),
    SHARE_HEARTBEAT_INTERVAL_MS: ("group.share.heartbeat.interval.ms", "group.share.min.heartbeat.interval.ms",
                                  "group.share.max.heartbeat.interval.ms"),
    SHARE_RECORD_LOCK_DURATION_MS: ("group.share.record.lock.duration.ms",
                                    "group.share.min.record.lock.duration.ms",
                                    "group.share.max.record.lock.duration.ms"),
    SHARE_DELIVERY_COUNT_LIMIT: ("group.share.delivery.count.limit", "group.share.min.delivery.count.limit",
                                 "group.share.max.delivery.count.limit"),
    SHARE_PARTITION_MAX_RECORD_LOCKS: ("group.share.partition.max.record.locks",
                                       "group.share.min.partition.max.record.locks",
                                       "group.share.max.partition.max.record.locks"),
    SHARE_ASSIGNMENT_INTERVAL_MS: ("group.share.assignment.interval.ms", "group.share.min.assignment.interval.ms",
                                   "group.share.max.assignment.interval.ms"),
    STREAMS_SESSION_TIMEOUT_MS: ("group.streams.session.timeout.ms", "group.streams.min.session.timeout.ms",
                                 "group.streams.max.session.timeout.ms"),
    STREAMS_HEARTBEAT_INTERVAL_MS: ("group.streams.heartbeat.interval.ms", "group.streams.min.heartbeat.interval.ms",
                                    "group.streams.max.heartbeat.interval.ms"),
    STREAMS_NUM_STANDBY_REPLICAS: ("group.streams.num.standby.replicas", None, "group.streams.max.standby.replicas"),
    STREAMS_INITIAL_REBALANCE_DELAY_MS: ("group.streams.initial.rebalance.delay.ms", None, None),
    STREAMS_ASSIGNMENT_INTERVAL_MS: ("group.streams.assignment.interval.ms", "group.streams.min.assignment.interval.ms",
                                     "group.streams.max.assignment.interval.ms"),
}
# The order GroupConfig.validateValues checks in: heartbeat before session timeout.
_CHECK_ORDER: Final = (CONSUMER_HEARTBEAT_INTERVAL_MS, CONSUMER_SESSION_TIMEOUT_MS, CONSUMER_ASSIGNMENT_INTERVAL_MS,
                       SHARE_HEARTBEAT_INTERVAL_MS, SHARE_SESSION_TIMEOUT_MS, SHARE_RECORD_LOCK_DURATION_MS,
                       SHARE_DELIVERY_COUNT_LIMIT, SHARE_PARTITION_MAX_RECORD_LOCKS, SHARE_ASSIGNMENT_INTERVAL_MS,
                       STREAMS_HEARTBEAT_INTERVAL_MS, STREAMS_SESSION_TIMEOUT_MS, STREAMS_NUM_STANDBY_REPLICAS,
                       STREAMS_ASSIGNMENT_INTERVAL_MS)
# Checked against the broker's bounds only when the group sets it (the broker's value can change).
_CHECKED_WHEN_SET: Final = frozenset((CONSUMER_ASSIGNMENT_INTERVAL_MS, SHARE_ASSIGNMENT_INTERVAL_MS,
                                      STREAMS_ASSIGNMENT_INTERVAL_MS))
# (session timeout, heartbeat interval) of each group type: the first must exceed the second
_SESSION_ABOVE_HEARTBEAT: Final = ((CONSUMER_SESSION_TIMEOUT_MS, CONSUMER_HEARTBEAT_INTERVAL_MS),
                                   (SHARE_SESSION_TIMEOUT_MS, SHARE_HEARTBEAT_INTERVAL_MS),
                                   (STREAMS_SESSION_TIMEOUT_MS, STREAMS_HEARTBEAT_INTERVAL_MS))
DYNAMIC_GROUP_CONFIG: Final = 8  # DescribeConfigs' ConfigSource.GROUP_CONFIG
DEFAULT_CONFIG: Final = 5
# DescribeConfigs' ConfigType ids
CONFIG_TYPES: Final = {"boolean": 1, "string": 2, "int": 3}

logger = logging.getLogger(__name__)

Writer = Callable[[Path, object], Awaitable[None]]


def validate(overrides: dict[str, str], broker_config) -> None:
    """GroupConfig.validate: the overrides over the broker's values of the keys they leave out
    (extractGroupConfigMap; the assignment interval is the broker's dynamic one and only
    checked when set); raises ApiError(INVALID_CONFIG) naming the key."""
    for name in overrides:
        if name not in GROUP_CONFIG_DEF:
            raise ApiError(Errors.INVALID_CONFIG, f"Unknown group config name: {name}")
    combined: dict[str, object] = {name: broker_config[keys[0]] for name, keys in BROKER_KEYS.items()
                                   if name not in _CHECKED_WHEN_SET}
    combined.update(overrides)
    try:
        values, _unknown = GROUP_CONFIG_DEF.parse(combined)
    except ConfigError as exc:
        raise ApiError(Errors.INVALID_CONFIG, str(exc)) from None
    for name in _CHECK_ORDER:
        if name in _CHECKED_WHEN_SET and name not in overrides:
            continue
        _default, low_key, high_key = BROKER_KEYS[name]
        if low_key is not None and values[name] < broker_config[low_key]:
            raise ApiError(Errors.INVALID_CONFIG, f"{name} must be greater than or equal to {low_key}")
        if high_key is not None and values[name] > broker_config[high_key]:
            raise ApiError(Errors.INVALID_CONFIG, f"{name} must be less than or equal to {high_key}")
    for session, heartbeat in _SESSION_ABOVE_HEARTBEAT:
        if values[session] <= values[heartbeat]:
            raise ApiError(Errors.INVALID_CONFIG, f"{session} must be greater than {heartbeat}")


class GroupConfigManager:
    def __init__(self, path: Path, write: Writer, broker_config) -> None:
        self.path = path
        self._write = write
        # One change at a time, from reading what is in force to putting it in force (see Controller._storing).
        self._altering = asyncio.Lock()
        self.broker_config = broker_config
        self.overrides: dict[str, dict[str, str]] = self._read()  # group id -> key -> value
        # (group id, key, value, capped value) already warned of: value() runs on every heartbeat
        self._capped_warned: set[tuple[str, str, int, int]] = set()

    def _read(self) -> dict[str, dict[str, str]]:
        if not self.path.exists():
            return {}
        try:
            content = json.loads(self.path.read_text(encoding="utf-8"))
            return {str(group): {str(k): str(v) for k, v in configs.items()} for group, configs in content.items()}
        except (OSError, ValueError, AttributeError) as exc:
            logger.warning("Ignoring unreadable %s: %s", self.path, exc)
            return {}

    def value(self, group_id: str, name: str):
        """The group's value of `name`: its override, kept within the broker's bounds as they
        are now (GroupConfig.evaluate caps it, with a warning), else the broker's (a key with
        no broker key: GroupConfig's default)."""
        override = self.overrides.get(group_id, {}).get(name)
        if name not in BROKER_KEYS:
            return GROUP_CONFIG_DEF.keys[name].parse(override if override is not None
                                                     else GROUP_CONFIG_DEF.keys[name].default)
        if override is None:
            return self.broker_config[BROKER_KEYS[name][0]]
        value = GROUP_CONFIG_DEF.keys[name].parse(override)
        _default, low_key, high_key = BROKER_KEYS[name]
        low = value if low_key is None else self.broker_config[low_key]
        high = value if high_key is None else self.broker_config[high_key]
        if not low <= value <= high:
            capped = min(max(value, low), high)
            if (group_id, name, value, capped) not in self._capped_warned:
                self._capped_warned.add((group_id, name, value, capped))
                logger.warning("Group %s's %s of %d is outside the broker's bounds [%d, %d]: %d is used.", group_id,
                               name, value, low, high, capped)
            return capped
        return value

    def session_timeout_ms(self, group_id: str) -> int:
        return self.value(group_id, CONSUMER_SESSION_TIMEOUT_MS)

    def heartbeat_interval_ms(self, group_id: str) -> int:
        return self.value(group_id, CONSUMER_HEARTBEAT_INTERVAL_MS)

    def assignment_interval_ms(self, group_id: str) -> int:
        return self.value(group_id, CONSUMER_ASSIGNMENT_INTERVAL_MS)

    async def alter(self, group_id: str, operations: list[tuple[str, int, str | None]], validate_only: bool,
                    replace_all: bool = False) -> None:
        """IncrementalAlterConfigs on a GROUP resource: SET and DELETE (no key is a list); with
        replace_all (the legacy AlterConfigs), every override the operations leave out goes too."""
        async with self._altering:
            if not group_id:
                raise ApiError(Errors.INVALID_REQUEST, "Default group resources are not allowed.")
            configs = dict(self.overrides.get(group_id, {}))
            if replace_all:
                operations = replacing(configs, operations)
            for name, op, value in operations:
                if op == SET:
                    configs[name] = value
                elif op == DELETE:
                    configs.pop(name, None)
                else:  # the controller's schema knows no GROUP key as a list (KafkaConfigSchema.isSplittable)
                    raise ApiError(Errors.INVALID_CONFIG,
                                   f"Can't {OP_NAMES.get(op, op)} to key {name} because its type is not LIST.")
            validate(configs, self.broker_config)
            if validate_only:
                return
            await store_overrides(self.overrides, group_id, configs, self.path, self._write)
            # the group's old values are gone: their warnings need not be remembered
            self._capped_warned = {warned for warned in self._capped_warned if warned[0] != group_id}
            logger.info("Updated configs of group %s: %s", group_id, configs)

    def describe(self, group_id: str, keys: set[str] | None, include_synonyms: bool) -> list[dict]:
        """ConfigHelper.createGroupConfigEntry of every group key (raises for an empty name)."""
        if not group_id:
            raise ApiError(Errors.INVALID_REQUEST, "Group name must not be empty")
        overrides = self.overrides.get(group_id, {})
        entries = []
        for name in GROUP_CONFIG_DEF.keys:
            if keys is not None and name not in keys:
                continue
            raw = self.value(group_id, name)
            value = str(raw).lower() if isinstance(raw, bool) else str(raw)
            source = DYNAMIC_GROUP_CONFIG if name in overrides else DEFAULT_CONFIG
            entries.append({"name": name, "value": value, "read_only": False, "config_source": source,
                            "is_sensitive": False, "config_type": CONFIG_TYPES[GROUP_CONFIG_DEF.keys[name].type],
                            "documentation": None,
                            "synonyms": [{"name": name, "value": value, "source": source}] if include_synonyms
                            else []})
        return entries
