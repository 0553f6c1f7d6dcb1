"""A request's authorization checks (kafka.server.AuthHelper): may its session's principal, from
its client's address, do an operation on a resource, as the broker's authorizer decides.

AuthHelper wraps the broker's StandardAuthorizer; with none (a broker without
authorizer.class.name) every action is allowed, as in Kafka, and every operation a resource
type supports (AclEntry.supportedOperations) is reported as authorized. Metadata,
DescribeTopicPartitions, DescribeCluster, DescribeGroups and ConsumerGroupDescribe answer
authorized operations, when asked, as a 32-bit field with bit N set for the AclOperation of
code N; unasked, the field stays at Int.MinValue (api_keys.AUTHORIZED_OPERATIONS_OMITTED).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from franz.protocol import api_keys
from franz.server.standard_authorizer import AclOperation, Action, AuthorizationResult, ResourceType

if TYPE_CHECKING:
    from franz.server.request_channel import Request
    from franz.server.standard_authorizer import StandardAuthorizer

# AclOperation codes.
READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE = 3, 4, 5, 6, 7, 8
CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE = 9, 10, 11, 12

SUPPORTED_OPERATIONS: Final = {
    "topic": (READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS),
    "group": (READ, DESCRIBE, DELETE, DESCRIBE_CONFIGS, ALTER_CONFIGS),
    "cluster": (CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER, DESCRIBE),
}


def authorized_operations(resource_type: str) -> int:
    """Utils.to32BitField of every operation `resource_type` supports."""
    field = 0
    for operation in SUPPORTED_OPERATIONS[resource_type]:
        field |= 1 << operation
    return field


CLUSTER_NAME: Final = "kafka-cluster"  # the one CLUSTER resource (Resource.CLUSTER_NAME)
_RESOURCE_TYPES: Final = {"topic": ResourceType.TOPIC, "group": ResourceType.GROUP,
                          "cluster": ResourceType.CLUSTER}


class AuthHelper:
    """The checks KafkaApis makes, against `authorizer` (None: every action allowed)."""

    def __init__(self, authorizer: StandardAuthorizer | None = None) -> None:
        self.authorizer = authorizer

    @property
    def enabled(self) -> bool:
        return self.authorizer is not None

    def authorize(self, request: Request, operation: int, resource_type: int, name: str,
                  log_if_allowed: bool = True, log_if_denied: bool = True, reference_count: int = 1) -> bool:
        """AuthHelper.authorize: one action on one LITERAL resource."""
        if self.authorizer is None:
            return True
        action = Action(AclOperation(operation), ResourceType(resource_type), name, reference_count,
                        log_if_allowed, log_if_denied)
        return self._results(request, [action])[0] is AuthorizationResult.ALLOWED

    def authorize_cluster(self, request: Request, operation: int) -> bool:
        return self.authorize(request, operation, ResourceType.CLUSTER, CLUSTER_NAME)

    def authorize_by_resource_type(self, request: Request, operation: int, resource_type: int) -> bool:
        """Authorizer.authorizeByResourceType: may the principal do the operation on some resource
        of the type (an idempotent producer's WRITE on any topic, say)."""
        if self.authorizer is None:
            return True
        return self.authorizer.authorize_by_resource_type(
            request.session.principal, request.client_address[0], AclOperation(operation),
            ResourceType(resource_type)) is AuthorizationResult.ALLOWED

    def filter_by_authorized(self, request: Request, operation: int, resource_type: int, names: Iterable[str],
                             log_if_allowed: bool = True, log_if_denied: bool = True) -> set[str]:
        """AuthHelper.filterByAuthorized: the names the principal may act on, each asked once
        however often it appears (its count is the action's reference count)."""
        counts: dict[str, int] = {}
        for name in names:
            counts[name] = counts.get(name, 0) + 1
        if self.authorizer is None:
            return set(counts)
        actions = [Action(AclOperation(operation), ResourceType(resource_type), name, count, log_if_allowed,
                          log_if_denied) for name, count in counts.items()]
        return {action.resource_name for action, result in zip(actions, self._results(request, actions))
                if result is AuthorizationResult.ALLOWED}

    def authorized_operations(self, request: Request, resource_type: str, name: str) -> int:
        """AuthHelper.authorizedOperations: the supported operations the principal may do on the
        resource, asked without audit lines, as a 32-bit field."""
        if self.authorizer is None:
            return authorized_operations(resource_type)
        operations = SUPPORTED_OPERATIONS[resource_type]
        kind = _RESOURCE_TYPES[resource_type]
        actions = [Action(AclOperation(operation), kind, name, 1, False, False) for operation in operations]
        field = 0
        for operation, result in zip(operations, self._results(request, actions)):
            if result is AuthorizationResult.ALLOWED:
                field |= 1 << operation
        return field

    def _results(self, request: Request, actions: list[Action]) -> list[AuthorizationResult]:
        assert self.authorizer is not None
        return self.authorizer.authorize(request.session.principal, request.client_address[0], actions,
                                         _request_name(request))


def _request_name(request: Request) -> str:
    schema = api_keys.SCHEMAS.get(request.api_key)
    return schema.name if schema is not None else str(request.api_key)
