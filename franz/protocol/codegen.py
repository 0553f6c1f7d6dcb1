"""Compile message schemas into Python decoders and encoders (Kafka's MessageDataGenerator).

Each (API, version, request|response) gets a straight-line decoder and encoder,
generated as Python source and compiled once on first use: no per-field
interpretation at run time, consecutive fixed-width fields read or written by
one precompiled struct call. Messages are plain dicts keyed by the schema's
snake_case field names; a decoder fills every field of the schema (fields
absent in the version read as their default), an encoder reads missing keys as
their default.

Wire rules, from Kafka's protocol guide and generated code:
- Non-flexible versions: string = int16 length (-1 null); bytes and records =
  int32 length (-1 null); array = int32 count (-1 null).
- Flexible versions: the compact forms, uvarint(length + 1) with 0 = null, and
  every struct ends with tagged fields: uvarint count, then per field uvarint
  tag, uvarint size, data. Unknown tags are skipped, as Kafka requires.
- A nullable struct (not array) is an int8 marker, -1 null or 1 present.
- uuid is 16 raw bytes; bool one byte, non-zero true.

Records fields decode to a memoryview over the request buffer (no copy). To
encode, a records value may be bytes-like, a file region (an object with
`fileno()`, `position`, `size`: sent with sendfile by the network layer) or a
list of those; the encoder output is then a list of chunks in which file
regions stand between byte runs.

Decoding bounds every length and count by the bytes that remain, so a hostile
frame cannot make the decoder allocate or loop beyond its own size; any
malformed input raises MessageDecodeError.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any, Final

from franz.protocol.schema import ApiSchema, Field

# The longest string Kafka's generated readers accept (an int16 length's range, also in compact form).
STRING_LENGTH_MAX: Final = 0x7FFF
_FIXED_FORMATS: Final = {
    "bool": "?", "int8": "b", "int16": "h", "int32": "i", "int64": "q",
    "uint16": "H", "uint32": "I", "float64": "d", "uuid": "16s",
}
_I8: Final = struct.Struct(">b")
_I16: Final = struct.Struct(">h")
_I32: Final = struct.Struct(">i")


class MessageDecodeError(ValueError):
    """A message body that does not parse under its schema version."""


def java_int(value: int) -> int:
    """A varint's value as Kafka's readers hold it (ByteUtils.readUnsignedVarint returns an int):
    the low 32 bits, signed."""
    value &= 0xFFFFFFFF
    return value - 0x100000000 if value > 0x7FFFFFFF else value


def read_uvarint(buf: Any, pos: int) -> tuple[int, int]:
    byte = buf[pos]
    if byte < 0x80:
        return byte, pos + 1
    value = byte & 0x7F
    shift = 7
    while True:
        pos += 1
        byte = buf[pos]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, pos + 1
        shift += 7
        if shift > 28:
            raise MessageDecodeError("unsigned varint longer than 5 bytes")


_SMALL_UVARINTS: Final = [bytes((value,)) for value in range(128)]


def uvarint_bytes(value: int) -> bytes:
    if value < 128:
        return _SMALL_UVARINTS[value]
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _fail(message: str) -> None:
    raise MessageDecodeError(message)


def _region_size(value: Any) -> int:
    if isinstance(value, (list, tuple)):
        return sum(_region_size(part) for part in value)
    if isinstance(value, memoryview):
        return value.nbytes
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    return value.size


def _append_records(value: Any, chunks: list) -> bytearray:
    """Put a records value after the current byte run; return the new run."""
    parts = value if isinstance(value, (list, tuple)) else (value,)
    out: bytearray = chunks[-1]
    for part in parts:
        if isinstance(part, (bytes, bytearray, memoryview)):
            out += part
        else:
            chunks.append(part)
            out = bytearray()
            chunks.append(out)
    return out


_RUNTIME: Final = {
    "_uv": read_uvarint, "_uvb": uvarint_bytes, "_jint": java_int, "_fail": _fail, "_I8": _I8, "_I16": _I16,
    "_I32": _I32, "_region_size": _region_size, "_append_records": _append_records,
    "_struct": struct,
}


def struct_default(fields: tuple[Field, ...]) -> dict[str, Any]:
    """A struct with every field at its default (nested structs too)."""
    result: dict[str, Any] = {}
    for field in fields:
        if field.type == "{}" and field.nullable is None:
            result[field.name] = struct_default(field.fields)
        elif isinstance(field.default, list):
            result[field.name] = []
        else:
            result[field.name] = field.default
    return result


def _contains_records(fields: tuple[Field, ...]) -> bool:
    return any(field.type == "records" or (field.is_struct and _contains_records(field.fields))
               for field in fields)


class _Generator:
    """Emits the source of one decoder or encoder family; one instance per message version."""

    def __init__(self, version: int, flexible: bool) -> None:
        self.version = version
        self.flexible = flexible
        self.lines: list[str] = []
        self.names: dict[str, Any] = dict(_RUNTIME)
        self.counter = 0

    def _name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def _const(self, value: Any) -> str:
        name = self._name("_c")
        self.names[name] = value
        return name

    # -- decoding ------------------------------------------------------------

    def decoder(self, fields: tuple[Field, ...]) -> str:
        """Emit a function (buf, pos) -> (dict, pos) for a struct; return its name."""
        present = [f for f in fields if f.present_in(self.version)]
        body: list[str] = ["    d = {}"]
        for field in fields:
            if not field.present_in(self.version) or (field.tag is not None and self.flexible):
                body.append(f"    d[{field.name!r}] = {self._default_expr(field)}")
        run: list[Field] = []
        for field in present:
            if field.tag is not None:
                if not self.flexible:
                    # A tagged field has no place in a non-flexible version.
                    body.append(f"    d[{field.name!r}] = {self._default_expr(field)}")
                continue
            if field.type in _FIXED_FORMATS:
                run.append(field)
                continue
            self._flush_fixed_read(run, body)
            run = []
            body.extend(self._read_value(field, f"d[{field.name!r}]", "    "))
        self._flush_fixed_read(run, body)
        if self.flexible:
            other_versions = sorted({f.tag for f in fields if f.tag is not None and not f.present_in(self.version)})
            body.extend(self._read_tags([f for f in present if f.tag is not None], other_versions))
        body.append("    return d, pos")
        name = self._name("_dec")
        self.lines.append(f"def {name}(buf, pos):")
        self.lines.extend(body)
        return name

    def _default_expr(self, field: Field) -> str:
        """An expression giving a fresh default value of the field."""
        if field.type == "{}" and field.nullable is None:
            return f"{self._const(lambda: struct_default(field.fields))}()"
        if isinstance(field.default, list):
            return "[]"
        return self._default_ref(field)

    def _flush_fixed_read(self, run: list[Field], body: list[str]) -> None:
        if not run:
            return
        fmt = struct.Struct(">" + "".join(_FIXED_FORMATS[f.type] for f in run))
        const = self._const(fmt)
        targets = ", ".join(f"d[{f.name!r}]" for f in run)
        body.append(f"    {targets}{',' if len(run) == 1 else ''} = {const}.unpack_from(buf, pos)")
        body.append(f"    pos += {fmt.size}")

    def _read_length(self, field: Field, kind: str, indent: str, var: str) -> list[str]:
        """Read a length or count into `var`; -1 means null."""
        if self.flexible:
            # Kafka's readers: int length = readUnsignedVarint() - 1, in a Java int, so a varint of
            # 2^31 or more reads as a negative length (null), not as a count past the frame.
            return [f"{indent}{var}, pos = _uv(buf, pos)",
                    f"{indent}{var} = ({var} - 1) & 0xFFFFFFFF",
                    f"{indent}if {var} > 0x7FFFFFFF: {var} -= 0x100000000"]
        reader = "_I16" if kind == "string" else "_I32"
        size = 2 if kind == "string" else 4
        return [f"{indent}{var} = {reader}.unpack_from(buf, pos)[0]", f"{indent}pos += {size}"]

    def _null_check(self, field: Field, target: str, indent: str, var: str) -> list[str]:
        if field.nullable_in(self.version):
            return [f"{indent}if {var} < 0:", f"{indent}    {target} = None"]
        return [f"{indent}if {var} < 0:",
                f"{indent}    _fail('non-nullable field {field.name} is null')"]

    def _read_value(self, field: Field, target: str, indent: str) -> list[str]:
        kind = field.type
        out: list[str] = []
        if kind in _FIXED_FORMATS:
            fmt = self._const(struct.Struct(">" + _FIXED_FORMATS[kind]))
            out.append(f"{indent}{target} = {fmt}.unpack_from(buf, pos)[0]")
            out.append(f"{indent}pos += {struct.calcsize('>' + _FIXED_FORMATS[kind])}")
            return out
        if kind in ("string", "bytes", "records"):
            out.extend(self._read_length(field, kind, indent, "n"))
            out.extend(self._null_check(field, target, indent, "n"))
            if kind == "string":  # Kafka's parsers refuse a longer one, even in a compact string
                out.append(f"{indent}elif n > {STRING_LENGTH_MAX:#x}:")
                out.append(f"{indent}    _fail(f'string field {field.name} had invalid length {{n}}')")
            out.append(f"{indent}else:")
            out.append(f"{indent}    if pos + n > len(buf): _fail('field {field.name} runs past the end')")
            if kind == "string":
                # Java's new String(bytes, UTF_8): malformed bytes become U+FFFD, never an error.
                out.append(f"{indent}    {target} = str(buf[pos:pos + n], 'utf-8', 'replace')")
            elif kind == "bytes":
                out.append(f"{indent}    {target} = bytes(buf[pos:pos + n])")
            else:
                out.append(f"{indent}    {target} = memoryview(buf)[pos:pos + n]")
            out.append(f"{indent}    pos += n")
            return out
        if kind == "{}":
            child = self.decoder(field.fields)
            if field.nullable_in(self.version):
                out.append(f"{indent}if _I8.unpack_from(buf, pos)[0] < 0:")
                out.append(f"{indent}    {target} = None")
                out.append(f"{indent}    pos += 1")
                out.append(f"{indent}else:")
                out.append(f"{indent}    {target}, pos = {child}(buf, pos + 1)")
            else:
                out.append(f"{indent}{target}, pos = {child}(buf, pos)")
            return out
        # Arrays.
        out.extend(self._read_length(field, "array", indent, "n"))
        out.extend(self._null_check(field, target, indent, "n"))
        out.append(f"{indent}else:")
        out.append(f"{indent}    if n > len(buf) - pos: _fail('array {field.name} count exceeds the frame')")
        element = field.element_type
        if field.type == "[]":
            child = self.decoder(field.fields)
            out.append(f"{indent}    items = []")
            out.append(f"{indent}    for _ in range(n):")
            out.append(f"{indent}        item, pos = {child}(buf, pos)")
            out.append(f"{indent}        items.append(item)")
            out.append(f"{indent}    {target} = items")
        elif element in _FIXED_FORMATS and element != "uuid":
            code = _FIXED_FORMATS[element]
            size = struct.calcsize(">" + code)
            out.append(f"{indent}    {target} = list(_struct.unpack_from('>%d{code}' % n, buf, pos))")
            out.append(f"{indent}    pos += n * {size}")
        else:
            element_field = Field(field.name, element, field.versions, None, None, None)
            out.append(f"{indent}    items = []")
            out.append(f"{indent}    for _ in range(n):")
            out.extend(self._read_value(element_field, "item", indent + "        "))
            out.append(f"{indent}        items.append(item)")
            out.append(f"{indent}    {target} = items")
        return out

    def _read_tags(self, tagged: list[Field], other_versions: list[int]) -> list[str]:
        """Kafka's generated readers: the count, tags and sizes are Java ints (a count of 2^31 or
        more reads no field); a known field is read by its own encoding, its size unused; a tag
        the struct has in other versions only is refused; any other tag is skipped by its size."""
        out = ["    nt, pos = _uv(buf, pos)", "    for _ in range(_jint(nt)):",
               "        tag, pos = _uv(buf, pos)", "        size, pos = _uv(buf, pos)",
               "        tag, size = _jint(tag), _jint(size)"]
        keyword = "if"
        for field in sorted(tagged, key=lambda f: f.tag):
            out.append(f"        {keyword} tag == {field.tag}:")
            out.extend(self._read_value(field, f"d[{field.name!r}]", "            "))
            keyword = "elif"
        if other_versions:
            out.append(f"        {keyword} tag in {tuple(other_versions)!r}:")
            out.append(f"            _fail(f'Tag {{tag}} is not valid for version {self.version}')")
            keyword = "elif"
        indent = "        " if keyword == "if" else "            "
        if keyword != "if":
            out.append("        else:")
        out.append(f"{indent}if size < 0 or pos + size > len(buf): _fail('tagged field runs past the end')")
        out.append(f"{indent}pos += size")
        return out

    # -- encoding ------------------------------------------------------------

    def encoder(self, fields: tuple[Field, ...]) -> str:
        """Emit a function (d, chunks) writing a struct at the end of chunks[-1]."""
        present = [f for f in fields if f.present_in(self.version)]
        body: list[str] = ["    out = chunks[-1]", "    get = d.get"]
        run: list[Field] = []
        for field in present:
            if field.tag is not None:
                continue
            if field.type in _FIXED_FORMATS:
                run.append(field)
                continue
            self._flush_fixed_write(run, body)
            run = []
            body.extend(self._write_value(field, f"get({field.name!r}, {self._default_ref(field)})", "    "))
        self._flush_fixed_write(run, body)
        if self.flexible:
            body.extend(self._write_tags([f for f in present if f.tag is not None]))
        name = self._name("_enc")
        self.lines.append(f"def {name}(d, chunks):")
        self.lines.extend(body)
        return name

    def _default_ref(self, field: Field) -> str:
        """A name or literal for the field's default; shared, so never mutated."""
        if field.type == "{}" and field.nullable is None:
            return self._const(struct_default(field.fields))
        if isinstance(field.default, (int, float, str, bool, type(None))):
            return repr(field.default)
        return self._const(field.default)

    def _flush_fixed_write(self, run: list[Field], body: list[str]) -> None:
        if not run:
            return
        fmt = self._const(struct.Struct(">" + "".join(_FIXED_FORMATS[f.type] for f in run)))
        values = ", ".join(f"get({f.name!r}, {self._default_ref(f)})" for f in run)
        body.append(f"    out += {fmt}.pack({values})")

    def _write_length(self, indent: str, kind: str, expr: str) -> str:
        if self.flexible:
            return f"{indent}out += _uvb({expr} + 1)"
        packer = "_I16" if kind == "string" else "_I32"
        return f"{indent}out += {packer}.pack({expr})"

    def _write_null(self, indent: str, kind: str) -> str:
        if self.flexible:
            return f"{indent}out += b'\\x00'"
        return f"{indent}out += {'_I16' if kind == 'string' else '_I32'}.pack(-1)"

    def _write_value(self, field: Field, expr: str, indent: str) -> list[str]:
        kind = field.type
        out = [f"{indent}v = {expr}"]
        if kind in _FIXED_FORMATS:
            fmt = self._const(struct.Struct(">" + _FIXED_FORMATS[kind]))
            out.append(f"{indent}out += {fmt}.pack(v)")
            return out
        nullable = field.nullable_in(self.version)
        if not nullable and field.is_array:
            # Null arrays exist only in some versions (Metadata topics): elsewhere None means empty.
            out.append(f"{indent}if v is None: v = ()")
        out.append(f"{indent}if v is None:")
        if not nullable:
            out.append(f"{indent}    raise ValueError('field {field.name} is not nullable')")
        elif kind == "{}":
            out.append(f"{indent}    out += b'\\xff'")
        else:
            out.append(self._write_null(indent + "    ", kind))
        out.append(f"{indent}else:")
        inner = indent + "    "
        if kind == "string":
            out.append(f"{inner}b = v.encode('utf-8')")
            # Kafka's writers refuse such a string ("field is too long to be serialized"): no
            # reader would take it.
            out.append(f"{inner}if len(b) > {STRING_LENGTH_MAX:#x}: "
                       f"raise ValueError('field {field.name} is too long to be serialized')")
            out.append(self._write_length(inner, "string", "len(b)"))
            out.append(f"{inner}out += b")
        elif kind == "bytes":
            out.append(self._write_length(inner, "bytes", "len(v)"))
            out.append(f"{inner}out += v")
        elif kind == "records":
            out.append(self._write_length(inner, "records", "_region_size(v)"))
            out.append(f"{inner}out = _append_records(v, chunks)")
        elif kind == "{}":
            child = self.encoder(field.fields)
            if nullable:
                out.append(f"{inner}out += b'\\x01'")
            out.append(f"{inner}{child}(v, chunks)")
            if _contains_records(field.fields):
                out.append(f"{inner}out = chunks[-1]")
        elif kind == "[]":
            child = self.encoder(field.fields)
            out.append(self._write_length(inner, "array", "len(v)"))
            out.append(f"{inner}for item in v:")
            out.append(f"{inner}    {child}(item, chunks)")
            if _contains_records(field.fields):
                out.append(f"{inner}out = chunks[-1]")
        else:
            element = field.element_type
            out.append(self._write_length(inner, "array", "len(v)"))
            if element in _FIXED_FORMATS and element != "uuid":
                out.append(f"{inner}out += _struct.pack('>%d{_FIXED_FORMATS[element]}' % len(v), *v)")
            else:
                element_field = Field(field.name, element, field.versions, None, None, None)
                out.append(f"{inner}for item in v:")
                out.extend(self._write_value(element_field, "item", inner + "    "))
        return out

    def _write_tags(self, tagged: list[Field]) -> list[str]:
        if not tagged:
            return ["    out += b'\\x00'"]
        out = ["    tags = []"]
        for field in sorted(tagged, key=lambda f: f.tag):
            default = self._default_ref(field)
            out.append(f"    tv = get({field.name!r}, {default})")
            out.append(f"    if tv is not None and tv != {default}:")
            out.append("        tchunks = [bytearray()]")
            out.append("        saved, chunks = chunks, tchunks")
            out.append("        out = tchunks[0]")
            out.extend(self._write_value(field, "tv", "        "))
            out.append("        chunks = saved")
            out.append(f"        tags.append(({field.tag}, tchunks[0]))")
        out.append("    out = chunks[-1]")
        out.append("    out += _uvb(len(tags))")
        out.append("    for tag, data in tags:")
        out.append("        out += _uvb(tag)")
        out.append("        out += _uvb(len(data))")
        out.append("        out += data")
        return out


def _build(fields: tuple[Field, ...], version: int, flexible: bool, op: str) -> Callable:
    generator = _Generator(version, flexible)
    entry = generator.decoder(fields) if op == "decode" else generator.encoder(fields)
    source = "\n".join(generator.lines)
    namespace = dict(generator.names)
    exec(compile(source, f"<franz codec v{version} {op}>", "exec"), namespace)  # noqa: S102
    return namespace[entry]


def compile_decoder(fields: tuple[Field, ...], version: int, flexible: bool) -> Callable:
    return _build(fields, version, flexible, "decode")


def compile_encoder(fields: tuple[Field, ...], version: int, flexible: bool) -> Callable:
    return _build(fields, version, flexible, "encode")


class MessageCodec:
    """Decoders and encoders of one API, compiled per version on first use."""

    def __init__(self, schema: ApiSchema) -> None:
        self.schema = schema
        self._cache: dict[tuple[str, str, int], Callable] = {}

    def _get(self, kind: str, op: str, version: int) -> Callable:
        key = (kind, op, version)
        function = self._cache.get(key)
        if function is None:
            fields = self.schema.request if kind == "request" else self.schema.response
            function = _build(fields, version, self.schema.is_flexible(version), op)
            self._cache[key] = function
        return function

    def decode(self, kind: str, version: int, buf: Any, pos: int = 0) -> tuple[dict, int]:
        try:
            return self._get(kind, "decode", version)(buf, pos)
        except MessageDecodeError:
            raise
        except (struct.error, IndexError, UnicodeDecodeError, ValueError) as error:
            raise MessageDecodeError(
                f"malformed {self.schema.name} {kind} v{version}: {error}") from None

    def encode(self, kind: str, version: int, data: dict, chunks: list) -> None:
        """Append the encoding of `data` to `chunks` (whose last item is a bytearray)."""
        self._get(kind, "encode", version)(data, chunks)
