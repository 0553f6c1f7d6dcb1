"""java.util.regex patterns compiled with Python's re, where clients send Java's syntax
(ListTransactions' transactional id pattern, KIP-1152; client metrics match patterns, KIP-714;
the SSL and Kerberos principal mapping rules).

The two differ in what such patterns use: character classes are ASCII in Java
(\\d and \\w), \\Q...\\E quotes, (?<name>...) names a group, Python's own
(?P...) is not Java syntax and does not compile there, and a `{` that does not open
a quantifier is an error in Java where Python reads it as itself. Not translated: \\p{...}
classes and [a&&[b]] intersections.

Replacement strings differ too: Java's Matcher reads `$n` and `${name}` as groups and `\\x` as x,
Python's re.sub reads `\\n` and `\\g<name>`; java_replace_all and java_replace_first take Java's.
"""

from __future__ import annotations

import re
import string


_QUANTIFIER_BRACES = re.compile(r"\{\d+(?:,\d*)?\}")
_GROUP_NAME_CHARACTERS = frozenset(string.ascii_letters + string.digits)


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


def java_replace_all(pattern: re.Pattern, text: str, replacement: str) -> str:
    """Matcher.replaceAll: each match (empty ones as Java finds them, which Python 3.7+ shares)
    replaced by Java's reading of `replacement`; ValueError where Java throws, and only once
    something matched, as Java reads the replacement only then."""
    return pattern.sub(lambda match: _expand(replacement, match), text)


def java_replace_first(pattern: re.Pattern, text: str, replacement: str) -> str:
    """Matcher.replaceFirst: as java_replace_all, for the first match only."""
    return pattern.sub(lambda match: _expand(replacement, match), text, count=1)


def _expand(replacement: str, match: re.Match) -> str:
    """Matcher.appendExpandedReplacement: `\\x` is x; `$` then a digit is that group, taking more
    (ASCII) digits while they still name a group; `${name}` a named group; a group that took no
    part in the match is empty. Java's IndexOutOfBoundsException for a group the pattern lacks is
    a ValueError too: callers refuse the name either way."""
    out, cursor, length = [], 0, len(replacement)
    while cursor < length:
        char = replacement[cursor]
        cursor += 1
        if char == "\\":
            if cursor == length:
                raise ValueError("character to be escaped is missing")
            out.append(replacement[cursor])
            cursor += 1
            continue
        if char != "$":
            out.append(char)
            continue
        if cursor == length:
            raise ValueError("Illegal group reference: group index is missing")
        if replacement[cursor] == "{":
            begin = cursor = cursor + 1
            while cursor < length and replacement[cursor] in _GROUP_NAME_CHARACTERS:
                cursor += 1
            name = replacement[begin:cursor]
            if not name:
                raise ValueError("named capturing group has 0 length name")
            if cursor == length or replacement[cursor] != "}":
                raise ValueError("named capturing group is missing trailing '}'")
            if name[0] in string.digits:
                raise ValueError(f"capturing group name {{{name}}} starts with digit character")
            if name not in match.re.groupindex:
                raise ValueError(f"No group with name {{{name}}}")
            group = match.re.groupindex[name]
            cursor += 1
        else:
            if replacement[cursor] not in string.digits:
                raise ValueError("Illegal group reference")
            group = int(replacement[cursor])
            cursor += 1
            while cursor < length and replacement[cursor] in string.digits:
                longer = group * 10 + int(replacement[cursor])
                if longer > match.re.groups:
                    break
                group = longer
                cursor += 1
            if group > match.re.groups:
                raise ValueError(f"No group {group}")
        out.append(match.group(group) or "")
    return "".join(out)
