"""Client settings for franz's tools as Kafka's tools take them, handed to librdkafka.

Kafka's tools read client settings from a Java .properties file (--command-config,
formerly --producer.config / --consumer.config) and from key=value arguments
(--command-property), the arguments winning. franz's tools run on librdkafka
(confluent_kafka), whose names differ from the Java client's for a few settings:
`librdkafka_config` renames those, converts the values librdkafka spells
differently, and refuses a Java-only setting with a CommandConfigError naming it.
The Java client's TLS stores (JKS, PKCS12 or PEM key and trust stores), which
librdkafka does not read, are read here and handed over as PEM.
A setting that reaches librdkafka and is still refused there is explained by
`describe_client_error`.
"""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Iterable, Mapping

from cryptography.hazmat.primitives import serialization

from franz.common.config_def import ConfigError
from franz.common.default_ssl_engine_factory import DefaultSslEngineFactory
from franz.common.jaas_config import parse_jaas_config
from franz.common.utils import load_props


class CommandConfigError(Exception):
    """A properties file that cannot be read, or a setting librdkafka cannot take; the text names it."""


def load_properties(path: str) -> dict[str, str]:
    """The properties of a Java .properties file, read as java.util.Properties.load does
    (ISO-8859-1, `#`/`!` comments, `key=value`, `key: value` or `key value`, escapes, continued lines)."""
    try:
        return load_props(path)
    except OSError as exc:
        raise CommandConfigError(f"cannot read the properties file {path}: {exc.strerror}") from exc


def parse_key_value_args(items: Iterable[str]) -> dict[str, str]:
    """KEY=VALUE arguments as CommandLineUtils.parseKeyValueArgs reads them: the value may hold `=`,
    and a KEY alone means the empty string."""
    properties: dict[str, str] = {}
    for item in items:
        key, _, value = item.partition("=")
        properties[key] = value
    return properties


def command_properties(config_file: str | None, items: Iterable[str]) -> dict[str, str]:
    """The properties of `config_file` (if any), overridden by the KEY=VALUE `items`."""
    properties = load_properties(config_file) if config_file else {}
    properties.update(parse_key_value_args(items))
    return properties


def add_command_options(parser: argparse.ArgumentParser, client: str) -> None:
    """A console tool's client settings options, as Kafka 4.3 names them and as it named them
    before (--<client>-property, --<client>.config: deprecated, and not to be given with the new ones).
    The values land in args.command_property, args.<client>_property (lists of KEY=VALUE),
    args.command_config and args.<client>_config (file paths)."""
    parser.add_argument("--command-property", action="append", default=[], metavar="KEY=VALUE",
                        help=f"{client} setting (Kafka's names)")
    parser.add_argument(f"--{client}-property", action="append", default=[], metavar="KEY=VALUE",
                        help="deprecated: --command-property")
    parser.add_argument("--command-config", metavar="FILE", help=f"{client} properties file")
    parser.add_argument(f"--{client}.config", dest=f"{client}_config", metavar="FILE",
                        help="deprecated: --command-config")


# Java client name -> librdkafka name, where only the name differs.
RENAMED = {
    "send.buffer.bytes": "socket.send.buffer.bytes",
    "receive.buffer.bytes": "socket.receive.buffer.bytes",
    "max.request.size": "message.max.bytes",
}
# Kafka's tools set these themselves (byte arrays in and out), so a value given for them has no effect there either.
OVERRIDDEN_BY_THE_TOOL = frozenset({"key.serializer", "value.serializer", "key.deserializer", "value.deserializer"})
ASSIGNORS = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
}
JAAS_LOGIN_MODULES = ("org.apache.kafka.common.security.plain.PlainLoginModule",
                      "org.apache.kafka.common.security.scram.ScramLoginModule")
# The Java client's key and trust store settings, read by DefaultSslEngineFactory (Kafka's defaults).
TLS_STORE_DEFAULTS = {"ssl.keystore.type": "JKS", "ssl.keystore.location": None, "ssl.keystore.password": None,
                      "ssl.key.password": None, "ssl.keystore.key": None, "ssl.keystore.certificate.chain": None,
                      "ssl.truststore.type": "JKS", "ssl.truststore.location": None, "ssl.truststore.password": None,
                      "ssl.truststore.certificates": None}
UNKNOWN_PROPERTY = re.compile(r'No such configuration property: "([^"]+)"')


def librdkafka_config(properties: Mapping[str, str], client: str) -> dict[str, str]:
    """`properties` in the Java client's names and values, as librdkafka settings for a `client`
    ("producer", "consumer" or "admin" client, named in errors)."""
    config: dict[str, str] = _tls_stores(properties, client)
    for name, value in properties.items():
        if name in OVERRIDDEN_BY_THE_TOOL or name in TLS_STORE_DEFAULTS:
            continue
        if name == "buffer.memory":
            config["queue.buffering.max.kbytes"] = str(max(1, math.ceil(_long(name, value, client) / 1024)))
        elif name == "sasl.jaas.config":
            config.update(_jaas_credentials(value, client))
        elif name == "partition.assignment.strategy":
            config[name] = ",".join(ASSIGNORS.get(part.strip(), part.strip()) for part in value.split(","))
        elif name == "auto.offset.reset" and value == "none":
            config[name] = "error"  # librdkafka's name for "fail when there is no committed offset"
        elif name == "ssl.endpoint.identification.algorithm" and value == "":
            config[name] = "none"
        else:
            config[RENAMED.get(name, name)] = value
    return config


def describe_client_error(exc: Exception, client: str) -> str:
    """What to tell the user when librdkafka refused to create a client from our settings."""
    text = exc.args[0].str() if exc.args and hasattr(exc.args[0], "str") else str(exc)
    unknown = UNKNOWN_PROPERTY.search(text)
    if unknown:
        return (f'the {client} property "{unknown.group(1)}" is a Java client setting that librdkafka, '
                "the client franz's tools run on, does not have")
    return f"librdkafka refused the {client} configuration: {text.strip()}"


def _long(name: str, value: str, client: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise CommandConfigError(f'the {client} property "{name}" must be a number, not {value!r}') from None


def _jaas_credentials(value: str, client: str) -> dict[str, str]:
    """sasl.jaas.config of the PLAIN or SCRAM login module as librdkafka's sasl.username / sasl.password."""
    try:
        entries = parse_jaas_config(value)
    except ValueError as exc:
        raise CommandConfigError(f'the {client} property "sasl.jaas.config" is not a JAAS config: {exc}') from None
    options = entries[0].options if len(entries) == 1 else {}
    if entries[0].login_module not in JAAS_LOGIN_MODULES or "username" not in options or "password" not in options:
        raise CommandConfigError(f'the {client} property "sasl.jaas.config" is a Java client setting: librdkafka '
                                 "takes only the PLAIN and SCRAM login modules' username and password from it; "
                                 "set sasl.username and sasl.password (or sasl.oauthbearer.*) instead")
    return {"sasl.username": options["username"], "sasl.password": options["password"]}


def _tls_stores(properties: Mapping[str, str], client: str) -> dict[str, str]:
    """The key store (a client certificate) and trust store (the CAs to trust) of Java client
    settings, as librdkafka's ssl.key.pem, ssl.certificate.pem (the chain) and ssl.ca.pem."""
    if not any(name in properties for name in TLS_STORE_DEFAULTS):
        return {}
    factory = DefaultSslEngineFactory(lambda name: (name, properties.get(name, TLS_STORE_DEFAULTS[name])))
    try:
        key_store, trusted = factory.key_and_chain(), factory.trusted()
    except ConfigError as exc:
        raise CommandConfigError(f"the {client} TLS stores cannot be read: {exc}") from None
    config = {}
    if key_store is not None:
        key, chain, _ = key_store
        config["ssl.key.pem"] = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                  serialization.NoEncryption()).decode()
        config["ssl.certificate.pem"] = "".join(certificate.public_bytes(serialization.Encoding.PEM).decode()
                                                for certificate in chain)
    if trusted:
        config["ssl.ca.pem"] = "".join(certificate.public_bytes(serialization.Encoding.PEM).decode()
                                       for certificate in trusted)
    return config
