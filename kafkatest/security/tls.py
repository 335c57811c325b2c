"""Certificates made at run time: a CA, a server certificate, client certificates.

Nothing is committed and nothing needs `keytool`: the `cryptography` package
writes every file a client needs. librdkafka reads PEM (`ssl.ca.location`,
`ssl.certificate.location`, `ssl.key.location`); kafka-clients read PEM
truststores and keystores (`ssl.truststore.type=PEM`, KIP-651) as well as the
PKCS12 client keystores written here for JVM tools that want them.
"""

from __future__ import annotations

import datetime
import ipaddress
import secrets
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from kafkatest.security import DEFAULT_HOSTS

#: The password of `CertificateAuthority.truststore_p12` (a truststore holds no secret).
TRUSTSTORE_PASSWORD = "kafkatest"
_VALIDITY = datetime.timedelta(days=2)


@dataclass(frozen=True)
class ClientCertificate:
    """A client's identity for mutual TLS."""

    #: Kafka's principal for it: ``User:`` + the subject DN (RFC 2253).
    principal: str
    cert_pem: Path
    key_pem: Path
    #: Certificate, key and CA in one PEM file (a JVM ``ssl.keystore.type=PEM`` file).
    keystore_pem: Path
    #: The same as PKCS12, protected by `keystore_password`.
    keystore_p12: Path
    keystore_password: str


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _name(common_name: str, unit: str | None = None) -> x509.Name:
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kafkatest")]
    if unit:
        attributes.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, unit))
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, common_name))
    return x509.Name(attributes)


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    # PKCS#8: the only unencrypted private key form Kafka's PEM keystore reads.
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )


def _pem_cert(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


class CertificateAuthority:
    """A CA that lives for one session and signs the broker's and clients' certificates."""

    def __init__(self, directory: Path, name: str = "kafkatest CA") -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self._key = _key()
        now = datetime.datetime.now(datetime.timezone.utc)
        subject = _name(name)
        self.certificate = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(subject)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .sign(self._key, hashes.SHA256())
        )
        #: The file every client trusts (librdkafka ``ssl.ca.location``; a JVM PEM truststore).
        self.ca_pem = directory / "ca.pem"
        self.ca_pem.write_bytes(_pem_cert(self.certificate))
        #: The same CA as a Java PKCS12 truststore (``ssl.truststore.type=PKCS12``,
        #: password `TRUSTSTORE_PASSWORD`), for JVM clients configured the classic way.
        self.truststore_p12 = directory / "truststore.p12"
        self.truststore_p12.write_bytes(
            pkcs12.serialize_java_truststore(
                [pkcs12.PKCS12Certificate(self.certificate, b"kafkatest-ca")],
                serialization.BestAvailableEncryption(TRUSTSTORE_PASSWORD.encode()),
            )
        )

    def _issue(
        self,
        subject: x509.Name,
        key: ec.EllipticCurvePrivateKey,
        usages: list[x509.ObjectIdentifier],
        hosts: tuple[str, ...] = (),
    ) -> x509.Certificate:
        now = datetime.datetime.now(datetime.timezone.utc)
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self.certificate.subject)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + _VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        )
        if hosts:
            names: list[x509.GeneralName] = []
            for host in hosts:
                try:
                    names.append(x509.IPAddress(ipaddress.ip_address(host)))
                except ValueError:
                    names.append(x509.DNSName(host))
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        return builder.sign(self._key, hashes.SHA256())

    def server_certificate(self, hosts: tuple[str, ...] = DEFAULT_HOSTS) -> ServerCertificate:
        """The broker's certificate, valid for each of `hosts` (IP addresses or names)."""
        key = _key()
        # Client use too: a broker is its own inter-broker client on a mutual-TLS listener.
        usages = [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
        cert = self._issue(_name(hosts[0]), key, usages, hosts)
        cert_pem = self.directory / "server.pem"
        key_pem = self.directory / "server.key"
        keystore_pem = self.directory / "server-keystore.pem"
        cert_pem.write_bytes(_pem_cert(cert) + _pem_cert(self.certificate))
        key_pem.write_bytes(_pem_key(key))
        key_pem.chmod(0o600)
        keystore_pem.write_bytes(_pem_key(key) + _pem_cert(cert) + _pem_cert(self.certificate))
        keystore_pem.chmod(0o600)
        return ServerCertificate(cert_pem, key_pem, keystore_pem)

    def client_certificate(self, name: str, unit: str | None = None) -> ClientCertificate:
        """A client certificate whose subject is ``CN=<name>[,OU=<unit>],O=kafkatest``."""
        key = _key()
        subject = _name(name, unit)
        cert = self._issue(subject, key, [ExtendedKeyUsageOID.CLIENT_AUTH])
        stem = "client-" + "".join(c if c.isalnum() or c in "-_" else "_" for c in name)
        cert_pem = self.directory / f"{stem}.pem"
        key_pem = self.directory / f"{stem}.key"
        keystore_pem = self.directory / f"{stem}-keystore.pem"
        keystore_p12 = self.directory / f"{stem}.p12"
        password = secrets.token_urlsafe(12)
        cert_pem.write_bytes(_pem_cert(cert))
        key_pem.write_bytes(_pem_key(key))
        keystore_pem.write_bytes(_pem_key(key) + _pem_cert(cert) + _pem_cert(self.certificate))
        keystore_p12.write_bytes(
            pkcs12.serialize_key_and_certificates(
                name.encode(),
                key,
                cert,
                [self.certificate],
                serialization.BestAvailableEncryption(password.encode()),
            )
        )
        for path in (key_pem, keystore_pem, keystore_p12):
            path.chmod(0o600)
        return ClientCertificate(
            principal=f"User:{subject.rfc4514_string()}",
            cert_pem=cert_pem,
            key_pem=key_pem,
            keystore_pem=keystore_pem,
            keystore_p12=keystore_p12,
            keystore_password=password,
        )


@dataclass(frozen=True)
class ServerCertificate:
    #: The certificate followed by the CA's.
    cert_pem: Path
    key_pem: Path
    #: Key, certificate and CA in one file (Kafka's ``ssl.keystore.type=PEM``).
    keystore_pem: Path


def server_ssl_context(
    ca: CertificateAuthority, server: ServerCertificate, client_auth: str = "none"
) -> ssl.SSLContext:
    """The emulator listener's TLS, with Kafka's ``ssl.client.auth`` policy."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(server.cert_pem, server.key_pem)
    if client_auth != "none":
        context.load_verify_locations(ca.ca_pem)
        context.verify_mode = ssl.CERT_REQUIRED if client_auth == "required" else ssl.CERT_OPTIONAL
    return context
