"""Just enough DER (ITU-T X.690) to walk the structures TLS configuration hands franz: a JKS
key entry's EncryptedPrivateKeyInfo and a certificate's subject Name. `cryptography` parses
certificates and keys whole, but keeps neither of these two within reach: a Name attribute's
value as encoded (what X500Principal prints for attributes it has no keyword for) and JKS's
Sun-specific key protection."""

from __future__ import annotations

from typing import NamedTuple

SEQUENCE = 0x30
SET = 0x31
OBJECT_IDENTIFIER = 0x06
OCTET_STRING = 0x04


class Tlv(NamedTuple):
    tag: int
    start: int  # of the value
    end: int  # past the value: the next element's start


def read_tlv(data: bytes, pos: int, end: int | None = None) -> Tlv:
    """The element at `pos` (single-byte tags, definite lengths, as DER has them); ValueError
    when it runs past `end` (the data's end by default)."""
    end = len(data) if end is None else end
    if pos + 2 > end:
        raise ValueError("DER element cut short")
    tag, length = data[pos], data[pos + 1]
    pos += 2
    if length & 0x80:
        count = length & 0x7F
        if count == 0 or count > 4 or pos + count > end:
            raise ValueError("DER length not definite or cut short")
        length = int.from_bytes(data[pos:pos + count], "big")
        pos += count
    if pos + length > end:
        raise ValueError("DER value runs past its container")
    return Tlv(tag, pos, pos + length)


def children(data: bytes, parent: Tlv) -> list[Tlv]:
    """The elements inside a constructed element (a SEQUENCE or a SET)."""
    result, pos = [], parent.start
    while pos < parent.end:
        child = read_tlv(data, pos, parent.end)
        result.append(child)
        pos = child.end
    return result


def expect(element: Tlv, tag: int) -> Tlv:
    if element.tag != tag:
        raise ValueError(f"DER tag 0x{element.tag:02x} where 0x{tag:02x} was expected")
    return element


def oid(data: bytes, element: Tlv) -> str:
    """An OBJECT IDENTIFIER's dotted form."""
    expect(element, OBJECT_IDENTIFIER)
    arcs, value = [], 0
    for byte in data[element.start:element.end]:
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            arcs.append(value)
            value = 0
    if not arcs:
        raise ValueError("empty OBJECT IDENTIFIER")
    first = min(arcs[0] // 40, 2)
    return ".".join(str(arc) for arc in (first, arcs[0] - 40 * first, *arcs[1:]))
