"""The message schema language: Kafka's message JSON specs, written down compactly.

Kafka generates its protocol classes from JSON specs
(clients/src/main/resources/common/message/*.json). franz keeps the same facts
in a small indented text form (franz/protocol/messages/*.py) and compiles them
into codecs at import time (codegen.py). One API reads:

    Produce key=0 versions=3-11 flex=9+
     request
        transactional_id string null
        topic_data []
          name string
          partition_data []
            index int32
            records records null

A field line is `name type [versions] [null[=versions]] [tag=N] [default=V]`:

- `type` is a primitive (bool int8 int16 int32 int64 uint16 uint32 float64
  string bytes records uuid), `[]primitive` (array of it), `[]` (array of the
  struct whose fields follow, indented) or `{}` (one struct, fields indented).
- `versions` is `N+`, `N-M` or `N`; absent means every version of the API.
- `null` makes the field nullable in all its versions, `null=V` in V only.
- `tag=N` makes it a tagged field (flexible versions only, written only when it
  differs from its default).
- `default=V` is what an absent or older-version field reads as, and what the
  encoder writes when the caller leaves it out.

Field names are Kafka's, in snake_case. Versions below Kafka 4.x's baseline
(KIP-896) are not written down: franz never serves them.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

PRIMITIVES: Final = frozenset(
    ("bool", "int8", "int16", "int32", "int64", "uint16", "uint32", "float64",
     "string", "bytes", "records", "uuid"))
VERSION_MAX: Final = 0x7FFF


class SchemaError(ValueError):
    """A schema text that does not follow the language above."""


def parse_versions(text: str) -> tuple[int, int]:
    if text.endswith("+"):
        return int(text[:-1]), VERSION_MAX
    low, sep, high = text.partition("-")
    return (int(low), int(high)) if sep else (int(low), int(low))


@dataclasses.dataclass(frozen=True)
class Field:
    name: str
    type: str                      # a primitive, "[]" + primitive, "[]" or "{}"
    versions: tuple[int, int]
    nullable: tuple[int, int] | None
    tag: int | None
    default: Any
    fields: tuple[Field, ...] = ()

    def present_in(self, version: int) -> bool:
        return self.versions[0] <= version <= self.versions[1]

    def nullable_in(self, version: int) -> bool:
        return self.nullable is not None and self.nullable[0] <= version <= self.nullable[1]

    @property
    def is_struct(self) -> bool:
        return self.type in ("[]", "{}")

    @property
    def is_array(self) -> bool:
        return self.type.startswith("[]")

    @property
    def element_type(self) -> str:
        return self.type[2:] if self.is_array else self.type


@dataclasses.dataclass(frozen=True)
class ApiSchema:
    name: str
    api_key: int
    min_version: int
    max_version: int
    flexible_min: int | None       # first flexible version, None if none is
    request: tuple[Field, ...]
    response: tuple[Field, ...]

    def is_flexible(self, version: int) -> bool:
        return self.flexible_min is not None and version >= self.flexible_min


def _default_of(type_name: str, text: str | None) -> Any:
    """Kafka's defaults: empty strings, bytes and arrays unless `default=null`."""
    if text == "null" or type_name == "records":
        return None
    if text is None:
        if type_name.startswith("[]"):
            return []
        if type_name == "{}":
            return None
        if type_name in ("string", "bytes"):
            return "" if type_name == "string" else b""
        if type_name == "bool":
            return False
        if type_name == "uuid":
            return bytes(16)
        if type_name == "float64":
            return 0.0
        return 0
    if type_name == "bool":
        return text == "true"
    if type_name == "string":
        return text
    if type_name == "float64":
        return float(text)
    return int(text, 0)


def _parse_field(line: str, api_versions: tuple[int, int]) -> Field:
    words = line.split()
    if len(words) < 2:
        raise SchemaError(f"field line needs a name and a type: {line!r}")
    name, type_name = words[0], words[1]
    element = type_name[2:] if type_name.startswith("[]") else type_name
    if type_name not in ("[]", "{}") and element not in PRIMITIVES:
        raise SchemaError(f"unknown type {type_name!r} in {line!r}")
    versions = api_versions
    nullable = None
    tag = None
    default_text = None
    for word in words[2:]:
        if word[0].isdigit():
            versions = parse_versions(word)
        elif word == "null":
            nullable = (0, VERSION_MAX)
        elif word.startswith("null="):
            nullable = parse_versions(word[5:])
        elif word.startswith("tag="):
            tag = int(word[4:])
        elif word.startswith("default="):
            default_text = word[8:]
        else:
            raise SchemaError(f"unknown attribute {word!r} in {line!r}")
    default = _default_of(type_name, default_text)
    return Field(name, type_name, versions, nullable, tag, default)


def _parse_block(lines: list[tuple[int, str]], start: int, indent: int,
                 api_versions: tuple[int, int]) -> tuple[tuple[Field, ...], int]:
    fields: list[Field] = []
    index = start
    while index < len(lines):
        depth, text = lines[index]
        if depth < indent:
            break
        if depth > indent:
            raise SchemaError(f"unexpected indentation at {text!r}")
        field = _parse_field(text, api_versions)
        index += 1
        if field.is_struct:
            children, index = _parse_block(lines, index, indent + 2, api_versions)
            if not children:
                raise SchemaError(f"struct field {field.name!r} has no fields")
            field = dataclasses.replace(field, fields=children)
        fields.append(field)
    return tuple(fields), index


def parse_schemas(text: str) -> list[ApiSchema]:
    """Parse every API of one schema text."""
    lines = [(len(raw) - len(raw.lstrip(" ")), raw.strip())
             for raw in text.splitlines() if raw.strip() and not raw.strip().startswith("#")]
    apis: list[ApiSchema] = []
    index = 0
    while index < len(lines):
        depth, head = lines[index]
        if depth != 0:
            raise SchemaError(f"expected an API line, got {head!r}")
        words = head.split()
        attrs = dict(word.split("=", 1) for word in words[1:])
        low, high = parse_versions(attrs["versions"])
        flexible = parse_versions(attrs["flex"])[0] if "flex" in attrs else None
        index += 1
        bodies: dict[str, tuple[Field, ...]] = {}
        for kind in ("request", "response"):
            if index >= len(lines) or lines[index][1] != kind:
                raise SchemaError(f"{words[0]}: expected {kind!r}")
            body_indent = lines[index + 1][0] if index + 1 < len(lines) else 0
            bodies[kind], index = _parse_block(lines, index + 1, max(body_indent, 2), (low, high))
        apis.append(ApiSchema(words[0], int(attrs["key"]), low, high, flexible,
                              bodies["request"], bodies["response"]))
    return apis
