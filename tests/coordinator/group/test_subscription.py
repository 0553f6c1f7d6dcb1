"""Regex subscriptions in Kafka's syntax (RE2/J), matched against every topic."""

from __future__ import annotations

import pytest

from franz.coordinator.group.group_metadata import GroupError
from franz.coordinator.group.subscription import matching_topics
from franz.protocol.errors import Errors

TOPICS = {"orders", "Orders-eu", "t", "__consumer_offsets"}


def test_re2_syntax_python_lacks_compiles_and_matches_whole_names():
    assert matching_topics(r"\p{Lu}.*", TOPICS) == {"Orders-eu"}
    assert matching_topics(r"t\z", TOPICS) == {"t"}
    assert matching_topics(r"\Qorders\E", TOPICS) == {"orders"}
    assert matching_topics("[[:lower:]]+", TOPICS) == {"orders", "t"}
    assert matching_topics("order", TOPICS) == set()  # the whole name, as Matcher.matches()


def test_internal_topics_match_as_any_other():
    """TopicRegexResolver matches every topic name of the metadata image."""
    assert "__consumer_offsets" in matching_topics(".*", TOPICS)


@pytest.mark.parametrize("regex", ["(?<=x)t", "(unclosed"])
def test_what_re2_refuses_is_an_invalid_regular_expression(regex):
    with pytest.raises(GroupError) as info:
        matching_topics(regex, TOPICS)
    assert info.value.code == Errors.INVALID_REGULAR_EXPRESSION and regex in str(info.value)
