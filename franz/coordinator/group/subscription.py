r"""Regular-expression subscriptions of consumer group members (KIP-848, ConsumerGroupHeartbeat v1+).

Kafka compiles them with RE2/J and matches whole topic names (`matches()`), every
topic the broker has, internal ones included (TopicRegexResolver). franz uses
RE2 through google-re2, the same syntax: `\p{Lu}`, `\z`, `\Q...\E` and POSIX
classes compile, and Perl-only constructs such as look-behind are refused, where
Python's `re` would differ both ways.
"""

from __future__ import annotations

import functools

import re2

from franz.coordinator.group.group_metadata import GroupError
from franz.protocol.errors import Errors

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a client's bad pattern is its answer, not a line on the broker's stderr


@functools.lru_cache(maxsize=1024)
def compile_regex(regex: str):
    """The compiled pattern; GroupError INVALID_REGULAR_EXPRESSION when it does not compile."""
    try:
        return re2.compile(regex, _OPTIONS)
    except re2.error as exc:
        reason = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise GroupError(Errors.INVALID_REGULAR_EXPRESSION, f"SubscribedTopicRegex `{regex}` is not a valid "
                         f"regular expression: {reason}.") from None


def matching_topics(regex: str, topic_names: set[str]) -> set[str]:
    pattern = compile_regex(regex)
    return {name for name in topic_names if pattern.fullmatch(name)}
