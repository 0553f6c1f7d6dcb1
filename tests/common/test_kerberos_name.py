"""Kerberos principals' short names: Kafka's KerberosNameTest and KerberosRuleTest cases, the
differences of Java's regexes and replacements from Python's, and all of it checked against
kafka-clients' own KerberosShortNamer; the default realm read from a krb5.conf."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from franz.common.kerberos_name import (BadFormatString, KerberosName, KerberosRule, KerberosShortNamer,
                                        NoMatchingRule, default_realm)

REPOSITORY = Path(__file__).resolve().parents[2]
APP_RULES = ["RULE:[1:$1](App\\..*)s/App\\.(.*)/$1/g", "RULE:[2:$1](App\\..*)s/App\\.(.*)/$1/g", "DEFAULT"]
CASE_RULES = ["RULE:[1:$1]/{0}", "RULE:[2:$1](Test.*)s/ABC///{0}", "RULE:[2:$1](ABC.*)s/ABC/XYZ/g/{0}",
              "RULE:[2:$1](App\\..*)s/App\\.(.*)/$1/g/{0}", "RULE:[2:$1]/{0}", "DEFAULT"]


def short_name(rules: list[str] | None, name: str, realm: str = "REALM.COM") -> str:
    return KerberosShortNamer.from_unparsed_rules(realm, rules).short_name(KerberosName.parse(name))


PARSED = [  # KerberosNameTest.testParse
    ("App.service-name/example.com@REALM.COM", "App.service-name", "example.com", "REALM.COM", "service-name"),
    ("App.service-name@REALM.COM", "App.service-name", None, "REALM.COM", "service-name"),
    ("user/host@REALM.COM", "user", "host", "REALM.COM", "user"),
]


@pytest.mark.parametrize("name, service, host, realm, short", PARSED)
def test_parse(name, service, host, realm, short):
    parsed = KerberosName.parse(name)
    assert (parsed.service_name, parsed.host_name, parsed.realm) == (service, host, realm)
    assert str(parsed) == name
    assert short_name(APP_RULES, name) == short


CASED = [  # KerberosNameTest.testToLowerCase and testToUpperCase
    ("User@REALM.COM", "user", "USER"),
    ("TestABC/host@FOO.COM", "test", "TEST"),
    ("ABC_User_ABC/host@FOO.COM", "xyz_user_xyz", "XYZ_USER_XYZ"),
    ("App.SERVICE-name/example.com@REALM.COM", "service-name", "SERVICE-NAME"),
    ("User/root@REALM.COM", "user", "USER"),
]


@pytest.mark.parametrize("name, lower, upper", CASED)
def test_to_lower_and_upper_case(name, lower, upper):
    assert short_name([rule.format("L") for rule in CASE_RULES], name) == lower
    assert short_name([rule.format("U") for rule in CASE_RULES], name) == upper


INVALID_RULES = [  # KerberosNameTest.testInvalidRules, with Kafka's messages
    ("default", "Invalid rule: default"),
    ("DEFAUL", "Invalid rule: DEFAUL"),
    ("DEFAULT/L", "Invalid rule: `DEFAULT/L`, unmatched substring: `/L`"),
    ("DEFAULT/g", "Invalid rule: `DEFAULT/g`, unmatched substring: `/g`"),
    ("rule:[1:$1]", "Invalid rule: rule:[1:$1]"),
    ("rule:[1:$1]/L/U", "Invalid rule: rule:[1:$1]/L/U"),
    ("rule:[1:$1]/U/L", "Invalid rule: rule:[1:$1]/U/L"),
    ("rule:[1:$1]/LU", "Invalid rule: rule:[1:$1]/LU"),
    ("RULE:[1:$1/L", "Invalid rule: RULE:[1:$1/L"),
    ("RULE:[1:$1]/l", "Invalid rule: `RULE:[1:$1]/l`, unmatched substring: `l`"),
    ("RULE:[2:$1](ABC.*)s/ABC/XYZ/L/g", "Invalid rule: `RULE:[2:$1](ABC.*)s/ABC/XYZ/L/g`, unmatched substring: `/g`"),
    (" DEFAULT", "Invalid rule:  DEFAULT"),  # the config's list trims its items; the rules are not trimmed again
    ("RULE:[:$1]", 'For input string: ""'),  # Integer.parseInt's NumberFormatException
    ("RULE:[2147483648:$1]", 'For input string: "2147483648"'),
]


@pytest.mark.parametrize("rule, message", INVALID_RULES)
def test_invalid_rules(rule, message):
    with pytest.raises(ValueError) as raised:
        KerberosShortNamer.from_unparsed_rules("REALM.COM", [rule])
    assert str(raised.value) == message


def test_a_regex_java_refuses_is_refused():
    with pytest.raises(ValueError, match="Illegal repetition"):
        KerberosShortNamer.from_unparsed_rules("REALM.COM", ["RULE:[1:$1](a{)"])


def test_replace_parameters():  # KerberosRuleTest.testReplaceParameters
    many = ["too", "many", "parameters", "are", "ok"]
    assert KerberosRule.replace_parameters("", []) == ""
    assert KerberosRule.replace_parameters("hello", []) == "hello"
    assert KerberosRule.replace_parameters("", many) == ""
    assert KerberosRule.replace_parameters("hello", many) == "hello"
    assert KerberosRule.replace_parameters("hello $0", many) == "hello too"
    assert KerberosRule.replace_parameters("hello $0", ["no recursion $1"]) == "hello no recursion $1"
    with pytest.raises(BadFormatString, match=r"^index 0 from \$0 is outside of the valid range 0 to -1$"):
        KerberosRule.replace_parameters("$0", [])
    with pytest.raises(BadFormatString, match="^bad format in username mapping in $"):
        KerberosRule.replace_parameters("hello $a", ["does not matter"])
    with pytest.raises(BadFormatString, match="^bad format in username mapping in 2147483648$"):
        KerberosRule.replace_parameters("$2147483648", ["x"])
    assert KerberosRule.replace_parameters("$01-$1", ["a", "b"]) == "b-b"  # Integer.parseInt("01") is 1
    with pytest.raises(BadFormatString, match="^bad format in username mapping in $"):
        KerberosRule.replace_parameters("$0$", ["a"])  # a lone $ at the end too


NAME_EDGES = [
    ("alice", "alice", None, None),
    ("a/b", "a/b", None, None),  # without @ it is all service name
    ("@REALM.COM", "", None, "REALM.COM"),
    ("/@", "", "", ""),
]
MALFORMED_NAMES = ["a/b/c@REALM.COM", "a@b@REALM.COM", "a@REALM/COM"]


@pytest.mark.parametrize("name, service, host, realm", NAME_EDGES)
def test_parse_edges(name, service, host, realm):
    parsed = KerberosName.parse(name)
    assert (parsed.service_name, parsed.host_name, parsed.realm) == (service, host, realm)
    assert str(parsed) == name


@pytest.mark.parametrize("name", MALFORMED_NAMES)
def test_a_malformed_name_is_refused(name):
    with pytest.raises(ValueError) as raised:
        KerberosName.parse(name)
    assert str(raised.value) == "Malformed Kerberos name: " + name


def test_a_name_needs_a_service_name():
    with pytest.raises(ValueError, match="^serviceName must not be null$"):
        KerberosName(None, "host", "REALM.COM")


def test_a_name_without_realm_is_its_own_short_name():
    assert short_name([], "a/b") == "a/b"  # no rule is asked, not even for the slash


def test_no_rules_mean_default():
    assert short_name(None, "kafka/broker1@REALM.COM") == "kafka"
    with pytest.raises(NoMatchingRule):
        short_name(None, "kafka/broker1@OTHER.COM")


def test_no_matching_rule_names_the_rules_as_kafka_prints_them():
    rules = ["RULE:[01:$1@$0](.*@FOO)s/@.*//", "RULE:[2:$1]/L", "RULE:[1:x]()", "DEFAULT"]
    with pytest.raises(NoMatchingRule) as raised:
        short_name(rules, "alice@OTHER.COM")
    assert str(raised.value) == ("No rules apply to alice@OTHER.COM, rules [RULE:[1:$1@$0](.*@FOO)s/@.*//, "
                                 "RULE:[2:$1]/L, RULE:[1:x](), DEFAULT]")


def test_a_rule_giving_a_non_simple_name_fails():
    with pytest.raises(NoMatchingRule) as raised:
        short_name(["RULE:[2:$1@$0]/L", "DEFAULT"], "Kafka/host@REALM.COM")
    assert str(raised.value) == "Non-simple name Kafka@REALM.COM after auth_to_local rule RULE:[2:$1@$0]/L"


def test_a_format_naming_a_missing_component_fails():
    with pytest.raises(BadFormatString, match=r"^index 2 from x\$2 is outside of the valid range 0 to 1$"):
        short_name(["RULE:[1:x$2]"], "alice@REALM.COM")


JAVA_SYNTAX = [
    (r"RULE:[2:$1-$2@$0](.*@REALM\.COM)s/(.*)-(.*)@.*/$2_$1/", "kafka/host@REALM.COM", "host_kafka"),
    (r"RULE:[1:$1](a.*)s/(a)/\1/", "aaa@R", "1aa"),  # \1 is a quoted 1 in Java, group 1 in Python
    ("RULE:[1:$1](a.*)s/(a)/$10/", "ab@R", "a0b"),  # group 1, then 0: there is no group 10
    ("RULE:[1:$1]s/a/b/", "aaa@R", "baa"),  # without g only the first
    ("RULE:[1:$1]s/a/b/g", "aaa@R", "bbb"),
    ("RULE:[1:$1]s/x*/-/g", "ab@R", "-a-b-"),
    (r"RULE:[1:$1](\Q.\E.*)s/\Q.\E//", ".svc@R", "svc"),  # Java's \Q...\E quoting
    ("RULE:[1:$1](a*+)", "aa@R", "aa"),  # a possessive quantifier
    ("RULE:[1:$1](.*)s/(?<first>.)/${first}${first}/L", "Bob@R", "bbob"),
    ("RULE:[1:$1]()", "@R", ""),  # an empty match regex matches only an empty name
    ("RULE:[1:$1]s///", "a@R", "a"),
    ("RULE:[1:$1]/L", "ÅSA@R", "åsa"),
    ("RULE:[1:$1]/U", "straße@R", "STRASSE"),
]


@pytest.mark.parametrize("rule, name, short", JAVA_SYNTAX)
def test_java_regexes_and_replacements(rule, name, short):
    assert short_name([rule], name) == short


@pytest.mark.parametrize("rule", ["DEFAULT", "RULE:[2:$1@$0](.*@FOO)s/@.*//g/U", "RULE:[1:$1]/L",
                                  "RULE:[1:$1](x)", "RULE:[3:$2]s/a/b/"])
def test_rules_print_as_written(rule):
    namer = KerberosShortNamer.from_unparsed_rules("R", [rule])
    assert str(namer) == f"KerberosShortNamer(principalToLocalRules = [{rule}])"


def realm_with(config: Path) -> str:
    """default_realm() in a process of its own, whose environment names the krb5.conf."""
    environment = dict(os.environ, KRB5_CONFIG=str(config))
    done = subprocess.run([sys.executable, "-c", "from franz.common.kerberos_name import default_realm; "
                           "print(f'[{default_realm()}]')"], cwd=REPOSITORY, env=environment, check=True,
                          capture_output=True, text=True, timeout=60)
    return done.stdout.strip().removeprefix("[").removesuffix("]")


KRB5_CONF = "[libdefaults]\n    dns_lookup_realm = false\n    dns_fallback = false\n"


def test_the_default_realm_is_the_krb5_conf_s(tmp_path):
    pytest.importorskip("gssapi")
    (tmp_path / "with.conf").write_text(KRB5_CONF + "    default_realm = EXAMPLE.COM\n")
    (tmp_path / "without.conf").write_text(KRB5_CONF)
    assert realm_with(tmp_path / "with.conf") == "EXAMPLE.COM"
    assert realm_with(tmp_path / "without.conf") == ""
    assert realm_with(tmp_path / "missing.conf") == ""


def test_no_default_realm_without_gssapi(monkeypatch):
    monkeypatch.setitem(sys.modules, "gssapi", None)  # import gssapi raises ImportError
    assert default_realm() == ""


ORACLE = Path(__file__).parent / "java" / "KerberosShortNameOracle.java"
NO_MATCH_RULES = ["RULE:[01:$1@$0](.*@FOO)s/@.*//", "RULE:[2:$1]/L", "RULE:[1:x]()", "DEFAULT"]
# Failures of every kind, beyond the tables above: (rules, principal)
FAILURES = [
    (NO_MATCH_RULES, "alice@OTHER.COM"),
    (["RULE:[2:$1@$0]/L", "DEFAULT"], "Kafka/host@REALM.COM"),
    (["RULE:[1:x$2]"], "alice@REALM.COM"),
    (["RULE:[1:$1$]"], "alice@REALM.COM"),
    (["RULE:[1:$2147483648]"], "alice@REALM.COM"),
    (["RULE:[1:$1]s/(a)/$2/"], "alice@REALM.COM"),  # a group the pattern lacks
    (["RULE:[1:$1]s/(a)/\\/"], "alice@REALM.COM"),  # a backslash quoting nothing
    (["RULE:[1:$1]s/(a)/${x}/"], "alice@REALM.COM"),
    (["RULE:[1:$1]s/z/$/"], "alice@REALM.COM"),  # no match: the replacement is not read
    (["RULE:[1:$1](a{)"], "alice@REALM.COM"),
    (["RULE:[1:$1]s/(?P<x>a)//"], "alice@REALM.COM"),
    ([], "alice@REALM.COM"),
    (["DEFAULT"], "kafka/host@REALM.COM"),
    (["DEFAULT"], "a/b"),
]
# Java's exceptions that are ValueError here; PatternSyntaxException's message is Java's own words.
JAVA_VALUE_ERRORS = {"IllegalArgumentException", "NumberFormatException", "IndexOutOfBoundsException",
                     "PatternSyntaxException"}


def oracle_cases() -> list[tuple[list[str], str]]:
    cases = [(APP_RULES, name) for name, *_ in PARSED]
    cases += [([rule.format(case) for rule in CASE_RULES], name) for name, *_ in CASED for case in "LU"]
    cases += [([rule], "alice@REALM.COM") for rule, _ in INVALID_RULES]
    cases += [(["RULE:[1:$1]", "RULE:[2:$1]", "DEFAULT"], name) for name, *_ in NAME_EDGES]
    cases += [(["DEFAULT"], name) for name in MALFORMED_NAMES]
    cases += [([rule], name) for rule, name, _ in JAVA_SYNTAX]
    return cases + FAILURES


def ours(rules: list[str], name: str) -> tuple[str, str]:
    """(kind, text): ("=", the short name) or (the exception's class name, its message)."""
    try:
        return "=", short_name(rules, name)
    except ValueError as exc:
        return type(exc).__name__, str(exc)


@pytest.mark.interop
def test_short_names_are_kafkas(tmp_path):
    """Every case of this file through kafka-clients 4.3.0's KerberosShortNamer, in one JVM."""
    from tests.support.java_client import compile_driver_or_skip  # noqa: PLC0415 - only for this test

    cases = oracle_cases()
    (tmp_path / "cases").write_text("".join("".join(f"R {rule}\n" for rule in rules) + f"N {name}\n"
                                            for rules, name in cases), encoding="utf-8")
    done = subprocess.run(compile_driver_or_skip(ORACLE) + [str(tmp_path / "cases")], capture_output=True,
                          encoding="utf-8", timeout=600, check=True)
    results = done.stdout.splitlines()
    assert len(results) == len(cases)
    for (rules, name), kafka in zip(cases, results):
        kind, text = ours(rules, name)
        if kafka.startswith("="):
            assert (kind, text) == ("=", kafka[1:]), (rules, name)
            continue
        java_class, _, message = kafka[1:].partition(": ")
        expected_class = "ValueError" if java_class in JAVA_VALUE_ERRORS else java_class
        assert kind == expected_class, (rules, name, kafka)
        if java_class != "PatternSyntaxException":
            assert text == message, (rules, name)


@pytest.mark.interop
def test_the_default_realm_is_kafkas(tmp_path):
    """SaslChannelBuilder's default realm from the same krb5.conf (java.security.krb5.conf for Java)."""
    pytest.importorskip("gssapi")
    from tests.support.java_client import compile_driver_or_skip  # noqa: PLC0415 - only for this test

    command = compile_driver_or_skip(ORACLE)
    (tmp_path / "with.conf").write_text(KRB5_CONF + "    default_realm = EXAMPLE.COM\n")
    (tmp_path / "without.conf").write_text(KRB5_CONF)
    for config in ("with.conf", "without.conf"):
        path = tmp_path / config
        done = subprocess.run(command[:1] + [f"-Djava.security.krb5.conf={path}"] + command[1:] + ["realm"],
                              capture_output=True, text=True, timeout=600, check=True)
        assert done.stdout.strip() == f"[{realm_with(path)}]", config
