"""Entry point of the `franz` command.

Each subcommand lives in its own module under franz/cli/ and exposes
`register(subparsers)`, which adds its parser and sets `func` to a callable
taking the parsed namespace and returning the process exit code. Modules are
listed here by name so that a subcommand whose dependencies are missing does
not break the others.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from franz import __version__

# Order is the order shown by `franz --help`.
SUBCOMMAND_MODULES = (
    "franz.cli.server",
    "franz.cli.topics",
    "franz.cli.consumer_groups",
    "franz.cli.console_producer",
    "franz.cli.console_consumer",
    "franz.cli.perf_test",
    "franz.cli.dump_log",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="franz",
        description="A Kafka-compatible broker in Python, and Kafka's tools under one command.",
    )
    parser.add_argument("--version", action="version", version=f"franz {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in SUBCOMMAND_MODULES:
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:
                continue  # subcommand not built yet
            raise
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        # The subcommand's own parser reports them when it asked to (franz/cli/usage_errors.py).
        getattr(args, "command_parser", parser).error(f"unrecognized arguments: {' '.join(unknown)}")
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0 if args.command is None else 2
    return int(args.func(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
