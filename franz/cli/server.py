"""`franz server start`: run one broker in the foreground.

The broker itself arrives with the network layer (franz/server); until then
this command states the configuration it would serve and exits non-zero so
that nobody mistakes it for a running broker.
"""

from __future__ import annotations

import argparse
import sys

EMBEDDED_DEFAULT = {
    "node.id": "1",
    "listeners": "PLAINTEXT://127.0.0.1:9092",
    "log.dirs": "./data",
}


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
    try:
        from franz.server.kafka_server import run_from_cli  # noqa: PLC0415
    except ModuleNotFoundError:
        config = dict(EMBEDDED_DEFAULT)
        for item in args.override:
            key, _, value = item.partition("=")
            config[key] = value
        print("franz: the network broker is not built yet; it will serve:", file=sys.stderr)
        for key, value in config.items():
            print(f"  {key}={value}", file=sys.stderr)
        return 1
    return run_from_cli(args)
