"""The operations a client may perform on a resource, as Kafka reports them when asked
(kafka.server.AuthHelper.authorizedOperations).

franz has no authorizer, so every operation a resource type supports
(AclEntry.supportedOperations) is allowed, and that is what Metadata,
DescribeTopicPartitions, DescribeCluster, DescribeGroups and
ConsumerGroupDescribe answer when the request asks for authorized operations:
a 32-bit field with bit N set for the AclOperation of code N. When it does not
ask, the field stays at Int.MinValue (api_keys.AUTHORIZED_OPERATIONS_OMITTED).
"""

from __future__ import annotations

from typing import Final

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
