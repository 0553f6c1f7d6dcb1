"""Kafka's protocol error codes (org.apache.kafka.common.protocol.Errors).

Every error a response carries is one of these int16 codes; clients map them
to exceptions and decide on retries by code, so the numbers are the contract.
"""

from __future__ import annotations

import enum
from typing import Final


class Errors(enum.IntEnum):
    UNKNOWN_SERVER_ERROR = -1
    NONE = 0
    OFFSET_OUT_OF_RANGE = 1
    CORRUPT_MESSAGE = 2
    UNKNOWN_TOPIC_OR_PARTITION = 3
    INVALID_FETCH_SIZE = 4
    LEADER_NOT_AVAILABLE = 5
    NOT_LEADER_OR_FOLLOWER = 6
    REQUEST_TIMED_OUT = 7
    BROKER_NOT_AVAILABLE = 8
    REPLICA_NOT_AVAILABLE = 9
    MESSAGE_TOO_LARGE = 10
    STALE_CONTROLLER_EPOCH = 11
    OFFSET_METADATA_TOO_LARGE = 12
    NETWORK_EXCEPTION = 13
    COORDINATOR_LOAD_IN_PROGRESS = 14
    COORDINATOR_NOT_AVAILABLE = 15
    NOT_COORDINATOR = 16
    INVALID_TOPIC_EXCEPTION = 17
    RECORD_LIST_TOO_LARGE = 18
    NOT_ENOUGH_REPLICAS = 19
    NOT_ENOUGH_REPLICAS_AFTER_APPEND = 20
    INVALID_REQUIRED_ACKS = 21
    ILLEGAL_GENERATION = 22
    INCONSISTENT_GROUP_PROTOCOL = 23
    INVALID_GROUP_ID = 24
    UNKNOWN_MEMBER_ID = 25
    INVALID_SESSION_TIMEOUT = 26
    REBALANCE_IN_PROGRESS = 27
    INVALID_COMMIT_OFFSET_SIZE = 28
    TOPIC_AUTHORIZATION_FAILED = 29
    GROUP_AUTHORIZATION_FAILED = 30
    CLUSTER_AUTHORIZATION_FAILED = 31
    INVALID_TIMESTAMP = 32
    UNSUPPORTED_SASL_MECHANISM = 33
    ILLEGAL_SASL_STATE = 34
    UNSUPPORTED_VERSION = 35
    TOPIC_ALREADY_EXISTS = 36
    INVALID_PARTITIONS = 37
    INVALID_REPLICATION_FACTOR = 38
    INVALID_REPLICA_ASSIGNMENT = 39
    INVALID_CONFIG = 40
    NOT_CONTROLLER = 41
    INVALID_REQUEST = 42
    UNSUPPORTED_FOR_MESSAGE_FORMAT = 43
    POLICY_VIOLATION = 44
    OUT_OF_ORDER_SEQUENCE_NUMBER = 45
    DUPLICATE_SEQUENCE_NUMBER = 46
    INVALID_PRODUCER_EPOCH = 47
    INVALID_TXN_STATE = 48
    INVALID_PRODUCER_ID_MAPPING = 49
    INVALID_TRANSACTION_TIMEOUT = 50
    CONCURRENT_TRANSACTIONS = 51
    TRANSACTION_COORDINATOR_FENCED = 52
    TRANSACTIONAL_ID_AUTHORIZATION_FAILED = 53
    SECURITY_DISABLED = 54
    OPERATION_NOT_ATTEMPTED = 55
    KAFKA_STORAGE_ERROR = 56
    LOG_DIR_NOT_FOUND = 57
    SASL_AUTHENTICATION_FAILED = 58
    UNKNOWN_PRODUCER_ID = 59
    REASSIGNMENT_IN_PROGRESS = 60
    DELEGATION_TOKEN_AUTH_DISABLED = 61
    DELEGATION_TOKEN_NOT_FOUND = 62
    DELEGATION_TOKEN_OWNER_MISMATCH = 63
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED = 64
    DELEGATION_TOKEN_AUTHORIZATION_FAILED = 65
    DELEGATION_TOKEN_EXPIRED = 66
    INVALID_PRINCIPAL_TYPE = 67
    NON_EMPTY_GROUP = 68
    GROUP_ID_NOT_FOUND = 69
    FETCH_SESSION_ID_NOT_FOUND = 70
    INVALID_FETCH_SESSION_EPOCH = 71
    LISTENER_NOT_FOUND = 72
    TOPIC_DELETION_DISABLED = 73
    FENCED_LEADER_EPOCH = 74
    UNKNOWN_LEADER_EPOCH = 75
    UNSUPPORTED_COMPRESSION_TYPE = 76
    STALE_BROKER_EPOCH = 77
    OFFSET_NOT_AVAILABLE = 78
    MEMBER_ID_REQUIRED = 79
    PREFERRED_LEADER_NOT_AVAILABLE = 80
    GROUP_MAX_SIZE_REACHED = 81
    FENCED_INSTANCE_ID = 82
    ELIGIBLE_LEADERS_NOT_AVAILABLE = 83
    ELECTION_NOT_NEEDED = 84
    NO_REASSIGNMENT_IN_PROGRESS = 85
    GROUP_SUBSCRIBED_TO_TOPIC = 86
    INVALID_RECORD = 87
    UNSTABLE_OFFSET_COMMIT = 88
    THROTTLING_QUOTA_EXCEEDED = 89
    PRODUCER_FENCED = 90
    RESOURCE_NOT_FOUND = 91
    DUPLICATE_RESOURCE = 92
    UNACCEPTABLE_CREDENTIAL = 93
    INCONSISTENT_VOTER_SET = 94
    INVALID_UPDATE_VERSION = 95
    FEATURE_UPDATE_FAILED = 96
    PRINCIPAL_DESERIALIZATION_FAILURE = 97
    SNAPSHOT_NOT_FOUND = 98
    POSITION_OUT_OF_RANGE = 99
    UNKNOWN_TOPIC_ID = 100
    DUPLICATE_BROKER_REGISTRATION = 101
    BROKER_ID_NOT_REGISTERED = 102
    INCONSISTENT_TOPIC_ID = 103
    INCONSISTENT_CLUSTER_ID = 104
    TRANSACTIONAL_ID_NOT_FOUND = 105
    FETCH_SESSION_TOPIC_ID_ERROR = 106
    INELIGIBLE_REPLICA = 107
    NEW_LEADER_ELECTED = 108
    OFFSET_MOVED_TO_TIERED_STORAGE = 109
    FENCED_MEMBER_EPOCH = 110
    UNRELEASED_INSTANCE_ID = 111
    UNSUPPORTED_ASSIGNOR = 112
    STALE_MEMBER_EPOCH = 113
    MISMATCHED_ENDPOINT_TYPE = 114
    UNSUPPORTED_ENDPOINT_TYPE = 115
    UNKNOWN_CONTROLLER_ID = 116
    UNKNOWN_SUBSCRIPTION_ID = 117
    TELEMETRY_TOO_LARGE = 118
    INVALID_REGISTRATION = 119
    TRANSACTION_ABORTABLE = 120
    INVALID_RECORD_STATE = 121
    SHARE_SESSION_NOT_FOUND = 122
    INVALID_SHARE_SESSION_EPOCH = 123
    FENCED_STATE_EPOCH = 124
    INVALID_VOTER_KEY = 125
    DUPLICATE_VOTER = 126
    VOTER_NOT_FOUND = 127
    INVALID_REGULAR_EXPRESSION = 128
    REBOOTSTRAP_REQUIRED = 129
    STREAMS_INVALID_TOPOLOGY = 130
    STREAMS_INVALID_TOPOLOGY_EPOCH = 131
    STREAMS_TOPOLOGY_FENCED = 132
    SHARE_SESSION_LIMIT_REACHED = 133


def error_name(code: int) -> str:
    try:
        return Errors(code).name
    except ValueError:
        return f"UNKNOWN_ERROR_{code}"


# Errors.message(): the text of each error's default exception, which Kafka's responses carry
# wherever a request's error answer is built from the error alone (FindCoordinator v1-3,
# DescribeConfigs, the share-group state RPCs); NONE has no exception and reads "NONE".
_DEFAULT_MESSAGES: Final[dict[Errors, str]] = {
    Errors.UNKNOWN_SERVER_ERROR: "The server experienced an unexpected error when processing the request.",
    Errors.OFFSET_OUT_OF_RANGE: "The requested offset is not within the range of offsets maintained by the server.",
    Errors.CORRUPT_MESSAGE: (
        "This message has failed its CRC checksum, exceeds the valid size, has a null key for a compacted "
        "topic, or is otherwise corrupt."),
    Errors.UNKNOWN_TOPIC_OR_PARTITION: "This server does not host this topic-partition.",
    Errors.INVALID_FETCH_SIZE: "The requested fetch size is invalid.",
    Errors.LEADER_NOT_AVAILABLE: (
        "There is no leader for this topic-partition as we are in the middle of a leadership election."),
    Errors.NOT_LEADER_OR_FOLLOWER: (
        "For requests intended only for the leader, this error indicates that the broker is not the current "
        "leader. For requests intended for any replica, this error indicates that the broker is not a replica "
        "of the topic partition."),
    Errors.REQUEST_TIMED_OUT: "The request timed out.",
    Errors.BROKER_NOT_AVAILABLE: "The broker is not available.",
    Errors.REPLICA_NOT_AVAILABLE: (
        "The replica is not available for the requested topic-partition. Produce/Fetch requests and other "
        "requests intended only for the leader or follower return NOT_LEADER_OR_FOLLOWER if the broker is not a"
        " replica of the topic-partition."),
    Errors.MESSAGE_TOO_LARGE: "The request included a message larger than the max message size the server will accept.",
    Errors.STALE_CONTROLLER_EPOCH: "The controller moved to another broker.",
    Errors.OFFSET_METADATA_TOO_LARGE: "The metadata field of the offset request was too large.",
    Errors.NETWORK_EXCEPTION: "The server disconnected before a response was received.",
    Errors.COORDINATOR_LOAD_IN_PROGRESS: "The coordinator is loading and hence can't process requests.",
    Errors.COORDINATOR_NOT_AVAILABLE: "The coordinator is not available.",
    Errors.NOT_COORDINATOR: "This is not the correct coordinator.",
    Errors.INVALID_TOPIC_EXCEPTION: "The request attempted to perform an operation on an invalid topic.",
    Errors.RECORD_LIST_TOO_LARGE: (
        "The request included message batch larger than the configured segment size on the server."),
    Errors.NOT_ENOUGH_REPLICAS: "Messages are rejected since there are fewer in-sync replicas than required.",
    Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND: (
        "Messages are written to the log, but to fewer in-sync replicas than required."),
    Errors.INVALID_REQUIRED_ACKS: "Produce request specified an invalid value for required acks.",
    Errors.ILLEGAL_GENERATION: "Specified group generation id is not valid.",
    Errors.INCONSISTENT_GROUP_PROTOCOL: (
        "The group member's supported protocols are incompatible with those of existing members or first group "
        "member tried to join with empty protocol type or empty protocol list."),
    Errors.INVALID_GROUP_ID: "The group id is invalid.",
    Errors.UNKNOWN_MEMBER_ID: "The coordinator is not aware of this member.",
    Errors.INVALID_SESSION_TIMEOUT: (
        "The session timeout is not within the range allowed by the broker (as configured by "
        "group.min.session.timeout.ms and group.max.session.timeout.ms)."),
    Errors.REBALANCE_IN_PROGRESS: "The group is rebalancing, so a rejoin is needed.",
    Errors.INVALID_COMMIT_OFFSET_SIZE: "The committing offset data size is not valid.",
    Errors.TOPIC_AUTHORIZATION_FAILED: "Topic authorization failed.",
    Errors.GROUP_AUTHORIZATION_FAILED: "Group authorization failed.",
    Errors.CLUSTER_AUTHORIZATION_FAILED: "Cluster authorization failed.",
    Errors.INVALID_TIMESTAMP: "The timestamp of the message is out of acceptable range.",
    Errors.UNSUPPORTED_SASL_MECHANISM: "The broker does not support the requested SASL mechanism.",
    Errors.ILLEGAL_SASL_STATE: "Request is not valid given the current SASL state.",
    Errors.UNSUPPORTED_VERSION: "The version of API is not supported.",
    Errors.TOPIC_ALREADY_EXISTS: "Topic with this name already exists.",
    Errors.INVALID_PARTITIONS: "Number of partitions is below 1.",
    Errors.INVALID_REPLICATION_FACTOR: "Replication factor is below 1 or larger than the number of available brokers.",
    Errors.INVALID_REPLICA_ASSIGNMENT: "Replica assignment is invalid.",
    Errors.INVALID_CONFIG: "Configuration is invalid.",
    Errors.NOT_CONTROLLER: "This is not the correct controller for this cluster.",
    Errors.INVALID_REQUEST: (
        "This most likely occurs because of a request being malformed by the client library or the message was "
        "sent to an incompatible broker. See the broker logs for more details."),
    Errors.UNSUPPORTED_FOR_MESSAGE_FORMAT: "The message format version on the broker does not support the request.",
    Errors.POLICY_VIOLATION: "Request parameters do not satisfy the configured policy.",
    Errors.OUT_OF_ORDER_SEQUENCE_NUMBER: "The broker received an out of order sequence number.",
    Errors.DUPLICATE_SEQUENCE_NUMBER: "The broker received a duplicate sequence number.",
    Errors.INVALID_PRODUCER_EPOCH: "Producer attempted to produce with an old epoch.",
    Errors.INVALID_TXN_STATE: "The producer attempted a transactional operation in an invalid state.",
    Errors.INVALID_PRODUCER_ID_MAPPING: (
        "The producer attempted to use a producer id which is not currently assigned to its transactional id."),
    Errors.INVALID_TRANSACTION_TIMEOUT: (
        "The transaction timeout is larger than the maximum value allowed by the broker (as configured by "
        "transaction.max.timeout.ms)."),
    Errors.CONCURRENT_TRANSACTIONS: (
        "The producer attempted to update a transaction while another concurrent operation on the same "
        "transaction was ongoing."),
    Errors.TRANSACTION_COORDINATOR_FENCED: (
        "Indicates that the transaction coordinator sending a WriteTxnMarker is no longer the current "
        "coordinator for a given producer."),
    Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED: "Transactional Id authorization failed.",
    Errors.SECURITY_DISABLED: "Security features are disabled.",
    Errors.OPERATION_NOT_ATTEMPTED: (
        "The broker did not attempt to execute this operation. This may happen for batched RPCs where some "
        "operations in the batch failed, causing the broker to respond without trying the rest."),
    Errors.KAFKA_STORAGE_ERROR: "Disk error when trying to access log file on the disk.",
    Errors.LOG_DIR_NOT_FOUND: "The user-specified log directory is not found in the broker config.",
    Errors.SASL_AUTHENTICATION_FAILED: "SASL Authentication failed.",
    Errors.UNKNOWN_PRODUCER_ID: (
        "This exception is raised by the broker if it could not locate the producer metadata associated with "
        "the producerId in question. This could happen if, for instance, the producer's records were deleted "
        "because their retention time had elapsed. Once the last records of the producerId are removed, the "
        "producer's metadata is removed from the broker, and future appends by the producer will return this "
        "exception."),
    Errors.REASSIGNMENT_IN_PROGRESS: "A partition reassignment is in progress.",
    Errors.DELEGATION_TOKEN_AUTH_DISABLED: "Delegation Token feature is not enabled.",
    Errors.DELEGATION_TOKEN_NOT_FOUND: "Delegation Token is not found on server.",
    Errors.DELEGATION_TOKEN_OWNER_MISMATCH: "Specified Principal is not valid Owner/Renewer.",
    Errors.DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: (
        "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token "
        "authenticated channels."),
    Errors.DELEGATION_TOKEN_AUTHORIZATION_FAILED: "Delegation Token authorization failed.",
    Errors.DELEGATION_TOKEN_EXPIRED: "Delegation Token is expired.",
    Errors.INVALID_PRINCIPAL_TYPE: "Supplied principalType is not supported.",
    Errors.NON_EMPTY_GROUP: "The group is not empty.",
    Errors.GROUP_ID_NOT_FOUND: "The group id does not exist.",
    Errors.FETCH_SESSION_ID_NOT_FOUND: "The fetch session ID was not found.",
    Errors.INVALID_FETCH_SESSION_EPOCH: "The fetch session epoch is invalid.",
    Errors.LISTENER_NOT_FOUND: (
        "There is no listener on the leader broker that matches the listener on which metadata request was "
        "processed."),
    Errors.TOPIC_DELETION_DISABLED: "Topic deletion is disabled.",
    Errors.FENCED_LEADER_EPOCH: "The leader epoch in the request is older than the epoch on the broker.",
    Errors.UNKNOWN_LEADER_EPOCH: "The leader epoch in the request is newer than the epoch on the broker.",
    Errors.UNSUPPORTED_COMPRESSION_TYPE: (
        "The requesting client does not support the compression type of given partition."),
    Errors.STALE_BROKER_EPOCH: "Broker epoch has changed.",
    Errors.OFFSET_NOT_AVAILABLE: (
        "The leader high watermark has not caught up from a recent leader election so the offsets cannot be "
        "guaranteed to be monotonically increasing."),
    Errors.MEMBER_ID_REQUIRED: (
        "The group member needs to have a valid member id before actually entering a consumer group."),
    Errors.PREFERRED_LEADER_NOT_AVAILABLE: "The preferred leader was not available.",
    Errors.GROUP_MAX_SIZE_REACHED: "The group has reached its maximum size.",
    Errors.FENCED_INSTANCE_ID: (
        "The broker rejected this static consumer since another consumer with the same group.instance.id has "
        "registered with a different member.id."),
    Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE: "Eligible topic partition leaders are not available.",
    Errors.ELECTION_NOT_NEEDED: "Leader election not needed for topic partition.",
    Errors.NO_REASSIGNMENT_IN_PROGRESS: "No partition reassignment is in progress.",
    Errors.GROUP_SUBSCRIBED_TO_TOPIC: (
        "Deleting offsets of a topic is forbidden while the consumer group is actively subscribed to it."),
    Errors.INVALID_RECORD: "This record has failed the validation on broker and hence will be rejected.",
    Errors.UNSTABLE_OFFSET_COMMIT: "There are unstable offsets that need to be cleared.",
    Errors.THROTTLING_QUOTA_EXCEEDED: "The throttling quota has been exceeded.",
    Errors.PRODUCER_FENCED: "There is a newer producer with the same transactionalId which fences the current one.",
    Errors.RESOURCE_NOT_FOUND: "A request illegally referred to a resource that does not exist.",
    Errors.DUPLICATE_RESOURCE: "A request illegally referred to the same resource twice.",
    Errors.UNACCEPTABLE_CREDENTIAL: "Requested credential would not meet criteria for acceptability.",
    Errors.INCONSISTENT_VOTER_SET: (
        "Indicates that the either the sender or recipient of a voter-only request is not one of the expected "
        "voters."),
    Errors.INVALID_UPDATE_VERSION: "The given update version was invalid.",
    Errors.FEATURE_UPDATE_FAILED: "Unable to update finalized features due to an unexpected server error.",
    Errors.PRINCIPAL_DESERIALIZATION_FAILURE: (
        "Request principal deserialization failed during forwarding. This indicates an internal error on the "
        "broker cluster security setup."),
    Errors.SNAPSHOT_NOT_FOUND: "Requested snapshot was not found.",
    Errors.POSITION_OUT_OF_RANGE: (
        "Requested position is not greater than or equal to zero, and less than the size of the snapshot."),
    Errors.UNKNOWN_TOPIC_ID: "This server does not host this topic ID.",
    Errors.DUPLICATE_BROKER_REGISTRATION: "This broker ID is already in use.",
    Errors.BROKER_ID_NOT_REGISTERED: "The given broker ID was not registered.",
    Errors.INCONSISTENT_TOPIC_ID: "The log's topic ID did not match the topic ID in the request.",
    Errors.INCONSISTENT_CLUSTER_ID: "The clusterId in the request does not match that found on the server.",
    Errors.TRANSACTIONAL_ID_NOT_FOUND: "The transactionalId could not be found.",
    Errors.FETCH_SESSION_TOPIC_ID_ERROR: "The fetch session encountered inconsistent topic ID usage.",
    Errors.INELIGIBLE_REPLICA: "The new ISR contains at least one ineligible replica.",
    Errors.NEW_LEADER_ELECTED: (
        "The AlterPartition request successfully updated the partition state but the leader has changed."),
    Errors.OFFSET_MOVED_TO_TIERED_STORAGE: "The requested offset is moved to tiered storage.",
    Errors.FENCED_MEMBER_EPOCH: (
        "The member epoch is fenced by the group coordinator. The member must abandon all its partitions and "
        "rejoin."),
    Errors.UNRELEASED_INSTANCE_ID: (
        "The instance ID is still used by another member in the consumer group. That member must leave first."),
    Errors.UNSUPPORTED_ASSIGNOR: "The assignor or its version range is not supported by the consumer group.",
    Errors.STALE_MEMBER_EPOCH: (
        "The member epoch is stale. The member must retry after receiving its updated member epoch via the "
        "ConsumerGroupHeartbeat API."),
    Errors.MISMATCHED_ENDPOINT_TYPE: "The request was sent to an endpoint of the wrong type.",
    Errors.UNSUPPORTED_ENDPOINT_TYPE: "This endpoint type is not supported yet.",
    Errors.UNKNOWN_CONTROLLER_ID: "This controller ID is not known.",
    Errors.UNKNOWN_SUBSCRIPTION_ID: "Client sent a push telemetry request with an invalid or outdated subscription ID.",
    Errors.TELEMETRY_TOO_LARGE: (
        "Client sent a push telemetry request larger than the maximum size the broker will accept."),
    Errors.INVALID_REGISTRATION: "The controller has considered the broker registration to be invalid.",
    Errors.TRANSACTION_ABORTABLE: (
        "The server encountered an error with the transaction. The client can abort the transaction to continue"
        " using this transactional ID."),
    Errors.INVALID_RECORD_STATE: "The record state is invalid. The acknowledgement of delivery could not be completed.",
    Errors.SHARE_SESSION_NOT_FOUND: "The share session was not found.",
    Errors.INVALID_SHARE_SESSION_EPOCH: "The share session epoch is invalid.",
    Errors.FENCED_STATE_EPOCH: (
        "The share coordinator rejected the request because the share-group state epoch did not match."),
    Errors.INVALID_VOTER_KEY: "The voter key doesn't match the receiving replica's key.",
    Errors.DUPLICATE_VOTER: "The voter is already part of the set of voters.",
    Errors.VOTER_NOT_FOUND: "The voter is not part of the set of voters.",
    Errors.INVALID_REGULAR_EXPRESSION: "The regular expression is not valid.",
    Errors.REBOOTSTRAP_REQUIRED: "Client metadata is stale. The client should rebootstrap to obtain new metadata.",
    Errors.STREAMS_INVALID_TOPOLOGY: "The supplied topology is invalid.",
    Errors.STREAMS_INVALID_TOPOLOGY_EPOCH: "The supplied topology epoch is invalid.",
    Errors.STREAMS_TOPOLOGY_FENCED: "The supplied topology epoch is outdated.",
    Errors.SHARE_SESSION_LIMIT_REACHED: "The limit of share sessions has been reached.",
}


def default_message(code: int) -> str:
    """Errors.message() of `code`: its default exception's text, "NONE" for NONE."""
    error = Errors(code)
    return _DEFAULT_MESSAGES.get(error, error.name)
