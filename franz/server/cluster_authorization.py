"""AuthHelper.authorizeClusterOperation: a request whose principal may not do an operation on
the cluster fails as a whole with ClusterAuthorizationException, "Request <request> is not
authorized.", answered by the request's error response (error_responses), as Kafka's
handlers that call it first (AlterPartitionReassignments, ElectLeaders, UpdateFeatures, the
ACL APIs, WriteTxnMarkers, ...).

The handlers that answer CLUSTER_AUTHORIZATION_FAILED through
`Errors.CLUSTER_AUTHORIZATION_FAILED.exception` instead (DescribeClientQuotas,
DescribeUserScramCredentials, ListConfigResources) raise `cluster_authorization_failed()`,
whose message is the error's default text, which ApiError.fromThrowable leaves out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from franz.protocol.errors import Errors, default_message

if TYPE_CHECKING:
    from franz.server.auth_helper import AuthHelper
    from franz.server.request_channel import Request


class ClusterAuthorizationError(Exception):
    """ClusterAuthorizationException: what error_responses reads is its error_code and text."""

    error_code = Errors.CLUSTER_AUTHORIZATION_FAILED


def cluster_authorization_failed() -> ClusterAuthorizationError:
    """Errors.CLUSTER_AUTHORIZATION_FAILED.exception: the error's own message."""
    return ClusterAuthorizationError(default_message(Errors.CLUSTER_AUTHORIZATION_FAILED))


def authorize_cluster_operation(auth: AuthHelper, request: Request, operation: int) -> None:
    """Raises ClusterAuthorizationError unless the principal may do `operation` on the cluster."""
    if not auth.authorize_cluster(request, operation):
        raise ClusterAuthorizationError(f"Request {_describe(request)} is not authorized.")


def cluster_operation_check(auth: AuthHelper):
    """authorize_cluster_operation bound to `auth`, as AclApis takes it."""
    return lambda request, operation: authorize_cluster_operation(auth, request, operation)


def _describe(request: Request) -> str:
    """RequestChannel.Request.toString, from what a franz request knows (no processor, no buffer)."""
    session = request.session
    return (f"Request(connectionId={request.connection_id}, "
            f"session=Session({session.principal},/{request.client_address[0]}), "
            f"listenerName=ListenerName({request.listener_name}), "
            f"securityProtocol={session.security_protocol}, envelope=None)")
