"""SslPrincipalMapper's rules (Kafka's SslPrincipalMapperTest cases), and subjects' names
written as Java's X500Principal.getName() writes them: checked against the JDK itself."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.name import _ASN1Type
from cryptography.x509.oid import NameOID

from franz.common.ssl_principal_mapper import NoMatchingRule, SslPrincipalMapper, distinguished_name
from tests.support.tls import CertificateAuthority

JAVA_PRINTER = """
import java.io.FileInputStream;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;

public class PrintSubject {
    public static void main(String[] args) throws Exception {
        CertificateFactory factory = CertificateFactory.getInstance("X.509");
        for (String path : args) {
            try (FileInputStream in = new FileInputStream(path)) {
                X509Certificate certificate = (X509Certificate) factory.generateCertificate(in);
                System.out.println(certificate.getSubjectX500Principal().getName());
            }
        }
    }
}
"""


def _attribute(oid, value, kind=None):
    return x509.NameAttribute(oid, value, kind) if kind is not None else x509.NameAttribute(oid, value)


SUBJECTS = [
    x509.Name([_attribute(NameOID.COUNTRY_NAME, "US"), _attribute(NameOID.ORGANIZATION_NAME, "franz"),
               _attribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "eng"), _attribute(NameOID.COMMON_NAME, "alice")]),
    # values that need escaping: the RFC 2253 specials, leading and trailing spaces, a leading #
    x509.Name([_attribute(NameOID.COMMON_NAME, ' Smith, John+Jr "J" <j>; a=b\\c # ')]),
    x509.Name([_attribute(NameOID.COMMON_NAME, "#hash")]),
    # attributes without an RFC 2253 keyword, and a multi-valued RDN
    x509.Name([x509.RelativeDistinguishedName([_attribute(NameOID.COMMON_NAME, "bob"),
                                               _attribute(NameOID.USER_ID, "b42")])] + [
        x509.RelativeDistinguishedName([attribute]) for attribute in (
            _attribute(NameOID.EMAIL_ADDRESS, "bob@example.com"), _attribute(NameOID.SERIAL_NUMBER, "1234"),
            _attribute(NameOID.DOMAIN_COMPONENT, "example"), _attribute(NameOID.STATE_OR_PROVINCE_NAME, "CA"),
            _attribute(NameOID.LOCALITY_NAME, "San Jose"), _attribute(NameOID.STREET_ADDRESS, "1 Main St"),
            _attribute(NameOID.TITLE, "dev"))]),
    # string types: UTF-8 beyond ASCII, BMPString, PrintableString
    x509.Name([_attribute(NameOID.COMMON_NAME, "Zoë Ünïcode"),
               _attribute(NameOID.ORGANIZATION_NAME, "bmp", _ASN1Type.BMPString),
               _attribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "printable", _ASN1Type.PrintableString)]),
    # bytes beyond ASCII in the types JDK 17 also reads as UTF-8
    x509.Name([_attribute(NameOID.COMMON_NAME, "café", _ASN1Type.T61String),
               _attribute(NameOID.ORGANIZATION_NAME, "x😀", _ASN1Type.IA5String),
               _attribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "é", _ASN1Type.BMPString)]),
]


def test_names_are_written_as_javas_x500_principal_writes_them(tmp_path):
    javac, java = shutil.which("javac"), shutil.which("java")
    if javac is None or java is None:
        pytest.skip("no JDK")
    ca = CertificateAuthority()
    paths = []
    for index, subject in enumerate(SUBJECTS):
        path = tmp_path / f"subject-{index}.der"
        path.write_bytes(ca.client(subject).certificate.public_bytes(Encoding.DER))
        paths.append(path)
    (tmp_path / "PrintSubject.java").write_text(JAVA_PRINTER)
    subprocess.run([javac, "PrintSubject.java"], cwd=tmp_path, check=True, timeout=120)
    printed = subprocess.run([java, "-cp", str(tmp_path), "PrintSubject", *map(str, paths)], check=True,
                             capture_output=True, timeout=120, encoding="utf-8").stdout.splitlines()
    ours = [distinguished_name(x509.load_der_x509_certificate(path.read_bytes())) for path in paths]
    assert ours == printed


@pytest.mark.parametrize("rules, name, expected", [
    ("DEFAULT", "CN=Duke,OU=JavaSoft,O=Sun Microsystems,C=US", "CN=Duke,OU=JavaSoft,O=Sun Microsystems,C=US"),
    (None, "CN=Duke,OU=JavaSoft", "CN=Duke,OU=JavaSoft"),
    ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT", "CN=kafka1,OU=ServiceUsers,O=Org,C=US", "kafka1"),
    ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,DEFAULT", "CN=Duke,OU=JavaSoft,O=Sun", "CN=Duke,OU=JavaSoft,O=Sun"),
    ("RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L", "CN=Duke,OU=JavaSoft,O=Sun,L=SC,ST=CA,C=US",
     "duke@javasoft"),
    ("RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/U", "CN=Duke,OU=JavaSoft,O=Sun,L=SC,ST=CA,C=US",
     "DUKE@JAVASOFT"),
    ("RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U", "cn=duke,ou=javasoft,dc=sun,dc=com", "DUKE@JAVASOFT"),
    (r"RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT", r"CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz", r"Tkac\, Adam"),
    ("RULE:^CN=([^,ADEFLTU]+)(,.*|$)/$1/,RULE:^CN=(.*)/$1/L", "CN=Adam,OU=ITZ", "adam,ou=itz"),  # the second
    ("RULE:^OU=(.*)/$2/", "OU=x", "$2"),  # a group the pattern lacks stays text
    ("RULE:^CN=(.*?),OU=(.*)$/$1\\/$2/", "CN=a,OU=b", "a/b"),  # an escaped slash in the replacement
    (" RULE:^CN=(.*)$/$1/L ,  DEFAULT ", "OU=x", "OU=x"),
])
def test_rules_map_names_as_kafka_does(rules, name, expected):
    assert SslPrincipalMapper(rules).name(name) == expected


def test_a_name_no_rule_maps_is_an_error():
    mapper = SslPrincipalMapper("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/")
    with pytest.raises(NoMatchingRule, match="No rules apply to CN=Duke"):
        mapper.name("CN=Duke,OU=JavaSoft")


@pytest.mark.parametrize("rules", ["DEFAULT,DEFAULT,garbage", "RULE:^CN=(.*)$/$1/X", "RULE:^CN=(.*)$/$1",
                                   "RULE:^CN=(.*)/$1/L,junk"])
def test_a_malformed_rule_is_refused(rules):
    with pytest.raises(ValueError, match="Invalid rule"):
        SslPrincipalMapper(rules)
