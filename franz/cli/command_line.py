"""Command lines checked and refused as Kafka's tools check and refuse theirs (CommandLineUtils).

A tool's `check_args` raises UsageError for what Kafka refuses through printUsageAndExit (the
message, then the usage, on stderr; exit 1) and StartError for what it refuses with a message
alone (stderr, exit 1); `refused_by_checks` runs it and prints either. `check_invalid_args` is
CommandLineUtils.checkInvalidArgs, with its message. Arguments are split with `java_split`, as
Java's String.split splits them: trailing empty strings are dropped ("t:" is ["t"], ",," is []).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterable


class UsageError(Exception):
    """A bad command line (CommandLineUtils.printUsageAndExit): message and usage on stderr, exit 1."""


class StartError(Exception):
    """Refused before the admin client exists: message on stderr, exit 1."""


def given(args: argparse.Namespace, option: str) -> bool:
    """Whether the option (Kafka's name, e.g. "all-groups") is on the command line."""
    return getattr(args, option.replace("-", "_")) not in (None, False)


def check_invalid_args(args: argparse.Namespace, invalid: Iterable[tuple[str, Iterable[str]]]) -> None:
    """CommandLineUtils.checkInvalidArgs for each (option used, the options it cannot be used with), in order."""
    for used, others in invalid:
        if given(args, used):
            for other in others:
                if given(args, other):
                    raise UsageError(f'Option "[{used}]" can\'t be used with option "[{other}]"')


def print_usage(parser: argparse.ArgumentParser, message: object) -> None:
    """CommandLineUtils.printUsageAndExit, but for the exit: the message, then the usage, on stderr."""
    sys.stdout.flush()
    print(message, file=sys.stderr)
    parser.print_help(sys.stderr)


def refused_by_checks(parser: argparse.ArgumentParser, check_args: Callable[[argparse.Namespace], None],
                      args: argparse.Namespace) -> bool:
    """Run `check_args`; print its refusal, if any, as Kafka does. True when the command line was refused."""
    try:
        check_args(args)
    except UsageError as exc:
        print_usage(parser, exc)
        return True
    except StartError as exc:
        print(exc, file=sys.stderr)
        return True
    return False


def java_split(text: str, regex: str) -> list[str]:
    """String.split(regex): trailing empty strings dropped."""
    parts = re.split(regex, text)
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()
    return [] if parts == [""] and text else parts
