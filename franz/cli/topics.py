"""`franz topics`: create, list, describe, alter and delete topics (Kafka's kafka-topics.sh).

Speaks to any Kafka-compatible broker through librdkafka's admin client and
behaves as Kafka 4.3's TopicCommand, so that scripts written for Kafka keep working:
"Created topic T.", one name per line for --list, --describe's topic line followed
by one tab-indented line per partition, --topic as a regular expression (Java's
syntax, matched against the whole name) for everything but --create, and the same
checks of the command line with the same messages.

Where TopicCommand's output goes, so does ours: a failed action prints
"Error while executing topic command : ..." on stdout with exit 1; a bad command
line prints its message and the usage on stderr with exit 1; a command config that
cannot be used prints its message on stderr with exit 1.

Not done, as nothing on one node can show it: partition reassignments in progress
(Kafka's "Adding Replicas:" / "Removing Replicas:" and the replication factor they
change). Elr and LastKnownElr print empty, as Kafka does for a KRaft broker without ELR.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import re
import sys

from franz.cli.admin_client import AdminClientError, create_admin_client, error_message
from franz.cli.command_line import StartError, UsageError, check_invalid_args, given, java_split, refused_by_checks
from franz.cli.usage_errors import exit_1_on_usage_errors
from franz.common.java_regex import java_pattern

TIMEOUT_S = 30.0
ERROR_PREFIX = "Error while executing topic command : "
# Topic.isInternal: exactly these names, not every name starting with "__".
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})
COLLISION_WARNING = ("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') "
                     "could collide. To avoid issues it is best to use either, but not both.")
CONFIGS_TOOL_HINT = " (To alter topic configurations, the kafka-configs tool can be used.)"
REPLICATION_FACTOR_MAX = 32767  # Short.MAX_VALUE
UUID_SIZE_BYTES = 16
UUID_STRING_LENGTH_MAX = 24
ZERO_UUID = bytes(UUID_SIZE_BYTES)
# The actions, in the order TopicCommandOptions lists them for option-combination checks.
ACTIONS = ("alter", "create", "describe", "list", "delete")
REPLICATION_REPORTS = ("under-replicated-partitions", "under-min-isr-partitions", "at-min-isr-partitions",
                       "unavailable-partitions")


class TopicCommandError(Exception):
    """A failed action: printed after ERROR_PREFIX on stdout, exit 1."""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("topics", help="create, list, describe, alter and delete topics",
                                   description="Create, delete, describe, or change a topic.")
    for name in ACTIONS:
        parser.add_argument(f"--{name}", action="store_true")
    parser.add_argument("--bootstrap-server", help="REQUIRED: host:port of a broker")
    parser.add_argument("--command-config", metavar="FILE",
                        help="properties file of admin client configs (Java client names)")
    parser.add_argument("--topic", help="the topic; a regular expression except for --create")
    parser.add_argument("--topic-id", help="the topic id to describe")
    parser.add_argument("--partitions", type=int, help="partition count (create; alter: the new count)")
    parser.add_argument("--replication-factor", type=int)
    parser.add_argument("--replica-assignment", metavar="B1:B2,B1:B2,...",
                        help="broker ids of each partition's replicas, partitions separated by commas")
    parser.add_argument("--config", action="append", metavar="NAME=VALUE",
                        help="topic config override for --create (repeatable)")
    parser.add_argument("--delete-config", action="append", metavar="NAME",
                        help="no longer supported (deprecated since Kafka 4.0)")
    parser.add_argument("--if-not-exists", action="store_true")
    parser.add_argument("--if-exists", action="store_true")
    parser.add_argument("--exclude-internal", action="store_true")
    for name in REPLICATION_REPORTS:
        parser.add_argument(f"--{name}", action="store_true")
    parser.add_argument("--topics-with-overrides", action="store_true")
    parser.add_argument("--partition-size-limit-per-response", type=int,
                        help="accepted for compatibility; librdkafka describes topics through Metadata")
    exit_1_on_usage_errors(parser)
    parser.set_defaults(func=lambda args: _run(parser, args))


def _actions_but(*kept: str) -> list[str]:
    return [action for action in ACTIONS if action not in kept]


def _check_args(args: argparse.Namespace) -> None:
    """TopicCommandOptions.checkArgs: UsageError or StartError with Kafka's messages, in Kafka's order."""
    if sum(given(args, action) for action in ACTIONS) != 1:
        raise UsageError("Command must include exactly one action: --list, --describe, --create, --alter or --delete")
    if args.delete_config:
        print("delete-config option is no longer supported and deprecated since version 4.0. "
              "The config will be fully removed in future releases.", file=sys.stderr)
    if not args.bootstrap_server:
        raise StartError("--bootstrap-server must be specified")
    if args.describe and args.if_exists:
        if args.topic is None and args.topic_id is None:
            raise UsageError("--topic or --topic-id is required to describe a topic")
        if args.topic is not None and args.topic_id is not None:
            print("Only topic id will be used when both --topic and --topic-id are specified and topicId is not "
                  "Uuid.ZERO_UUID")
    if not args.list and not args.describe and args.topic is None:
        raise UsageError('Missing required argument "[topic]"')
    if args.alter:
        if args.config is not None:
            raise UsageError('Option combination "[[bootstrap-server], [config]]" can\'t be used with option '
                             f'"[alter]"{CONFIGS_TOOL_HINT}')
        if args.partitions is None:
            raise UsageError('Missing required argument "[partitions]"')
    all_but = _actions_but
    invalid = [("config", all_but("alter", "create")), ("partitions", all_but("alter", "create")),
               ("replication-factor", all_but("create")), ("replica-assignment", all_but("alter", "create"))]
    if args.create:
        invalid.append(("replica-assignment", ["partitions", "replication-factor"]))
    for report in REPLICATION_REPORTS:
        invalid.append((report, [*all_but("describe"), "topics-with-overrides"]))
    invalid += [("topics-with-overrides", [*all_but("describe"), *REPLICATION_REPORTS]),
                ("if-exists", all_but("alter", "delete", "describe")),
                ("if-not-exists", all_but("create")),
                ("exclude-internal", all_but("list", "describe"))]
    check_invalid_args(args, invalid)


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if refused_by_checks(parser, _check_args, args):
        return 1
    try:
        admin = create_admin_client(args.command_config, args.bootstrap_server)
    except AdminClientError as exc:
        print(f"franz topics: {exc}", file=sys.stderr)
        return 1
    action = {"create": _create, "alter": _alter, "list": _list, "describe": _describe, "delete": _delete}
    try:
        action[next(name for name in action if getattr(args, name))](admin, args)
    except Exception as exc:  # TopicCommand.printException: on stdout
        print(f"{ERROR_PREFIX}{error_message(exc)}")
        return 1
    return 0


# --- topics by name or id ---

def _include_list(text: str) -> re.Pattern:
    """TopicFilter's regex: commas mean "or", spaces and surrounding quotes are dropped."""
    regex = re.sub(r"[\"']+$", "", re.sub(r"^[\"']+", "", text.strip().replace(",", "|").replace(" ", "")))
    try:
        return java_pattern(regex)
    except re.error:
        raise TopicCommandError(f"{regex} is an invalid regex.") from None


def _is_excluded(name: str, args: argparse.Namespace) -> bool:
    return args.exclude_internal and name in INTERNAL_TOPICS


def _get_topics(admin, args: argparse.Namespace) -> list[str]:
    """TopicService.getTopics: the sorted names that --topic matches (all without it), less
    the internal topics under --exclude-internal."""
    names = sorted(name for name in admin.list_topics(timeout=TIMEOUT_S).topics if not _is_excluded(name, args))
    if args.topic is None:
        return names
    pattern = _include_list(args.topic)
    return [name for name in names if pattern.fullmatch(name)]


def _ensure_topic_exists(found: list[str], requested: str | None, required: bool) -> None:
    if requested and required and not found:
        raise TopicCommandError(f"Topic '{requested}' does not exist as expected")


def uuid_to_string(uuid: bytes) -> str:
    """Kafka's Uuid.toString: URL-safe base64 of the 16 bytes, without padding."""
    return base64.urlsafe_b64encode(uuid).rstrip(b"=").decode("ascii")


def _uuid_from_string(text: str) -> bytes:
    """Kafka's Uuid.fromString, refusing what it refuses with its messages."""
    if len(text) > UUID_STRING_LENGTH_MAX:
        raise TopicCommandError(f"Input string with prefix `{text[:UUID_STRING_LENGTH_MAX]}` is too long to be "
                                "decoded as a base64 UUID")
    illegal = re.search(r"[^A-Za-z0-9_=-]", text)
    if illegal:
        raise TopicCommandError(f"Illegal base64 character {ord(illegal.group()):x}")
    try:
        uuid = base64.urlsafe_b64decode(text + "=" * (-len(text.rstrip("=")) % 4))
    except (binascii.Error, ValueError) as exc:
        raise TopicCommandError(f"Input string `{text}` is not base64: {exc}") from None
    if len(uuid) != UUID_SIZE_BYTES:
        raise TopicCommandError(f"Input string `{text}` decoded as {len(uuid)} bytes, which is not equal to the "
                                f"expected {UUID_SIZE_BYTES} bytes of a base64-encoded UUID")
    return uuid


def _topic_id_bytes(description) -> bytes:
    topic_id = description.topic_id
    if topic_id is None:
        return ZERO_UUID
    mask = (1 << 64) - 1
    return ((topic_id.get_most_significant_bits() & mask).to_bytes(8, "big")
            + (topic_id.get_least_significant_bits() & mask).to_bytes(8, "big"))


def _describe_topics(admin, names: list[str]) -> dict:
    from confluent_kafka import TopicCollection  # noqa: PLC0415
    if not names:
        return {}
    futures = admin.describe_topics(TopicCollection(names), request_timeout=TIMEOUT_S)
    return {name: futures[name].result(TIMEOUT_S) for name in names}


# --- the actions ---

def _list(admin, args: argparse.Namespace) -> None:
    print("\n".join(_get_topics(admin, args)))  # one empty line when there is none, as Kafka


def _parse_configs(items: list[str] | None) -> dict[str, str]:
    pairs = [java_split(item, r"\s*=\s*") for item in items or []]
    if any(len(pair) != 2 for pair in pairs):
        raise TopicCommandError('requirement failed: Invalid topic config: all configs to be added must be in the '
                                'format "key=val".')
    return {key.strip(): value.strip() for key, value in pairs}


def _parse_int(text: str) -> int:
    """Integer.parseInt."""
    if re.fullmatch(r"[+-]?[0-9]+", text) and -(1 << 31) <= int(text) < (1 << 31):
        return int(text)
    raise TopicCommandError(f'For input string: "{text}"')


def _parse_replica_assignment(text: str | None) -> list[list[int]]:
    """TopicCommand.parseReplicaAssignment: partition i's broker ids, all partitions of one replication factor."""
    if not text:
        return []
    assignment: list[list[int]] = []
    for index, partition in enumerate(java_split(text, ",")):
        brokers = [_parse_int(broker.strip()) for broker in java_split(partition, ":")]
        duplicates = sorted({broker for broker in brokers if brokers.count(broker) > 1})
        if duplicates:
            raise TopicCommandError("Partition replica lists may not contain duplicate entries: "
                                    + ",".join(map(str, duplicates)))
        assignment.append(brokers)
        if len(brokers) != len(assignment[0]):
            raise TopicCommandError(f"Partition {index} has different replication factor: "
                                    f"[{', '.join(map(str, brokers))}]")
    return assignment


def _create(admin, args: argparse.Namespace) -> None:
    from confluent_kafka import KafkaError, KafkaException  # noqa: PLC0415
    from confluent_kafka.admin import NewTopic  # noqa: PLC0415
    configs = _parse_configs(args.config)
    assignment = _parse_replica_assignment(args.replica_assignment)
    if "." in args.topic or "_" in args.topic:  # Topic.hasCollisionChars
        print(COLLISION_WARNING)
    rf = args.replication_factor
    if rf is not None and not 1 <= rf <= REPLICATION_FACTOR_MAX:
        raise TopicCommandError(f"The replication factor must be between 1 and {REPLICATION_FACTOR_MAX} inclusive")
    if args.partitions is not None and args.partitions < 1:
        raise TopicCommandError("The partitions must be greater than 0")
    if assignment:
        topic = NewTopic(args.topic, len(assignment), -1, replica_assignment=assignment, config=configs)
    else:
        topic = NewTopic(args.topic, args.partitions if args.partitions is not None else -1,
                         rf if rf is not None else -1, config=configs)
    try:
        admin.create_topics([topic], request_timeout=TIMEOUT_S)[args.topic].result(TIMEOUT_S)
    except KafkaException as exc:
        if args.if_not_exists and exc.args and exc.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS:
            return  # Kafka sends the request all the same, and is quiet when the topic was there
        raise
    print(f"Created topic {args.topic}.")


def _alter(admin, args: argparse.Namespace) -> None:
    """Increase the partition count of every matching topic; with --replica-assignment, the new
    partitions take the entries past each topic's current count."""
    from confluent_kafka.admin import NewPartitions  # noqa: PLC0415
    _parse_configs(args.config)
    assignment = _parse_replica_assignment(args.replica_assignment)
    topics = _get_topics(admin, args)
    _ensure_topic_exists(topics, args.topic, not args.if_exists)
    if not topics:
        return
    current = _describe_topics(admin, topics) if assignment else {}
    increases = [NewPartitions(name, args.partitions, replica_assignment=assignment[len(current[name].partitions):])
                 if assignment else NewPartitions(name, args.partitions) for name in topics]
    futures = admin.create_partitions(increases, request_timeout=TIMEOUT_S)
    for name in topics:
        futures[name].result(TIMEOUT_S)


def _delete(admin, args: argparse.Namespace) -> None:
    topics = _get_topics(admin, args)
    _ensure_topic_exists(topics, args.topic, not args.if_exists)
    if not topics:
        return
    futures = admin.delete_topics(topics, request_timeout=TIMEOUT_S)
    for name in topics:
        futures[name].result(TIMEOUT_S)


def _describe(admin, args: argparse.Namespace) -> None:
    from confluent_kafka.admin import ConfigResource  # noqa: PLC0415
    topic_id = _uuid_from_string(args.topic_id) if args.topic_id is not None else ZERO_UUID
    if topic_id != ZERO_UUID:  # the id wins over --topic
        everything = _describe_topics(admin, sorted(n for n in admin.list_topics(timeout=TIMEOUT_S).topics
                                                    if not _is_excluded(n, args)))
        descriptions = {name: d for name, d in everything.items() if _topic_id_bytes(d) == topic_id}
        if not descriptions and not args.if_exists:
            raise TopicCommandError(f"TopicId '{uuid_to_string(topic_id)}' does not exist as expected")
    else:
        topics = _get_topics(admin, args)
        _ensure_topic_exists(topics, args.topic, not args.if_exists)
        descriptions = _describe_topics(admin, topics)
    if not descriptions:
        return
    resources = {name: ConfigResource(ConfigResource.Type.TOPIC, name) for name in descriptions}
    config_futures = admin.describe_configs(list(resources.values()), request_timeout=TIMEOUT_S)
    configs = {name: config_futures[resource].result(TIMEOUT_S) for name, resource in resources.items()}
    live_brokers = {node.id for node in admin.describe_cluster(request_timeout=TIMEOUT_S).result(TIMEOUT_S).nodes}
    for name, description in descriptions.items():
        _print_topic(args, name, description, configs[name], live_brokers)


def _print_topic(args: argparse.Namespace, name: str, description, config: dict, live_brokers: set[int]) -> None:
    """TopicService.describeTopic for one topic: the topic line unless a partition report was asked
    for (and, with --topics-with-overrides, only when a config is not the default), then the
    partition lines that pass the asked reports, or none with --topics-with-overrides."""
    partitions = sorted(description.partitions, key=lambda partition: partition.id)
    reports = [report for report in REPLICATION_REPORTS if given(args, report)]
    if not reports:
        non_default = ",".join(f"{key}={entry.value}" for key, entry in config.items() if not entry.is_default)
        if not args.topics_with_overrides or non_default:
            topic_id = _topic_id_bytes(description)
            line = f"Topic: {name}"
            if topic_id != ZERO_UUID:
                line += f"\tTopicId: {uuid_to_string(topic_id)}"
            replication = len(partitions[0].replicas) if partitions else 0
            print(f"{line}\tPartitionCount: {len(partitions)}\tReplicationFactor: {replication}\t"
                  f"Configs: {non_default}")
    if args.topics_with_overrides:
        return
    for partition in partitions:
        if not reports or any(_in_report(report, partition, config, live_brokers) for report in reports):
            _print_partition(name, partition)


def _in_report(report: str, partition, config: dict, live_brokers: set[int]) -> bool:
    """PartitionDescription's predicates (no reassignment is ever in progress on one node)."""
    has_leader = partition.leader is not None and partition.leader.id >= 0
    if report == "under-replicated-partitions":
        return len(partition.replicas) - len(partition.isr) > 0
    if report == "unavailable-partitions":
        return not has_leader or partition.leader.id not in live_brokers
    if report == "under-min-isr-partitions":
        return not has_leader or len(partition.isr) < int(config["min.insync.replicas"].value)
    assert report == "at-min-isr-partitions", report
    return int(config["min.insync.replicas"].value) == len(partition.isr)


def _print_partition(name: str, partition) -> None:
    leader = partition.leader.id if partition.leader is not None and partition.leader.id >= 0 else "none"
    replicas = ",".join(str(node.id) for node in partition.replicas)
    isr = ",".join(str(node.id) for node in partition.isr)
    print(f"\tTopic: {name}\tPartition: {partition.id}\tLeader: {leader}\tReplicas: {replicas}\t"
          f"Isr: {isr}\tElr: \tLastKnownElr: ")
