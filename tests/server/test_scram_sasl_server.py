"""ScramSaslServer against an independent SCRAM client (scramp), and the messages Kafka's
ScramMessages accept or refuse: what a real client meets at a Kafka broker."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
from scramp import ScramClient

from franz.server.scram_sasl_server import SaslAuthenticationError, SaslError, ScramSaslServer

TYPES = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
DIGESTS = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}


def _credentials(mechanism: str, user: str, password: str, iterations: int = 4096,
                 salt: bytes = b"0123456789abcdef") -> dict:
    """What AlterUserScramCredentials keeps (ScramFormatter.generateCredential), any salt."""
    digest = DIGESTS[mechanism]
    salted = hashlib.pbkdf2_hmac(digest().name, password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", digest).digest()
    return {(user, TYPES[mechanism]): {"salt": salt, "stored_key": digest(client_key).digest(),
                                       "server_key": hmac.new(salted, b"Server Key", digest).digest(),
                                       "iterations": iterations}}


def _server(mechanism: str, credentials: dict) -> ScramSaslServer:
    return ScramSaslServer(mechanism, lambda user, kind: credentials.get((user, kind)))


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_an_exchange_completes_with_the_stored_credential_and_proves_the_server(mechanism):
    server = _server(mechanism, _credentials(mechanism, "bob,=x", "bob-secret"))
    client = ScramClient([mechanism], "bob,=x", "bob-secret")  # sent escaped: n=bob=2C=3Dx
    server_first = server.evaluate(client.get_client_first().encode()).decode()
    nonce = server_first.split(",")[0][2:]
    assert len(nonce) > 24 and nonce.isalnum()  # the client's nonce, then Kafka's base-36 one
    client.set_server_first(server_first)
    final = server.evaluate(client.get_client_final().encode())
    client.set_server_final(final.decode())  # raises unless the server signature is right
    assert server.authorization_id == "bob,=x"


def _proof(mechanism: str, password: str, salt: bytes, iterations: int, auth_message: bytes) -> str:
    digest = DIGESTS[mechanism]
    salted = hashlib.pbkdf2_hmac(digest().name, password.encode(), salt, iterations)
    client_key = hmac.new(salted, b"Client Key", digest).digest()
    signature = hmac.new(digest(client_key).digest(), auth_message, digest).digest()
    return base64.b64encode(bytes(a ^ b for a, b in zip(client_key, signature))).decode()


def _exchange(server: ScramSaslServer, client_first: str, password: str, salt: bytes,
              mechanism: str = "SCRAM-SHA-256") -> bytes:
    """Kafka's ScramSaslClient by hand, for the messages scramp will not send."""
    server_first = server.evaluate(client_first.encode()).decode()
    nonce = server_first.split(",")[0][2:]
    bare = client_first.split(",", 2)[2]
    without_proof = f"c={base64.b64encode(b'n,,').decode()},r={nonce}"
    proof = _proof(mechanism, password, salt, 4096, f"{bare},{server_first},{without_proof}".encode())
    return server.evaluate(f"{without_proof},p={proof}".encode())


def test_kafkas_own_client_choices_are_served():
    """An authorization id equal to the user name, a salt shorter than RFC 5802 suggests (Kafka
    stores and serves any), and an unknown extension (ignored)."""
    salt = b"short"
    for client_first in ("n,a=bob,n=bob,r=abc", "n,,n=bob,r=abc,ext=1"):
        server = _server("SCRAM-SHA-256", _credentials("SCRAM-SHA-256", "bob", "pw", salt=salt))
        assert _exchange(server, client_first, "pw", salt).startswith(b"v=")
        assert server.authorization_id == "bob"


def test_an_authorization_id_other_than_the_user_is_refused_with_its_own_message():
    server = _server("SCRAM-SHA-256", _credentials("SCRAM-SHA-256", "bob", "pw"))
    with pytest.raises(SaslAuthenticationError, match="^Authentication failed: Client requested an authorization "
                                                      "id that is different from username$"):
        server.evaluate(b"n,a=alice,n=bob,r=abc")


@pytest.mark.parametrize("client_first", [
    "y,,n=bob,r=abc",  # Kafka supports the "n" GS2 flag only
    "p=tls-unique,,n=bob,r=abc",
    "n,,n=bób,r=abc",  # names are ASCII
    "n,,n=bob",
    "n,,r=abc,n=bob",
    "n,,n=bob,r=abc,tokenauth=true",  # a delegation token the broker does not have
    "n,,n=nobody,r=abc",
])
def test_first_messages_kafka_refuses_are_refused(client_first):
    server = _server("SCRAM-SHA-256", _credentials("SCRAM-SHA-256", "bob", "pw"))
    with pytest.raises(SaslError):
        server.evaluate(client_first.encode())
    assert server.authorization_id is None


def test_a_wrong_proof_a_foreign_nonce_or_few_iterations_are_refused():
    salt = b"0123456789abcdef"
    server = _server("SCRAM-SHA-256", _credentials("SCRAM-SHA-256", "bob", "pw", salt=salt))
    with pytest.raises(SaslError, match="Invalid client credentials"):
        _exchange(server, "n,,n=bob,r=abc", "wrong", salt)
    server = _server("SCRAM-SHA-256", _credentials("SCRAM-SHA-256", "bob", "pw", salt=salt))
    server.evaluate(b"n,,n=bob,r=abc")
    with pytest.raises(SaslError, match="Invalid client nonce"):
        server.evaluate(b"c=biws,r=abcsomethingelse,p=AAAA")
    few = _credentials("SCRAM-SHA-256", "bob", "pw")
    few[("bob", 1)]["iterations"] = 4095
    with pytest.raises(SaslError, match="Iterations 4095 is less than the minimum 4096"):
        _server("SCRAM-SHA-256", few).evaluate(b"n,,n=bob,r=abc")


def test_a_message_as_long_as_the_pre_authentication_bound_is_refused():
    """The broker's one loop parses it: linear-time expressions, where a library that normalised
    the 512 KiB name first held the loop for ~0.9 s (a helper's measurement)."""
    server = _server("SCRAM-SHA-256", _credentials("SCRAM-SHA-256", "bob", "pw"))
    with pytest.raises(SaslError):
        server.evaluate(b"n,,n=" + b"a" * 524_000 + b",r=abc")


def test_tokenauth_looks_the_user_name_up_as_a_token_id_only():
    """ScramSaslServer with ScramServerCallbackHandler: with tokenauth=true the name is a token
    id (an unknown one named in the refusal), without it a user's; the authorization id, if any,
    must be the token id."""
    salt = b"0123456789abcdef"
    token = ("alice", _credentials("SCRAM-SHA-256", "tok", "hmac-b64", salt=salt)[("tok", 1)], 99)

    def server() -> ScramSaslServer:
        return ScramSaslServer("SCRAM-SHA-256", lambda user, kind: None,
                               lambda token_id, kind: token if (token_id, kind) == ("tok", 1) else None)

    with pytest.raises(SaslError, match="^Token Authentication failed: Invalid tokenId : alice$"):
        server().evaluate(b"n,,n=alice,r=abc,tokenauth=true")
    with pytest.raises(SaslError, match="^Authentication failed: Invalid user credentials$"):
        server().evaluate(b"n,,n=tok,r=abc")
    with pytest.raises(SaslAuthenticationError, match="different from username"):
        server().evaluate(b"n,a=alice,n=tok,r=abc,tokenauth=true")
    with pytest.raises(SaslError, match="Invalid client credentials"):
        _exchange(server(), "n,,n=tok,r=abc,tokenauth=true", "alice-secret", salt)
    authenticated = server()
    assert _exchange(authenticated, "n,,n=tok,r=abc,tokenauth=TRUE", "hmac-b64", salt).startswith(b"v=")
    assert (authenticated.authorization_id, authenticated.token_authenticated,
            authenticated.credential_lifetime_ms) == ("alice", True, 99)
