"""Key stores as java.security.KeyStore loads them for Kafka's DefaultSslEngineFactory:
`ssl.keystore.type` / `ssl.truststore.type` JKS (Kafka's default) or PKCS12.

Since Java 9 both types read both file formats (keystore.type.compat): a "JKS" store may be a
PKCS12 file, as keytool writes by default now, and the other way round. So the format is told
by the file's first bytes, not by the type. PKCS12 is read with `cryptography`; JKS, which no
maintained Python library reads, by hand from the format of sun.security.provider.JavaKeyStore:

    magic 0xFEEDFEED, version (1 or 2), entry count, then per entry:
      tag (1 = private key, 2 = trusted certificate), alias (writeUTF), creation time (long),
      a key: its protected key (int length + EncryptedPrivateKeyInfo DER), its chain
             (count, then per certificate: type (writeUTF, version 2 only), int length + DER)
      a certificate: type (version 2 only), int length + DER
    SHA-1(password as UTF-16BE + "Mighty Aphrodite" + everything before it)

A key is protected by KeyProtector: salt (20 bytes), the PKCS#8 key XORed with the stream
SHA-1(password + salt), SHA-1(password + previous), ..., then SHA-1(password + key) to check.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.serialization import load_der_private_key, pkcs12

from franz.common import der

JKS_MAGIC = 0xFEEDFEED
JCEKS_MAGIC = 0xCECECECE
_PRIVATE_KEY_ENTRY = 1
_TRUSTED_CERT_ENTRY = 2
_INTEGRITY_SALT = b"Mighty Aphrodite"
# KeyProtector's algorithm: Sun's JKS key protection (no standard name)
_KEY_PROTECTOR_OID = "1.3.6.1.4.1.42.2.17.1.1"
_SHA1_BYTES = 20


class KeyStoreError(ValueError):
    """The store cannot be read: its words are those of the Java exception Kafka would show."""


@dataclass
class KeyEntry:
    alias: str
    key: PrivateKeyTypes | None  # None when loaded as a trust store: its key is never recovered
    chain: list[x509.Certificate]  # the entry's own certificate first


@dataclass
class KeyStore:
    keys: list[KeyEntry] = field(default_factory=list)
    trusted: list[x509.Certificate] = field(default_factory=list)  # the certificate entries
    trusted_aliases: list[str] = field(default_factory=list)  # theirs, index for index

    def trust_anchors(self) -> list[x509.Certificate]:
        """What Java's TrustManagerFactory trusts of a store: its certificate entries and each key
        entry's own certificate."""
        return self.trusted + [entry.chain[0] for entry in self.keys if entry.chain]


def _password_bytes(password: str) -> bytes:
    """KeyProtector's and the integrity check's password: each Java char as two bytes."""
    return password.encode("utf-16-be")


def load_key_store(data: bytes, store_password: str | None, key_password: str | None,
                   recover_keys: bool = True) -> KeyStore:
    """The store in `data` (JKS or PKCS12, whichever it is). `store_password` None skips the
    JKS integrity check, as KeyStore.load(in, null) does; a key is recovered with
    `key_password`, else the store's password (FileBasedStore.keyPassword), unless
    `recover_keys` is false (a trust store: Java never opens its keys)."""
    if len(data) >= 4 and struct.unpack_from(">I", data)[0] == JKS_MAGIC:
        return _load_jks(data, store_password, key_password if key_password is not None else store_password,
                         recover_keys)
    if len(data) >= 4 and struct.unpack_from(">I", data)[0] == JCEKS_MAGIC:
        raise KeyStoreError("JCEKS key stores are not read by franz: convert it with keytool -importkeystore "
                            "-deststoretype PKCS12")
    return _load_pkcs12(data, store_password, key_password if recover_keys else None)


def _load_pkcs12(data: bytes, store_password: str | None, key_password: str | None) -> KeyStore:
    """A PKCS12 file's key is under its store password (keytool keeps the two equal), so another
    key password fails as Java's KeyManagerFactory fails. Its key's chain is built from the leaf
    by issuer, as PKCS12KeyStore builds it; every other certificate is a certificate entry. (Java
    takes as certificate entries only those keytool marked trusted: a store openssl made without
    that attribute trusts nothing in Java, and all its certificates here.)"""
    password = store_password.encode() if store_password is not None else None
    try:
        loaded = pkcs12.load_pkcs12(data, password)
    except ValueError as exc:
        # PKCS12KeyStore's words for a MAC that does not verify, and for a file that is no store
        raise KeyStoreError(f"keystore password was incorrect, or the file is not a key store ({exc})") from None
    store = KeyStore()
    others = [extra.certificate for extra in loaded.additional_certs]
    names = {id(extra.certificate): (extra.friendly_name or b"").decode(errors="replace")
             for extra in loaded.additional_certs}
    if loaded.key is not None and loaded.cert is not None:
        if key_password is not None and key_password != store_password:
            raise KeyStoreError("Get Key failed: the key of a PKCS12 store is under its store password, which "
                                "ssl.key.password is not")
        chain = [loaded.cert.certificate]
        while chain[-1].issuer != chain[-1].subject:
            issuer = next((certificate for certificate in others if certificate.subject == chain[-1].issuer
                           and certificate not in chain), None)
            if issuer is None:
                break
            chain.append(issuer)
        alias = (loaded.cert.friendly_name or b"").decode(errors="replace")
        store.keys.append(KeyEntry(alias, loaded.key, chain))
        others = [certificate for certificate in others if certificate not in chain]
    elif loaded.cert is not None:
        others.insert(0, loaded.cert.certificate)
        names[id(loaded.cert.certificate)] = (loaded.cert.friendly_name or b"").decode(errors="replace")
    store.trusted = others
    store.trusted_aliases = [names.get(id(certificate), "") for certificate in others]
    return store


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def take(self, count: int) -> bytes:
        if count < 0 or self.pos + count > len(self.data):
            raise KeyStoreError("Invalid keystore format: cut short")
        chunk = self.data[self.pos:self.pos + count]
        self.pos += count
        return chunk

    def int32(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    def utf(self) -> str:
        """DataInputStream.readUTF: a two-byte length, then modified UTF-8 (plain UTF-8 for
        every alias keytool writes, save NUL)."""
        length = struct.unpack(">H", self.take(2))[0]
        return self.take(length).replace(b"\xc0\x80", b"\x00").decode("utf-8", errors="replace")


def _load_jks(data: bytes, store_password: str | None, key_password: str | None, recover_keys: bool) -> KeyStore:
    reader = _Reader(data)
    reader.take(4)
    version = reader.int32()
    if version not in (1, 2):
        raise KeyStoreError("Invalid keystore format")
    store = KeyStore()
    protected_keys: list[tuple[str, bytes, list[x509.Certificate]]] = []
    for _ in range(reader.int32()):
        tag = reader.int32()
        alias = reader.utf()
        reader.take(8)  # creation date
        if tag == _PRIVATE_KEY_ENTRY:
            protected = reader.take(reader.int32())
            chain = []
            for _ in range(reader.int32()):
                if version == 2:
                    reader.utf()  # "X.509"
                chain.append(_certificate(reader.take(reader.int32())))
            protected_keys.append((alias, protected, chain))
        elif tag == _TRUSTED_CERT_ENTRY:
            if version == 2:
                reader.utf()
            store.trusted.append(_certificate(reader.take(reader.int32())))
            store.trusted_aliases.append(alias)
        else:
            raise KeyStoreError("Unrecognized keystore entry: " + str(tag))
    if store_password is not None:
        expected = hashlib.sha1(_password_bytes(store_password) + _INTEGRITY_SALT + data[:reader.pos]).digest()
        if reader.take(_SHA1_BYTES) != expected:
            raise KeyStoreError("Keystore was tampered with, or password was incorrect")
    for alias, protected, chain in protected_keys:
        if not recover_keys:
            store.keys.append(KeyEntry(alias, None, chain))
            continue
        if key_password is None:
            raise KeyStoreError(f"Cannot recover key {alias}: no key password")
        store.keys.append(KeyEntry(alias, _recover_key(protected, key_password), chain))
    return store


def _certificate(encoded: bytes) -> x509.Certificate:
    try:
        return x509.load_der_x509_certificate(encoded)
    except ValueError as exc:
        raise KeyStoreError(f"Invalid keystore format: a certificate does not parse ({exc})") from None


def _recover_key(encrypted_key_info: bytes, password: str) -> PrivateKeyTypes:
    """KeyProtector.recover: the PKCS#8 private key inside a JKS EncryptedPrivateKeyInfo."""
    try:
        outer = der.expect(der.read_tlv(encrypted_key_info, 0), der.SEQUENCE)
        algorithm, data = der.children(encrypted_key_info, outer)[:2]
        algorithm_oid = der.oid(encrypted_key_info, der.children(encrypted_key_info, algorithm)[0])
        protected = encrypted_key_info[der.expect(data, der.OCTET_STRING).start:data.end]
    except (ValueError, IndexError):
        raise KeyStoreError("Invalid keystore format: a key entry does not parse") from None
    if algorithm_oid != _KEY_PROTECTOR_OID:
        raise KeyStoreError("Unsupported key protection algorithm")
    if len(protected) < 2 * _SHA1_BYTES:
        raise KeyStoreError("Cannot recover key")
    salt, encrypted, check = (protected[:_SHA1_BYTES], protected[_SHA1_BYTES:-_SHA1_BYTES],
                              protected[-_SHA1_BYTES:])
    secret = _password_bytes(password)
    stream, digest = bytearray(), salt
    while len(stream) < len(encrypted):
        digest = hashlib.sha1(secret + digest).digest()
        stream += digest
    plain = bytes(a ^ b for a, b in zip(encrypted, stream))
    if hashlib.sha1(secret + plain).digest() != check:
        raise KeyStoreError("Cannot recover key")
    return load_der_private_key(plain, None)
