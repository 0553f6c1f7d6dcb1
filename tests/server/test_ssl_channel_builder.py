"""SslListenerReconfigurable: when a TLS listener's stores are rebuilt, and SslFactory's checks of
the rebuilt ones (the broker process's side is tests/interop/test_ssl_store_update.py)."""

from __future__ import annotations

import functools
import os

import pytest

from franz.common.config_def import ConfigError
from franz.server.kafka_config import SSL_RECONFIGURABLE_KEYS, KafkaConfig, listener_key
from franz.server.ssl_channel_builder import SslListenerReconfigurable

from tests.support.tls import CertificateAuthority, write_pem_key_store

STORE = "listener.name.ssl.ssl.keystore.location"


@pytest.fixture()
def ca():
    return CertificateAuthority()


def _listener(tmp_path, ca, *settings: str, allow_dn_changes: bool = False):
    """A broker config with an SSL listener whose key store is a PEM file, its listeners' map,
    and the listener's reconfigurable."""
    write_pem_key_store(tmp_path / "broker.pem", ca.broker(), ca)
    config = KafkaConfig.from_sources(None, [
        "listeners=PLAINTEXT://127.0.0.1:1,SSL://127.0.0.1:2", "inter.broker.listener.name=PLAINTEXT",
        "listener.name.ssl.ssl.keystore.type=PEM", f"{STORE}={tmp_path / 'broker.pem'}", *settings])
    listeners = dict(config.ssl_listeners)
    reconfigurable = SslListenerReconfigurable(
        "SSL", tuple(listener_key("SSL", key) for key in SSL_RECONFIGURABLE_KEYS), listeners,
        functools.partial(config.ssl_listener_config, "SSL"), allow_dn_changes, False)
    return config, listeners, reconfigurable


def _apply(reconfigurable: SslListenerReconfigurable, config: KafkaConfig, dynamic: dict | None = None) -> None:
    new = {**config.values, **(dynamic or {})}
    reconfigurable.validate_reconfiguration(config.values, new)
    reconfigurable.reconfigure(config.values, new)


def test_stores_are_rebuilt_when_a_value_or_a_file_changes_and_only_then(tmp_path, ca):
    config, listeners, reconfigurable = _listener(tmp_path, ca)
    loaded = listeners["SSL"]
    _apply(reconfigurable, config)
    assert listeners["SSL"] is loaded and not reconfigurable.files_modified()
    path = tmp_path / "broker.pem"
    stamp = path.stat().st_mtime_ns
    write_pem_key_store(path, ca.broker(), ca)
    os.utime(path, ns=(stamp + 2_000_000_000,) * 2)
    assert reconfigurable.files_modified()
    _apply(reconfigurable, config)
    assert listeners["SSL"] is not loaded and not reconfigurable.files_modified()
    moved = write_pem_key_store(tmp_path / "moved.pem", ca.broker(), ca)
    rebuilt = listeners["SSL"]
    _apply(reconfigurable, config, {STORE: str(moved)})
    assert listeners["SSL"] is not rebuilt and listeners["SSL"].files_read.keys() == {str(moved)}


def test_another_subject_needs_ssl_allow_dn_changes(tmp_path, ca):
    other = write_pem_key_store(tmp_path / "other.pem", ca.broker(common_name="other"), ca)
    config, listeners, reconfigurable = _listener(tmp_path, ca)
    with pytest.raises(ConfigError) as refused:
        _apply(reconfigurable, config, {STORE: str(other)})
    assert str(refused.value) == (  # SslFactory's words, which the controller wraps as DynamicBrokerConfig does
        "Validation of dynamic config update of SSLFactory failed: org.apache.kafka.common.config.ConfigException: "
        "Keystore DistinguishedName does not match:  existing={alias=kafka, DN=CN=localhost}, new={alias=kafka, "
        "DN=CN=other}")
    config, listeners, reconfigurable = _listener(tmp_path, ca, "ssl.allow.dn.changes=true", allow_dn_changes=True)
    _apply(reconfigurable, config, {STORE: str(other)})
    assert listeners["SSL"].key_store_certificates[0][1].subject.rfc4514_string() == "CN=other"


def test_fewer_alternative_names_or_no_key_store_are_refused_in_kafkas_words(tmp_path, ca):
    narrow = write_pem_key_store(tmp_path / "narrow.pem", ca.broker(host_names=()), ca)
    config, listeners, reconfigurable = _listener(tmp_path, ca)
    with pytest.raises(ConfigError) as refused:
        _apply(reconfigurable, config, {STORE: str(narrow)})
    assert "ConfigException: Keystore SubjectAltNames do not match:  existing={alias=kafka, SAN=[[2, localhost], " \
           "[7, 127.0.0.1]]}, new={alias=kafka, SAN=[[7, 127.0.0.1]]}" in str(refused.value)
    with pytest.raises(ConfigError, match="ConfigException: Cannot remove the SSL keystore from an existing listener "
                                          "for which a keystore was configured."):
        _apply(reconfigurable, config, {STORE: None})
    with pytest.raises(ConfigError, match="InvalidConfigurationException: Failed to load PEM SSL keystore "):
        _apply(reconfigurable, config, {STORE: str(tmp_path / "absent.pem")})


def test_a_trust_store_cannot_be_added_to_a_listener_that_had_none(tmp_path, ca):
    trust = tmp_path / "ca.pem"
    trust.write_bytes(ca.identity.certificate_pem())
    config, listeners, reconfigurable = _listener(tmp_path, ca)
    loaded = listeners["SSL"]
    with pytest.raises(ConfigError, match="Cannot add SSL truststore to an existing listener for which no "
                                          "truststore was configured."):
        _apply(reconfigurable, config, {"listener.name.ssl.ssl.truststore.type": "PEM",
                                         "listener.name.ssl.ssl.truststore.location": str(trust)})
    assert listeners["SSL"] is loaded


def test_a_store_file_gone_or_unusable_does_not_refuse_the_brokers_other_changes(tmp_path, ca, caplog):
    """Kafka validates changed values only; a store file changed in place is reloaded after the
    change is stored, and one it cannot take (gone: FileBasedStore.modified is false; another
    subject) is logged, the store in force kept. Until now franz refused every change of this
    broker's configs, a connection limit too, while the file was gone or unusable."""
    import asyncio

    from franz.server.kafka_server import KafkaServer

    path = write_pem_key_store(tmp_path / "broker.pem", ca.broker(), ca)
    config = KafkaConfig({"node.id": "1", "log.dirs": str(tmp_path / "data"),
                          "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
                          "inter.broker.listener.name": "PLAINTEXT", "listener.name.ssl.ssl.keystore.type": "PEM",
                          STORE: str(path), "log.initial.task.delay.ms": "60000"})

    async def scenario():
        server = KafkaServer(config)
        await server.startup()
        try:
            listeners = server.socket_server.ssl_listeners
            loaded = listeners["SSL"]
            moved = tmp_path / "moved.pem"
            path.rename(moved)
            alter = server.controller.alter_broker_configs
            await asyncio.wait_for(alter("1", [("max.connections", 0, "100")], False), 30)
            assert listeners["SSL"] is loaded
            moved.rename(path)
            stamp = path.stat().st_mtime_ns
            write_pem_key_store(path, ca.broker(common_name="other"), ca)
            os.utime(path, ns=(stamp + 2_000_000_000,) * 2)
            await asyncio.wait_for(alter("1", [("max.connections", 0, "99")], False), 30)
            assert listeners["SSL"] is loaded
            assert server.controller.dynamic_broker_configs["1"] == {"max.connections": "99"}
        finally:
            await server.shutdown()

    asyncio.run(scenario())
    assert "Modification time of key store could not be obtained: " + str(path) in caplog.text
    assert "Keystore DistinguishedName does not match" in caplog.text
