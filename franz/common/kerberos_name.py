"""The short (local) name of a Kerberos principal, as Kafka gives a GSSAPI client's principal
(DefaultKafkaPrincipalBuilder makes it `User:<short name>`): Kafka's KerberosName, KerberosRule
and KerberosShortNamer, ruled by `sasl.kerberos.principal.to.local.rules` (default ["DEFAULT"]).

Rules are Hadoop's auth_to_local rules, tried in order; the first that gives a name wins:
- `DEFAULT`: the first component of a name in the default realm;
- `RULE:[n:format](match)s/from/to/g/L`: for names of n components, `format` with $0 the realm
  and $1.. the components; kept if `match` matches all of it (no `(match)`: always), then `from`
  replaced by `to` (the first match, or every one with `g`), then lower-cased (/L) or upper-cased (/U).
The regexes and `to` are java.util.regex's syntax (franz.common.java_regex).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from franz.common.java_regex import java_pattern, java_replace_all, java_replace_first

_NAME_PARSER = re.compile(r"([^/@]*)(/([^/@]*))?@([^/@]*)")
_PARAMETER = re.compile(r"([^$]*)(\$(\d*))?", re.ASCII)
_NON_SIMPLE = re.compile(r"[/@]")
# Group numbers are Kafka's: 2 DEFAULT, 5 n, 6 format, 8 match, 10 from, 11 to, 12 g, 13 L or U.
_RULE_PARSER = re.compile(r"((DEFAULT)|((RULE:\[(\d*):([^\]]*)](\(([^)]*)\))?(s/([^/]*)/([^/]*)/(g)?)?/?(L|U)?)))",
                          re.ASCII)
_INT_MAX = 2**31 - 1


class NoMatchingRule(ValueError):
    """Kafka's NoMatchingRule: no rule gives the name a short name, or one gives a name with / or @."""


class BadFormatString(ValueError):
    """Kafka's BadFormatString: a rule's format names a component the name lacks, or a bad $."""


@dataclass(frozen=True)
class KerberosName:
    """Kafka's KerberosName: service/host@REALM, host and realm optional."""
    service_name: str
    host_name: str | None = None
    realm: str | None = None

    def __post_init__(self) -> None:
        if self.service_name is None:
            raise ValueError("serviceName must not be null")

    @classmethod
    def parse(cls, principal_name: str) -> KerberosName:
        """ValueError for a name with @ that is not [service][/host]@realm; a name without @ is
        all service name, slashes included."""
        match = _NAME_PARSER.fullmatch(principal_name)
        if match is None:
            if "@" in principal_name:
                raise ValueError("Malformed Kerberos name: " + principal_name)
            return cls(principal_name)
        return cls(match[1], match[3], match[4])

    def __str__(self) -> str:
        host = "" if self.host_name is None else "/" + self.host_name
        realm = "" if self.realm is None else "@" + self.realm
        return self.service_name + host + realm


def _java_int(digits: str) -> int:
    """Integer.parseInt of ASCII digits: ValueError (NumberFormatException) when empty or too large."""
    if not digits or int(digits) > _INT_MAX:
        raise ValueError(f'For input string: "{digits}"')
    return int(digits)


class KerberosRule:
    """Kafka's KerberosRule: DEFAULT, or RULE:[n:format](match)s/from/to/g with /L or /U."""

    def __init__(self, default_realm: str, num_of_components: int | None = None, format_string: str | None = None,
                 match: str | None = None, from_pattern: str | None = None, to_pattern: str | None = None,
                 repeat: bool = False, to_lower_case: bool = False, to_upper_case: bool = False) -> None:
        """DEFAULT without num_of_components; ValueError for a regex Java would refuse."""
        self.default_realm = default_realm
        self.is_default = num_of_components is None
        self.num_of_components = num_of_components
        self.format_string = format_string
        # Java's Pattern.toString() is its source: kept to print the rule as written
        self.match, self.from_pattern, self.to_pattern = match, from_pattern, to_pattern
        self._match = _compiled(match)
        self._from = _compiled(from_pattern)
        self.repeat, self.to_lower_case, self.to_upper_case = repeat, to_lower_case, to_upper_case

    def __str__(self) -> str:
        if self.is_default:
            return "DEFAULT"
        text = f"RULE:[{self.num_of_components}:{self.format_string}]"
        if self.match is not None:
            text += f"({self.match})"
        if self.from_pattern is not None:
            text += f"s/{self.from_pattern}/{self.to_pattern}/" + ("g" if self.repeat else "")
        if self.to_lower_case:
            text += "/L"
        if self.to_upper_case:
            text += "/U"
        return text

    __repr__ = __str__  # the rules print in NoMatchingRule's message as Java's List.toString prints them

    @staticmethod
    def replace_parameters(format_string: str, params: list[str]) -> str:
        """`format_string` with each $n replaced by params[n] (the replacements are not read again)."""
        out, start = [], 0
        while start < len(format_string):
            match = _PARAMETER.match(format_string, start)  # never empty: it takes a character or a $
            out.append(match[1])
            digits = match[3]
            if digits is not None:
                try:
                    number = _java_int(digits)
                except ValueError:
                    raise BadFormatString("bad format in username mapping in " + digits) from None
                if number >= len(params):
                    raise BadFormatString(f"index {number} from {format_string} is outside of the valid range 0 to "
                                          f"{len(params) - 1}")
                out.append(params[number])
            start = match.end()
        return "".join(out)

    def apply(self, params: list[str]) -> str | None:
        """The short name for params ([realm, component, ...]); None when this rule does not apply.
        NoMatchingRule when it gives a name with / or @ (checked before the case is changed)."""
        result = None
        if self.is_default:
            if self.default_realm == params[0]:
                result = params[1]
        elif len(params) - 1 == self.num_of_components:
            base = self.replace_parameters(self.format_string, params)
            if self._match is None or self._match.fullmatch(base):
                if self._from is None:
                    result = base
                elif self.repeat:
                    result = java_replace_all(self._from, base, self.to_pattern)
                else:
                    result = java_replace_first(self._from, base, self.to_pattern)
        if result is not None and _NON_SIMPLE.search(result):
            raise NoMatchingRule(f"Non-simple name {result} after auth_to_local rule {self}")
        if result is not None and self.to_lower_case:
            return result.lower()
        if result is not None and self.to_upper_case:
            return result.upper()
        return result


def _compiled(regex: str | None) -> re.Pattern | None:
    if regex is None:
        return None
    try:
        return java_pattern(regex)
    except re.error as exc:  # PatternSyntaxException in Kafka, whose message Python's re cannot match
        raise ValueError(str(exc)) from None


class KerberosShortNamer:
    """Kafka's KerberosShortNamer: a principal's short name by the first rule that gives one."""

    def __init__(self, rules: list[KerberosRule]) -> None:
        self.rules = rules

    @classmethod
    def from_unparsed_rules(cls, default_realm: str, rules: list[str] | None) -> KerberosShortNamer:
        """ValueError for a rule that does not parse, in Kafka's words."""
        return cls([_parse_rule(default_realm, rule) for rule in (rules if rules is not None else ["DEFAULT"])])

    def short_name(self, kerberos_name: KerberosName) -> str:
        """NoMatchingRule when no rule gives one; a name without realm (and host) is its own."""
        if kerberos_name.host_name is None:
            if kerberos_name.realm is None:
                return kerberos_name.service_name
            params = [kerberos_name.realm, kerberos_name.service_name]
        else:
            params = [kerberos_name.realm, kerberos_name.service_name, kerberos_name.host_name]
        for rule in self.rules:
            result = rule.apply(params)
            if result is not None:
                return result
        raise NoMatchingRule(f"No rules apply to {kerberos_name}, rules {self.rules}")

    def __str__(self) -> str:
        return f"KerberosShortNamer(principalToLocalRules = {self.rules})"


def _parse_rule(default_realm: str, rule: str) -> KerberosRule:
    match = _RULE_PARSER.match(rule)  # Matcher.lookingAt: a prefix, the rest is checked below
    if match is None:
        raise ValueError("Invalid rule: " + rule)
    if match.end() != len(rule):
        raise ValueError(f"Invalid rule: `{rule}`, unmatched substring: `{rule[match.end():]}`")
    if match[2] is not None:
        return KerberosRule(default_realm)
    return KerberosRule(default_realm, _java_int(match[5]), match[6], match[8], match[10], match[11],
                        match[12] == "g", match[13] == "L", match[13] == "U")


def default_realm() -> str:
    """SaslChannelBuilder.defaultKerberosRealm: the realm Kerberos gives a name written without one
    (the default_realm of the krb5.conf that KRB5_CONFIG names, /etc/krb5.conf by default, where
    Java reads java.security.krb5.conf); "" when there is none, or without python-gssapi."""
    try:
        import gssapi  # noqa: PLC0415 - optional: only a broker that takes GSSAPI clients needs it
    except ImportError:
        return ""
    try:
        name = gssapi.Name("tmp", gssapi.NameType.user).canonicalize(gssapi.MechType.kerberos)
    except gssapi.exceptions.GSSError:
        return ""
    return str(name).partition("@")[2]
