"""A group's regexes resolved against the cluster's topics and the principal's DESCRIBE rights
(ported from Kafka's TopicRegexResolverTest)."""

from __future__ import annotations

from franz.coordinator.group.consumer_group import ResolvedRegularExpression
from franz.coordinator.group.topic_regex_resolver import resolve_regular_expressions


def test_basic_matching():
    resolved = resolve_regular_expressions("group-1", ["ba.*"], ["foo", "bar", "baz", "qux"], 3, 0, None)
    assert resolved == {"ba.*": ResolvedRegularExpression(frozenset({"bar", "baz"}), 3, 0)}


def test_a_regex_matching_nothing_resolves_to_no_topics():
    resolved = resolve_regular_expressions("group-2", ["a.*"], ["foo", "bar"], 3, 5, None)
    assert resolved == {"a.*": ResolvedRegularExpression(frozenset(), 3, 5)}


def test_a_regex_that_does_not_compile_is_ignored():
    resolved = resolve_regular_expressions("group-2", ["(a", "f.*"], ["foo", "(a"], 3, 5, None)
    assert resolved == {"(a": ResolvedRegularExpression(frozenset(), 3, 5),
                        "f.*": ResolvedRegularExpression(frozenset({"foo"}), 3, 5)}


def test_authorization_filtering():
    """A denied topic is dropped from every regex that matched it; the authorizer is asked about
    each matched topic as often as regexes matched it (its reference count)."""
    asked: list[list[str]] = []

    def describable(names: list[str]) -> set[str]:
        asked.append(sorted(names))
        return {name for name in names if name != "deny1"}

    resolved = resolve_regular_expressions("group-3", ["a.*", "d.*", ".*1"], ["allow1", "deny1", "allow2"], 3, 10,
                                           describable)
    assert resolved == {"a.*": ResolvedRegularExpression(frozenset({"allow1", "allow2"}), 3, 10),
                        "d.*": ResolvedRegularExpression(frozenset(), 3, 10),
                        ".*1": ResolvedRegularExpression(frozenset({"allow1"}), 3, 10)}
    assert asked == [["allow1", "allow1", "allow2", "deny1", "deny1"]]
