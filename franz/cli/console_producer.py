"""`franz console-producer`: one record per line of standard input (Kafka's kafka-console-producer.sh).

With `--property parse.key=true` each line is KEY<key.separator>VALUE (the
separator defaults to a tab, as in Kafka). Exits non-zero if any record was not
acknowledged, after saying which error the broker gave.
"""

from __future__ import annotations

import argparse
import sys

FLUSH_TIMEOUT_S = 60.0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("console-producer", help="produce lines of stdin as records")
    parser.add_argument("--bootstrap-server", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--property", action="append", default=[], metavar="KEY=VALUE",
                        help="parse.key, key.separator")
    parser.add_argument("--producer-property", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--compression-codec", default="none", choices=["none", "gzip", "snappy", "lz4", "zstd"])
    parser.add_argument("--request-required-acks", default="-1")
    parser.set_defaults(func=_run)


def _pairs(items: list[str]) -> dict[str, str]:
    return dict(item.split("=", 1) for item in items if "=" in item)


def _run(args: argparse.Namespace) -> int:
    from confluent_kafka import Producer  # noqa: PLC0415
    properties = _pairs(args.property)
    parse_key = properties.get("parse.key", "false") == "true"
    separator = properties.get("key.separator", "\t")
    # murmur2_random: keyed lines land where kafka-console-producer (the Java producer) puts them.
    producer = Producer({"bootstrap.servers": args.bootstrap_server, "compression.type": args.compression_codec,
                         "acks": args.request_required_acks, "partitioner": "murmur2_random",
                         **_pairs(args.producer_property)})
    failures: list[str] = []

    def report(error, _message) -> None:
        if error is not None:
            failures.append(str(error))

    for line in sys.stdin.buffer:
        line = line.rstrip(b"\r\n")
        key = None
        if parse_key:
            key, sep, line = line.partition(separator.encode())
            if not sep:
                print(f"franz console-producer: no key separator in line {line!r}", file=sys.stderr)
                return 1
        while True:
            try:
                producer.produce(args.topic, value=line, key=key, on_delivery=report)
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    remaining = producer.flush(FLUSH_TIMEOUT_S)
    if failures or remaining:
        print(f"franz console-producer: {len(failures) + remaining} records not acknowledged: "
              f"{failures[:1] or ['timed out']}", file=sys.stderr)
        return 1
    return 0
