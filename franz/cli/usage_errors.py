"""Usage errors that end a tool with exit code 1, as Kafka's command-line tools do.

Kafka's tools report a bad command line through CommandLineUtils.printUsageAndExit,
which exits 1; argparse exits 2. A tool opts in with `exit_1_on_usage_errors(parser)`
in its `register`: its parser's own errors (a missing or malformed option) then exit
1, and main.py hands options no parser knew to that same parser (through the
`command_parser` default set here), so they exit 1 too. The other tools keep
argparse's exit code 2.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

USAGE_ERROR_EXIT_CODE = 1


def exit_1_on_usage_errors(parser: argparse.ArgumentParser) -> None:
    """Make `parser.error` print the usage and the message, then exit 1."""

    def error(message: str) -> NoReturn:
        parser.print_usage(sys.stderr)
        parser.exit(USAGE_ERROR_EXIT_CODE, f"{parser.prog}: error: {message}\n")

    parser.error = error  # type: ignore[method-assign]
    parser.set_defaults(command_parser=parser)
