"""Resolving a consumer group's regex subscriptions against the cluster's topics (Kafka's
TopicRegexResolver; the authorization is KAFKA-18813's).

Every regex is matched against every topic the cluster has (whole names, RE2:
franz/coordinator/group/subscription.py), then what matched is cut down to the
topics the principal behind the resolution may DESCRIBE: that of the member whose
heartbeat started it. One authorization call asks for every matched topic once,
its reference count the number of regexes that matched it; allowed topics are
audit-logged, denied ones are not (a regex reaching an undescribable topic is no
attempt on it).

The result is the group's, not the member's: until the next resolution every
member subscribed to a regex sees what that principal could describe, as in Kafka.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

from franz.coordinator.group.consumer_group import ResolvedRegularExpression
from franz.coordinator.group.group_metadata import GroupError
from franz.coordinator.group.subscription import matching_topics

logger = logging.getLogger(__name__)

# Topic names, each as often as it is referenced -> those the principal may DESCRIBE.
DescribableTopics = Callable[[list[str]], set[str]]


def resolve_regular_expressions(group_id: str, regexes: Iterable[str], topic_names: Iterable[str], version: int,
                                now_ms: int, describable: DescribableTopics | None
                                ) -> dict[str, ResolvedRegularExpression]:
    """Each regex with the topics it matches that `describable` lets through (None: no
    authorizer, all of them), stamped with the topics' `version` and the time it began."""
    started = time.monotonic()
    logger.debug("[GroupId %s] Refreshing regular expressions: %s", group_id, regexes)
    names = set(topic_names)
    matched: dict[str, set[str]] = {}
    for regex in regexes:
        try:
            matched[regex] = matching_topics(regex, names)
        except GroupError as exc:  # each was checked when a member subscribed with it
            logger.error("[GroupId %s] Couldn't parse regular expression '%s' due to `%s`. Ignoring it.",
                         group_id, regex, exc)
            matched[regex] = set()
    if describable is not None:
        allowed = describable([name for topics in matched.values() for name in topics])
        for topics in matched.values():
            topics.intersection_update(allowed)
    logger.info("[GroupId %s] Scanned %d topics to refresh regular expressions %s in %dms.", group_id,
                len(names), sorted(matched), (time.monotonic() - started) * 1000)
    return {regex: ResolvedRegularExpression(frozenset(topics), version, now_ms) for regex, topics in matched.items()}
