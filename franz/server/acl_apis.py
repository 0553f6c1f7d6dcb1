"""AclApis: DescribeAcls, CreateAcls and DeleteAcls on a broker with no authorizer (kafka.server.AclApis).

franz has no Authorizer, as a Kafka broker without `authorizer.class.name`
has none. Such a broker still serves the three ACL APIs (they are in its
ApiVersions), and answers each with SECURITY_DISABLED and the message "No
Authorizer is configured.": DescribeAcls at the top level, CreateAcls once per
creation, DeleteAcls once per filter. Admin clients and tools (kafka-acls.sh,
Admin.describeAcls) then report that security is disabled instead of an
unsupported API.

A request naming the UNKNOWN code (0) of a resource type, pattern type,
operation or permission type never reaches Kafka's handler: the request's
constructor refuses it while the request is parsed, and the connection is
closed as for any request that does not parse.
"""

from __future__ import annotations

import logging
from typing import Final

from franz.protocol import api_keys
from franz.protocol.errors import Errors
from franz.server.request_channel import Response

logger = logging.getLogger(__name__)

NO_AUTHORIZER: Final = "No Authorizer is configured."


class AclApis:
    def register(self, apis) -> None:
        apis.register("DescribeAcls", self.handle_describe_acls)
        apis.register("CreateAcls", self.handle_create_acls)
        apis.register("DeleteAcls", self.handle_delete_acls)

    async def handle_describe_acls(self, request, body: dict) -> dict | Response:
        if _names_unknown(body, _FILTER_FIELDS):
            return _refused(request, "DescribeAclsRequest contains UNKNOWN elements")
        return {"throttle_time_ms": 0, "error_code": Errors.SECURITY_DISABLED, "error_message": NO_AUTHORIZER,
                "resources": []}

    async def handle_create_acls(self, request, body: dict) -> dict | Response:
        if any(_names_unknown(creation, _CREATION_FIELDS) for creation in body["creations"]):
            return _refused(request, "CreatableAcls contain unknown elements")
        return {"throttle_time_ms": 0, "results": [
            {"error_code": Errors.SECURITY_DISABLED, "error_message": NO_AUTHORIZER} for _ in body["creations"]]}

    async def handle_delete_acls(self, request, body: dict) -> dict | Response:
        if any(_names_unknown(acl_filter, _FILTER_FIELDS) for acl_filter in body["filters"]):
            return _refused(request, "Filters contain UNKNOWN elements")
        return {"throttle_time_ms": 0, "filter_results": [
            {"error_code": Errors.SECURITY_DISABLED, "error_message": NO_AUTHORIZER, "matching_acls": []}
            for _ in body["filters"]]}


# The code every ACL enum gives UNKNOWN (ResourceType, PatternType, AclOperation, AclPermissionType).
_UNKNOWN: Final = 0
_FILTER_FIELDS: Final = ("resource_type_filter", "pattern_type_filter", "operation", "permission_type")
_CREATION_FIELDS: Final = ("resource_type", "resource_pattern_type", "operation", "permission_type")


def _names_unknown(entry: dict, fields: tuple[str, ...]) -> bool:
    return any(entry[field] == _UNKNOWN for field in fields)


def _refused(request, reason: str) -> Response:
    logger.warning("Closing connection %s from %s: invalid %s request v%d: %s", request.connection_id,
                   request.client_address[0], api_keys.SCHEMAS[request.api_key].name, request.api_version, reason)
    return Response((), Response.CLOSE_CONNECTION_KIND)  # its own: the caller may set a throttle on it
