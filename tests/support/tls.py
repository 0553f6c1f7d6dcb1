"""Certificates and key stores for TLS tests: a CA, a broker certificate for 127.0.0.1 and
localhost (clients check the host by default), and client certificates, written as PEM, as
PKCS12 (cryptography) and as JKS and PKCS12 by Java's own keytool, which is what Kafka users
hand a broker."""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

PASSWORD = "store-secret"
TIMEOUT_S = 120


@dataclass
class Identity:
    key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
    certificate: x509.Certificate

    def key_pem(self, password: str | None = None) -> bytes:
        encryption = (serialization.BestAvailableEncryption(password.encode()) if password is not None
                      else serialization.NoEncryption())
        return self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption)

    def certificate_pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)


def _name(*attributes: tuple) -> x509.Name:
    return x509.Name([x509.NameAttribute(oid, value) for oid, value in attributes])


class CertificateAuthority:
    def __init__(self, common_name: str = "franz test CA") -> None:
        self.identity = self._issue(_name((NameOID.COMMON_NAME, common_name)), None, ca=True)

    @property
    def certificate(self) -> x509.Certificate:
        return self.identity.certificate

    def _issue(self, subject: x509.Name, alternative_names: list | None, ca: bool = False,
               key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | None = None) -> Identity:
        key = key or ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.timezone.utc)
        issuer_key = key if ca else self.identity.key
        builder = (x509.CertificateBuilder().subject_name(subject)
                   .issuer_name(subject if ca else self.identity.certificate.subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=7))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if alternative_names:
            builder = builder.add_extension(x509.SubjectAlternativeName(alternative_names), critical=False)
        return Identity(key, builder.sign(issuer_key, hashes.SHA256()))

    def broker(self, rsa_key: bool = False, common_name: str = "localhost",
               host_names: tuple[str, ...] = ("localhost",)) -> Identity:
        """A broker's certificate for `common_name`, its alternative names the host names and 127.0.0.1."""
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048) if rsa_key else None
        return self._issue(_name((NameOID.COMMON_NAME, common_name)),
                           [*map(x509.DNSName, host_names), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))],
                           key=key)

    def client(self, subject: x509.Name) -> Identity:
        return self._issue(subject, None)


def client_name(common_name: str, unit: str = "eng") -> x509.Name:
    """C=US, O=franz, OU=<unit>, CN=<common_name>: Java writes it CN=<common_name>,OU=<unit>,O=franz,C=US."""
    return _name((NameOID.COUNTRY_NAME, "US"), (NameOID.ORGANIZATION_NAME, "franz"),
                 (NameOID.ORGANIZATIONAL_UNIT_NAME, unit), (NameOID.COMMON_NAME, common_name))


def write_pem_key_store(path: Path, identity: Identity, ca: CertificateAuthority,
                        password: str | None = None) -> Path:
    """Kafka's PEM key store file: the PKCS#8 key, then the chain."""
    path.write_bytes(identity.key_pem(password) + identity.certificate_pem() + ca.identity.certificate_pem())
    return path


def write_pkcs12(path: Path, identity: Identity, ca: CertificateAuthority, password: str = PASSWORD) -> Path:
    path.write_bytes(pkcs12.serialize_key_and_certificates(
        b"broker", identity.key, identity.certificate, [ca.certificate],
        serialization.BestAvailableEncryption(password.encode())))
    return path


def keytool_or_skip() -> str:
    keytool = shutil.which("keytool")
    if keytool is None:
        pytest.skip("keytool (a JDK) is not installed")
    return keytool


def write_jks(path: Path, pkcs12_path: Path, password: str = PASSWORD, key_password: str | None = None) -> Path:
    """The PKCS12 store converted by keytool into the JKS format (0xFEEDFEED), as Kafka's
    documentation has users make broker key stores."""
    command = [keytool_or_skip(), "-importkeystore", "-noprompt", "-srckeystore", str(pkcs12_path),
               "-srcstoretype", "PKCS12", "-srcstorepass", PASSWORD, "-destkeystore", str(path),
               "-deststoretype", "JKS", "-deststorepass", password]
    if key_password is not None:
        command += ["-destkeypass", key_password, "-srcalias", "broker", "-srckeypass", PASSWORD]
    subprocess.run(command, check=True, capture_output=True, timeout=TIMEOUT_S)
    return path


def write_keytool_trust_store(path: Path, ca: CertificateAuthority, store_type: str,
                              password: str = PASSWORD) -> Path:
    """A trust store holding the CA, made by keytool -importcert."""
    ca_file = path.with_suffix(".ca.pem")
    ca_file.write_bytes(ca.identity.certificate_pem())
    subprocess.run([keytool_or_skip(), "-importcert", "-noprompt", "-alias", "ca", "-file", str(ca_file),
                    "-keystore", str(path), "-storetype", store_type, "-storepass", password],
                   check=True, capture_output=True, timeout=TIMEOUT_S)
    return path
