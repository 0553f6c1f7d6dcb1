"""Client quotas as the controller keeps them: AlterClientQuotas and DescribeClientQuotas
(org.apache.kafka.controller.ClientQuotaControlManager, org.apache.kafka.image.ClientQuotasImage).

A quota entity names a user, a client id, both, or an IP; a name of None is
that type's default entity. Alterations are checked as Kafka checks them
(entity shape, known key for the entity's types, a value above 0, whole
numbers for integral keys, a key or an entity once per request) and kept in
`client-quotas.json` in the first log dir, replaced atomically on each change
through the controller's config writer, so a restart has them.

franz enforces every quota from the moment it is altered: `producer_byte_rate`,
`consumer_byte_rate`, `request_percentage` (franz.server.client_quota_manager)
and `controller_mutation_rate` (franz.server.controller_mutation_quota) of users
and client ids, and the IP entities' `connection_creation_rate`
(franz.server.connection_quotas, given to the socket server by add_manager).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

from franz.common.config_def import ConfigError
from franz.protocol.errors import Errors
from franz.server.auth_helper import ALTER_CONFIGS, DESCRIBE_CONFIGS, AuthHelper
from franz.server.client_quota_manager import CLIENT_ID, USER, ClientQuotaManager, Entity
from franz.server.cluster_authorization import authorize_cluster_operation, cluster_authorization_failed
from franz.server.connection_quotas import CONNECTION_RATE_KEY, IP, address_of
from franz.server.controller import ApiError

CLIENT_QUOTAS_FILE: Final = "client-quotas.json"
MATCH_EXACT, MATCH_DEFAULT, MATCH_SPECIFIED = 0, 1, 2
# QuotaConfig: the keys of user and client-id entities, and of IP entities, with their types.
USER_CLIENT_KEYS: Final = {"producer_byte_rate": "long", "consumer_byte_rate": "long",
                           "request_percentage": "double", "controller_mutation_rate": "double"}
IP_KEYS: Final = {CONNECTION_RATE_KEY: "int"}
ENFORCED_KEYS: Final = frozenset(("producer_byte_rate", "consumer_byte_rate", "request_percentage",
                                  "controller_mutation_rate", CONNECTION_RATE_KEY))
_INTEGRAL_MAX: Final = {"short": 2**15 - 1, "int": 2**31 - 1, "long": 2**63 - 1}

logger = logging.getLogger(__name__)

Writer = Callable[[Path, object], Awaitable[None]]


def _describe_entity(entity: Entity) -> str:
    """ClientQuotaEntity.toString."""
    entries = ", ".join(f"{kind}={'null' if name is None else name}"
                        for kind, name in sorted(entity, key=lambda pair: pair[0]))
    return "ClientQuotaEntity(entries={" + entries + "})"


class ClientQuotaControlManager:
    def __init__(self, path: Path, write: Writer, managers: list[ClientQuotaManager]) -> None:
        self.path = path
        self._write = write
        self.auth = AuthHelper()  # the broker's, once registered
        # One change at a time, from reading what is in force to putting it in force (see Controller._storing).
        self._altering = asyncio.Lock()
        self._managers = managers
        self.quotas: dict[Entity, dict[str, float]] = self._read()
        self._apply()

    def add_manager(self, manager) -> None:
        """Put the quotas in force in one more manager too (one made after this, as the socket
        server's connection quotas are), and every change from now on."""
        self._managers.append(manager)
        manager.update_quotas(self.quotas)

    def register(self, apis) -> None:
        self.auth = apis.auth
        apis.register("DescribeClientQuotas", self.handle_describe_client_quotas)
        apis.register("AlterClientQuotas", self.handle_alter_client_quotas)

    # -- storage ---------------------------------------------------------------

    def _read(self) -> dict[Entity, dict[str, float]]:
        if not self.path.exists():
            return {}
        try:
            rows = json.loads(self.path.read_text(encoding="utf-8"))
            return {frozenset((str(kind), None if name is None else str(name)) for kind, name in row["entity"].items()):
                    {str(key): float(value) for key, value in row["quotas"].items()} for row in rows}
        except (OSError, ValueError, TypeError, KeyError, AttributeError) as exc:
            logger.warning("Ignoring unreadable %s: %s", self.path, exc)
            return {}

    @staticmethod
    def _rows(quotas: dict[Entity, dict[str, float]]) -> list[dict]:
        return [{"entity": dict(sorted(entity, key=lambda pair: pair[0])), "quotas": dict(values)}
                for entity, values in quotas.items()]

    def _apply(self) -> None:
        for manager in self._managers:
            manager.update_quotas(self.quotas)

    # -- AlterClientQuotas -------------------------------------------------------

    async def handle_alter_client_quotas(self, request, body: dict) -> dict:
        # ControllerApis.handleAlterClientQuotas: ALTER_CONFIGS on the cluster, before anything else.
        authorize_cluster_operation(self.auth, request, ALTER_CONFIGS)
        async with self._altering:
            results: dict[Entity, ApiError | None] = {}
            proposed = {entity: dict(values) for entity, values in self.quotas.items()}
            answers = []
            for entry in body["entries"]:
                pairs = [(e["entity_type"], e["entity_name"]) for e in entry["entity"]]
                entity = frozenset(pairs)
                error = None
                try:
                    if entity in results:
                        raise ApiError(Errors.INVALID_REQUEST, f"Ignoring duplicate entity {_describe_entity(entity)}")
                    keys = _config_keys(pairs)
                    alterations: dict[str, float | None] = {}
                    for op in entry["ops"]:
                        if op["key"] in alterations:
                            raise ApiError(Errors.INVALID_REQUEST,
                                           f"Ignoring duplicate entity {_describe_entity(entity)}")
                        alterations[op["key"]] = None if op["remove"] else op["value"]
                    values = dict(proposed.get(entity, {}))
                    for key, value in alterations.items():
                        if value is None:
                            values.pop(key, None)
                        else:
                            _check_value(keys, key, value)
                            values[key] = value
                    if values:
                        proposed[entity] = values
                    else:
                        proposed.pop(entity, None)
                except ApiError as exc:
                    error = exc
                results[entity] = error
                answers.append({"error_code": error.code if error else Errors.NONE,
                                "error_message": error.message if error else None, "entity": entry["entity"]})
            if not body["validate_only"] and any(error is None for error in results.values()):
                try:
                    await self._write(self.path, self._rows(proposed))  # stored before it is in force
                except ApiError as exc:  # nothing was altered
                    for answer in answers:
                        if answer["error_code"] == Errors.NONE:
                            answer.update(error_code=exc.code, error_message=exc.message)
                    return {"throttle_time_ms": 0, "entries": answers}
                self.quotas = proposed
                self._apply()
                logger.info("Altered client quotas: %s", {_describe_entity(e): self.quotas.get(e, {})
                                                          for e, error in results.items() if error is None})
            return {"throttle_time_ms": 0, "entries": answers}

    # -- DescribeClientQuotas ----------------------------------------------------

    async def handle_describe_client_quotas(self, request, body: dict) -> dict:
        if not self.auth.authorize_cluster(request, DESCRIBE_CONFIGS):  # KafkaApis, before the filter is read
            raise cluster_authorization_failed()
        try:
            exact, specified = _filter(body["components"])
        except ApiError as exc:
            return {"throttle_time_ms": 0, "error_code": exc.code, "error_message": exc.message, "entries": None}
        entries = []
        for entity, values in self.quotas.items():
            names = dict(entity)
            if body["strict"] and len(names) != len(exact) + len(specified):
                continue
            if any(kind not in names or names[kind] != name for kind, name in exact.items()):
                continue
            if any(kind not in names for kind in specified):
                continue
            entries.append({"entity": [{"entity_type": kind, "entity_name": name} for kind, name in names.items()],
                            "values": [{"key": key, "value": value} for key, value in values.items()]})
        return {"throttle_time_ms": 0, "error_code": Errors.NONE, "error_message": None, "entries": entries}


def _config_keys(pairs: list[tuple[str, str | None]]) -> dict[str, str]:
    """validateEntity then configKeysForEntityType: the keys (and their types) the entity may have."""
    if not pairs:
        raise ApiError(Errors.INVALID_REQUEST, "Invalid empty client quota entity")
    names: dict[str, str | None] = {}
    for kind, name in pairs:
        if kind in names:
            raise ApiError(Errors.INVALID_REQUEST, f"Invalid client quota entity, duplicate entity entry {kind}")
        if kind not in (USER, CLIENT_ID, IP):
            raise ApiError(Errors.INVALID_REQUEST, f"Unhandled client quota entity type: {kind}")
        if name is not None and not name:
            raise ApiError(Errors.INVALID_REQUEST, f"Empty {kind} not supported")
        names[kind] = name
    if IP in names:
        if len(names) > 1:
            raise ApiError(Errors.INVALID_REQUEST, "Invalid quota entity combination, IP entity should"
                                                   "not be combined with User or ClientId")  # sic, as Kafka
        if names[IP] is not None and not _resolvable(names[IP]):
            raise ApiError(Errors.INVALID_REQUEST, f"{names[IP]} is not a valid IP or resolvable host.")
        return IP_KEYS
    return USER_CLIENT_KEYS


def _resolvable(host: str) -> bool:
    try:
        address_of(host, IP)
    except ConfigError:
        return False
    return True


def _check_value(keys: dict[str, str], key: str, value: float) -> None:
    """validateQuotaKeyValue, then franz's own limit: only quotas it enforces are accepted."""
    kind = keys.get(key)
    if kind is None:
        raise ApiError(Errors.INVALID_REQUEST, f"Invalid configuration key {key}")
    if math.isnan(value):  # Kafka lets NaN through, and then never throttles (Math.round(NaN) is 0)
        raise ApiError(Errors.INVALID_REQUEST, f"Quota {key} must be a number")
    if value <= 0.0:
        raise ApiError(Errors.INVALID_REQUEST, f"Quota {key} must be greater than 0")
    if kind in _INTEGRAL_MAX:
        if value > _INTEGRAL_MAX[kind]:
            article = "an" if kind == "int" else "a"
            raise ApiError(Errors.INVALID_REQUEST, f"Proposed value for {key} is too large for {article} "
                                                   f"{kind.upper()}.")
        if abs(value % 1.0) > 1e-6:
            raise ApiError(Errors.INVALID_REQUEST, f"{key} cannot be a fractional value.")
    if key not in ENFORCED_KEYS:
        raise ApiError(Errors.INVALID_REQUEST, f"Quota {key} is not supported: franz enforces only "
                                               f"{', '.join(sorted(ENFORCED_KEYS))}")


def _filter(components: list[dict]) -> tuple[dict[str, str | None], set[str]]:
    """ClientQuotasImage.describe's reading of the filter: (exact names by type, types that must be present)."""
    exact: dict[str, str | None] = {}
    specified: set[str] = set()
    for component in components:
        kind, match = component["entity_type"], component["match"]
        if not kind:
            raise ApiError(Errors.INVALID_REQUEST, "Invalid empty entity type.")
        if kind in exact or kind in specified:
            raise ApiError(Errors.INVALID_REQUEST, f"Entity type {kind} cannot appear more than once in the filter.")
        if kind not in (USER, CLIENT_ID, IP):
            raise ApiError(Errors.UNSUPPORTED_VERSION, f"Unsupported entity type {kind}")
        match_type = component["match_type"]
        if match_type == MATCH_EXACT:
            if match is None:
                raise ApiError(Errors.INVALID_REQUEST, "Request specified MATCH_TYPE_EXACT, but set match string to "
                                                       "null.")
            exact[kind] = match
        elif match_type == MATCH_DEFAULT:
            if match is not None:
                raise ApiError(Errors.INVALID_REQUEST, "Request specified MATCH_TYPE_DEFAULT, but also specified a "
                                                       "match string.")
            exact[kind] = None
        elif match_type == MATCH_SPECIFIED:
            if match is not None:
                raise ApiError(Errors.INVALID_REQUEST, "Request specified MATCH_TYPE_SPECIFIED, but also specified "
                                                       "a match string.")
            specified.add(kind)
        else:
            raise ApiError(Errors.INVALID_REQUEST, f"Unknown match type {match_type}")
    if (IP in exact or IP in specified) and (exact.keys() | specified) - {IP}:
        raise ApiError(Errors.INVALID_REQUEST, "Invalid entity filter component combination. IP filter component "
                                               "should not be used with user or clientId filter component.")
    return exact, specified
