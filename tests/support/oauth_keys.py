"""Signing keys and a JWKS for OAUTHBEARER tests of Kafka's signed-token validation: mint JWTs
with a key whose public half is published, as an identity provider does."""

from __future__ import annotations

import json
import time
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa


class SigningKey:
    """An RSA (RS256), EC (ES256) or Ed25519 (EdDSA, an OKP JWK) key pair with a kid."""

    def __init__(self, kid: str, kind: str = "RSA") -> None:
        self.kid = kid
        if kind == "RSA":
            self.private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
            self.algorithm = "RS256"
            self.jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.private.public_key()))
        elif kind == "OKP":
            self.private = ed25519.Ed25519PrivateKey.generate()
            self.algorithm = "EdDSA"
            self.jwk = json.loads(jwt.algorithms.OKPAlgorithm.to_jwk(self.private.public_key()))
        else:
            self.private = ec.generate_private_key(ec.SECP256R1())
            self.algorithm = "ES256"
            self.jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(self.private.public_key()))
        self.jwk.update(kid=kid, use="sig")

    def mint(self, sub: str = "alice", lifetime_s: int = 3600, **claims: Any) -> str:
        now = int(time.time())
        body = {"sub": sub, "iat": now, "exp": now + lifetime_s, **claims}
        return jwt.encode({k: v for k, v in body.items() if v is not None}, self.private,
                          algorithm=self.algorithm, headers={"kid": self.kid})


def jwks(*keys: SigningKey) -> str:
    return json.dumps({"keys": [key.jwk for key in keys]})
