"""`franz server start`: run one broker in the foreground.

`--config FILE` reads Kafka's server.properties keys; without it the broker
runs on the embedded default (node 1 on 127.0.0.1:9092, data under ./data,
see franz.server.kafka_config.EMBEDDED_DEFAULTS). `--override key=value`
wins over both. SIGTERM or SIGINT stops it cleanly (exit 0); a bad config
value exits 2 with a message naming the key.
"""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    server = subparsers.add_parser("server", help="run a franz broker")
    server_sub = server.add_subparsers(dest="server_command", metavar="ACTION")
    start = server_sub.add_parser("start", help="start a broker in the foreground")
    start.add_argument("--config", help="broker properties file (Kafka's server.properties keys)")
    start.add_argument(
        "--override", action="append", default=[], metavar="KEY=VALUE",
        help="override one config key (repeatable)",
    )
    start.set_defaults(func=_start)


def _start(args: argparse.Namespace) -> int:
    from franz.server.kafka_server import run_from_cli  # noqa: PLC0415 - keeps `franz --help` light
    return run_from_cli(args)
