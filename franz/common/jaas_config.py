"""A `sasl.jaas.config` value read as Kafka's JaasConfig reads it.

    <loginModuleClass> <controlFlag> (<optionName>=<optionValue>)*; ...

Kafka tokenizes it with java.io.StreamTokenizer (`//` and `/* */` comments, '-', '_' and '$'
as word characters, numbers parsed), so the same inputs pass and fail here: an option value must
be a word or a quoted string (a bare number has no string value: "Value not specified for key"),
every entry ends with ';', and the control flag is one of required, requisite, sufficient and
optional. Errors are ValueError with Kafka's messages.
"""

from __future__ import annotations

import dataclasses
from typing import Final

CONTROL_FLAGS: Final = ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL")

_EOF: Final = None
_ESCAPES: Final = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


@dataclasses.dataclass(frozen=True)
class LoginModuleEntry:
    """AppConfigurationEntry: one login module, its control flag, its options."""
    login_module: str
    control_flag: str
    options: dict[str, str]


def _is_alpha(char: str) -> bool:  # StreamTokenizer's default word characters plus Kafka's
    return char.isascii() and char.isalpha() or "\u00a0" <= char <= "\u00ff" or char in "_$-"


def _is_digit(char: str) -> bool:  # parseNumbers(): digits, '.', '-'
    return char in "0123456789.-"


class _Tokenizer:
    """The subset of StreamTokenizer that JaasConfig's settings use: each token is
    (kind, string) where kind is "word", "quoted", "number", an ordinary character, or None
    at the end."""

    def __init__(self, text: str) -> None:
        self._text, self._pos = text, 0

    def next(self) -> tuple[str | None, str | None]:
        text, end = self._text, len(self._text)
        while True:
            while self._pos < end and text[self._pos] <= " ":
                self._pos += 1
            if self._pos >= end:
                return _EOF, None
            char = text[self._pos]
            if char == "/":  # '/' is StreamTokenizer's comment character; "/*" opens a block
                if text.startswith("/*", self._pos):
                    close = text.find("*/", self._pos + 2)
                    self._pos = end if close < 0 else close + 2
                else:
                    newline = text.find("\n", self._pos)
                    self._pos = end if newline < 0 else newline + 1
                continue
            break
        if _is_digit(char):
            self._pos += 1
            if char == "-" and not (self._pos < end and text[self._pos] in "0123456789."):
                return "-", None  # a lone '-' is an ordinary character
            while self._pos < end and text[self._pos] in "0123456789.":
                self._pos += 1
            return "number", None  # StreamTokenizer keeps a number's value, not its text
        if _is_alpha(char):
            start = self._pos
            while self._pos < end and (_is_alpha(text[self._pos]) or _is_digit(text[self._pos])):
                self._pos += 1
            return "word", text[start:self._pos]
        if char in "\"'":
            return "quoted", self._quoted(char)
        self._pos += 1
        return char, None

    def _quoted(self, quote: str) -> str:
        text, end = self._text, len(self._text)
        self._pos += 1
        out = []
        while self._pos < end and text[self._pos] not in (quote, "\n", "\r"):
            char = text[self._pos]
            self._pos += 1
            if char == "\\" and self._pos < end:
                char = text[self._pos]
                self._pos += 1
                if char in "01234567":  # up to three octal digits, the first one at most 3
                    digits = char
                    while self._pos < end and len(digits) < (3 if digits[0] <= "3" else 2) \
                            and text[self._pos] in "01234567":
                        digits += text[self._pos]
                        self._pos += 1
                    char = chr(int(digits, 8))
                else:
                    char = _ESCAPES.get(char, char)
            out.append(char)
        if self._pos < end and text[self._pos] == quote:
            self._pos += 1
        return "".join(out)


def parse_jaas_config(text: str) -> list[LoginModuleEntry]:
    """The entries of a JAAS config value; ValueError as JaasConfig refuses it."""
    tokens = _Tokenizer(text)
    entries = []
    kind, value = tokens.next()
    while kind is not _EOF:
        login_module = value
        kind, value = tokens.next()
        if kind is _EOF:
            raise ValueError("Login module control flag not specified in JAAS config")
        if value is None:
            raise ValueError("Login module control flag is not available in the JAAS config")
        if value.upper() not in CONTROL_FLAGS:
            raise ValueError(f"Invalid login module control flag '{value}' in JAAS config")
        flag, options = value.upper(), {}
        kind, value = tokens.next()
        while kind is not _EOF and kind != ";":
            key = value
            kind, _ = tokens.next()
            if kind != "=":
                raise ValueError(f"Value not specified for key '{key}' in JAAS config")
            kind, value = tokens.next()
            if kind is _EOF or value is None:
                raise ValueError(f"Value not specified for key '{key}' in JAAS config")
            if key is not None:  # Kafka keeps a number's or a symbol's option under a null name, which nothing reads
                options[key] = value
            kind, value = tokens.next()
        if kind != ";":
            raise ValueError("JAAS config entry not terminated by semi-colon")
        if not login_module:  # named by a number or a symbol (AppConfigurationEntry refuses it)
            raise ValueError("loginModuleName cannot be null or empty")
        entries.append(LoginModuleEntry(login_module, flag, options))
        kind, value = tokens.next()
    if not entries:
        raise ValueError("Login module not specified in JAAS config")
    return entries
