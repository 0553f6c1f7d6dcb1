"""AclApis: DescribeAcls, CreateAcls and DeleteAcls on a broker with no authorizer (kafka.server.AclApis).

franz has no Authorizer, as a Kafka broker without `authorizer.class.name`
has none. Such a broker still serves the three ACL APIs (they are in its
ApiVersions), and answers each with SECURITY_DISABLED and the message "No
Authorizer is configured.": DescribeAcls at the top level, CreateAcls once per
creation, DeleteAcls once per filter. Admin clients and tools (kafka-acls.sh,
Admin.describeAcls) then report that security is disabled instead of an
unsupported API.
"""

from __future__ import annotations

from typing import Final

from franz.protocol.errors import Errors

NO_AUTHORIZER: Final = "No Authorizer is configured."


class AclApis:
    def register(self, apis) -> None:
        apis.register("DescribeAcls", self.handle_describe_acls)
        apis.register("CreateAcls", self.handle_create_acls)
        apis.register("DeleteAcls", self.handle_delete_acls)

    async def handle_describe_acls(self, request, body: dict) -> dict:
        return {"throttle_time_ms": 0, "error_code": Errors.SECURITY_DISABLED, "error_message": NO_AUTHORIZER,
                "resources": []}

    async def handle_create_acls(self, request, body: dict) -> dict:
        return {"throttle_time_ms": 0, "results": [
            {"error_code": Errors.SECURITY_DISABLED, "error_message": NO_AUTHORIZER} for _ in body["creations"]]}

    async def handle_delete_acls(self, request, body: dict) -> dict:
        return {"throttle_time_ms": 0, "filter_results": [
            {"error_code": Errors.SECURITY_DISABLED, "error_message": NO_AUTHORIZER, "matching_acls": []}
            for _ in body["filters"]]}
