"""java.util.regex patterns compiled with Python's re, where clients send Java's syntax
(ListTransactions' transactional id pattern, KIP-1152; client metrics match patterns, KIP-714).

The two differ in what such patterns use: character classes are ASCII in Java
(\\d and \\w), \\Q...\\E quotes, (?<name>...) names a group, Python's own
(?P...) is not Java syntax and does not compile there, and a `{` that does not open
a quantifier is an error in Java where Python reads it as itself. Not translated: \\p{...}
classes and [a&&[b]] intersections.
"""

from __future__ import annotations

import re


_QUANTIFIER_BRACES = re.compile(r"\{\d+(?:,\d*)?\}")


def _check_braces(text: str) -> None:
    """java.util.regex reads every `{` outside a character class as the start of a quantifier
    ({n}, {n,} or {n,m}) and refuses any other ("Illegal repetition"), where Python's re takes
    such a brace as a literal."""
    index, in_class = 0, False
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "{" and not _QUANTIFIER_BRACES.match(text, index):
            raise re.error(f"Illegal repetition near index {index}", text, index)
        index += 1


def java_pattern(text: str) -> re.Pattern:
    """The pattern; re.error where java.util.regex would refuse it (as far as told above)."""
    if "(?P" in text:
        raise re.error("(?P is not java.util.regex syntax")
    text = re.sub(r"\\Q(.*?)(?:\\E|$)", lambda quoted: re.escape(quoted.group(1)), text, flags=re.DOTALL)
    _check_braces(text)
    text = re.sub(r"\(\?<([A-Za-z][A-Za-z0-9]*)>", r"(?P<\1>", text)
    return re.compile(text, re.ASCII)
