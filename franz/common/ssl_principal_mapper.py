"""The principal of a TLS client that showed a certificate: its subject's distinguished name as
Java's X500Principal.getName() writes it (RFC 2253), mapped by `ssl.principal.mapping.rules`
(Kafka's SslPrincipalMapper; DefaultKafkaPrincipalBuilder makes it `User:<name>`).

The name must be Java's to the byte: it is what quotas and ACLs written for a Kafka cluster name.
So it is written from the certificate's DER subject as sun.security.x509.AVA does, not with
`cryptography`'s RFC 4514 string, which differs in escaping and in attributes without keyword:
- the RDNs from last to first, joined by ",", the attributes of one RDN by "+";
- only CN, C, L, ST, O, OU, STREET, DC and UID by keyword; any other attribute, and a value that
  is not a string type Java prints (UniversalString, say), as OID=#<its DER TLV in lower hex>;
- in values, each of , = + < > # ; " \\ escaped by a backslash, a NUL as \\00, and spaces (and
  carriage returns) leading or trailing escaped.

Rules (`DEFAULT`, or `RULE:pattern/replacement/[LU]`, comma separated) are tried in order; the
first whose pattern matches the whole name gives it, replaced as Java's String.replaceAll
replaces; a name no rule maps fails the connection's authentication.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from cryptography import x509

from franz.common import der
from franz.common.java_regex import java_pattern, java_replace_all

_RULE_PATTERN = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_RULE_SPLITTER = re.compile(r"\s*(" + _RULE_PATTERN + r")\s*(,\s*|$)")
_RULE_PARSER = re.compile(_RULE_PATTERN)
_BACK_REFERENCE = re.compile(r"\$(\d+)")

# X500Name's RFC 2253 keywords (AVAKeyword entries marked RFC 2253 compliant)
_RFC2253_KEYWORDS = {"2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST", "2.5.4.10": "O",
                     "2.5.4.11": "OU", "2.5.4.9": "STREET", "0.9.2342.19200300.100.1.25": "DC",
                     "0.9.2342.19200300.100.1.1": "UID"}
# AVA.isDerString(value, false): the string types printed as text (Printable, T61, IA5, General,
# UTF8, BMP). JDK 17 reads the bytes of each as UTF-8, so a BMPString's "bmp" prints as \00b\00m\00p.
_STRING_TAGS = frozenset({0x13, 0x14, 0x16, 0x1B, 0x0C, 0x1E})
_ESCAPED = ',=+<>#;"\\'


class NoMatchingRule(ValueError):
    pass


def distinguished_name(certificate: x509.Certificate) -> str:
    """X500Principal.getName() of the certificate's subject."""
    name = certificate.subject.public_bytes()
    rdns = der.children(name, der.expect(der.read_tlv(name, 0), der.SEQUENCE))
    written = []
    for rdn in reversed(rdns):
        written.append("+".join(_attribute(name, attribute)
                                for attribute in der.children(name, der.expect(rdn, der.SET))))
    return ",".join(written)


def _attribute(name: bytes, attribute: der.Tlv) -> str:
    kind, value = der.children(name, der.expect(attribute, der.SEQUENCE))[:2]
    dotted = der.oid(name, kind)
    keyword = _RFC2253_KEYWORDS.get(dotted)
    if keyword is None or value.tag not in _STRING_TAGS:
        return f"{keyword or dotted}=#{name[kind.end:value.end].hex()}"  # the value's TLV follows the type's
    text = name[value.start:value.end].decode("utf-8", errors="replace")
    escaped = "".join("\\" + char if char in _ESCAPED else "\\00" if char == "\0" else char for char in text)
    lead = len(escaped) - len(escaped.lstrip(" \r"))
    trail = len(escaped.rstrip(" \r"))
    return keyword + "=" + "".join("\\" + char if index < lead or index >= trail else char
                                   for index, char in enumerate(escaped))


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern | None  # None: DEFAULT
    replacement: str = ""
    to_lower_case: bool = False
    to_upper_case: bool = False

    def apply(self, name: str) -> str | None:
        if self.pattern is None:
            return name
        if self.pattern.fullmatch(name) is None:
            return None
        replacement = _escape_literal_back_references(self.replacement, self.pattern.groups)
        result = java_replace_all(self.pattern, name, replacement)
        if self.to_lower_case:
            return result.lower()
        return result.upper() if self.to_upper_case else result


def _escape_literal_back_references(replacement: str, groups: int) -> str:
    """A `$n` naming a group the pattern lacks stays literal text (shortened first, as Kafka
    shortens $123 to $12 or $1 while that names no group)."""
    if groups == 0:
        return replacement

    def escape(match: re.Match) -> str:
        digits = match[1]
        if digits.startswith("0"):
            return match[0]
        index = int(digits)
        while index > groups and index >= 10:
            index //= 10
        return "\\" + match[0] if index > groups else match[0]
    return _BACK_REFERENCE.sub(escape, replacement)


class SslPrincipalMapper:
    def __init__(self, rules: str | None) -> None:
        """ValueError for a rule that does not parse (IllegalArgumentException in Kafka)."""
        self.rules = [rule for text in self._split(rules) if (rule := self._parse(text)) is not None]

    @staticmethod
    def _split(rules: str | None) -> list[str]:
        return [match[1] for match in _RULE_SPLITTER.finditer((rules if rules is not None else "DEFAULT").strip())]

    @staticmethod
    def _parse(text: str) -> _Rule | None:
        match = _RULE_PARSER.match(text)
        if match.end() != len(text):
            raise ValueError(f"Invalid rule: `{text}`, unmatched substring: `{text[match.end():]}`")
        if match[1] is not None:
            return _Rule(None)
        if match[2] is None:
            return None  # empty rules are ignored
        try:
            pattern = java_pattern(match[2])
        except re.error as exc:
            raise ValueError(f"Invalid rule: `{text}`: {exc}") from None
        return _Rule(pattern, match[4], match[6] == "L", match[6] == "U")

    def name(self, distinguished: str) -> str:
        for rule in self.rules:
            mapped = rule.apply(distinguished)
            if mapped is not None:
                return mapped
        raise NoMatchingRule(f"No rules apply to {distinguished}, rules {self}")

    def __str__(self) -> str:
        texts = []
        for rule in self.rules:
            if rule.pattern is None:
                texts.append("DEFAULT")
            else:
                suffix = "/L" if rule.to_lower_case else "/U" if rule.to_upper_case else ""
                texts.append(f"RULE:{rule.pattern.pattern}/{rule.replacement}{suffix}")
        return "[" + ", ".join(texts) + "]"
