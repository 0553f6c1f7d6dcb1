"""Key stores as Java reads them: JKS and PKCS12 files made by keytool itself (either store type
reads either format), their passwords checked as KeyStore.load and KeyProtector check them."""

from __future__ import annotations

import pytest

from franz.common.java_key_store import KeyStoreError, load_key_store
from tests.support.tls import PASSWORD, CertificateAuthority, write_jks, write_keytool_trust_store, write_pkcs12


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    directory = tmp_path_factory.mktemp("stores")
    ca = CertificateAuthority()
    broker = ca.broker()
    pkcs12 = write_pkcs12(directory / "broker.p12", broker, ca)
    return {
        "ca": ca, "broker": broker, "pkcs12": pkcs12,
        "jks": write_jks(directory / "broker.jks", pkcs12),
        "jks-key-password": write_jks(directory / "broker-key.jks", pkcs12, password="other-secret",
                                      key_password="key-secret"),
        "trust-jks": write_keytool_trust_store(directory / "trust.jks", ca, "JKS"),
        "trust-pkcs12": write_keytool_trust_store(directory / "trust.p12", ca, "PKCS12"),
    }


@pytest.mark.parametrize("name, password, key_password", [
    ("pkcs12", PASSWORD, None), ("jks", PASSWORD, None), ("jks", PASSWORD, PASSWORD),
    ("jks-key-password", "other-secret", "key-secret")])
def test_a_key_store_gives_its_key_and_chain(stores, name, password, key_password):
    store = load_key_store(stores[name].read_bytes(), password, key_password)
    [entry] = store.keys
    assert entry.alias == "broker"
    assert entry.chain == [stores["broker"].certificate, stores["ca"].certificate]
    assert entry.key.private_numbers() == stores["broker"].key.private_numbers()


@pytest.mark.parametrize("name", ["trust-jks", "trust-pkcs12"])
def test_a_trust_store_gives_its_certificates(stores, name):
    store = load_key_store(stores[name].read_bytes(), PASSWORD, None)
    assert store.keys == [] and store.trusted == [stores["ca"].certificate]


def test_a_jks_trust_store_without_password_is_read_unchecked(stores):
    """KeyStore.load(in, null): no integrity check, as Kafka allows a trust store without password."""
    assert load_key_store(stores["trust-jks"].read_bytes(), None, None).trusted == [stores["ca"].certificate]


@pytest.mark.parametrize("name, password, key_password, message", [
    ("jks", "wrong-secret", None, "Keystore was tampered with, or password was incorrect"),
    ("jks-key-password", "other-secret", "wrong-secret", "Cannot recover key"),
    ("jks-key-password", "other-secret", None, "Cannot recover key"),  # the store's password is not the key's
    ("pkcs12", "wrong-secret", None, "keystore password was incorrect"),
    ("trust-pkcs12", "wrong-secret", None, "keystore password was incorrect")])
def test_a_wrong_password_is_refused_with_javas_words(stores, name, password, key_password, message):
    with pytest.raises(KeyStoreError, match=message):
        load_key_store(stores[name].read_bytes(), password, key_password)


def test_a_damaged_jks_file_is_refused(stores):
    data = bytearray(stores["jks"].read_bytes())
    data[60] ^= 0xFF
    with pytest.raises(KeyStoreError):
        load_key_store(bytes(data), PASSWORD, None)
    with pytest.raises(KeyStoreError, match="cut short"):
        load_key_store(bytes(data[:40]), None, None)


def test_a_jceks_file_is_refused_naming_the_conversion():
    with pytest.raises(KeyStoreError, match="JCEKS"):
        load_key_store(bytes.fromhex("cececece00000002"), "x", None)
