"""JAAS login configurations as Kafka and the JDK read them: a `sasl.jaas.config` value (Kafka's
JaasConfig) and a JAAS file (the JDK's sun.security.provider.ConfigFile, which a broker reads
when `-Djava.security.auth.login.config` names it).

A `sasl.jaas.config` value is a list of entries:

    <loginModuleClass> <controlFlag> (<optionName>=<optionValue>)*; ...

Kafka tokenizes it with java.io.StreamTokenizer (`//` and `/* */` comments, '-', '_' and '$'
as word characters, numbers parsed), so the same inputs pass and fail here: an option value must
be a word or a quoted string (a bare number has no string value: "Value not specified for key"),
every entry ends with ';', and the control flag is one of required, requisite, sufficient and
optional. Errors are ValueError with Kafka's messages.

A JAAS file is a list of named sections, each such a list in braces:

    <name> { <loginModuleClass> <controlFlag> (<optionName>=<optionValue>)*; ... };

The same tokenizer reads it with '*' a word character too, and ConfigFile's grammar is stricter:
names, flags, keys and values are words or "double-quoted" strings (not single-quoted, not
numbers), a name may not name two sections, and option values are expanded (`${user.home}`,
system_properties.expand). Errors are ValueError with the JDK's messages ("Configuration Error:"
and a tab-indented line naming the line, counted as ConfigFile counts them: newlines inside a
/* */ comment are not).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Final

from franz.common.system_properties import ExpandError, expand

CONTROL_FLAGS: Final = ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL")

_EOF: Final = None
# ConfigFile.match: the tokens whose string it takes, by what it expects there
_STRING_TOKENS: Final = ("word", '"')
_STRINGS_EXPECTED: Final = ("module class name", "controlFlag", "option key", "option value")
_SYMBOLS: Final = ("{", "}", ";", "=")
_LINE_END: Final = re.compile("[\r\n]")
_ESCAPES: Final = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


@dataclasses.dataclass(frozen=True)
class LoginModuleEntry:
    """AppConfigurationEntry: one login module, its control flag, its options."""
    login_module: str
    control_flag: str
    options: dict[str, str]


def _is_digit(char: str) -> bool:  # parseNumbers(): digits, '.', '-'
    return char in "0123456789.-"


class _Tokenizer:
    """The subset of StreamTokenizer that JaasConfig's and ConfigFile's settings use: each token is
    (kind, string) where kind is "word", a quote character (its string the quoted text), "number",
    an ordinary character, or None at the end. `line` is the line of the last token, counting the
    ends of line it skipped as whitespace (what ConfigFile counts with eolIsSignificant)."""

    def __init__(self, text: str, word_chars: str) -> None:
        self._text, self._pos = text, 0
        self._word_chars = word_chars
        self.line = 1

    def _is_alpha(self, char: str) -> bool:
        # the default word characters (ASCII letters, U+00A0-U+00FF) and every character above U+00FF
        return char.isascii() and char.isalpha() or char >= "\u00a0" or char in self._word_chars

    def next(self) -> tuple[str | None, str | None]:
        text, end = self._text, len(self._text)
        while True:
            while self._pos < end and text[self._pos] <= " ":
                if text[self._pos] == "\n" or text[self._pos] == "\r" and not text.startswith("\r\n", self._pos):
                    self.line += 1
                self._pos += 1
            if self._pos >= end:
                return _EOF, None
            char = text[self._pos]
            if char == "/":  # '/' is StreamTokenizer's comment character; "/*" opens a block
                if text.startswith("/*", self._pos):
                    close = text.find("*/", self._pos + 2)
                    self._pos = end if close < 0 else close + 2
                else:  # to the end of the line, left to be skipped; a lone '/' has read the next character
                    line_end = _LINE_END.search(text, self._pos + (1 if text.startswith("//", self._pos) else 2))
                    self._pos = end if line_end is None else line_end.start()
                continue
            break
        if _is_digit(char):
            self._pos += 1
            if char == "-" and not (self._pos < end and text[self._pos] in "0123456789."):
                return "-", None  # a lone '-' is an ordinary character
            while self._pos < end and text[self._pos] in "0123456789.":
                self._pos += 1
            return "number", None  # StreamTokenizer keeps a number's value, not its text
        if self._is_alpha(char):
            start = self._pos
            while self._pos < end and (self._is_alpha(text[self._pos]) or _is_digit(text[self._pos])):
                self._pos += 1
            return "word", text[start:self._pos]
        if char in "\"'":
            return char, self._quoted(char)
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
    tokens = _Tokenizer(text, "-_$")
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


def _configuration_error(detail: str) -> ValueError:
    return ValueError(f"Configuration Error:\n\t{detail}")


class _ConfigFileParser:
    """ConfigFile.Spi.readConfig: sections by name, the match/peek of a one-token lookahead."""

    def __init__(self, text: str, properties: Mapping[str, str]) -> None:
        self._tokens = _Tokenizer(text, "$_-*")
        self._properties = properties
        self._kind, self._value = self._tokens.next()

    def sections(self) -> dict[str | None, list[LoginModuleEntry]]:
        sections: dict[str | None, list[LoginModuleEntry]] = {}
        while self._kind is not _EOF:
            name = self._value  # whatever the token, as st.sval has it (None for a number or a symbol)
            self._advance()
            self._match("{")
            entries = []
            while self._kind != "}":
                login_module = self._match("module class name")
                flag = str(self._match("controlFlag")).upper()
                if flag not in CONTROL_FLAGS:
                    raise _configuration_error(f"Invalid control flag, {flag}")
                options = {}
                while self._kind != ";":
                    key = str(self._match("option key"))
                    self._match("=")
                    options[key] = self._expand(str(self._match("option value")))
                self._advance()
                entries.append(LoginModuleEntry(str(login_module), flag, options))
            self._match("}")
            self._match(";")
            if name in sections:
                raise _configuration_error(f"Can not specify multiple entries for {name}")
            sections[name] = entries
        return sections

    def _advance(self) -> None:
        self._kind, self._value = self._tokens.next()

    def _match(self, expected: str) -> str | None:
        kind, value = self._kind, self._value
        if kind is _EOF:
            raise _configuration_error(f"expected [{expected}], read [end of file]")
        line = f"Line {self._tokens.line:,}"  # MessageFormat groups the digits of a number
        if kind in _STRING_TOKENS and expected in _STRINGS_EXPECTED or kind == expected and kind in _SYMBOLS:
            self._advance()
            return value
        if kind not in _SYMBOLS:
            raise _configuration_error(f"{line}: expected [{expected}], found [{'null' if value is None else value}]")
        raise _configuration_error(f"{line}: expected [{expected}]")

    def _expand(self, value: str) -> str:
        """ConfigFile.expand: an option value with its ${...} expanded, which may not be left empty."""
        if not value:
            return value
        try:
            expanded = expand(value, self._properties)
        except ExpandError as exc:
            raise ValueError(str(exc)) from None
        if not expanded:
            raise _configuration_error(f"Line {self._tokens.line:,}: system property [{value}] expanded to empty "
                                       f"value")
        return expanded


def parse_jaas_file(text: str, properties: Mapping[str, str]) -> dict[str | None, list[LoginModuleEntry]]:
    """The sections of a JAAS file by name, each its entries in order, with option values expanded
    over `properties`; ValueError as ConfigFile refuses the file."""
    return _ConfigFileParser(text, properties).sections()
