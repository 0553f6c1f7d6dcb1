"""ConfigDef: typed, validated configuration keys, as Kafka's common.config.ConfigDef.

A ConfigDef lists keys with a type, a default and a validator. `parse(props)`
turns a mapping of raw values (strings from a properties file, or already
typed values) into a dict of typed values. It refuses a bad value with a
ConfigError naming the key, the value and the rule it broke; it never guesses.
Unknown keys are returned separately so the caller can warn about them, as
Kafka logs "The configuration 'x' was supplied but isn't a known config".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

NO_DEFAULT = object()


class ConfigError(ValueError):
    """A config value that cannot be accepted; the message names the key, in ConfigException's
    words ("Invalid value V for configuration K: reason") unless `message` is given whole."""

    def __init__(self, key: str, value: Any, reason: str, message: str | None = None) -> None:
        shown = "null" if value is None else value
        super().__init__(message or f"Invalid value {shown} for configuration {key}: {reason}")
        self.key = key
        self.value = value
        self.reason = reason


def _parse_bool(key: str, raw: Any) -> bool:
    if isinstance(raw, bool):
        return raw
    text = str(raw).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ConfigError(key, raw, "Expected value to be either true or false")


def _parse_integer(key: str, raw: Any, low: int, high: int, kind: str) -> int:
    if isinstance(raw, bool):
        raise ConfigError(key, raw, f"Expected value to be a {kind} number")
    if isinstance(raw, int):
        value = raw
    else:
        try:
            value = int(str(raw).strip())
        except ValueError:
            raise ConfigError(key, raw, f"Not a number of type {kind.upper()}") from None
    if not low <= value <= high:
        raise ConfigError(key, raw, f"Not a number of type {kind.upper()}")
    return value


def _parse_double(key: str, raw: Any) -> float:
    try:
        return float(str(raw).strip()) if not isinstance(raw, (int, float)) else float(raw)
    except ValueError:
        raise ConfigError(key, raw, "Not a number of type DOUBLE") from None


# String.trim's blanks: U+0000..U+0020, not Unicode whitespace (a password may end in U+00A0).
_JAVA_BLANKS = "".join(chr(code) for code in range(0x21))


def _parse_password(key: str, raw: Any) -> str | None:
    """ConfigDef.parseType's PASSWORD: trimmed, as Kafka trims every string value."""
    return None if raw is None else str(raw).strip(_JAVA_BLANKS)


def _parse_list(key: str, raw: Any) -> list[str]:
    if isinstance(raw, (list, tuple)):
        return [str(item).strip() for item in raw]
    text = str(raw).strip()
    return [] if not text else [item.strip() for item in text.split(",")]


PARSERS: dict[str, Callable[[str, Any], Any]] = {
    "boolean": _parse_bool,
    "int": lambda key, raw: _parse_integer(key, raw, INT32_MIN, INT32_MAX, "int"),
    "long": lambda key, raw: _parse_integer(key, raw, INT64_MIN, INT64_MAX, "long"),
    "short": lambda key, raw: _parse_integer(key, raw, -(2**15), 2**15 - 1, "short"),
    "double": _parse_double,
    "string": lambda key, raw: None if raw is None else str(raw).strip(),
    "list": _parse_list,
    "password": _parse_password,
}


# Validators take (key, typed value) and raise ConfigError.
Validator = Callable[[str, Any], None]


def at_least(minimum: float) -> Validator:
    def check(key: str, value: Any) -> None:
        if value is not None and value < minimum:
            raise ConfigError(key, value, f"Value must be at least {minimum}")
    return check


def between(low: float, high: float) -> Validator:
    def check(key: str, value: Any) -> None:
        if value is not None and not low <= value <= high:
            raise ConfigError(key, value, f"Value must be no less than {low} and no more than {high}")
    return check


def one_of(*allowed: str, case_sensitive: bool = True) -> Validator:
    def check(key: str, value: Any) -> None:
        if value is None:
            return
        candidates = allowed if case_sensitive else tuple(a.lower() for a in allowed)
        probe = value if case_sensitive else str(value).lower()
        if probe not in candidates:
            raise ConfigError(key, value, f"String must be one of: {', '.join(allowed)}")
    return check


def each_of(*allowed: str, non_empty: bool = False) -> Validator:
    """ConfigDef.ValidList.in: no value twice, none empty, each one of `allowed`."""
    def check(key: str, value: Any) -> None:
        if non_empty and not value:
            raise ConfigError(key, value, "The list must not be empty")
        if value and len(set(value)) != len(value):
            raise ConfigError(key, value, "", f"Configuration '{key}' values must not be duplicated.")
        for item in value or ():
            if item == "":
                raise ConfigError(key, value, "", f"Configuration '{key}' values must not be empty.")
            if item not in allowed:
                raise ConfigError(key, item, f"String must be one of: {', '.join(allowed)}")
    return check


@dataclasses.dataclass(frozen=True, slots=True)
class ConfigKey:
    name: str
    type: str
    default: Any
    validator: Validator | None = None
    doc: str = ""

    def parse(self, raw: Any) -> Any:
        if raw is None:
            value = None
        else:
            value = PARSERS[self.type](self.name, raw)
        if self.validator is not None:
            self.validator(self.name, value)
        return value


class ConfigDef:
    """An ordered set of ConfigKeys."""

    def __init__(self, keys: Iterable[ConfigKey] = ()) -> None:
        self.keys: dict[str, ConfigKey] = {}
        for key in keys:
            self.define(key)

    def define(self, key: ConfigKey) -> ConfigDef:
        assert key.type in PARSERS, key.type
        assert key.name not in self.keys, f"duplicate config key {key.name}"
        self.keys[key.name] = key
        return self

    def __contains__(self, name: object) -> bool:
        return name in self.keys

    def parse(self, props: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """Typed values for every defined key, and the names of unknown keys."""
        values: dict[str, Any] = {}
        for name, key in self.keys.items():
            if name in props:
                values[name] = key.parse(props[name])
            elif key.default is NO_DEFAULT:
                raise ConfigError(name, None, "Missing required configuration which has no default value")
            else:
                values[name] = key.default
        unknown = [name for name in props if name not in self.keys]
        return values, unknown
