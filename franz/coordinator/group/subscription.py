"""Regular-expression subscriptions of consumer group members (KIP-848, ConsumerGroupHeartbeat v1+).

Kafka matches the whole topic name (RE2/J `matches()`); Python's `re.fullmatch`
is the same for the syntax the two share. Internal topics (`__consumer_offsets`,
`__transaction_state`) never match, as in Kafka.
"""

from __future__ import annotations

import functools
import re

from franz.coordinator.group.group_metadata import GroupError
from franz.protocol.errors import Errors
from franz.server.metadata_cache import INTERNAL_TOPICS


@functools.lru_cache(maxsize=1024)
def compile_regex(regex: str) -> re.Pattern:
    """The compiled pattern; GroupError INVALID_REGULAR_EXPRESSION when it does not compile."""
    try:
        return re.compile(regex)
    except re.error as exc:
        raise GroupError(Errors.INVALID_REGULAR_EXPRESSION, f"SubscribedTopicRegex `{regex}` is not a valid "
                         f"regular expression: {exc}.") from None


def matching_topics(regex: str, topic_names: set[str]) -> set[str]:
    pattern = compile_regex(regex)
    return {name for name in topic_names if name not in INTERNAL_TOPICS and pattern.fullmatch(name)}
