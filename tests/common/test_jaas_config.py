"""JaasConfig's grammar: what Kafka's StreamTokenizer-based parser accepts and refuses, and how."""

from __future__ import annotations

import pytest

from franz.common.jaas_config import LoginModuleEntry, parse_jaas_config


def test_entries_with_quoted_and_bare_options_comments_and_escapes():
    text = ('org.apache.kafka.common.security.plain.PlainLoginModule required /* the admin */ username="admin"\n'
            '  password=\'a"b\' user_x-y="p\\tq\\101" // a comment\n ;\n'
            'com.example.Other SUFFICIENT flag=on_$1;')
    assert parse_jaas_config(text) == [
        LoginModuleEntry("org.apache.kafka.common.security.plain.PlainLoginModule", "REQUIRED",
                         {"username": "admin", "password": 'a"b', "user_x-y": "p\tqA"}),
        LoginModuleEntry("com.example.Other", "SUFFICIENT", {"flag": "on_$1"})]


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
