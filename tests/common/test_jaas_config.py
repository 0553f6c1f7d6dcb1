"""JaasConfig's grammar: what Kafka's StreamTokenizer-based parser accepts and refuses, and how; and the JDK's
ConfigFile, which reads a JAAS file's sections with the same tokenizer."""

from __future__ import annotations

import pytest

from franz.common.jaas_config import LoginModuleEntry, parse_jaas_config, parse_jaas_file


def test_entries_with_quoted_and_bare_options_comments_and_escapes():
    text = ('org.apache.kafka.common.security.plain.PlainLoginModule required /* the admin */ username="admin"\n'
            '  password=\'a"b\' user_x-y="p\\tq\\101" // a comment\n ;\n'
            'com.example.Other SUFFICIENT flag=on_$1;')
    assert parse_jaas_config(text) == [
        LoginModuleEntry("org.apache.kafka.common.security.plain.PlainLoginModule", "REQUIRED",
                         {"username": "admin", "password": 'a"b', "user_x-y": "p\tqA"}),
        LoginModuleEntry("com.example.Other", "SUFFICIENT", {"flag": "on_$1"})]


def test_characters_above_latin_1_make_words_and_a_carriage_return_ends_a_comment():
    """StreamTokenizer: every character above U+00FF is a word character; `//` ends at CR or LF."""
    assert parse_jaas_config("a.B required user_j\u00f6rg\u20ac=p\u00e4ss\u4e2d // x\rk=v;") == [
        LoginModuleEntry("a.B", "REQUIRED", {"user_j\u00f6rg\u20ac": "p\u00e4ss\u4e2d", "k": "v"})]


@pytest.mark.parametrize("text, message", [
    ("", "Login module not specified in JAAS config"),
    ("  // only a comment", "Login module not specified in JAAS config"),
    ("a.B", "Login module control flag not specified in JAAS config"),
    ("a.B optionalish;", "Invalid login module control flag 'optionalish' in JAAS config"),
    ("a.B required", "JAAS config entry not terminated by semi-colon"),
    ("a.B required k=v", "JAAS config entry not terminated by semi-colon"),
    ("a.B required k;", "Value not specified for key 'k' in JAAS config"),
    ("a.B required k=;", "Value not specified for key 'k' in JAAS config"),
    ("a.B required k=4096;", "Value not specified for key 'k' in JAAS config"),  # a number has no string value
])
def test_malformed_configs_are_refused_with_kafkas_messages(text, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        parse_jaas_config(text)


# -- a JAAS file, as the JDK's ConfigFile reads it ----------------------------------------------

def _section(body: str) -> str:
    """JaasContextTest.writeConfiguration: a property's text as the body of a file's section."""
    return f"SERVER {{ \n{body}\n}};\n"


@pytest.mark.parametrize("body, entries", [  # JaasContextTest's cases, read from a property and from a file
    ("test.testConfigNoOptions required;", [LoginModuleEntry("test.testConfigNoOptions", "REQUIRED", {})]),
    *((f"test.testControlFlag {flag} propName=propValue;",
       [LoginModuleEntry("test.testControlFlag", flag.upper(), {"propName": "propValue"})])
      for flag in ("required", "Requisite", "SUFFICIENT", "optional")),
    ("test.testMultipleOptions sufficient " + " ".join(f"propName{i}=propValue{i}" for i in range(10)) + ";",
     [LoginModuleEntry("test.testMultipleOptions", "SUFFICIENT",
                       {f"propName{i}": f"propValue{i}" for i in range(10)})]),
    ('test.testQuotedOptionValue required propName="prop value" propName2="value1 = 1, value2 = 2";',
     [LoginModuleEntry("test.testQuotedOptionValue", "REQUIRED",
                       {"propName": "prop value", "propName2": "value1 = 1, value2 = 2"})]),
    ('test.testQuotedOptionName required "prop name"=propValue;',
     [LoginModuleEntry("test.testQuotedOptionName", "REQUIRED", {"prop name": "propValue"})]),
    ('test.testNumericOptionWithQuotes required option1="3";',
     [LoginModuleEntry("test.testNumericOptionWithQuotes", "REQUIRED", {"option1": "3"})]),
    # testMultipleLoginModules
    (" ".join(f"test.Module{i} required index=Index{i} module=Module{i};" for i in range(3)),
     [LoginModuleEntry(f"test.Module{i}", "REQUIRED", {"index": f"Index{i}", "module": f"Module{i}"})
      for i in range(3)]),
])
def test_a_file_section_reads_as_the_property_does(body, entries):
    assert parse_jaas_config(body) == entries
    assert parse_jaas_file(_section(body), {}) == {"SERVER": entries}


@pytest.mark.parametrize("body, message", [  # JaasContextTest.checkInvalidConfiguration: both refuse
    ("  required option1=value1;", "Configuration Error:\n\tInvalid control flag, OPTION1"),  # testMissingLoginModule
    ("test.loginModule option1=value1;", "Configuration Error:\n\tInvalid control flag, OPTION1"),
    ("loginModule required option1;", "Configuration Error:\n\tLine 2: expected [=]"),  # testMissingOptionValue
    ("test.testMissingSemicolon required option1=value1", "Configuration Error:\n\tLine 3: expected [option key]"),
    ("test.testNumericOptionWithoutQuotes required option1=3;",
     "Configuration Error:\n\tLine 2: expected [option value], found [null]"),
    ("test.testInvalidControlFlag { option1=3;", "Configuration Error:\n\tLine 2: expected [controlFlag]"),
])
def test_what_the_property_refuses_the_file_refuses(body, message):
    with pytest.raises(ValueError):
        parse_jaas_config(body)
    with pytest.raises(ValueError) as refused:
        parse_jaas_file(_section(body), {})
    assert str(refused.value) == message


def test_a_file_holds_named_sections_of_several_modules_with_comments_and_expanded_values():
    text = ('/* Kafka\'s broker:\n   one section for every listener */\n'
            'KafkaServer {\n'
            '    org.apache.kafka.common.security.plain.PlainLoginModule required  // the users\n'
            '    username="admin" password="admin-secret"\n'
            '    user_admin="admin-secret" user_alice=alice-secret;\n'
            '    com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true\n'
            '    keyTab="${user.home}${/}kafka.keytab" principal=*  tab="a\\tb\\\\c" same="${{x}}";\n'
            '};\r\n'
            '"sasl_ssl.KafkaServer" { org.apache.kafka.common.security.scram.ScramLoginModule REQUISITE; };\n'
            'Client { };')
    assert parse_jaas_file(text, {"user.home": "/home/kafka"}) == {
        "KafkaServer": [
            LoginModuleEntry("org.apache.kafka.common.security.plain.PlainLoginModule", "REQUIRED",
                             {"username": "admin", "password": "admin-secret", "user_admin": "admin-secret",
                              "user_alice": "alice-secret"}),
            LoginModuleEntry("com.sun.security.auth.module.Krb5LoginModule", "REQUIRED",
                             {"useKeyTab": "true", "storeKey": "true", "keyTab": "/home/kafka/kafka.keytab",
                              "principal": "*", "tab": "a\tb\\c", "same": "${{x}}"})],
        "sasl_ssl.KafkaServer": [LoginModuleEntry("org.apache.kafka.common.security.scram.ScramLoginModule",
                                                  "REQUISITE", {})],
        "Client": []}
    assert parse_jaas_file("", {}) == {}
    assert parse_jaas_file("// nothing\n/* at all */", {}) == {}


@pytest.mark.parametrize("text, message", [
    ("KafkaServer { a.B required; };\nKafkaServer { a.C required; };",
     "Configuration Error:\n\tCan not specify multiple entries for KafkaServer"),
    ("KafkaServer { a.B required", "Configuration Error:\n\texpected [option key], read [end of file]"),
    ("KafkaServer { a.B required; }", "Configuration Error:\n\texpected [;], read [end of file]"),
    ("KafkaServer\n\n( a.B required; };", "Configuration Error:\n\tLine 3: expected [{], found [null]"),
    ("KafkaServer {\n  a.B required k='v';\n};", "Configuration Error:\n\tLine 2: expected [option value], found [v]"),
    ("KafkaServer {\n  a.B required k=v\n};", "Configuration Error:\n\tLine 3: expected [option key]"),
    ("KafkaServer {\n  a.B optionally;\n};", "Configuration Error:\n\tInvalid control flag, OPTIONALLY"),
    ("KafkaServer { a.B required; } x", "Configuration Error:\n\tLine 1: expected [;], found [x]"),
    # the ends of line of a block comment are not counted; a // comment's is, and a CR LF is one
    ("/*\n\n*/KafkaServer {\r\n a.B required // x\r\n ; ;",
     "Configuration Error:\n\tLine 3: expected [module class name]"),
    ("\n" * 1233 + "KafkaServer {", "Configuration Error:\n\texpected [module class name], read [end of file]"),
    ("\n" * 1233 + "KafkaServer [", "Configuration Error:\n\tLine 1,234: expected [{], found [null]"),
    ('KafkaServer {\n a.B required k="${missing}";\n};', "unable to expand property missing"),
    ('KafkaServer {\n a.B required k="${empty}"\n ; };',
     "Configuration Error:\n\tLine 3: system property [${empty}] expanded to empty value"),
])
def test_a_malformed_file_is_refused_with_the_jdks_messages(text, message):
    with pytest.raises(ValueError) as refused:
        parse_jaas_file(text, {"empty": ""})
    assert str(refused.value) == message
