import pytest

from franz.common.config_def import ConfigDef, ConfigError, ConfigKey, at_least, each_of, one_of


def make_def() -> ConfigDef:
    return ConfigDef([
        ConfigKey("num.partitions", "int", 1, at_least(1)),
        ConfigKey("auto.create.topics.enable", "boolean", True),
        ConfigKey("log.message.timestamp.type", "string", "CreateTime", one_of("CreateTime", "LogAppendTime")),
        ConfigKey("log.dirs", "list", ["/tmp/x"]),
    ])


def test_strings_from_a_properties_file_become_typed_values():
    values, unknown = make_def().parse({"num.partitions": " 8 ", "auto.create.topics.enable": "FALSE",
                                        "log.dirs": "/a, /b"})
    assert values["num.partitions"] == 8
    assert values["auto.create.topics.enable"] is False
    assert values["log.dirs"] == ["/a", "/b"]
    assert unknown == []


def test_defaults_fill_absent_keys():
    values, _ = make_def().parse({})
    assert values["num.partitions"] == 1
    assert values["log.message.timestamp.type"] == "CreateTime"


def test_unknown_keys_are_reported_not_rejected():
    _, unknown = make_def().parse({"no.such.key": "1"})
    assert unknown == ["no.such.key"]


@pytest.mark.parametrize("key, value", [
    ("num.partitions", "zero"),
    ("num.partitions", "0"),
    ("num.partitions", str(2**31)),
    ("auto.create.topics.enable", "yes"),
    ("log.message.timestamp.type", "WallClock"),
])
def test_a_bad_value_is_refused_with_a_message_naming_the_key(key, value):
    with pytest.raises(ConfigError) as info:
        make_def().parse({key: value})
    assert info.value.key == key
    assert key in str(info.value)


def test_a_list_of_allowed_values_refuses_a_value_twice_or_an_empty_one_in_kafkas_words():
    definition = ConfigKey("cleanup.policy", "list", ["delete"], each_of("compact", "delete"))
    assert definition.parse("compact, delete") == ["compact", "delete"]
    with pytest.raises(ConfigError, match="^Configuration 'cleanup.policy' values must not be duplicated.$"):
        definition.parse("delete,delete")
    with pytest.raises(ConfigError, match="^Configuration 'cleanup.policy' values must not be empty.$"):
        definition.parse("compact,,delete")


def test_a_password_is_trimmed_as_javas_string_trim_trims():
    """ConfigDef.parseType trims a PASSWORD as it trims a STRING: a properties file keeps a
    value's trailing blanks, Kafka does not. String.trim takes off U+0000..U+0020 only, so a
    no-break space stays."""
    passwords = ConfigDef([ConfigKey("ssl.key.password", "password", None)])
    assert passwords.parse({"ssl.key.password": "\t secret \x00\n"})[0]["ssl.key.password"] == "secret"
    assert passwords.parse({"ssl.key.password": "\u00a0secret\u00a0"})[0]["ssl.key.password"] == "\u00a0secret\u00a0"
    assert passwords.parse({"ssl.key.password": "   "})[0]["ssl.key.password"] == ""
