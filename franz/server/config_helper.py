"""DescribeConfigs, IncrementalAlterConfigs and AlterConfigs answers (kafka.server.ConfigHelper,
ConfigAdminManager), for topics, brokers, broker loggers and groups (franz.coordinator.group.group_config).

A topic config's value is its override, else the broker's synonym key as set
dynamically for this broker, else as the dynamic cluster default, else in the
config file, else the built-in default; `config_source` says which
(DYNAMIC_TOPIC_CONFIG 1, DYNAMIC_BROKER_CONFIG 2, DYNAMIC_DEFAULT_BROKER_CONFIG
3, STATIC_BROKER_CONFIG 4, DEFAULT_CONFIG 5) and the synonyms list, when asked
for, gives every layer in that order, as Kafka does. The broker's own log
configs are described with the same layers.
Values are rendered as Kafka renders them: lists comma-joined, booleans
lower-case, absent values null.

A BROKER_LOGGER resource (this broker's id) lists every logger with its
level (DYNAMIC_BROKER_LOGGER_CONFIG 6); SET changes a level at run time and
DELETE gives a logger its parent's level again (franz.server.logging_controller).

The legacy AlterConfigs replaces a topic's or a broker's whole set of overrides;
it is carried out as the IncrementalAlterConfigs operations that reach that set,
so both APIs validate and store alike.

Who may describe or alter (ConfigHelper.handleDescribeConfigsRequest,
ControllerApis.authorizeAlterResource): DESCRIBE_CONFIGS or ALTER_CONFIGS on the
topic or the group, or on the cluster for a broker, its loggers and client
metrics subscriptions; refused, a resource is answered TOPIC_, GROUP_ or
CLUSTER_AUTHORIZATION_FAILED with the error's message (a broker logger's
alteration without one: RuntimeLoggerManager's exception repeats the default text,
which ApiError.fromThrowable drops). An alteration is checked after its request's own
validation (ConfigAdminManager.preprocess on the broker: duplicate keys, null values,
a broker resource's name and changes), before the controller's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Final

from franz.common.config_def import NO_DEFAULT, ConfigDef
from franz.protocol.errors import Errors, default_message
from franz.server import auth_helper, logging_controller
from franz.server.controller import APPEND, CLUSTER_DEFAULT, DELETE, SET, SUBTRACT, ApiError, Controller
from franz.server.kafka_config import (
    BROKER_CONFIG_DEF,
    BROKER_RECONFIGURABLE_KEYS,
    KafkaConfig,
    broker_key_definition,
    is_broker_reconfigurable,
    listener_connection_key,
    listener_ssl_store_key,
)
from franz.server.metadata_cache import InvalidTopicError, validate_topic_name
from franz.server.standard_authorizer import ResourceType
from franz.storage.log_config import BROKER_SYNONYMS, TOPIC_CONFIG_DEF

TOPIC_RESOURCE: Final = 2
BROKER_RESOURCE: Final = 4
BROKER_LOGGER_RESOURCE: Final = 8
GROUP_RESOURCE: Final = 32
CLIENT_METRICS_RESOURCE: Final = 16
DYNAMIC_TOPIC_CONFIG: Final = 1
DYNAMIC_BROKER_CONFIG: Final = 2
DYNAMIC_DEFAULT_BROKER_CONFIG: Final = 3
STATIC_BROKER_CONFIG: Final = 4
DEFAULT_CONFIG: Final = 5
DYNAMIC_BROKER_LOGGER_CONFIG: Final = 6
CONFIG_TYPES: Final = {"boolean": 1, "string": 2, "int": 3, "short": 4, "long": 5, "double": 6, "list": 7,
                       "class": 8, "password": 9}
HIDDEN_TOPIC_KEYS: Final = frozenset(("internal.segment.bytes",))
DUPLICATED_RESOURCE: Final = ApiError(Errors.INVALID_REQUEST, "Each resource must appear at most once.")
_TOPIC_TO_BROKER: Final = {topic: broker for broker, topic in BROKER_SYNONYMS.items()}
# The ACL resource type each config resource type is authorized on, and the error of a refusal.
_ACL_RESOURCES: Final = {
    TOPIC_RESOURCE: (ResourceType.TOPIC, Errors.TOPIC_AUTHORIZATION_FAILED),
    GROUP_RESOURCE: (ResourceType.GROUP, Errors.GROUP_AUTHORIZATION_FAILED),
    BROKER_RESOURCE: (ResourceType.CLUSTER, Errors.CLUSTER_AUTHORIZATION_FAILED),
    BROKER_LOGGER_RESOURCE: (ResourceType.CLUSTER, Errors.CLUSTER_AUTHORIZATION_FAILED),
    CLIENT_METRICS_RESOURCE: (ResourceType.CLUSTER, Errors.CLUSTER_AUTHORIZATION_FAILED),
}

# May the request's principal act on the config resource of (type, name)? None: everyone may.
Authorized = Callable[[int, str], bool]


def authorization(auth: auth_helper.AuthHelper, request, operation: int) -> Authorized:
    """`operation` on each config resource, as ConfigHelper and ControllerApis ask it. A type
    with no ACL resource is let through, to be refused by its handler."""
    def authorized(kind: int, name: str) -> bool:
        if kind not in _ACL_RESOURCES:
            return True
        acl_type = _ACL_RESOURCES[kind][0]
        return auth.authorize(request, operation, acl_type,
                              auth_helper.CLUSTER_NAME if acl_type is ResourceType.CLUSTER else name)
    return authorized


def alter_authorization(auth: auth_helper.AuthHelper, request) -> Authorized:
    return authorization(auth, request, auth_helper.ALTER_CONFIGS)


def _refusal(kind: int, with_message: bool = True) -> ApiError:
    code = _ACL_RESOURCES[kind][1]
    return ApiError(code, default_message(code) if with_message else None)


def describe_all(controller: Controller, config: KafkaConfig, body: dict, version: int,
                 managers: Mapping[int, Any] | None, authorized: Authorized | None = None) -> list[dict]:
    """ConfigHelper.handleDescribeConfigsRequest: the resources the principal may
    DESCRIBE_CONFIGS described, in request order, then the refused ones, each with its
    authorization error and no configs."""
    allowed, refused = [], []
    for resource in body["resources"]:
        kind, name = resource["resource_type"], resource["resource_name"]
        (allowed if authorized is None or authorized(kind, name) else refused).append(resource)
    results = [describe(controller, config, resource, body["include_synonyms"], body["include_documentation"],
                        version, managers) for resource in allowed]
    for resource in refused:
        error = _refusal(resource["resource_type"])
        results.append({"error_code": error.code, "error_message": error.message, "configs": [],
                        "resource_type": resource["resource_type"], "resource_name": resource["resource_name"]})
    return results


def render(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(item) for item in value)
    return str(value)


def _typed(definition: ConfigDef, key: str, raw: Any) -> Any:
    return definition.keys[key].parse(raw) if raw is not None else definition.keys[key].default


def _broker_layers(controller: Controller, config: KafkaConfig, topic_key: str) -> list[tuple[str, Any, int]]:
    """(name, typed value, source) of every broker-level layer of a topic config, strongest first."""
    broker_key = _TOPIC_TO_BROKER.get(topic_key)
    layers = []
    if broker_key is not None:
        dynamic = controller.dynamic_broker_configs
        for resource, source in ((str(config.node_id), DYNAMIC_BROKER_CONFIG),
                                 (CLUSTER_DEFAULT, DYNAMIC_DEFAULT_BROKER_CONFIG)):
            if broker_key in dynamic.get(resource, {}):
                layers.append((broker_key, _typed(TOPIC_CONFIG_DEF, topic_key, dynamic[resource][broker_key]), source))
        if broker_key in config.originals:
            static = controller.static_broker_defaults[broker_key]
            layers.append((broker_key, _typed(TOPIC_CONFIG_DEF, topic_key, static), STATIC_BROKER_CONFIG))
    layers.append((broker_key or topic_key, TOPIC_CONFIG_DEF.keys[topic_key].default, DEFAULT_CONFIG))
    return layers


def _topic_entries(controller: Controller, config: KafkaConfig, name: str, keys, include_synonyms: bool,
                   version: int) -> list[dict]:
    topic = controller.metadata.get(name)
    assert topic is not None
    entries = []
    for key, definition in TOPIC_CONFIG_DEF.keys.items():
        if key in HIDDEN_TOPIC_KEYS or (keys is not None and key not in keys):
            continue
        layers = []
        if key in topic.configs:
            layers.append((key, render(_typed(TOPIC_CONFIG_DEF, key, topic.configs[key])), DYNAMIC_TOPIC_CONFIG))
        layers += [(n, render(v), s) for n, v, s in _broker_layers(controller, config, key)]
        _, value, source = layers[0]
        entries.append({"name": key, "value": value, "read_only": False, "config_source": source,
                        "is_sensitive": False, "config_type": CONFIG_TYPES[definition.type],
                        "documentation": None,
                        "synonyms": [{"name": n, "value": v, "source": s} for n, v, s in layers]
                        if include_synonyms else []})
    return entries


def _broker_key_layers(controller: Controller, config: KafkaConfig, key: str) -> list[tuple[str, str | None, int]]:
    """(name, value, source) of a broker key, highest rank first (ConfigHelper.configSynonyms):
    source by source (this broker's dynamic value, the cluster default's, the config file's, the
    built-in default), each for the key and then, for a listener-prefixed key, its base key
    (brokerConfigSynonyms); the layers ranking above the key's own first one are dropped."""
    prefixed = _listener_prefixed(key)
    names = [key] if prefixed is None else [key, prefixed[1]]
    dynamic = controller.dynamic_broker_configs
    layers: list[tuple[str, str | None, int]] = []
    for resource, source in ((str(config.node_id), DYNAMIC_BROKER_CONFIG),
                             (CLUSTER_DEFAULT, DYNAMIC_DEFAULT_BROKER_CONFIG)):
        layers += [(name, render(broker_key_definition(name).parse(dynamic[resource][name])), source)
                   for name in names if is_broker_reconfigurable(name) and name in dynamic.get(resource, {})]
    layers += [(name, render(config.values[name]), STATIC_BROKER_CONFIG) for name in names if name in config.originals]
    defaults = [(name, broker_key_definition(name).default) for name in names if _listener_prefixed(name) is None]
    layers += [(name, render(default), DEFAULT_CONFIG) for name, default in defaults if default is not NO_DEFAULT]
    own = next(index for index, (name, _, _) in enumerate(layers) if name == key)
    return layers[own:]


def _listener_prefixed_keys(controller: Controller, config: KafkaConfig) -> list[str]:
    """The listener-prefixed keys set in the config file or dynamically: Kafka describes the keys
    it was given beside the ones it defines."""
    named = set(config.originals).union(*controller.dynamic_broker_configs.values())
    return sorted(key for key in named if _listener_prefixed(key) is not None)


def _listener_prefixed(key: str) -> tuple[str, str] | None:
    """(listener, base key) of a listener-prefixed key franz takes (a connection limit, a store)."""
    return listener_connection_key(key) or listener_ssl_store_key(key)


def _broker_entries(controller: Controller, config: KafkaConfig, keys, include_synonyms: bool) -> list[dict]:
    entries = []
    for key in [*BROKER_CONFIG_DEF.keys, *_listener_prefixed_keys(controller, config)]:
        if keys is not None and key not in keys:
            continue
        layers = _broker_key_layers(controller, config, key)
        _, value, source = layers[0]
        # DynamicBrokerConfig.AllDynamicConfigs names no listener-prefixed key: Kafka calls those
        # read-only, though it takes them at run time.
        read_only = key not in BROKER_RECONFIGURABLE_KEYS
        key_type = broker_key_definition(key).type
        sensitive = key_type == "password"  # KafkaConfig.maybeSensitive: described without its value
        entries.append({"name": key, "value": None if sensitive else value, "read_only": read_only,
                        "config_source": source, "is_sensitive": sensitive,
                        "config_type": CONFIG_TYPES[key_type], "documentation": None,
                        "synonyms": [{"name": n, "value": None if sensitive else v, "source": src}
                                     for n, v, src in layers] if include_synonyms else []})
    for broker_key, topic_key in BROKER_SYNONYMS.items():
        if keys is not None and broker_key not in keys:
            continue
        layers = _broker_layers(controller, config, topic_key)
        value, source = render(layers[0][1]), layers[0][2]
        if source == DEFAULT_CONFIG:  # the file's value of a key set another way (log.retention.hours)
            value = render(config[broker_key])
        entries.append({"name": broker_key, "value": value, "read_only": False, "config_source": source,
                        "is_sensitive": False, "config_type": CONFIG_TYPES[TOPIC_CONFIG_DEF.keys[topic_key].type],
                        "documentation": None,
                        "synonyms": [{"name": n, "value": render(v), "source": s} for n, v, s in layers]
                        if include_synonyms else []})
    return entries


def _cluster_default_entries(controller: Controller, config: KafkaConfig, keys, include_synonyms: bool) -> list[dict]:
    """The broker resource named "" (kafka-configs --entity-default): only the keys set as the
    dynamic cluster default (currentDynamicDefaultConfigs), each with that layer alone
    (createBrokerConfigEntry with perBrokerConfig false keeps only DYNAMIC_DEFAULT synonyms)."""
    defaults = set(controller.dynamic_broker_configs.get(CLUSTER_DEFAULT, {}))
    wanted = defaults if keys is None else defaults & set(keys)
    entries = []
    for entry in _broker_entries(controller, config, wanted, True):
        layers = [synonym for synonym in entry["synonyms"] if synonym["source"] == DYNAMIC_DEFAULT_BROKER_CONFIG]
        entries.append({**entry, "value": layers[0]["value"], "config_source": layers[0]["source"],
                        "synonyms": layers if include_synonyms else []})
    return entries


def describe(controller: Controller, config: KafkaConfig, resource: dict, include_synonyms: bool,
             include_documentation: bool, version: int, managers: Mapping[int, Any] | None = None) -> dict:
    """`managers`: the keepers of the GROUP and CLIENT_METRICS resources by resource type
    (GroupConfigManager, ClientMetricsConfigManager), each with describe, alter and overrides."""
    managers = managers or {}
    kind, name, keys = resource["resource_type"], resource["resource_name"], resource["configuration_keys"]
    result = {"error_code": 0, "error_message": None, "resource_type": kind, "resource_name": name, "configs": []}
    wanted = set(keys) if keys else None  # null or empty: every key (ConfigHelperUtils)
    if kind == TOPIC_RESOURCE:
        try:
            validate_topic_name(name)
        except InvalidTopicError as exc:
            result.update(error_code=Errors.INVALID_TOPIC_EXCEPTION, error_message=str(exc))
            return result
        if controller.metadata.get(name) is None:
            result["error_code"] = Errors.UNKNOWN_TOPIC_OR_PARTITION  # no message, as ConfigHelper
        else:
            result["configs"] = _topic_entries(controller, config, name, wanted, include_synonyms, version)
    elif kind == BROKER_RESOURCE:
        if name not in ("", str(config.node_id)):
            result.update(error_code=Errors.INVALID_REQUEST,
                          error_message=f"Unexpected broker id, expected {config.node_id} or empty string, "
                                        f"but received {name}")
        elif name == CLUSTER_DEFAULT:
            result["configs"] = _cluster_default_entries(controller, config, wanted, include_synonyms)
        else:
            result["configs"] = _broker_entries(controller, config, wanted, include_synonyms)
    elif kind == BROKER_LOGGER_RESOURCE:
        try:
            _check_logger_resource(config, name)
            result["configs"] = [
                {"name": logger, "value": level, "read_only": False, "config_source": DYNAMIC_BROKER_LOGGER_CONFIG,
                 "is_sensitive": False, "documentation": None, "synonyms": []}
                for logger, level in logging_controller.loggers().items() if wanted is None or logger in wanted]
        except ApiError as exc:
            result.update(error_code=exc.code, error_message=exc.message)
    elif kind in managers:
        try:
            result["configs"] = managers[kind].describe(name, wanted, include_synonyms)
        except ApiError as exc:
            result.update(error_code=exc.code, error_message=exc.message)
    else:
        result.update(error_code=Errors.INVALID_REQUEST,
                      error_message=f"Unsupported resource type {kind} for DescribeConfigs")
    return result


def _check_logger_resource(config: KafkaConfig, name: str) -> None:
    """A BROKER_LOGGER resource names this broker, never the cluster (ConfigHelper, ConfigAdminManager)."""
    if not name:
        raise ApiError(Errors.INVALID_REQUEST, "Broker id must not be empty")
    if name != str(config.node_id):
        raise ApiError(Errors.INVALID_REQUEST, f"Unexpected broker id, expected {config.node_id} but received {name}")


def _alter_log_levels(config: KafkaConfig, name: str, operations: list[tuple[str, int, str | None]],
                      validate_only: bool) -> None:
    """ConfigAdminManager.validateLogLevelConfigs, then (unless validate_only) alterLogLevelConfigs."""
    _check_logger_resource(config, name)
    for logger, op, level in operations:
        if op in (SET, DELETE) and not logging_controller.logger_exists(logger):
            raise ApiError(Errors.INVALID_CONFIG, f"Logger {logger} does not exist!")
        if op == SET and level not in logging_controller.LEVELS:
            raise ApiError(Errors.INVALID_CONFIG,
                           f"Cannot set the log level of {logger} to {level} as it is not a supported log level. "
                           f"Valid log levels are {', '.join(logging_controller.LEVELS)}")
        if op == DELETE and logger == logging_controller.ROOT_LOGGER:
            raise ApiError(Errors.INVALID_REQUEST,
                           f"Removing the log level of the {logging_controller.ROOT_LOGGER} logger is not allowed")
        if op in (APPEND, SUBTRACT):
            raise ApiError(Errors.INVALID_REQUEST, f"{'APPEND' if op == APPEND else 'SUBTRACT'} operation is not "
                                                   "allowed for the BROKER_LOGGER resource")
        if op not in (SET, DELETE, APPEND, SUBTRACT):
            raise ApiError(Errors.INVALID_REQUEST,
                           f"Unknown operation type {op} is not allowed for the BROKER_LOGGER resource")
    if validate_only:
        return
    for logger, op, level in operations:
        if op == SET:
            logging_controller.set_level(logger, level)
        else:
            logging_controller.unset_level(logger)


def create_topics_configs(controller: Controller, name: str, overrides: dict) -> list[dict]:
    """The `configs` of a CreateTopics v5+ answer: every topic config and its source."""
    entries = []
    for key in TOPIC_CONFIG_DEF.keys:
        if key in HIDDEN_TOPIC_KEYS:
            continue
        if key in overrides:
            value, source = _typed(TOPIC_CONFIG_DEF, key, overrides[key]), DYNAMIC_TOPIC_CONFIG
        else:
            _, value, source = _broker_layers(controller, controller.config, key)[0]
        entries.append({"name": key, "value": render(value), "read_only": False, "config_source": source,
                        "is_sensitive": False})
    return entries


def _check_entries(configs: list[dict], value_required) -> None:
    """ConfigAdminManager.preprocess: each key once, and a value wherever the operation needs one."""
    names = [entry["name"] for entry in configs]
    if len(set(names)) != len(names):
        raise ApiError(Errors.INVALID_REQUEST, "Error due to duplicate config keys")
    missing = [entry["name"] for entry in configs if entry["value"] is None and value_required(entry)]
    if missing:
        raise ApiError(Errors.INVALID_REQUEST, f"Null value not supported for : {', '.join(missing)}")


def duplicated_resources(resources: list[dict]) -> set[tuple[int, str]]:
    """(type, name) of the resources named more than once in one alter request: Kafka answers
    each of their occurrences INVALID_REQUEST and alters none of them."""
    seen: set[tuple[int, str]] = set()
    duplicated = set()
    for resource in resources:
        key = (resource["resource_type"], resource["resource_name"])
        if key in seen:
            duplicated.add(key)
        seen.add(key)
    return duplicated


def answer(resource: dict, error: ApiError | None = None) -> dict:
    return {"error_code": error.code if error else Errors.NONE, "error_message": error.message if error else None,
            "resource_type": resource["resource_type"], "resource_name": resource["resource_name"]}


async def _check_broker_alteration(controller: Controller, name: str, operations: list, authorized,
                                   replace_all: bool = False) -> None:
    """A broker resource refused ALTER_CONFIGS is refused only once ConfigAdminManager.preprocess
    has validated its name and changes: a change that would fail says so first."""
    if authorized is not None and not authorized(BROKER_RESOURCE, name):
        await controller.alter_broker_configs(name, operations, True, replace_all=replace_all)
        raise _refusal(BROKER_RESOURCE)


def _check_authorized(kind: int, name: str, authorized, with_message: bool = True) -> None:
    if authorized is not None and not authorized(kind, name):
        raise _refusal(kind, with_message)


async def incremental_alter(controller: Controller, config: KafkaConfig, resource: dict, validate_only: bool,
                            managers: Mapping[int, Any] | None = None, authorized: Authorized | None = None) -> dict:
    managers = managers or {}
    kind, name = resource["resource_type"], resource["resource_name"]
    operations = [(c["name"], c["config_operation"], c["value"]) for c in resource["configs"]]
    try:
        _check_entries(resource["configs"], lambda entry: entry["config_operation"] != DELETE)
        if kind == TOPIC_RESOURCE:
            _check_authorized(kind, name, authorized)
            await controller.alter_topic_configs(name, operations, validate_only)
        elif kind == BROKER_RESOURCE:
            await _check_broker_alteration(controller, name, operations, authorized)
            await controller.alter_broker_configs(name, operations, validate_only)
        elif kind == BROKER_LOGGER_RESOURCE:
            _check_authorized(kind, name, authorized, with_message=False)
            _alter_log_levels(config, name, operations, validate_only)
        elif kind in managers:
            _check_authorized(kind, name, authorized)
            await managers[kind].alter(name, operations, validate_only)
        else:
            raise ApiError(Errors.INVALID_REQUEST, f"Unsupported resource type {kind} for IncrementalAlterConfigs")
    except ApiError as exc:
        return answer(resource, exc)
    return answer(resource)


async def legacy_alter(controller: Controller, resource: dict, validate_only: bool,
                       managers: Mapping[int, Any] | None = None, authorized: Authorized | None = None) -> dict:
    """AlterConfigs (the legacy, non-incremental API): the given configs become the resource's
    whole set of overrides, and every override left out is removed
    (ConfigurationControlManager.legacyAlterConfigs). Topics, brokers and groups, as in Kafka."""
    kind, name = resource["resource_type"], resource["resource_name"]
    wanted = {entry["name"]: entry["value"] for entry in resource["configs"]}
    try:
        _check_entries(resource["configs"], lambda entry: True)
        setting = [(key, SET, value) for key, value in wanted.items()]
        if kind == TOPIC_RESOURCE:
            _check_authorized(kind, name, authorized)
            await controller.alter_topic_configs(name, setting, validate_only, replace_all=True)
        elif kind == BROKER_RESOURCE:
            await _check_broker_alteration(controller, name, setting, authorized, replace_all=True)
            await controller.alter_broker_configs(name, setting, validate_only, replace_all=True)
        elif kind in (managers or {}):
            _check_authorized(kind, name, authorized)
            await managers[kind].alter(name, setting, validate_only, replace_all=True)
        else:  # BROKER_LOGGER too: its levels are altered only incrementally
            raise ApiError(Errors.INVALID_REQUEST, f"Unknown resource type {kind}")
    except ApiError as exc:
        return answer(resource, exc)
    return answer(resource)

