"""java_pattern: Java's regular expression syntax on Python's re, refusing what java.util.regex refuses;
java_replace_all and java_replace_first: Java's replacement strings (checked against the JDK)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from franz.common.java_regex import java_pattern, java_replace_all, java_replace_first


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


REPLACEMENTS = [
    # pattern, text, replacement, java_replace_all's result, java_replace_first's (or the ValueError's message)
    (r"(a)(b)?", "xaby a", "<$1|$2>", "x<a|b>y <a|>", "x<a|b>y a"),  # a group that took no part is empty
    (r"(a)", "a", r"\1", "1", "1"),  # a backslash quotes, where Python's \1 is a group
    (r"(a)", "a", r"\$1 \\", "$1 \\", "$1 \\"),
    (r"(a)", "a", "$10", "a0", "a0"),  # digits taken while they still name a group
    (r"(a)(b)(c)(d)(e)(f)(g)(h)(i)(j)", "abcdefghij", "$10$1", "ja", "ja"),
    (r"(?<word>a+)", "aab", "[${word}]", "[aa]b", "[aa]b"),
    (r"x*", "abxd", "-", "-a-b--d-", "-abxd"),  # empty matches, one right after a match too
    (r"o", "foo", "0", "f00", "f0o"),
    (r"z", "foo", "$", "foo", "foo"),  # nothing matched: the replacement is never read
    (r"(a)", "a", "$2", "No group 2", None),
    (r"(a)", "a", "$", "Illegal group reference: group index is missing", None),
    (r"(a)", "a", "$x", "Illegal group reference", None),
    (r"(a)", "a", "\\", "character to be escaped is missing", None),
    (r"(a)", "a", "${}", "named capturing group has 0 length name", None),
    (r"(a)", "a", "${ab", "named capturing group is missing trailing '}'", None),
    (r"(a)", "a", "${1a}", "capturing group name {1a} starts with digit character", None),
    (r"(a)", "a", "${b}", "No group with name {b}", None),
    (r"(a)", "a", "$\u0661", "Illegal group reference", None),  # ASCII digits only
]


@pytest.mark.parametrize("pattern, text, replacement, replaced_all, replaced_first", REPLACEMENTS)
def test_replacements_read_as_javas_matcher_reads_them(pattern, text, replacement, replaced_all, replaced_first):
    compiled = java_pattern(pattern)
    if replaced_first is None:
        for replace in (java_replace_all, java_replace_first):
            with pytest.raises(ValueError) as raised:
                replace(compiled, text, replacement)
            assert str(raised.value) == replaced_all
    else:
        assert java_replace_all(compiled, text, replacement) == replaced_all
        assert java_replace_first(compiled, text, replacement) == replaced_first


JAVA_REPLACER = """
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.regex.Pattern;

public class Replace {
    public static void main(String[] args) throws Exception {
        java.io.PrintStream out = new java.io.PrintStream(System.out, true, "UTF-8");
        for (String line : Files.readAllLines(Paths.get(args[0]))) {
            String[] fields = line.split("\\t", -1);
            for (boolean all : new boolean[] {true, false}) {
                try {
                    java.util.regex.Matcher matcher = Pattern.compile(fields[0]).matcher(fields[1]);
                    out.println("=" + (all ? matcher.replaceAll(fields[2]) : matcher.replaceFirst(fields[2])));
                } catch (RuntimeException e) {
                    out.println("!" + e.getMessage());
                }
            }
        }
    }
}
"""


def test_replacements_are_javas(tmp_path):
    """The table above, checked against the JDK's own Matcher."""
    java = shutil.which("java")
    if java is None:
        pytest.skip("no JDK")
    (tmp_path / "Replace.java").write_text(JAVA_REPLACER)
    (tmp_path / "cases").write_text("".join(f"{pattern}\t{text}\t{replacement}\n"
                                            for pattern, text, replacement, _, _ in REPLACEMENTS), encoding="utf-8")
    printed = subprocess.run([java, "Replace.java", str(tmp_path / "cases")], cwd=tmp_path, check=True,
                             capture_output=True, timeout=120, encoding="utf-8").stdout.splitlines()
    expected = []
    for _, _, _, replaced_all, replaced_first in REPLACEMENTS:
        if replaced_first is None:
            expected += ["!" + replaced_all] * 2
        else:
            expected += ["=" + replaced_all, "=" + replaced_first]
    assert printed == expected
