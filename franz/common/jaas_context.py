"""Kafka's JaasContext for a broker's SASL mechanism (loadServerContext), over the static JAAS
configuration of the JVM: the file `-Djava.security.auth.login.config` names, as the JDK's
ConfigFile finds and reads it (Configuration.getConfiguration).

A mechanism's entries come from `listener.name.<listener>.<mechanism>.sasl.jaas.config` when it is
set (exactly one login module); else from the file's section `<listener in lower case>.KafkaServer`,
else its `KafkaServer`: every mechanism of the listener without the property shares that section,
and each finds its own login module among its entries (config_entry_option). Errors are ValueError
with Kafka's messages, or the JDK's for a file it cannot read.

The JDK takes the property as a path, or as a URL when it has a protocol Java knows (`file:`; franz
reads no other); `==path` (a leading '=') means that file alone, which is all franz reads anyway.
Without the property the JDK would read ~/.java.login.config; franz does not.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Final
from urllib.parse import unquote, urlsplit

from franz.common.jaas_config import LoginModuleEntry, parse_jaas_config, parse_jaas_file
from franz.common.system_properties import ExpandError, expand, system_properties, system_property

logger = logging.getLogger(__name__)

JAVA_LOGIN_CONFIG_PARAM: Final = "java.security.auth.login.config"
# Kafka 4.2+ (KIP-1153): an allow list when set, else the deprecated deny list, by default these two
ALLOWED_LOGIN_MODULES_CONFIG: Final = "org.apache.kafka.allowed.login.modules"
DISALLOWED_LOGIN_MODULES_CONFIG: Final = "org.apache.kafka.disallowed.login.modules"
DISALLOWED_LOGIN_MODULES_DEFAULT: Final = ("com.sun.security.auth.module.JndiLoginModule,"
                                           "com.sun.security.auth.module.LdapLoginModule")
GLOBAL_CONTEXT_NAME_SERVER: Final = "KafkaServer"
# java.net.URL's protocol handlers: another prefix before ':' makes no URL, so a file name
_JAVA_URL_PROTOCOLS: Final = frozenset(("http", "https", "file", "ftp", "jar", "mailto", "jrt"))


@dataclasses.dataclass(frozen=True)
class LoginConfiguration:
    """Configuration.getConfiguration() as ConfigFile makes it: the sections of the file the
    system property names (`login_config`, as set; None when unset, and no sections)."""
    login_config: str | None
    sections: Mapping[str | None, Sequence[LoginModuleEntry]]

    def entries(self, name: str) -> Sequence[LoginModuleEntry] | None:
        """getAppConfigurationEntry: a section's entries, None for a missing or empty one."""
        return self.sections.get(name) or None

    def described(self) -> str:
        """How Kafka's messages name the configuration's origin."""
        return (f"System property '{JAVA_LOGIN_CONFIG_PARAM}' is "
                f"{'not set' if self.login_config is None else self.login_config}")


@dataclasses.dataclass(frozen=True)
class JaasContext:
    """A mechanism's JAAS context: its name (KafkaServer, or the listener's section), its entries,
    and whether they came from the sasl.jaas.config property (dynamic) or from the file."""
    name: str
    entries: Sequence[LoginModuleEntry]
    dynamic: bool


def _config_file_url_path(location: str) -> str | None:
    """The file a `file:` URL names; None when the location is no URL (java.net.URL: a protocol
    before any '/'), ValueError for another protocol."""
    scheme, colon, _ = location.partition(":")
    if not colon or "/" in scheme or not scheme[:1].isalpha() \
            or not all(char.isalnum() or char in "+.-" for char in scheme) \
            or scheme.lower() not in _JAVA_URL_PROTOCOLS:
        return None
    if scheme.lower() != "file":
        raise ValueError(f"franz reads the JAAS configuration from a file, not from {location}")
    return unquote(urlsplit(location).path)


def load_login_configuration(environ: Mapping[str, str] = os.environ) -> LoginConfiguration:
    """The JVM's static JAAS configuration (ConfigFile.Spi.init): the file of the system property,
    read as UTF-8 and parsed. ValueError when it cannot be, which Kafka's broker fails to start
    with: the JDK's message, then the property's value as Kafka's own messages give it."""
    login_config = system_property(JAVA_LOGIN_CONFIG_PARAM, environ)
    if login_config is None:
        return LoginConfiguration(None, {})
    configuration = LoginConfiguration(login_config, {})
    try:
        return dataclasses.replace(configuration, sections=_read_config_file(login_config, environ))
    except ValueError as exc:
        raise ValueError(f"{exc}. {configuration.described()}") from None


def _read_config_file(login_config: str, environ: Mapping[str, str]) -> dict[str | None, list[LoginModuleEntry]]:
    """The sections of the file `login_config` names; ValueError with the JDK's message."""
    location = login_config[1:] if login_config.startswith("=") else login_config
    properties = system_properties(environ)
    try:
        location = expand(location, properties)
    except ExpandError:
        raise ValueError(f"Unable to properly expand {location}") from None
    path = _config_file_url_path(location)
    if path is None:
        if not location or not Path(location).exists():  # java.io.File("") exists not
            raise ValueError(f"{location} (No such file or directory)")
        path = location
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as file:
            text = file.read()
    except (FileNotFoundError, PermissionError, IsADirectoryError):
        raise ValueError("Configuration Error:\n\tNo such file or directory") from None
    except OSError as exc:
        raise ValueError(str(exc)) from None
    return parse_jaas_file(text, properties)


def _check_login_module_allowed(entry: LoginModuleEntry, environ: Mapping[str, str]) -> None:
    """JaasContext.throwIfLoginModuleIsNotAllowed as of Kafka 4.2: a module must be on
    org.apache.kafka.allowed.login.modules when that is set; else it must not be on the deprecated
    org.apache.kafka.disallowed.login.modules (by default JNDI's and LDAP's login modules)."""
    disallowed = system_property(DISALLOWED_LOGIN_MODULES_CONFIG, environ)
    if disallowed is not None:
        logger.warning("System property '%s' is deprecated and will be removed in a future release. Use '%s' "
                       "instead.", DISALLOWED_LOGIN_MODULES_CONFIG, ALLOWED_LOGIN_MODULES_CONFIG)
    name = entry.login_module.strip()
    allowed = system_property(ALLOWED_LOGIN_MODULES_CONFIG, environ)
    if allowed is not None:
        if name not in {module.strip() for module in allowed.split(",")}:
            raise ValueError(f"{name} is not allowed. Update System property '{ALLOWED_LOGIN_MODULES_CONFIG}' to "
                             f"allow {name}")
        return
    denied = DISALLOWED_LOGIN_MODULES_DEFAULT if disallowed is None else disallowed
    if name in {module.strip() for module in denied.split(",")}:
        raise ValueError(f"{name} is not allowed. The system property '{DISALLOWED_LOGIN_MODULES_CONFIG}' is "
                         f"deprecated. Use the {ALLOWED_LOGIN_MODULES_CONFIG} to allow this module. e.g.,"
                         f"-D{ALLOWED_LOGIN_MODULES_CONFIG}={name}")


def load_server_context(listener: str, dynamic_jaas_config: str | None,
                        configuration: Callable[[], LoginConfiguration],
                        environ: Mapping[str, str] = os.environ) -> JaasContext:
    """JaasContext.loadServerContext for one mechanism of a listener, given the value of its
    <mechanism>.sasl.jaas.config (None when unset); `configuration` gives the static one, read
    only when the property is unset (and as often as it is called: cache it)."""
    if dynamic_jaas_config is not None:
        entries = parse_jaas_config(dynamic_jaas_config)
        if len(entries) != 1:
            raise ValueError(f"JAAS config property contains {len(entries)} login modules, should be 1 module")
        _check_login_module_allowed(entries[0], environ)
        return JaasContext(GLOBAL_CONTEXT_NAME_SERVER, entries, True)
    static = configuration()
    listener_context_name = f"{listener.lower()}.{GLOBAL_CONTEXT_NAME_SERVER}"
    name, entries = listener_context_name, static.entries(listener_context_name)
    if entries is None:
        name, entries = GLOBAL_CONTEXT_NAME_SERVER, static.entries(GLOBAL_CONTEXT_NAME_SERVER)
    if entries is None:
        raise ValueError(f"Could not find a '{GLOBAL_CONTEXT_NAME_SERVER}' or '{listener_context_name}' entry in the "
                         f"JAAS configuration. {static.described()}")
    for entry in entries:
        _check_login_module_allowed(entry, environ)
    return JaasContext(name, entries, False)


def config_entry_option(entries: Sequence[LoginModuleEntry], key: str, login_module: str | None) -> str | None:
    """JaasContext.configEntryOption: the option of the first entry that has it, among the entries
    of `login_module` (of any module when None)."""
    for entry in entries:
        if login_module is not None and entry.login_module != login_module:
            continue
        if key in entry.options:
            return entry.options[key]
    return None
