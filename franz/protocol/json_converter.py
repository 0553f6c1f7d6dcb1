"""Messages as JSON, as the JsonConverter classes Kafka generates from its message specs write
them (generator/JsonConverterGenerator), and that JSON as text, as Jackson writes it.

A message's JSON is its fields in spec order, by their camelCase names, in the version given:
a tagged field only when it is not its default, bytes in base64 (Jackson's BinaryNode), a uuid
in Kafka's Uuid text (URL-safe base64 without padding), records as their size
(`<name>SizeInBytes`, KIP-673) or as an empty byte array. The request log
(franz.server.request_convert_to_json) and `franz dump-log`'s record decoders write through here.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Iterable
from typing import Any, Final

from franz.protocol.schema import Field

_CAMEL_BREAK: Final = re.compile(r"_([a-z0-9])")
# Python writes a control character without a short escape as \u00xx; Jackson's hex digits are
# upper case. An odd run of backslashes before the u is an escape, an even one escaped text.
_LOWER_HEX_ESCAPE: Final = re.compile(r"(?<!\\)((?:\\\\)*)\\u00([0-9a-f]{2})")


def camel_case(name: str) -> str:
    """A snake_case field name in Kafka's camelCase (FieldSpec.camelCaseName)."""
    return _CAMEL_BREAK.sub(lambda match: match.group(1).upper(), name)


def uuid_text(value: bytes) -> str:
    """Uuid.toString: the 16 bytes in URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(bytes(value)).rstrip(b"=").decode("ascii")


def _value(field_type: str, value: Any) -> Any:
    if value is None:
        return None
    if field_type == "uuid":
        return uuid_text(value)
    if field_type == "bytes":
        return base64.b64encode(bytes(value)).decode("ascii")
    if field_type == "float64":
        return float(value)
    if field_type == "string":
        return value
    return int(value) if not isinstance(value, bool) else value


def message_json(fields: Iterable[Field], version: int, data: dict | None,
                 records_size: Callable[[Any], int] | None = None) -> dict:
    """A message (or struct) as Kafka's generated JsonConverter writes it. `data` is the message
    dict the codec reads; a field left out is its default. Records are written as their size,
    by `records_size`, or as JsonConverter's placeholder (an empty byte array) without one."""
    node: dict[str, Any] = {}
    data = data or {}
    for field in fields:
        if not field.present_in(version):
            continue
        value = data.get(field.name, field.default)
        if field.tag is not None and value == field.default:
            continue
        name = camel_case(field.name)
        if field.type == "records":
            if value is None:
                node[name] = None
            elif records_size is None:
                node[name] = ""  # BinaryNode(new byte[]{}), in base64
            else:
                node[name + "SizeInBytes"] = records_size(value)
        elif field.type == "{}":
            node[name] = None if value is None else message_json(field.fields, version, value, records_size)
        elif field.type == "[]":
            node[name] = None if value is None else [message_json(field.fields, version, row, records_size)
                                                     for row in value]
        elif field.is_array:
            node[name] = None if value is None else [_value(field.element_type, item) for item in value]
        else:
            node[name] = _value(field.type, value)
    return node


def json_text(node: Any) -> str:
    """`node.toString()` of Jackson: no spaces, text other than ASCII as it is, control characters
    as \\b \\t \\n \\f \\r or \\u00XX."""
    text = json.dumps(node, separators=(",", ":"), ensure_ascii=False)
    return _LOWER_HEX_ESCAPE.sub(lambda match: f"{match.group(1)}\\u00{match.group(2).upper()}", text)
