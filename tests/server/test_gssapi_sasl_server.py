"""GssapiSaslServer against MIT Kerberos' own initiator (python-gssapi) with tickets of a real KDC
(tests.support.kdc): the exchange GssKrb5Server runs, byte for byte where the JDK fixes the bytes,
and each of its refusals; and the authenticator keeping MIT's blocking calls off the event loop."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest

from franz.common.kerberos_name import KerberosShortNamer
from franz.server.gssapi_sasl_server import GssapiSaslServer, KerberosService, kerberos_error_code
from franz.server.oauth_bearer_sasl_server import SaslServerFault
from franz.server.sasl_server_authenticator import SaslListenerConfig, SaslServerAuthenticator
from franz.server.scram_sasl_server import SaslError
from tests.support.kdc import REALM, MiniKdc

gssapi = pytest.importorskip("gssapi")


@pytest.fixture(scope="module")
def realm(tmp_path_factory):
    """A KDC, the broker's keytab (kafka/localhost, kafka without host, http/localhost) and a ticket
    cache of alice's."""
    kdc = MiniKdc(tmp_path_factory.mktemp("kdc")).start()
    try:
        keytab = kdc.create_principal(kdc.work_dir / "kafka.keytab", "kafka/localhost", "kafka", "http/localhost")
        alice = kdc.create_principal(kdc.work_dir / "alice.keytab", "alice")
        kdc.kinit("alice", alice, kdc.work_dir / "alice.ccache")
        yield kdc, keytab
    finally:
        kdc.stop()


@pytest.fixture
def kerberos(realm, monkeypatch):
    kdc, keytab = realm
    for name, value in kdc.environment(kdc.work_dir / "alice.ccache").items():
        monkeypatch.setenv(name, value)

    def service(principal_host: str | None = "localhost") -> KerberosService:
        return KerberosService(f"kafka/{principal_host}@{REALM}" if principal_host else f"kafka@{REALM}", "kafka",
                               principal_host, str(keytab), KerberosShortNamer.from_unparsed_rules(REALM, ["DEFAULT"]))
    return service


def client(target: str = "kafka@localhost", mutual: bool = True):
    flags = [gssapi.RequirementFlag.mutual_authentication] if mutual else []
    flags += [gssapi.RequirementFlag.integrity]
    return gssapi.SecurityContext(name=gssapi.Name(target, gssapi.NameType.hostbased_service), usage="initiate",
                                  mech=gssapi.MechType.kerberos, flags=flags)


def exchange_until_offer(server: GssapiSaslServer, initiator) -> bytes:
    """The context tokens, then the wrapped protection offer the server sends."""
    answer = server.evaluate(initiator.step())
    if initiator.complete:  # no mutual authentication: the offer came at once
        return answer
    assert initiator.step(answer) is None and initiator.complete  # the AP-REP
    return server.evaluate(b"")


def test_a_client_with_mutual_authentication_completes_as_itself(kerberos):
    server = GssapiSaslServer(kerberos())
    initiator = client()
    offer = initiator.unwrap(exchange_until_offer(server, initiator))
    # GssKrb5Server's offer: "auth" only (1), then 65536 as three big-endian octets; not encrypted
    assert offer.message == b"\x01\x01\x00\x00" and not offer.encrypted
    assert server.authorization_id is None
    # the client takes "auth", its own buffer size, and asks to act as bob: Kafka grants its own name
    assert server.evaluate(initiator.wrap(b"\x01\x00\x10\x00bob", False).message) is None  # doHandshake2: null
    assert server.authorization_id == f"alice@{REALM}"
    with pytest.raises(SaslError, match="SASL authentication already complete"):
        server.evaluate(b"")


def test_without_mutual_authentication_the_offer_answers_the_first_token(kerberos):
    server = GssapiSaslServer(kerberos())
    initiator = client(mutual=False)
    offer = server.evaluate(initiator.step())
    assert initiator.complete and initiator.unwrap(offer).message == b"\x01\x01\x00\x00"
    server.evaluate(initiator.wrap(b"\x01\x00\x00\x00", False).message)
    assert server.authorization_id == f"alice@{REALM}"


def test_a_server_principal_without_host_accepts_its_service_on_any_host_of_the_keytab(kerberos):
    server = GssapiSaslServer(kerberos(principal_host=None))
    initiator = client()
    exchange_until_offer(server, initiator)
    server.evaluate(initiator.wrap(b"\x01\x00\x00\x00", False).message)
    assert server.authorization_id == f"alice@{REALM}"
    # the JDK's unbound server checks the service the client asked for
    with pytest.raises(SaslError, match="GSS context targ name protocol error: http/localhost@FRANZ.TEST"):
        GssapiSaslServer(kerberos(principal_host=None)).evaluate(client("http@localhost").step())


def test_a_ticket_for_another_service_fails_as_a_sasl_exception(kerberos):
    with pytest.raises(SaslError, match="GSS initiate failed"):
        GssapiSaslServer(kerberos()).evaluate(client("http@localhost").step())
    with pytest.raises(SaslError, match="GSS initiate failed"):
        GssapiSaslServer(kerberos()).evaluate(b"not a token")


def test_the_handshake_steps_refuse_what_the_jdk_refuses(kerberos):
    server = GssapiSaslServer(kerberos())
    initiator = client()
    answer = server.evaluate(initiator.step())
    initiator.step(answer)
    with pytest.raises(SaslError, match="Handshake expecting no response data from server"):
        server.evaluate(b"\x00")
    server = GssapiSaslServer(kerberos())
    initiator = client()
    exchange_until_offer(server, initiator)
    with pytest.raises(SaslError, match="Client selected unsupported protection: 4"):
        server.evaluate(initiator.wrap(b"\x04\x00\x00\x00", False).message)
    server = GssapiSaslServer(kerberos())
    initiator = client()
    exchange_until_offer(server, initiator)
    with pytest.raises(SaslError, match="Final handshake step failed"):
        server.evaluate(b"\x01\x00\x00\x00")  # not wrapped


@pytest.mark.parametrize("choice, failure, words", [
    # Java reads the protection octet first, then indexes past the end of a short choice: an
    # unchecked exception, which closes the connection unanswered
    (b"", SaslServerFault, "Index 0 out of bounds for length 0"),
    (b"\x01\x00", SaslServerFault, "Index 2 out of bounds for length 2"),
    # a protection not offered is refused before the buffer size is read, answered as any SaslException
    (b"\x00", SaslError, "Client selected unsupported protection: 0"),
    (b"\x82\x00", SaslError, "Client selected unsupported protection: -126"),
])
def test_a_short_choice_fails_where_the_jdk_reads_past_its_end(kerberos, choice, failure, words):
    server = GssapiSaslServer(kerberos())
    initiator = client()
    exchange_until_offer(server, initiator)
    with pytest.raises(failure) as failed:
        server.evaluate(initiator.wrap(choice, False).message)
    assert type(failed.value) is failure and str(failed.value) == words


def test_a_replayed_token_closes_the_connection_as_a_retriable_kerberos_error(kerberos):
    token = client().step()
    GssapiSaslServer(kerberos()).evaluate(token)
    with pytest.raises(SaslServerFault, match="GSS initiate failed") as replayed:
        GssapiSaslServer(kerberos()).evaluate(token)
    assert kerberos_error_code(replayed.value.__cause__) == 34  # KRB_AP_ERR_REPEAT


def test_a_keytab_gone_fails_the_exchange(kerberos, tmp_path):
    service = kerberos()
    gone = KerberosService(service.principal, "kafka", "localhost", str(tmp_path / "gone.keytab"), service.short_namer)
    with pytest.raises(SaslError, match="Failure to initialize security context"):
        GssapiSaslServer(gone).evaluate(client().step())


# holds an exclusive lock on the file argv[1] until told to let go on stdin, or for 20 s at most
LOCK_HOLDER = """
import fcntl, select, sys
with open(sys.argv[1], "r+b") as cache:
    fcntl.lockf(cache, fcntl.LOCK_EX)
    print("locked", flush=True)
    told = select.select([sys.stdin], [], [], 20)[0]
    print("released when told" if told else "released after 20 s", flush=True)
"""


def test_an_accept_waiting_for_the_replay_cache_leaves_the_event_loop_free(kerberos, realm):
    """MIT's accept blocks while another process holds its replay cache's lock (as DNS lookups of a
    host to canonicalize block it): the event loop, which serves every connection, goes on meanwhile,
    and the authentication completes once the lock is let go."""
    kdc, _ = realm
    service = kerberos()
    GssapiSaslServer(service).evaluate(client().step())  # the replay cache file now exists
    replay_cache = kdc.work_dir / f"krb5_{os.geteuid()}.rcache2"
    if not replay_cache.exists():
        pytest.skip("MIT Kerberos before 1.18 names its replay cache otherwise")
    authenticator = SaslServerAuthenticator(SaslListenerConfig(("GSSAPI",), {}, 0, 524288, kerberos=service),
                                            lambda user, kind: None)
    initiator = client()

    async def authenticate_while_locked() -> dict:
        assert (await authenticator.handshake(1, "GSSAPI"))["error_code"] == 0
        accepting = asyncio.ensure_future(authenticator.authenticate(initiator.step()))
        await asyncio.sleep(0)  # the accept starts, and waits for the lock
        holder.stdin.write("go\n")  # told by the event loop: only if the accept left it free
        holder.stdin.flush()
        return await accepting

    with subprocess.Popen([sys.executable, "-c", LOCK_HOLDER, str(replay_cache)], stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True) as holder:
        assert holder.stdout.readline() == "locked\n"
        answer = asyncio.run(authenticate_while_locked())
        assert holder.stdout.readline() == "released when told\n"
    assert answer["error_code"] == 0 and initiator.step(answer["auth_bytes"]) is None and initiator.complete
