"""The GSSAPI (Kerberos V5) server of SASL listeners: the JDK's GssKrb5Server as Kafka's
SaslServerAuthenticator creates it (createSaslKerberosServer), with Kafka's
SaslServerCallbackHandler deciding its authorization, over MIT Kerberos' GSS-API (the optional
package `gssapi`; `pip install 'franz[kerberos]'`).

The exchange (RFC 4752), step by step as GssKrb5Server takes it:
1. The client's tokens go to GSS_Accept_sec_context until the context is established. A token the
   acceptor answers with (the AP-REP of mutual authentication) is sent back, and the client then
   sends an empty token; if there is none, step 2 follows at once.
2. The server sends 4 octets, wrapped with integrity only: the protections it offers, then its
   largest receive buffer (3 octets, big-endian). Kafka passes no javax.security.sasl.qop, so the
   offer is "auth" alone (1) and the buffer GssKrb5Base's default, 65536.
3. The client answers, wrapped, the protection it chose, its own buffer size and an optional
   authorization id. The server completes with no challenge. Kafka's callback handler authorizes any
   authorization id and takes the authenticated name, the client's Kerberos principal, in its place.

The acceptor is bound to the service principal of the listener's JAAS entry (its Krb5LoginModule
`principal`) as `<service>@<host>`, or to every key of the keytab when that principal names no
host (the JDK's unbound server, which then checks that the client asked for the same service).
Credentials are acquired from the keytab for each connection, as the JDK reads a KeyTab when it
needs keys, so a keytab rotated in place serves the next connection.

A GSS failure is a SaslError (the client hears Kafka's generic message), except the Kerberos
errors Kafka's KerberosError calls retriable (client or ticket not yet valid, a replay): Kafka
rethrows those as I/O errors, closing the connection unanswered, which is SaslServerFault here.
The connection's principal, the authorization id mapped by sasl.kerberos.principal.to.local.rules
(DefaultKafkaPrincipalBuilder), is the authenticator's to make.

MIT's calls block the thread that makes them, at times for long: acquiring the acceptor's
credentials asks DNS to canonicalize the host unless krb5.conf sets dns_canonicalize_hostname =
false, and accepting reads the keytab and writes the replay cache, a file under a lock that any
other acceptor process of the same user may hold. Kafka makes them on its network threads, which
such a wait stalls with their connections; franz's single event loop would stall every connection,
so the authenticator has each step evaluated on a few threads of its own (evaluate_in_thread).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
from collections.abc import MutableMapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final, NoReturn

from franz.common.system_properties import system_property
from franz.server.oauth_bearer_sasl_server import SaslServerFault
from franz.server.scram_sasl_server import SaslError

if TYPE_CHECKING:
    from franz.common.kerberos_name import KerberosShortNamer

logger = logging.getLogger(__name__)

GSSAPI: Final = "GSSAPI"
LOGIN_MODULE: Final = "com.sun.security.auth.module.Krb5LoginModule"
NO_PROTECTION: Final = 1  # GssKrb5Base's "auth": the only protection Kafka's brokers offer
RECEIVE_MAX_BUFFER_SIZE: Final = 65536  # GssKrb5Base's default javax.security.sasl.maxbuf
# KerberosError's retriable codes: CLIENT_NOT_YET_VALID, TICKET_NOT_YET_VALID, REPLAY
RETRIABLE_KERBEROS_ERRORS: Final = frozenset((21, 33, 34))
# MIT's krb5 error table: a Kerberos protocol error n is reported as this base + n
_KRB5_ERROR_TABLE_BASE: Final = -1765328384

# as many as a Kafka listener has network threads by default (num.network.threads): a wait in MIT's
# calls holds up at most this many GSSAPI exchanges, and nothing else
_ACCEPTOR_THREADS: Final = ThreadPoolExecutor(max_workers=3, thread_name_prefix="gssapi-acceptor")

KRB5_CONF_PROPERTY: Final = "java.security.krb5.conf"


def use_krb5_config_of_kafka_opts(environ: MutableMapping[str, str] = os.environ) -> None:
    """Where a Kafka broker's operator names the Kerberos configuration, a -Djava.security.krb5.conf
    option of KAFKA_OPTS, MIT's libraries read it from KRB5_CONFIG: set that to it (the JVM reads
    no KRB5_CONFIG, so the option ranks first). Called before the first use of the libraries."""
    path = system_property(KRB5_CONF_PROPERTY, environ)
    if path is not None:
        environ["KRB5_CONFIG"] = path


class KerberosLoginError(Exception):
    """The broker's Kerberos login at startup failed (Kafka's LoginException): startup fails."""


@dataclasses.dataclass(frozen=True)
class KerberosService:
    """A SASL listener's Kerberos side: its service principal (Krb5LoginModule's `principal`,
    parsed as KerberosName: service name, host or None), its keytab, and the listener's short
    namer (sasl.kerberos.principal.to.local.rules over the machine's default realm)."""
    principal: str
    service_name: str
    host_name: str | None
    keytab: str
    short_namer: KerberosShortNamer
    login_to_kdc: bool = True  # Krb5LoginModule's isInitiator (true unless set otherwise)

    def login(self) -> None:
        """What Kafka's KerberosLogin does at startup when isInitiator holds: get a ticket-granting
        ticket with the keytab's key from the KDC. franz needs no ticket (it only accepts), but the
        login is how a Kafka broker with a stale keytab or no reachable KDC refuses to start rather
        than failing every client: here a ticket for the broker's own principal is asked for (in a
        ccache of this process's memory), which takes the same AS exchange. Blocking: off the loop.
        KerberosLoginError when the KDC refuses or cannot be reached."""
        import gssapi
        name = gssapi.Name(self.principal, gssapi.NameType.kerberos_principal)
        try:
            credentials = gssapi.Credentials(name=name, usage="initiate", store={
                "client_keytab": self.keytab, "ccache": f"MEMORY:franz-login-{id(self)}"})
            gssapi.SecurityContext(name=name, creds=credentials, usage="initiate",
                                   mech=gssapi.MechType.kerberos).step()
        except gssapi.exceptions.GSSError as exc:
            raise KerberosLoginError(f"Cannot log in as {self.principal} with the keytab {self.keytab} "
                                     f"(javax.security.auth.login.LoginException in Kafka): {exc}") from exc
        logger.info("[Principal=%s]: Successfully logged in.", self.principal)

    def acceptor_credentials(self) -> Any:
        """GSS acceptor credentials from the keytab: bound to `<service>@<host>` when the
        principal names a host, else to any key of the keytab. gssapi's errors go through."""
        import gssapi
        name = None
        if self.host_name is not None:
            name = gssapi.Name(f"{self.service_name}@{self.host_name}", gssapi.NameType.hostbased_service)
        return gssapi.Credentials(name=name, usage="accept", store={"keytab": self.keytab})


def check_keytab(principal: str, keytab: str) -> None:
    """What Kafka's Krb5LoginModule login finds at startup: the keytab holds keys for exactly this
    principal (its realm the default one when it names none). gssapi's errors go through."""
    import gssapi
    name = gssapi.Name(principal, gssapi.NameType.kerberos_principal)
    gssapi.Credentials(name=name, usage="accept", store={"keytab": keytab}).inquire()


def kerberos_error_code(exc: Exception) -> int | None:
    """The Kerberos protocol error number behind a GSS error (its minor status), if it is one."""
    minor = getattr(exc, "min_code", None)
    if not isinstance(minor, int):
        return None
    signed = minor - (1 << 32) if minor >= 1 << 31 else minor
    number = signed - _KRB5_ERROR_TABLE_BASE
    return number if 0 <= number < 128 else None


class GssapiSaslServer:
    """One connection's GSSAPI exchange (see the module doc). `authorization_id` is the client's
    Kerberos principal (e.g. alice@EXAMPLE.COM) once complete, None before."""

    def __init__(self, service: KerberosService) -> None:
        import gssapi
        self._gssapi = gssapi
        self._service = service
        self._context: Any = None  # made at the first token, so that a keytab gone fails that exchange
        self._stage = 0
        self._peer = ""
        self.authorization_id: str | None = None

    def evaluate(self, token: bytes) -> bytes | None:
        """GssKrb5Server.evaluateResponse: the challenge for the client's response, None where
        Java's is null (no context token, and the last step)."""
        if self.authorization_id is not None:
            raise SaslError("SASL authentication already complete")
        if self._stage == 1:
            return self._offer_protection(token)
        if self._stage == 2:
            return self._take_client_choice(token)
        if self._context is None:
            try:
                self._context = self._gssapi.SecurityContext(creds=self._service.acceptor_credentials(),
                                                             usage="accept")
            except self._gssapi.exceptions.GSSError as exc:  # GssKrb5Server's constructor
                self._raise(exc, "Failure to initialize security context")
        try:
            answer = self._context.step(bytes(token))
            # a failure that comes with a KRB-ERROR token for the client is raised only here
            complete = self._context.complete
        except self._gssapi.exceptions.GSSError as exc:
            self._raise(exc, "GSS initiate failed")
        if not complete:
            return answer
        self._stage = 1
        self._peer = str(self._context.initiator_name)
        target = str(self._context.target_name)
        logger.debug("Peer name is : %s, my name is : %s", self._peer, target)
        if self._service.host_name is None:  # an unbound acceptor: the client must have asked for our service
            requested = target.replace("@", "/").split("/")[0]
            if requested.lower() != self._service.service_name.lower():
                raise SaslError(f"GSS context targ name protocol error: {target}")
        if answer is None:
            return self._offer_protection(b"")
        return answer

    async def evaluate_in_thread(self, token: bytes) -> bytes | None:
        """evaluate on an acceptor thread, the event loop free while MIT's calls wait (module doc).
        The steps of one exchange come one at a time, so its context is never used by two threads
        at once."""
        return await asyncio.get_running_loop().run_in_executor(_ACCEPTOR_THREADS, self.evaluate, token)

    def _offer_protection(self, token: bytes) -> bytes:
        """doHandshake1: after the context, the client sends nothing; the offer goes wrapped."""
        if token:
            raise SaslError("Handshake expecting no response data from server")
        offer = bytes([NO_PROTECTION]) + RECEIVE_MAX_BUFFER_SIZE.to_bytes(3, "big")
        self._stage = 2
        try:
            return self._context.wrap(offer, False).message
        except self._gssapi.exceptions.GSSError as exc:
            self._raise(exc, "Problem wrapping handshake1")

    def _take_client_choice(self, token: bytes) -> None:
        """doHandshake2: the client's protection, buffer size and authorization id; then complete,
        the authorization id being the authenticated name (SaslServerCallbackHandler)."""
        try:
            unwrapped = self._context.unwrap(bytes(token))
        except self._gssapi.exceptions.GSSError as exc:
            self._raise(exc, "Final handshake step failed")
        choice = unwrapped.message
        # Java reads the protection octet, refuses one not offered, then reads the buffer size: an
        # octet missing is an index past the end, an unchecked exception
        if not choice:
            raise SaslServerFault("Index 0 out of bounds for length 0")
        selected = choice[0]
        if selected & NO_PROTECTION == 0:
            raise SaslError(f"Client selected unsupported protection: {selected - 256 if selected > 127 else selected}")
        if len(choice) < 4:
            raise SaslServerFault(f"Index {len(choice)} out of bounds for length {len(choice)}")
        requested = choice[4:].decode("utf-8", errors="replace") if len(choice) > 4 else self._peer
        logger.info("Successfully authenticated client: authenticationID=%s; authorizationID=%s.",
                    self._peer, requested)
        self.authorization_id = self._peer
        return None

    def _raise(self, exc: Exception, message: str) -> NoReturn:
        """A GSS failure as the JDK and Kafka's authenticator take it (see the module doc)."""
        code = kerberos_error_code(exc)
        if code in RETRIABLE_KERBEROS_ERRORS:
            raise SaslServerFault(f"{message}: {exc}") from exc
        raise SaslError(f"{message}: {exc}") from exc
