"""AclApis: DescribeAcls, CreateAcls and DeleteAcls (kafka.server.AclApis).

Without an authorizer (a Kafka broker without `authorizer.class.name`) the
broker still serves the three APIs (they are in its ApiVersions) and answers
each with SECURITY_DISABLED and the message "No Authorizer is configured.":
DescribeAcls at the top level, CreateAcls once per creation, DeleteAcls once
per filter. Admin clients and tools (kafka-acls.sh, Admin.describeAcls) then
report that security is disabled instead of an unsupported API.

With a StandardAuthorizer, they answer as Kafka's:
- DescribeAcls: the ACLs the filter matches, one entry per resource pattern
  with its ACLs (Kafka groups them in a HashMap, in no set order; franz in the
  authorizer's order);
- CreateAcls: one result per creation. A CLUSTER resource not named
  kafka-cluster and an empty name are refused here (INVALID_REQUEST), the rest
  by AclControlManager.validateNewAcl; the valid ones are created together. A
  creation naming ANY (or MATCH) fails the whole request as Kafka's
  ResourcePattern and AccessControlEntry constructors do: every creation
  answers UNKNOWN_SERVER_ERROR;
- DeleteAcls: per filter, the ACLs it removed, or its error.

A request naming the UNKNOWN code (0) of a resource type, pattern type,
operation or permission type, or a code Kafka does not know (its fromCode reads
it as UNKNOWN), never reaches Kafka's handler: the request's constructor
refuses it while the request is parsed, and the connection is closed as for
any request that does not parse.

Who may call them: Kafka first checks that the caller may DESCRIBE the cluster
(DescribeAcls) or ALTER it (CreateAcls, DeleteAcls), authorizeClusterOperation,
which throws ClusterAuthorizationException when not. That check is the
`authorize_cluster_operation` callable, called after parsing and before
anything else; unless the constructor is given one, `register` takes it from the
broker's AuthHelper (apis.auth, cluster_authorization.authorize_cluster_operation),
which allows everything without an authorizer, as Kafka's. What it raises is answered as a failed handler
(error_responses: the request's getErrorResponse).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

from franz.protocol import api_keys
from franz.protocol.errors import Errors
from franz.server.cluster_authorization import cluster_operation_check
from franz.server.request_channel import Response
from franz.server.standard_authorizer import (
    CLUSTER_NAME,
    AccessControlEntryFilter,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourcePatternFilter,
    ResourceType,
    StandardAcl,
    StandardAuthorizer,
    from_code,
)

logger = logging.getLogger(__name__)

NO_AUTHORIZER: Final = "No Authorizer is configured."

ClusterCheck = Callable[[object, AclOperation], None]


def _allow_every_caller(request, operation: AclOperation) -> None:
    """AuthHelper.authorizeClusterOperation with no authorizer: everyone is authorized."""


class AclApis:
    def __init__(self, authorizer: StandardAuthorizer | None = None,
                 authorize_cluster_operation: ClusterCheck | None = None) -> None:
        self.authorizer = authorizer
        self.authorize_cluster_operation = authorize_cluster_operation or _allow_every_caller
        self._check_given = authorize_cluster_operation is not None

    def register(self, apis) -> None:
        if not self._check_given:
            self.authorize_cluster_operation = cluster_operation_check(apis.auth)
        apis.register("DescribeAcls", self.handle_describe_acls)
        apis.register("CreateAcls", self.handle_create_acls)
        apis.register("DeleteAcls", self.handle_delete_acls)

    async def handle_describe_acls(self, request, body: dict) -> dict | Response:
        if _names_unknown(body, _FILTER_FIELDS):
            return _refused(request, "DescribeAclsRequest contains UNKNOWN elements")
        self.authorize_cluster_operation(request, AclOperation.DESCRIBE)
        if self.authorizer is None:
            return {"throttle_time_ms": 0, "error_code": Errors.SECURITY_DISABLED, "error_message": NO_AUTHORIZER,
                    "resources": []}
        resources: dict[tuple, dict] = {}  # DescribeAclsResponse.aclsResources: ACLs by resource pattern
        for acl in self.authorizer.acls(_binding_filter(body)):
            resource = resources.setdefault((acl.resource_type, acl.pattern_type, acl.resource_name), {
                "resource_type": acl.resource_type, "resource_name": acl.resource_name,
                "pattern_type": acl.pattern_type, "acls": []})
            resource["acls"].append({"principal": acl.principal, "host": acl.host, "operation": acl.operation,
                                     "permission_type": acl.permission_type})
        return {"throttle_time_ms": 0, "error_code": Errors.NONE, "error_message": None,
                "resources": list(resources.values())}

    async def handle_create_acls(self, request, body: dict) -> dict | Response:
        if any(_names_unknown(creation, _CREATION_FIELDS) for creation in body["creations"]):
            return _refused(request, "CreatableAcls contain unknown elements")
        self.authorize_cluster_operation(request, AclOperation.ALTER)
        if self.authorizer is None:
            return {"throttle_time_ms": 0, "results": [
                {"error_code": Errors.SECURITY_DISABLED, "error_message": NO_AUTHORIZER} for _ in body["creations"]]}
        bindings = [_binding(creation) for creation in body["creations"]]  # ValueError: the whole request fails
        refusals: dict[int, str] = {}
        for index, acl in enumerate(bindings):
            if acl.resource_type is ResourceType.CLUSTER and acl.resource_name != CLUSTER_NAME:
                refusals[index] = f"The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
            elif not acl.resource_name:
                refusals[index] = "Invalid empty resource name"
            if index in refusals:
                logger.debug("Failed to add acl %s: %s", acl, refusals[index])
        valid = [acl for index, acl in enumerate(bindings) if index not in refusals]
        created = iter(await self.authorizer.create_acls(valid))
        results = []
        for index in range(len(bindings)):
            if index in refusals:
                results.append({"error_code": Errors.INVALID_REQUEST, "error_message": refusals[index]})
            elif (error := next(created)) is not None:
                results.append({"error_code": error.code, "error_message": error.message})
            else:
                results.append({"error_code": Errors.NONE, "error_message": None})
        return {"throttle_time_ms": 0, "results": results}

    async def handle_delete_acls(self, request, body: dict) -> dict | Response:
        if any(_names_unknown(acl_filter, _FILTER_FIELDS) for acl_filter in body["filters"]):
            return _refused(request, "Filters contain UNKNOWN elements")
        self.authorize_cluster_operation(request, AclOperation.ALTER)
        if self.authorizer is None:
            return {"throttle_time_ms": 0, "filter_results": [
                {"error_code": Errors.SECURITY_DISABLED, "error_message": NO_AUTHORIZER, "matching_acls": []}
                for _ in body["filters"]]}
        results = await self.authorizer.delete_acls([_binding_filter(acl_filter) for acl_filter in body["filters"]])
        return {"throttle_time_ms": 0, "filter_results": [
            {"error_code": result.error.code if result.error else Errors.NONE,
             "error_message": result.error.message if result.error else None,
             "matching_acls": [{"error_code": Errors.NONE, "error_message": None,
                                "resource_type": acl.resource_type, "resource_name": acl.resource_name,
                                "pattern_type": acl.pattern_type, "principal": acl.principal, "host": acl.host,
                                "operation": acl.operation, "permission_type": acl.permission_type}
                               for acl in result.deleted]}
            for result in results]}


# The code every ACL enum gives UNKNOWN (ResourceType, PatternType, AclOperation, AclPermissionType).
_UNKNOWN: Final = 0
_FILTER_FIELDS: Final = (("resource_type_filter", ResourceType), ("pattern_type_filter", PatternType),
                         ("operation", AclOperation), ("permission_type", AclPermissionType))
_CREATION_FIELDS: Final = (("resource_type", ResourceType), ("resource_pattern_type", PatternType),
                           ("operation", AclOperation), ("permission_type", AclPermissionType))


def _names_unknown(entry: dict, fields: tuple[tuple[str, type], ...]) -> bool:
    return any(from_code(enum, entry[field]) == _UNKNOWN for field, enum in fields)


def _binding(creation: dict) -> StandardAcl:
    """CreateAclsRequest.aclBinding: ResourcePattern and AccessControlEntry refuse the filter codes."""
    resource_type = from_code(ResourceType, creation["resource_type"])
    pattern_type = from_code(PatternType, creation["resource_pattern_type"])
    operation = from_code(AclOperation, creation["operation"])
    permission_type = from_code(AclPermissionType, creation["permission_type"])
    if resource_type is ResourceType.ANY:
        raise ValueError("resourceType must not be ANY")
    if pattern_type in (PatternType.MATCH, PatternType.ANY):
        raise ValueError(f"patternType must not be {pattern_type.name}")
    if operation is AclOperation.ANY:
        raise ValueError("operation must not be ANY")
    if permission_type is AclPermissionType.ANY:
        raise ValueError("permissionType must not be ANY")
    return StandardAcl(resource_type, creation["resource_name"], pattern_type, creation["principal"],
                       creation["host"], operation, permission_type)


def _binding_filter(entry: dict) -> AclBindingFilter:
    """The AclBindingFilter of DescribeAclsRequest.filter() and DeleteAclsRequest.filters()."""
    return AclBindingFilter(
        ResourcePatternFilter(from_code(ResourceType, entry["resource_type_filter"]), entry["resource_name_filter"],
                              from_code(PatternType, entry["pattern_type_filter"])),
        AccessControlEntryFilter(entry["principal_filter"], entry["host_filter"],
                                 from_code(AclOperation, entry["operation"]),
                                 from_code(AclPermissionType, entry["permission_type"])))


def _refused(request, reason: str) -> Response:
    logger.warning("Closing connection %s from %s: invalid %s request v%d: %s", request.connection_id,
                   request.client_address[0], api_keys.SCHEMAS[request.api_key].name, request.api_version, reason)
    return Response((), Response.CLOSE_CONNECTION_KIND)  # its own: the caller may set a throttle on it
