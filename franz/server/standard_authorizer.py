"""StandardAuthorizer: who may do what, decided from ACLs (org.apache.kafka.metadata.authorizer.StandardAuthorizer,
StandardAuthorizerData, StandardAcl, and the ACL model of org.apache.kafka.common.acl and .resource).

An ACL names a resource pattern (resource type, a name, LITERAL or PREFIXED),
a principal ("User:alice", or "User:*" for every principal), a host (an IP
address as Java prints it, or "*"), an operation and ALLOW or DENY. The enums
carry Kafka's wire codes; a code Kafka does not know reads as UNKNOWN
(`from_code`), as its fromCode methods do.

authorize() answers one action (an operation on one LITERAL resource) as
StandardAuthorizerData does:
- a super user (super.users, "User:a;User:b") may do anything;
- the ACLs that bear on a resource are those of its type whose pattern is the
  exact name (LITERAL), a prefix of it (PREFIXED) or the LITERAL "*"; among
  those that match the principal (or "User:*"), the host (or "*") and the
  operation, one DENY wins over every ALLOW;
- an ALLOW of READ, WRITE, DELETE or ALTER also allows DESCRIBE, one of
  ALTER_CONFIGS also DESCRIBE_CONFIGS, one of ALL everything; a DENY denies only
  its own operation (or, for ALL, every one);
- with no match: DENIED if any ACL at all bears on the resource, else the
  default result (allow.everyone.if.no.acl.found, false unless set).
authorize_by_resource_type() is Authorizer.authorizeByResourceType's default,
which StandardAuthorizer inherits: may the principal do the operation on some
resource of the type (idempotent produce, CreateTopics' describe checks).

Kafka keeps the ACLs in a set sorted by resource type and reversed name and
walks it; franz keeps them grouped by (resource type, pattern type, name) and
looks up the exact name, each PREFIXED length in use and "*". The decision is
the same; so is the rule the audit log names (the first DENY, else the last
ALLOW, in Kafka's walking order: exact name, longer prefixes first, then "*").

The audit lines go to the logger kafka.authorizer.logger at Kafka's levels: an
allowed action at DEBUG (TRACE when the caller does not log allows), a denied
one at INFO (TRACE when the caller does not log denials).

The ACLs change only through the AclMutator (AclControlManager), which stores
a change and then tells the authorizer (add_acl, remove_acl), as the
controller's records reach Kafka's authorizer after they are committed.
"""

from __future__ import annotations

import bisect
import ipaddress
import logging
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum, IntEnum
from typing import Any, Final, Protocol, TypeVar

from franz.protocol.errors import Errors
from franz.server.controller import ApiError
from franz.server.logging_controller import TRACE


class ResourceType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    TOPIC = 2
    GROUP = 3
    CLUSTER = 4
    TRANSACTIONAL_ID = 5
    DELEGATION_TOKEN = 6
    USER = 7


class PatternType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    MATCH = 2
    LITERAL = 3
    PREFIXED = 4


class AclOperation(IntEnum):
    UNKNOWN = 0
    ANY = 1
    ALL = 2
    READ = 3
    WRITE = 4
    CREATE = 5
    DELETE = 6
    ALTER = 7
    DESCRIBE = 8
    CLUSTER_ACTION = 9
    DESCRIBE_CONFIGS = 10
    ALTER_CONFIGS = 11
    IDEMPOTENT_WRITE = 12
    CREATE_TOKENS = 13
    DESCRIBE_TOKENS = 14
    TWO_PHASE_COMMIT = 15


class AclPermissionType(IntEnum):
    UNKNOWN = 0
    ANY = 1
    DENY = 2
    ALLOW = 3


class AuthorizationResult(Enum):
    ALLOWED = 0
    DENIED = 1


E = TypeVar("E", ResourceType, PatternType, AclOperation, AclPermissionType)


def from_code(enum: type[E], code: int) -> E:
    """fromCode of Kafka's ACL enums: a code they do not know is UNKNOWN."""
    try:
        return enum(code)
    except ValueError:
        return enum(0)


WILDCARD: Final = "*"  # ResourcePattern.WILDCARD_RESOURCE, and the host of every host
WILDCARD_PRINCIPAL: Final = "User:*"
CLUSTER_NAME: Final = "kafka-cluster"  # Resource.CLUSTER_NAME
SUPER_USERS_CONFIG: Final = "super.users"
ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_CONFIG: Final = "allow.everyone.if.no.acl.found"

# An ALLOW of any of these operations also allows the key operation (StandardAuthorizerData.IMPLIES_*).
_IMPLIED_BY: Final = {AclOperation.DESCRIBE: frozenset({AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE,
                                                        AclOperation.DELETE, AclOperation.ALTER}),
                      AclOperation.DESCRIBE_CONFIGS: frozenset({AclOperation.DESCRIBE_CONFIGS,
                                                                AclOperation.ALTER_CONFIGS})}

logger = logging.getLogger(__name__)
audit_logger = logging.getLogger("kafka.authorizer.logger")


def pascal_case(name: str) -> str:
    """SecurityUtils.toPascalCase: TRANSACTIONAL_ID -> TransactionalId."""
    return "".join(word[:1].upper() + word[1:].lower() for word in name.split("_"))


def parse_kafka_principal(text: str) -> tuple[str, str]:
    """SecurityUtils.parseKafkaPrincipal: (type, name), split at the first colon. Raises ValueError."""
    principal_type, colon, name = (text or "").partition(":")
    if not text or not colon:
        raise ValueError(f"expected a string in format principalType:principalName but got {text or None}")
    return principal_type, name


def java_host_address(host: str) -> str:
    """InetAddress.getHostAddress of a client's address, the form an ACL's host must have to
    match it: an IPv6 address in eight uncompressed groups (0:0:0:0:0:0:0:1, not ::1), and an
    IPv4 client of a dual-stack socket (::ffff:1.2.3.4) as the IPv4 address Java sees."""
    address, percent, scope = host.partition("%")
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return host
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return ":".join(f"{int(group, 16):x}" for group in parsed.exploded.split(":")) + percent + scope
    return str(parsed)


@dataclass(frozen=True, slots=True)
class StandardAcl:
    """One ACL; also Kafka's AclBinding, whose fields are the same."""

    resource_type: ResourceType
    resource_name: str
    pattern_type: PatternType
    principal: str
    host: str
    operation: AclOperation
    permission_type: AclPermissionType

    def kafka_principal(self) -> tuple[str, str]:
        """StandardAcl.kafkaPrincipal: (type, name). AclControlManager refuses an ACL without a colon."""
        principal_type, colon, name = self.principal.partition(":")
        if not colon:
            raise ValueError(f"Could not parse principal from `{self.principal}` (no colon is present separating "
                             f"the principal type from the principal name)")
        return principal_type, name

    def __str__(self) -> str:
        return (f"StandardAcl(resourceType={self.resource_type.name}, resourceName={self.resource_name}, "
                f"patternType={self.pattern_type.name}, principal={self.principal}, host={self.host}, "
                f"operation={self.operation.name}, permissionType={self.permission_type.name})")


def _rank(acl: StandardAcl) -> tuple:
    """StandardAcl.compareTo among ACLs of one resource pattern."""
    return acl.operation, acl.principal, acl.host, acl.permission_type


@dataclass(frozen=True, slots=True)
class ResourcePatternFilter:
    resource_type: ResourceType
    name: str | None  # None: any name
    pattern_type: PatternType

    def is_unknown(self) -> bool:
        return self.resource_type is ResourceType.UNKNOWN or self.pattern_type is PatternType.UNKNOWN

    def matches(self, acl: StandardAcl) -> bool:
        """ResourcePatternFilter.matches. MATCH: the ACLs that would bear on a resource of this
        exact name (itself, "*", and its PREFIXED prefixes); ANY: every pattern type, name exact."""
        if self.resource_type is not ResourceType.ANY and self.resource_type is not acl.resource_type:
            return False
        if self.pattern_type not in (PatternType.ANY, PatternType.MATCH) and self.pattern_type is not acl.pattern_type:
            return False
        if self.name is None:
            return True
        if self.pattern_type is PatternType.ANY or self.pattern_type is acl.pattern_type:
            return self.name == acl.resource_name
        if acl.pattern_type is PatternType.LITERAL:
            return self.name == acl.resource_name or acl.resource_name == WILDCARD
        return self.name.startswith(acl.resource_name)  # PREFIXED: a stored ACL is LITERAL or PREFIXED


@dataclass(frozen=True, slots=True)
class AccessControlEntryFilter:
    principal: str | None  # None: any
    host: str | None  # None: any
    operation: AclOperation
    permission_type: AclPermissionType

    def is_unknown(self) -> bool:
        return self.operation is AclOperation.UNKNOWN or self.permission_type is AclPermissionType.UNKNOWN

    def matches(self, acl: StandardAcl) -> bool:
        """AccessControlEntryFilter.matches: exact strings; "User:*" or "*" in a filter are no wildcards."""
        return ((self.principal is None or self.principal == acl.principal)
                and (self.host is None or self.host == acl.host)
                and (self.operation is AclOperation.ANY or self.operation is acl.operation)
                and (self.permission_type is AclPermissionType.ANY or self.permission_type is acl.permission_type))


@dataclass(frozen=True, slots=True)
class AclBindingFilter:
    pattern_filter: ResourcePatternFilter
    entry_filter: AccessControlEntryFilter

    def is_unknown(self) -> bool:
        return self.pattern_filter.is_unknown() or self.entry_filter.is_unknown()

    def matches(self, acl: StandardAcl) -> bool:
        return self.pattern_filter.matches(acl) and self.entry_filter.matches(acl)


ANY_FILTER: Final = AclBindingFilter(ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY),
                                     AccessControlEntryFilter(None, None, AclOperation.ANY, AclPermissionType.ANY))


@dataclass(frozen=True, slots=True)
class Action:
    """org.apache.kafka.server.authorizer.Action, on a LITERAL resource. log_if_allowed and
    log_if_denied say whether the caller acts on the answer (an audit line at DEBUG or INFO) or
    only asks (authorized operations, filtering a list: TRACE)."""

    operation: AclOperation
    resource_type: ResourceType
    resource_name: str
    resource_reference_count: int = 1
    log_if_allowed: bool = True
    log_if_denied: bool = True


@dataclass(frozen=True, slots=True)
class AclDeleteResult:
    """One filter's answer: the ACLs it removed, or the error that kept it from removing any."""

    error: ApiError | None
    deleted: tuple[StandardAcl, ...] = ()


class AclMutator(Protocol):
    async def create_acls(self, bindings: list[StandardAcl]) -> list[ApiError | None]: ...

    async def delete_acls(self, filters: list[AclBindingFilter]) -> list[AclDeleteResult]: ...


_Key = tuple[ResourceType, PatternType, str]


class StandardAuthorizer:
    def __init__(self) -> None:
        self.node_id = -1
        self.super_users: frozenset[str] = frozenset()
        self.default_result = AuthorizationResult.DENIED
        self.acl_mutator: AclMutator | None = None
        self._prefix = "[StandardAuthorizer -1] "
        self._by_id: dict[Any, StandardAcl] = {}
        # The ACLs of each resource pattern, in StandardAcl order (_rank).
        self._by_pattern: dict[_Key, list[StandardAcl]] = {}
        # How many PREFIXED patterns of each resource type have each name length: the prefixes to look up.
        self._prefix_lengths: dict[ResourceType, Counter[int]] = {}

    # -- configuration and loading ----------------------------------------------------------

    def configure(self, configs: Mapping[str, object]) -> None:
        """super.users (each entry checked as a principal: ValueError) and allow.everyone.if.no.acl.found."""
        super_users = set()
        for value in str(configs.get(SUPER_USERS_CONFIG) or "").split(";"):
            if value.strip():
                parse_kafka_principal(value.strip())
                super_users.add(value.strip())
        allow = str(configs.get(ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_CONFIG, "")).strip().lower() == "true"
        try:
            self.node_id = int(str(configs.get("node.id")).strip())
        except ValueError:
            self.node_id = -1
        self._prefix = f"[StandardAuthorizer {self.node_id}] "
        self.super_users = frozenset(super_users)
        self.default_result = AuthorizationResult.ALLOWED if allow else AuthorizationResult.DENIED
        logger.info("%sset super.users=%s, default result=%s", self._prefix, ",".join(sorted(super_users)),
                    self.default_result.name)

    def set_acl_mutator(self, acl_mutator: AclMutator) -> None:
        self.acl_mutator = acl_mutator

    def acl_mutator_or_exception(self) -> AclMutator:
        if self.acl_mutator is None:
            raise ApiError(Errors.NOT_CONTROLLER, "The current node is not the active controller.")
        return self.acl_mutator

    def load_snapshot(self, acls: Mapping[Any, StandardAcl]) -> None:
        self._by_id, self._by_pattern, self._prefix_lengths = {}, {}, {}
        for acl_id, acl in acls.items():
            self._add(acl_id, acl)
        logger.info("%sInitialized with %d acl(s).", self._prefix, len(self._by_id))

    def add_acl(self, acl_id: Any, acl: StandardAcl) -> None:
        self._add(acl_id, acl)
        logger.log(TRACE, "%sAdded ACL %s: %s", self._prefix, acl_id, acl)

    def remove_acl(self, acl_id: Any) -> None:
        acl = self._by_id.pop(acl_id)  # KeyError: no such id, a bug of the caller's
        key = (acl.resource_type, acl.pattern_type, acl.resource_name)
        group = self._by_pattern[key]
        group.remove(acl)
        if not group:
            del self._by_pattern[key]
            if acl.pattern_type is PatternType.PREFIXED:
                lengths = self._prefix_lengths[acl.resource_type]
                lengths[len(acl.resource_name)] -= 1
                if not lengths[len(acl.resource_name)]:
                    del lengths[len(acl.resource_name)]
        logger.log(TRACE, "%sRemoved ACL %s: %s", self._prefix, acl_id, acl)

    def _add(self, acl_id: Any, acl: StandardAcl) -> None:
        # AclCache.addAcl: an id or an ACL twice is a bug of the caller's
        assert acl_id not in self._by_id, f"An ACL with ID {acl_id} already exists."
        key = (acl.resource_type, acl.pattern_type, acl.resource_name)
        group = self._by_pattern.setdefault(key, [])
        assert acl not in group, f"Unable to add the ACL with ID {acl_id} to aclsByResource"
        bisect.insort(group, acl, key=_rank)
        if len(group) == 1 and acl.pattern_type is PatternType.PREFIXED:
            self._prefix_lengths.setdefault(acl.resource_type, Counter())[len(acl.resource_name)] += 1
        self._by_id[acl_id] = acl

    def acl_count(self) -> int:
        return len(self._by_id)

    def acls(self, acl_filter: AclBindingFilter) -> list[StandardAcl]:
        """The ACLs the filter matches, grouped by resource pattern."""
        return [acl for group in self._by_pattern.values() for acl in group if acl_filter.matches(acl)]

    # -- ACL changes (ClusterMetadataAuthorizer's defaults) -------------------------------------

    async def create_acls(self, bindings: list[StandardAcl]) -> list[ApiError | None]:
        """One result per binding: None, or the error that kept it out. A failure of the whole
        change is every binding's error."""
        mutator = self.acl_mutator_or_exception()
        try:
            return await mutator.create_acls(bindings)
        except ApiError as exc:
            return [exc] * len(bindings)

    async def delete_acls(self, filters: list[AclBindingFilter]) -> list[AclDeleteResult]:
        mutator = self.acl_mutator_or_exception()
        try:
            return await mutator.delete_acls(filters)
        except ApiError as exc:
            return [AclDeleteResult(exc)] * len(filters)

    # -- decisions --------------------------------------------------------------------------

    def authorize(self, principal: str, host: str, actions: Iterable[Action],
                  request_name: str = "") -> list[AuthorizationResult]:
        """One result per action. `principal` is the session's KafkaPrincipal as a string
        ("User:alice"), `host` the client's address as the socket gives it."""
        host = java_host_address(host)
        return [self._authorize(principal, host, action, request_name) for action in actions]

    def _authorize(self, principal: str, host: str, action: Action, request_name: str) -> AuthorizationResult:
        if principal in self.super_users:
            result, rule = AuthorizationResult.ALLOWED, "SuperUser"
        else:
            result, rule = self._find_acl_rule(principal, host, action)
        self._log_audit(principal, host, action, request_name, result, rule)
        return result

    def _find_acl_rule(self, principal: str, host: str, action: Action) -> tuple[AuthorizationResult, str]:
        principals = (principal, WILDCARD_PRINCIPAL)
        deny: StandardAcl | None = None
        allow: StandardAcl | None = None
        has_resource_acls = False
        for group in self._groups_bearing_on(action.resource_type, action.resource_name):
            has_resource_acls = True
            for acl in group:
                result = _find_result(action, principals, host, acl)
                if result is AuthorizationResult.DENIED:
                    deny = acl
                    break
                if result is AuthorizationResult.ALLOWED:
                    allow = acl  # the last ALLOW found names the rule, as in Kafka
            if deny is not None:
                break
        if deny is not None:
            return AuthorizationResult.DENIED, f"MatchingAcl(acl={deny})"
        if allow is not None:
            return AuthorizationResult.ALLOWED, f"MatchingAcl(acl={allow})"
        if not has_resource_acls:
            return self.default_result, "DefaultAllow" if self.default_result is AuthorizationResult.ALLOWED \
                else "DefaultDeny"
        return AuthorizationResult.DENIED, "DefaultDeny"

    def _groups_bearing_on(self, resource_type: ResourceType, name: str) -> Iterable[list[StandardAcl]]:
        """The ACL groups whose pattern covers `name`, in Kafka's walking order."""
        by_pattern = self._by_pattern
        exact = by_pattern.get((resource_type, PatternType.LITERAL, name))
        if exact:
            yield exact
        lengths = self._prefix_lengths.get(resource_type)
        if lengths:
            for length in sorted(lengths, reverse=True):
                if length <= len(name):
                    prefixed = by_pattern.get((resource_type, PatternType.PREFIXED, name[:length]))
                    if prefixed:
                        yield prefixed
        wildcard = by_pattern.get((resource_type, PatternType.LITERAL, WILDCARD))
        if wildcard:
            yield wildcard

    def _log_audit(self, principal: str, host: str, action: Action, request_name: str,
                   result: AuthorizationResult, rule: str) -> None:
        if result is AuthorizationResult.ALLOWED:
            level = logging.DEBUG if action.log_if_allowed else TRACE
        else:
            level = logging.INFO if action.log_if_denied else TRACE
        if audit_logger.isEnabledFor(level):
            audit_logger.log(level, "Principal = %s is %s operation = %s from host = %s on resource = %s:%s:%s for "
                                    "request = %s with resourceRefCount = %d based on rule %s",
                             principal, "Allowed" if result is AuthorizationResult.ALLOWED else "Denied",
                             action.operation.name, host, pascal_case(action.resource_type.name), "LITERAL",
                             action.resource_name, request_name, action.resource_reference_count, rule)

    def authorize_by_resource_type(self, principal: str, host: str, operation: AclOperation,
                                   resource_type: ResourceType, request_name: str = "") -> AuthorizationResult:
        """Authorizer.authorizeByResourceType: ALLOWED if some resource of the type could be
        operated on: a super user or an allowing default (checked on the name "hardcode"), an
        ALLOW of "*", or an ALLOW of a name or prefix that no DENY of the same name or of a
        prefix of it covers. Only the operation itself or ALL counts: no implied operations."""
        if resource_type is ResourceType.ANY:
            raise ValueError("Must specify a non-filter resource type for authorizeByResourceType")
        if resource_type is ResourceType.UNKNOWN:
            raise ValueError("Unknown resource type")
        if operation is AclOperation.ANY:
            raise ValueError("Must specify a non-filter operation type for authorizeByResourceType")
        if operation is AclOperation.UNKNOWN:
            raise ValueError("Unknown operation type")
        hardcode = Action(operation, resource_type, "hardcode", 0, log_if_allowed=True, log_if_denied=False)
        if self.authorize(principal, host, [hardcode], request_name)[0] is AuthorizationResult.ALLOWED:
            return AuthorizationResult.ALLOWED
        host = java_host_address(host)
        principal_type_and_name = parse_kafka_principal(principal)
        deny: dict[PatternType, set[str]] = {PatternType.LITERAL: set(), PatternType.PREFIXED: set()}
        allow: dict[PatternType, set[str]] = {PatternType.LITERAL: set(), PatternType.PREFIXED: set()}
        wildcard_allowed = False
        for (acl_type, _, _), group in self._by_pattern.items():
            if acl_type is not resource_type:
                continue
            for acl in group:
                if acl.host != host and acl.host != WILDCARD:
                    continue
                if acl.principal != WILDCARD_PRINCIPAL and \
                        parse_kafka_principal(acl.principal) != principal_type_and_name:
                    continue
                if acl.operation is not operation and acl.operation is not AclOperation.ALL:
                    continue
                is_wildcard = acl.pattern_type is PatternType.LITERAL and acl.resource_name == WILDCARD
                if acl.permission_type is AclPermissionType.DENY:
                    if is_wildcard:
                        return AuthorizationResult.DENIED
                    deny[acl.pattern_type].add(acl.resource_name)
                elif is_wildcard:
                    wildcard_allowed = True  # unless a DENY of "*" comes up later
                else:
                    allow[acl.pattern_type].add(acl.resource_name)
        if wildcard_allowed:
            return AuthorizationResult.ALLOWED
        for pattern_type, names in allow.items():
            for name in names:
                if pattern_type is PatternType.LITERAL and name in deny[PatternType.LITERAL]:
                    continue
                if not any(name[:length] in deny[PatternType.PREFIXED] for length in range(1, len(name) + 1)):
                    return AuthorizationResult.ALLOWED
        return AuthorizationResult.DENIED


def _find_result(action: Action, principals: tuple[str, str], host: str,
                 acl: StandardAcl) -> AuthorizationResult | None:
    """StandardAuthorizerData.findResult: what `acl` says of the action, None if it does not apply.
    Implied operations come only from ALLOW ACLs: a DENY of READ does not deny DESCRIBE."""
    if acl.principal not in principals:
        return None
    if acl.host != WILDCARD and acl.host != host:
        return None
    if acl.operation is not AclOperation.ALL:
        if acl.permission_type is AclPermissionType.ALLOW:
            implied_by = _IMPLIED_BY.get(action.operation)
            if acl.operation not in implied_by if implied_by is not None else acl.operation is not action.operation:
                return None
        elif acl.operation is not action.operation:
            return None
    return AuthorizationResult.ALLOWED if acl.permission_type is AclPermissionType.ALLOW \
        else AuthorizationResult.DENIED
