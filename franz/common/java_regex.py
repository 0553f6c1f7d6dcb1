"""java.util.regex patterns compiled with Python's re, where clients send Java's syntax
(ListTransactions' transactional id pattern, KIP-1152; client metrics match patterns, KIP-714).

The two differ in what such patterns use: character classes are ASCII in Java
(\\d and \\w), \\Q...\\E quotes, (?<name>...) names a group, and Python's own
(?P...) is not Java syntax and does not compile there. Not translated: \\p{...}
classes and [a&&[b]] intersections.
"""

from __future__ import annotations

import re


def java_pattern(text: str) -> re.Pattern:
    """The pattern; re.error where java.util.regex would refuse it (as far as told above)."""
    if "(?P" in text:
        raise re.error("(?P is not java.util.regex syntax")
    text = re.sub(r"\\Q(.*?)(?:\\E|$)", lambda quoted: re.escape(quoted.group(1)), text, flags=re.DOTALL)
    text = re.sub(r"\(\?<([A-Za-z][A-Za-z0-9]*)>", r"(?P<\1>", text)
    return re.compile(text, re.ASCII)
