"""java_pattern: Java's regular expression syntax on Python's re, refusing what java.util.regex refuses."""

from __future__ import annotations

import re

import pytest

from franz.common.java_regex import java_pattern


@pytest.mark.parametrize("pattern, name, matches", [
    (r"p\d", "p1", True),
    (r"\d", "\u0661", False),  # ASCII digits only, as Java's \d
    (r"a{2}", "aa", True),
    (r"a{2,}", "aaa", True),
    (r"a{1,2}b", "aab", True),
    (r"[{}]x", "{x", True),  # braces in a class are themselves
    (r"\{a\}", "{a}", True),
    (r"\Q{a}\E", "{a}", True),
    (r"(?<word>ab)c", "abc", True),
])
def test_java_syntax_matches_as_java_matches(pattern, name, matches):
    assert bool(java_pattern(pattern).fullmatch(name)) is matches


@pytest.mark.parametrize("pattern", ["a{", "{", "x{a}", "a{,2}", "(?P<n>a)", "["])
def test_what_java_refuses_is_refused(pattern):
    with pytest.raises(re.error):
        java_pattern(pattern)
