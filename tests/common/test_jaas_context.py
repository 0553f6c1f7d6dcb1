"""JaasContext.loadServerContext over the property or the JAAS file of
-Djava.security.auth.login.config (JaasContextTest's server cases), and the file as the JDK finds
and reads it."""

from __future__ import annotations

import pytest

from franz.common.jaas_config import LoginModuleEntry
from franz.common.jaas_context import (
    JaasContext,
    LoginConfiguration,
    config_entry_option,
    load_login_configuration,
    load_server_context,
)

NOT_LOADED = LoginConfiguration(None, {})


def _file_context(tmp_path, lines, listener="PLAINTEXT", kafka_opts=""):
    path = tmp_path / "jaas.conf"
    path.write_text("\n".join(lines), encoding="utf-8")
    environ = {"KAFKA_OPTS": f"-Djava.security.auth.login.config={path} {kafka_opts}"}
    return load_server_context(listener, None, lambda: load_login_configuration(environ), environ)


def test_the_property_is_one_login_module_of_the_context_kafkaserver():
    context = load_server_context("PLAINTEXT", "a.B required k=v;", lambda: pytest.fail("the file was read"), {})
    assert context == JaasContext("KafkaServer", [LoginModuleEntry("a.B", "REQUIRED", {"k": "v"})], True)
    with pytest.raises(ValueError, match="^JAAS config property contains 2 login modules, should be 1 module$"):
        load_server_context("PLAINTEXT", "a.B required; a.C required;", lambda: NOT_LOADED, {})


def test_the_listeners_own_section_comes_before_kafkaserver(tmp_path):
    """testLoadForServerWithListenerNameOverride, then ...AndFallback."""
    lines = ["KafkaServer { test.LoginModuleDefault required; };",
             "plaintext.KafkaServer { test.LoginModuleOverride requisite; };"]
    assert _file_context(tmp_path, lines) == JaasContext(
        "plaintext.KafkaServer", [LoginModuleEntry("test.LoginModuleOverride", "REQUISITE", {})], False)
    lines = ["KafkaServer { test.LoginModule required; };", "other.KafkaServer { test.LoginModuleOther requisite; };"]
    assert _file_context(tmp_path, lines) == JaasContext(
        "KafkaServer", [LoginModuleEntry("test.LoginModule", "REQUIRED", {})], False)
    # an empty section is no section (ConfigFile answers null for it)
    lines = ["KafkaServer { test.LoginModule required; };", "plaintext.KafkaServer { };"]
    assert _file_context(tmp_path, lines).name == "KafkaServer"


def test_a_file_without_the_section_is_refused_naming_the_property(tmp_path):
    """testLoadForServerWithWrongListenerName, with Kafka's message."""
    with pytest.raises(ValueError) as refused:
        _file_context(tmp_path, ["Server {", "test.LoginModule required;", "};"], listener="SASL_SSL")
    assert str(refused.value) == ("Could not find a 'KafkaServer' or 'sasl_ssl.KafkaServer' entry in the JAAS "
                                  "configuration. System property 'java.security.auth.login.config' is "
                                  f"{tmp_path / 'jaas.conf'}")
    with pytest.raises(ValueError) as refused:
        load_server_context("SASL_PLAINTEXT", None, lambda: load_login_configuration({}), {})
    assert str(refused.value) == ("Could not find a 'KafkaServer' or 'sasl_plaintext.KafkaServer' entry in the JAAS "
                                  "configuration. System property 'java.security.auth.login.config' is not set")


def test_disallowed_login_modules_are_refused_from_the_property_and_the_file(tmp_path):
    """testDisallowedLoginModulesSystemProperty, with 4.2's default list and words (KIP-1153)."""
    jndi = "com.sun.security.auth.module.JndiLoginModule"
    for module in (jndi, "com.sun.security.auth.module.LdapLoginModule"):
        with pytest.raises(ValueError) as refused:
            load_server_context("PLAINTEXT", f"{module} required;", lambda: NOT_LOADED, {})
        assert str(refused.value) == (
            f"{module} is not allowed. The system property 'org.apache.kafka.disallowed.login.modules' is deprecated. "
            f"Use the org.apache.kafka.allowed.login.modules to allow this module. e.g.,"
            f"-Dorg.apache.kafka.allowed.login.modules={module}")
    lines = ["KafkaServer { test.LoginModuleDefault required; };", f"plaintext.KafkaServer {{ {jndi} requisite; }};"]
    with pytest.raises(ValueError, match="is not allowed"):
        _file_context(tmp_path, lines)
    ibm = "-Dorg.apache.kafka.disallowed.login.modules=com.ibm.security.auth.module.LdapLoginModule,"
    with pytest.raises(ValueError, match="com.ibm.security.auth.module.Krb5LoginModule is not allowed"):
        _file_context(tmp_path, ["KafkaServer { a.B required; com.ibm.security.auth.module.Krb5LoginModule "
                                 "requisite; };"], kafka_opts=ibm + "com.ibm.security.auth.module.Krb5LoginModule")
    allowed = _file_context(tmp_path, lines, kafka_opts="-Dorg.apache.kafka.disallowed.login.modules=")
    assert allowed.entries == [LoginModuleEntry(jndi, "REQUISITE", {})]


def test_the_property_names_a_path_a_file_url_or_with_two_equals_only_that_file(tmp_path):
    path, spaced = tmp_path / "jaas" / "kafka.conf", tmp_path / "jaas dir" / "kafka.conf"
    for file in (path, spaced):
        file.parent.mkdir()
        file.write_text('KafkaServer { a.B required home="${user.home}"; };', encoding="utf-8")
    sections = {"KafkaServer": [LoginModuleEntry("a.B", "REQUIRED", {"home": "/h"})]}
    # KAFKA_OPTS splits at spaces: a URL's %20 is the way to name a path with one
    for value in (str(path), f"={path}", f"file:{str(spaced).replace(' ', '%20')}", "${conf}${/}kafka.conf"):
        environ = {"KAFKA_OPTS": f"-Duser.home=/h -Dconf={path.parent} -Djava.security.auth.login.config={value}"}
        assert load_login_configuration(environ) == LoginConfiguration(value, sections)


@pytest.mark.parametrize("value, message", [
    ("{tmp}/missing.conf", "{tmp}/missing.conf (No such file or directory)"),
    ("=", " (No such file or directory)"),
    ("${nope}/jaas.conf", "Unable to properly expand ${nope}/jaas.conf"),
    ("{tmp}", "Configuration Error:\n\tNo such file or directory"),  # a directory
    ("file:{tmp}/missing.conf", "Configuration Error:\n\tNo such file or directory"),
    ("https://idp/jaas.conf", "franz reads the JAAS configuration from a file, not from https://idp/jaas.conf"),
    ("{tmp}/bad.conf", "Configuration Error:\n\tLine 2: expected [controlFlag]"),
])
def test_a_file_the_jdk_cannot_read_is_refused_with_its_message_and_the_propertys(tmp_path, value, message):
    (tmp_path / "bad.conf").write_text("KafkaServer {\n a.B ;\n};")
    environ = {"KAFKA_OPTS": f"-Djava.security.auth.login.config={value.replace('{tmp}', str(tmp_path))}"}
    with pytest.raises(ValueError) as refused:
        load_login_configuration(environ)
    value = value.replace("{tmp}", str(tmp_path))
    assert str(refused.value) == f"{message.replace('{tmp}', str(tmp_path))}. System property " \
                                 f"'java.security.auth.login.config' is {value}"


def test_an_option_is_the_first_one_among_the_entries_of_its_login_module():
    """JaasContext.configEntryOption, as PlainServerCallbackHandler and KerberosLogin look options up."""
    entries = [LoginModuleEntry("a.Krb5", "REQUIRED", {"principal": "kafka/h@R"}),
               LoginModuleEntry("a.Plain", "REQUIRED", {"user_alice": "one", "serviceName": "kafka"}),
               LoginModuleEntry("a.Plain", "OPTIONAL", {"user_alice": "two", "user_bob": "three"})]
    assert config_entry_option(entries, "user_alice", "a.Plain") == "one"
    assert config_entry_option(entries, "user_bob", "a.Plain") == "three"
    assert config_entry_option(entries, "principal", "a.Plain") is None
    assert config_entry_option(entries, "serviceName", None) == "kafka"
    assert config_entry_option(entries, "user_alice", "a.Krb5") is None


def test_an_allow_list_admits_only_its_modules_and_outranks_the_deny_list(tmp_path, caplog):
    """Kafka 4.2+'s org.apache.kafka.allowed.login.modules: when set, only its modules load, whatever
    the deprecated deny list (whose use is warned about) says."""
    plain = "org.apache.kafka.common.security.plain.PlainLoginModule"
    scram = "org.apache.kafka.common.security.scram.ScramLoginModule"
    environ = {"KAFKA_OPTS": f"-Dorg.apache.kafka.allowed.login.modules={scram},{plain}"}
    assert load_server_context("PLAINTEXT", f"{plain} required;", lambda: NOT_LOADED, environ).entries
    with pytest.raises(ValueError) as refused:
        load_server_context("PLAINTEXT", "com.example.Other required;", lambda: NOT_LOADED, environ)
    assert str(refused.value) == ("com.example.Other is not allowed. Update System property "
                                  "'org.apache.kafka.allowed.login.modules' to allow com.example.Other")
    jndi = "com.sun.security.auth.module.JndiLoginModule"
    both = {"KAFKA_OPTS": f"-Dorg.apache.kafka.allowed.login.modules={jndi} "
                          f"-Dorg.apache.kafka.disallowed.login.modules={jndi}"}
    assert load_server_context("PLAINTEXT", f"{jndi} required;", lambda: NOT_LOADED, both).entries
    assert "System property 'org.apache.kafka.disallowed.login.modules' is deprecated" in caplog.text
