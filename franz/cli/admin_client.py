"""The admin client of franz's admin tools (topics, consumer-groups): librdkafka's, made from
--bootstrap-server and --command-config as Kafka's tools make their Admin, and its failures told
as Kafka's Admin tells them.

A command config is read as a Java .properties file of the Java client's settings and handed to
librdkafka by franz/cli/command_config.py; one that cannot be used is an AdminClientError naming
the setting. A request the broker refused with an error code reads as Kafka's exception for that
code with its default message ("org.apache.kafka.common.errors.GroupNotEmptyException: The group
is not empty."), where librdkafka would say "Broker: The group is not empty"; an error of
librdkafka's own (a timeout, a broker it cannot reach) keeps librdkafka's words.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from franz.cli.command_config import CommandConfigError, describe_client_error, librdkafka_config, load_properties
from franz.protocol.errors import Errors, default_message

EMPTY: Mapping[str, str] = MappingProxyType({})
ERRORS_PACKAGE = "org.apache.kafka.common.errors."
# Errors' exception classes, for the errors that group, offset and topic requests answer with.
EXCEPTION_CLASSES = {
    Errors.UNKNOWN_SERVER_ERROR: "UnknownServerException",
    Errors.UNKNOWN_TOPIC_OR_PARTITION: "UnknownTopicOrPartitionException",
    Errors.LEADER_NOT_AVAILABLE: "LeaderNotAvailableException",
    Errors.NOT_LEADER_OR_FOLLOWER: "NotLeaderOrFollowerException",
    Errors.REQUEST_TIMED_OUT: "TimeoutException",
    Errors.COORDINATOR_LOAD_IN_PROGRESS: "CoordinatorLoadInProgressException",
    Errors.COORDINATOR_NOT_AVAILABLE: "CoordinatorNotAvailableException",
    Errors.NOT_COORDINATOR: "NotCoordinatorException",
    Errors.INVALID_GROUP_ID: "InvalidGroupIdException",
    Errors.UNKNOWN_MEMBER_ID: "UnknownMemberIdException",
    Errors.REBALANCE_IN_PROGRESS: "RebalanceInProgressException",
    Errors.TOPIC_AUTHORIZATION_FAILED: "TopicAuthorizationException",
    Errors.GROUP_AUTHORIZATION_FAILED: "GroupAuthorizationException",
    Errors.CLUSTER_AUTHORIZATION_FAILED: "ClusterAuthorizationException",
    Errors.UNSUPPORTED_VERSION: "UnsupportedVersionException",
    Errors.NON_EMPTY_GROUP: "GroupNotEmptyException",
    Errors.GROUP_ID_NOT_FOUND: "GroupIdNotFoundException",
    Errors.GROUP_SUBSCRIBED_TO_TOPIC: "GroupSubscribedToTopicException",
    Errors.STALE_MEMBER_EPOCH: "StaleMemberEpochException",
}


class AdminClientError(Exception):
    """A command config that cannot be used, or that librdkafka refused; the text says which setting."""


def create_admin_client(command_config: str | None, bootstrap_server: str, defaults: Mapping[str, str] = EMPTY):
    """librdkafka's AdminClient with the librdkafka settings `defaults`, overridden by those of the
    `command_config` file (if any), and `bootstrap_server`."""
    from confluent_kafka.admin import AdminClient  # noqa: PLC0415 - only the admin tools need it
    try:
        properties = load_properties(command_config) if command_config else {}
        settings = {**defaults, **librdkafka_config(properties, "admin"), "bootstrap.servers": bootstrap_server}
        return AdminClient(settings)
    except CommandConfigError as exc:
        raise AdminClientError(str(exc)) from None
    except Exception as exc:  # librdkafka refused a setting
        raise AdminClientError(describe_client_error(exc, "admin")) from None


def _kafka_error(exc):
    """The KafkaError of the admin client's KafkaException (some results carry the KafkaError itself)."""
    if hasattr(exc, "code"):
        return exc
    error = exc.args[0] if exc.args else None
    return error if hasattr(error, "code") else None


def error_code(exc) -> int | None:
    """The error code of the admin client's failure (Kafka's for a broker's error, negative for
    librdkafka's own), None for any other exception."""
    error = _kafka_error(exc)
    return error.code() if error is not None else None


def error_message(exc) -> str:
    """librdkafka's text of the admin client's failure, or the exception's own."""
    error = _kafka_error(exc)
    return error.str() if error is not None else str(exc.args[0] if exc.args else exc)


def exception_text(exc, with_class: bool = True) -> str:
    """What Kafka's Admin says for the same failure: "<exception class>: <message>" (Throwable.toString),
    or the message alone without `with_class`."""
    code = error_code(exc)
    if code not in EXCEPTION_CLASSES:
        return error_message(exc)
    message = default_message(code)
    return f"{ERRORS_PACKAGE}{EXCEPTION_CLASSES[Errors(code)]}: {message}" if with_class else message
