"""Key stores as Java reads them: JKS and PKCS12 files made by keytool itself (either store type
reads either format), their passwords checked as KeyStore.load and KeyProtector check them."""

from __future__ import annotations

import pytest

import subprocess

from franz.common.java_key_store import KeyStoreError, load_key_store
from tests.support.tls import (PASSWORD, CertificateAuthority, keytool_or_skip, write_jks, write_keytool_trust_store,
                               write_pkcs12)


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


@pytest.fixture(scope="module")
def mixed(tmp_path_factory, stores):
    """Stores keytool made with a key entry (its own self-signed certificate, key password apart
    from the store's where the format allows) and the CA as a certificate entry beside it."""
    directory = tmp_path_factory.mktemp("mixed")
    keytool = keytool_or_skip()
    ca_file = directory / "ca.pem"
    ca_file.write_bytes(stores["ca"].identity.certificate_pem())
    made = {}
    for kind, key_password in (("PKCS12", PASSWORD), ("JKS", "key-secret")):
        path = directory / f"mixed.{kind.lower()}"
        subprocess.run([keytool, "-genkeypair", "-keystore", str(path), "-storetype", kind, "-storepass", PASSWORD,
                        "-keypass", key_password, "-alias", "k1", "-keyalg", "EC", "-dname", "CN=k1"],
                       check=True, capture_output=True, timeout=120)
        subprocess.run([keytool, "-importcert", "-noprompt", "-keystore", str(path), "-storetype", kind,
                        "-storepass", PASSWORD, "-alias", "ca", "-file", str(ca_file)],
                       check=True, capture_output=True, timeout=120)
        made[kind] = path
    return made


@pytest.mark.parametrize("kind, key_password", [("PKCS12", None), ("JKS", "key-secret")])
def test_a_store_with_a_key_and_a_certificate_entry_keeps_them_apart(stores, mixed, kind, key_password):
    store = load_key_store(mixed[kind].read_bytes(), PASSWORD, key_password)
    [entry] = store.keys
    assert [certificate.subject.rfc4514_string() for certificate in entry.chain] == ["CN=k1"]
    assert store.trusted == [stores["ca"].certificate]
    assert {certificate.subject.rfc4514_string() for certificate in store.trust_anchors()} == {
        "CN=k1", "CN=franz test CA"}


@pytest.mark.parametrize("password", [PASSWORD, None])
def test_a_trust_store_never_opens_its_keys(stores, mixed, password):
    """A JKS trust store whose key entry is under another password, or read without a password at
    all, gives its anchors: Java's trust manager never recovers a key."""
    store = load_key_store(mixed["JKS"].read_bytes(), password, None, recover_keys=False)
    assert store.keys[0].key is None
    assert len(store.trust_anchors()) == 2


def test_a_jceks_file_is_refused_naming_the_conversion():
    with pytest.raises(KeyStoreError, match="JCEKS"):
        load_key_store(bytes.fromhex("cececece00000002"), "x", None)
