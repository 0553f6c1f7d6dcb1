"""`franz topics`: create, list, describe, alter and delete topics (Kafka's kafka-topics.sh).

Speaks to any Kafka-compatible broker through librdkafka's admin client and
prints what kafka-topics prints, so that scripts written for Kafka keep working:
"Created topic T.", one name per line for --list, and --describe's topic line
followed by one tab-indented line per partition.
"""

from __future__ import annotations

import argparse
import sys

TIMEOUT_S = 30.0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("topics", help="create, list, describe, alter and delete topics")
    action = parser.add_mutually_exclusive_group(required=True)
    for name in ("create", "list", "describe", "alter", "delete"):
        action.add_argument(f"--{name}", action="store_true")
    parser.add_argument("--bootstrap-server", required=True, help="host:port of a broker")
    parser.add_argument("--topic", help="topic name")
    parser.add_argument("--partitions", type=int, help="partition count (create; alter: the new count)")
    parser.add_argument("--replication-factor", type=int, default=-1)
    parser.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                        help="topic config override for --create (repeatable)")
    parser.add_argument("--if-not-exists", action="store_true")
    parser.add_argument("--if-exists", action="store_true")
    parser.add_argument("--exclude-internal", action="store_true")
    parser.add_argument("--command-config", action="append", default=[], metavar="KEY=VALUE",
                        help="admin client property (repeatable)")
    parser.set_defaults(func=_run)


def _pairs(items: list[str], option: str) -> dict[str, str]:
    pairs = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"franz topics: {option} expects KEY=VALUE, got {item!r}")
        pairs[key] = value
    return pairs


def _run(args: argparse.Namespace) -> int:
    from confluent_kafka.admin import AdminClient  # noqa: PLC0415 - only this command needs it
    admin = AdminClient({"bootstrap.servers": args.bootstrap_server, **_pairs(args.command_config,
                                                                              "--command-config")})
    if args.list:
        return _list(admin, args)
    if not args.topic and not args.describe:
        print("franz topics: --topic is required", file=sys.stderr)
        return 2
    try:
        if args.create:
            return _create(admin, args)
        if args.describe:
            return _describe(admin, args)
        if args.alter:
            return _alter(admin, args)
        return _delete(admin, args)
    except Exception as exc:  # the admin client's KafkaException carries Kafka's message
        print(f"Error while executing topic command : {_message(exc)}", file=sys.stderr)
        return 1


def _message(exc: Exception) -> str:
    error = exc.args[0] if exc.args else exc
    return error.str() if hasattr(error, "str") else str(error)


def _list(admin, args) -> int:
    metadata = admin.list_topics(timeout=TIMEOUT_S)
    for name in sorted(metadata.topics):
        if args.exclude_internal and name.startswith("__"):
            continue
        print(name)
    return 0


def _create(admin, args) -> int:
    from confluent_kafka.admin import NewTopic  # noqa: PLC0415
    if args.if_not_exists and args.topic in admin.list_topics(timeout=TIMEOUT_S).topics:
        return 0
    topic = NewTopic(args.topic, args.partitions if args.partitions is not None else -1,
                     args.replication_factor, config=_pairs(args.config, "--config"))
    admin.create_topics([topic], request_timeout=TIMEOUT_S)[args.topic].result(TIMEOUT_S)
    print(f"Created topic {args.topic}.")
    return 0


def _describe(admin, args) -> int:
    from confluent_kafka import TopicCollection  # noqa: PLC0415
    from confluent_kafka.admin import ConfigResource  # noqa: PLC0415
    names = [args.topic] if args.topic else sorted(
        n for n in admin.list_topics(timeout=TIMEOUT_S).topics
        if not (args.exclude_internal and n.startswith("__")))
    if not names:
        return 0
    described = admin.describe_topics(TopicCollection(names), request_timeout=TIMEOUT_S)
    for name in names:
        try:
            topic = described[name].result(TIMEOUT_S)
        except Exception:
            if args.if_exists:
                continue
            raise
        resource = ConfigResource(ConfigResource.Type.TOPIC, name)
        configs = next(iter(admin.describe_configs([resource]).values())).result(TIMEOUT_S)
        overrides = ",".join(f"{k}={c.value}" for k, c in sorted(configs.items())
                             if c.source == 1)  # DYNAMIC_TOPIC_CONFIG
        replication = len(topic.partitions[0].replicas) if topic.partitions else 0
        print(f"Topic: {name}\tTopicId: {topic.topic_id}\tPartitionCount: {len(topic.partitions)}\t"
              f"ReplicationFactor: {replication}\tConfigs: {overrides}")
        for partition in topic.partitions:
            leader = partition.leader.id if partition.leader is not None else "none"
            replicas = ",".join(str(node.id) for node in partition.replicas)
            isr = ",".join(str(node.id) for node in partition.isr)
            print(f"\tTopic: {name}\tPartition: {partition.id}\tLeader: {leader}\tReplicas: {replicas}\t"
                  f"Isr: {isr}\tElr: \tLastKnownElr: ")
    return 0


def _alter(admin, args) -> int:
    from confluent_kafka.admin import NewPartitions  # noqa: PLC0415
    if args.partitions is None:
        print("franz topics: --alter needs --partitions", file=sys.stderr)
        return 2
    admin.create_partitions([NewPartitions(args.topic, args.partitions)],
                            request_timeout=TIMEOUT_S)[args.topic].result(TIMEOUT_S)
    return 0


def _delete(admin, args) -> int:
    if args.if_exists and args.topic not in admin.list_topics(timeout=TIMEOUT_S).topics:
        return 0
    admin.delete_topics([args.topic], request_timeout=TIMEOUT_S)[args.topic].result(TIMEOUT_S)
    return 0
