"""`franz console-consumer`: print records of a topic (Kafka's kafka-console-consumer.sh).

Without `--group` it reads every partition by assignment (from the end, or the
beginning with --from-beginning, or --partition/--offset); with `--group` it
joins that consumer group. Ends after --max-messages or --timeout-ms without a
record and prints "Processed a total of N messages" to stderr, as Kafka does.
"""

from __future__ import annotations

import argparse
import sys
import time

POLL_S = 0.2


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("console-consumer", help="print records of a topic")
    parser.add_argument("--bootstrap-server", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--group")
    parser.add_argument("--from-beginning", action="store_true")
    parser.add_argument("--partition", type=int)
    parser.add_argument("--offset", default=None, help="earliest, latest or a number (with --partition)")
    parser.add_argument("--max-messages", type=int)
    parser.add_argument("--timeout-ms", type=int)
    parser.add_argument("--isolation-level", default="read_uncommitted",
                        choices=["read_uncommitted", "read_committed"])
    parser.add_argument("--property", action="append", default=[], metavar="KEY=VALUE",
                        help="print.key, print.timestamp, print.partition, print.offset, key.separator")
    parser.add_argument("--consumer-property", action="append", default=[], metavar="KEY=VALUE")
    parser.set_defaults(func=_run)


def _pairs(items: list[str]) -> dict[str, str]:
    return dict(item.split("=", 1) for item in items if "=" in item)


def _start_offset(args: argparse.Namespace) -> int:
    from confluent_kafka import OFFSET_BEGINNING, OFFSET_END  # noqa: PLC0415
    if args.offset is None:
        return OFFSET_BEGINNING if args.from_beginning else OFFSET_END
    if args.offset == "earliest":
        return OFFSET_BEGINNING
    if args.offset == "latest":
        return OFFSET_END
    return int(args.offset)


def _run(args: argparse.Namespace) -> int:
    from confluent_kafka import Consumer, TopicPartition  # noqa: PLC0415
    properties = _pairs(args.property)
    consumer = Consumer({"bootstrap.servers": args.bootstrap_server, "group.id": args.group or "franz-console",
                         "enable.auto.commit": bool(args.group), "isolation.level": args.isolation_level,
                         "auto.offset.reset": "earliest" if args.from_beginning else "latest",
                         **_pairs(args.consumer_property)})
    if args.group and args.partition is None:
        consumer.subscribe([args.topic])
    else:
        partitions = [args.partition] if args.partition is not None else list(
            consumer.list_topics(args.topic, timeout=30).topics[args.topic].partitions)
        consumer.assign([TopicPartition(args.topic, p, _start_offset(args)) for p in partitions])
    separator = properties.get("key.separator", "\t")
    count = 0
    last_record = time.monotonic()
    out = sys.stdout.buffer
    try:
        while args.max_messages is None or count < args.max_messages:
            message = consumer.poll(POLL_S)
            if message is None or message.error():
                if args.timeout_ms is not None and (time.monotonic() - last_record) * 1000 >= args.timeout_ms:
                    break
                continue
            last_record = time.monotonic()
            fields = []
            if properties.get("print.timestamp") == "true":
                fields.append(f"CreateTime:{message.timestamp()[1]}".encode())
            if properties.get("print.partition") == "true":
                fields.append(f"Partition:{message.partition()}".encode())
            if properties.get("print.offset") == "true":
                fields.append(f"Offset:{message.offset()}".encode())
            if properties.get("print.key") == "true":
                fields.append(message.key() if message.key() is not None else b"null")
            fields.append(message.value() if message.value() is not None else b"null")
            out.write(separator.encode().join(fields) + b"\n")
            out.flush()
            count += 1
    except KeyboardInterrupt:
        pass
    finally:
        consumer.close()
        print(f"Processed a total of {count} messages", file=sys.stderr)
    return 0
