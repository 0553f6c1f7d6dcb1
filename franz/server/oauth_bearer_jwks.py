"""The verification keys of Kafka's OAUTHBEARER validation (oauth_bearer_validator): a JWKS
(RFC 7517) read as jose4j's JsonWebKeySet reads it, a key chosen for a token as
VerificationJwkSelector chooses it, and where the keys come from: RefreshingHttpsJwks with
RefreshingHttpsJwksVerificationKeyResolver for an http(s) endpoint, JwksFileVerificationKeyResolver
for a file.

Invariant: the refresh thread is the only one that fetches after init(); the key list is replaced
whole under the lock, never changed in place, so a reader holds a consistent list without it.
"""

from __future__ import annotations

import base64
import binascii
import collections
import heapq
import json
import logging
import os
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any, Final

import jwt  # PyJWT: the JWS algorithms and JWK parsing
from jwt.exceptions import PyJWKError

logger = logging.getLogger(__name__)

MISSING_KEY_ID_CACHE_MAX_ENTRIES: Final = 16
MISSING_KEY_ID_CACHE_IN_FLIGHT_MS: Final = 60_000
MISSING_KEY_ID_MAX_KEY_LENGTH: Final = 1000
SHUTDOWN_TIMEOUT_S: Final = 10
HTTP_TIMEOUT_S: Final = 20  # jose4j's Get: 20 s to connect, 20 s to read
JWKS_SIZE_MAX_BYTES: Final = 512 * 1024  # jose4j's Get responseBodySizeLimit
# alg -> (key type, EC curve); jose4j's JWS algorithms other than none
ALGORITHMS: Final = {**{f"RS{n}": ("RSA", None) for n in (256, 384, 512)},
                     **{f"PS{n}": ("RSA", None) for n in (256, 384, 512)},
                     **{f"HS{n}": ("oct", None) for n in (256, 384, 512)},
                     "ES256": ("EC", "P-256"), "ES384": ("EC", "P-384"), "ES512": ("EC", "P-521"),
                     "EdDSA": ("OKP", None)}  # Ed25519 or Ed448: the key's crv says which


class JwksFileError(ValueError):
    """A JWKS file that is not a JWKS."""


class JsonWebKey:
    """One usable key of a JWKS: its parameters and the key object PyJWT verifies with."""

    def __init__(self, params: Mapping[str, Any]) -> None:
        self.params = dict(params)
        self.kid: str | None = params.get("kid")
        self.kty: str = params["kty"]
        self.key = jwt.PyJWK(self.params).key if self.kty != "oct" else jwt.PyJWK(
            {**self.params, "alg": self.params.get("alg", "HS256")}).key

    def __repr__(self) -> str:  # jose4j's JsonWebKey.toString, public parameters
        public = {name: value for name, value in self.params.items() if name not in ("d", "p", "q", "dp", "dq",
                                                                                       "qi", "k", "oth")}
        shown = ", ".join(f"{name}={value}" for name, value in public.items())
        return f"org.jose4j.jwk.{_JWK_CLASS.get(self.kty, 'JsonWebKey')}{{{shown}}}"


_JWK_CLASS: Final = {"RSA": "RsaJsonWebKey", "EC": "EllipticCurveJsonWebKey", "oct": "OctetSequenceJsonWebKey",
                     "OKP": "OctetKeyPairJsonWebKey"}


def parse_jwks(text: str | bytes) -> list[JsonWebKey]:
    """JsonWebKeySet(json): the "keys" member's keys; one that cannot be read is skipped and logged,
    as jose4j skips it. ValueError for JSON that is not a JWKS."""
    document = json.loads(text)
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise ValueError("The JSON JWKS content does not include the keys member.")
    keys = []
    for params in document["keys"]:
        try:
            keys.append(JsonWebKey(params))
        except (PyJWKError, KeyError, TypeError, ValueError) as exc:
            logger.debug("Ignoring an individual JWK in a JsonWebKeySet due to a problem processing it (%s): %s",
                         params, exc)
    return keys


def signature_valid(jws: JsonWebSignature, jwk: JsonWebKey) -> bool:
    try:
        return bool(jwt.get_algorithm_by_name(jws.alg).verify(jws.signing_input, jwk.key, jws.signature))
    except Exception:  # a key of the wrong size or curve for the algorithm
        return False


def select_key(jws: JsonWebSignature, keys: list[JsonWebKey]) -> JsonWebKey | None:
    """VerificationJwkSelector.select: the keys of the alg's type (and curve) whose kid, use and alg
    match or are absent; of several, the first that verifies the signature."""
    kty, curve = ALGORITHMS[jws.alg]
    candidates = [key for key in keys if key.kty == kty
                  and (jws.kid is None or key.kid in (None, jws.kid))
                  and key.params.get("use") in (None, "sig")
                  and key.params.get("alg") in (None, jws.alg)
                  and (curve is None or key.params.get("crv") == curve)]
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    return next((key for key in candidates if signature_valid(jws, key)), candidates[0])


class UnresolvableKeyError(Exception):
    """jose4j's UnresolvableKeyException."""


class JsonWebSignature:
    """A compact JWS's parts: header (parsed), alg, kid, the signed bytes and the signature."""

    def __init__(self, token: str) -> None:
        header_b64, payload_b64, signature_b64 = token.split(".")
        self.header_json = _b64url(header_b64).decode("utf-8")
        header = json.loads(self.header_json)
        if not isinstance(header, dict):
            raise ValueError(f"Parsing error: {self.header_json}")
        self.header = header
        self.alg = header.get("alg")
        self.kid = header.get("kid") if isinstance(header.get("kid"), str) else None
        self.signing_input = f"{header_b64}.{payload_b64}".encode("ascii")
        self.payload = _b64url(payload_b64)
        self.signature = _b64url(signature_b64)

    def __str__(self) -> str:
        return f"JsonWebSignature{{{self.header_json}}}"


def _b64url(section: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(section + "=" * (-len(section) % 4))
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"Unable to decode base64url: {exc}") from None


# -- key resolvers -----------------------------------------------------------------------------

def _fetch(url: str) -> list[JsonWebKey]:
    """HttpsJwks.refresh: GET the JWKS (blocking: call it off the event loop)."""
    with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept": "application/json"}),
                                timeout=HTTP_TIMEOUT_S) as response:
        body = response.read(JWKS_SIZE_MAX_BYTES + 1)
    if len(body) > JWKS_SIZE_MAX_BYTES:
        raise OSError(f"Response body from {url} exceeds {JWKS_SIZE_MAX_BYTES} bytes")
    return parse_jwks(body)


class RefreshingHttpsJwks:
    """The keys of an http(s) JWKS endpoint, refreshed on a thread of their own."""

    def __init__(self, location: str, refresh_ms: int, refresh_retry_backoff_ms: int,
                 refresh_retry_backoff_max_ms: int, fetch: Callable[[str], list[JsonWebKey]] = _fetch,
                 time_ms: Callable[[], int] | None = None) -> None:
        if refresh_ms <= 0:
            raise ValueError("JWKS validation key refresh configuration value retryWaitMs value must be positive")
        self.location = location
        self.refresh_ms = refresh_ms
        self.refresh_retry_backoff_ms = refresh_retry_backoff_ms
        self.refresh_retry_backoff_max_ms = refresh_retry_backoff_max_ms
        self._fetch = fetch
        self._time_ms = time_ms or (lambda: time.monotonic_ns() // 1_000_000)
        self._lock = threading.Condition()
        self._missing_key_ids: collections.OrderedDict[str, int] = collections.OrderedDict()
        self._due: list[tuple[int, int, bool]] = []  # (due ms, sequence, scheduled) of pending refreshes
        self._sequence = 0
        self._closed = False
        self._thread: threading.Thread | None = None
        self._keys: list[JsonWebKey] | None = None
        self.refresh_count = 0  # refreshes completed, successful or not (for tests)

    def init(self) -> None:
        """Fetch the keys now (IOError "Could not refresh JWKS" if that fails) and start the
        refresh thread, whose first scheduled refresh is refresh_ms away."""
        logger.debug("init started")
        try:
            keys = self._fetch(self.location)
        except (OSError, ValueError) as exc:
            raise OSError(f"Could not refresh JWKS: {exc}") from exc
        with self._lock:
            self._keys = keys
            self._schedule(self.refresh_ms, scheduled=True)
        self._thread = threading.Thread(target=self._run, name="jwks-refresh", daemon=True)
        self._thread.start()
        logger.info("JWKS validation key refresh thread started with a refresh interval of %d ms", self.refresh_ms)
        logger.debug("init completed")

    def close(self) -> None:
        logger.debug("JWKS validation key refresh thread shutting down")
        with self._lock:
            self._closed = True
            self._lock.notify_all()
        if self._thread is not None:
            self._thread.join(SHUTDOWN_TIMEOUT_S)
            if self._thread.is_alive():
                logger.warning("JWKS validation key refresh thread termination did not end after %d SECONDS",
                               SHUTDOWN_TIMEOUT_S)

    def json_web_keys(self) -> list[JsonWebKey]:
        if self._keys is None:
            raise RuntimeError("Please call init() first")
        return self._keys

    def _schedule(self, delay_ms: int, scheduled: bool) -> None:
        """REQUIRES: the lock held."""
        self._sequence += 1
        heapq.heappush(self._due, (self._time_ms() + delay_ms, self._sequence, scheduled))
        self._lock.notify_all()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._closed and (not self._due or self._due[0][0] > self._time_ms()):
                    self._lock.wait(None if not self._due else (self._due[0][0] - self._time_ms()) / 1000)
                if self._closed:
                    return
                _, _, scheduled = heapq.heappop(self._due)
                if scheduled:  # scheduleAtFixedRate
                    self._schedule(self.refresh_ms, scheduled=True)
            self.refresh()

    def refresh(self) -> None:
        """One refresh with retries; on failure the keys stay as they were."""
        logger.info("OAuth JWKS refresh of %s starting", self.location)
        try:
            keys = self._retry(lambda: self._fetch(self.location))
        except (OSError, ValueError) as exc:
            logger.warning("OAuth JWKS refresh of %s encountered an error; not updating local JWKS cache: %s",
                           self.location, exc)
        else:
            with self._lock:
                for key in keys:
                    self._missing_key_ids.pop(key.kid, None)
                self._keys = keys
            logger.info("OAuth JWKS refresh of %s complete", self.location)
        finally:
            with self._lock:
                self.refresh_count += 1
                self._lock.notify_all()

    def _retry(self, call: Callable[[], list[JsonWebKey]]) -> list[JsonWebKey]:
        """Retry.execute: back off retry_backoff_ms doubling, for retry_backoff_max_ms in all."""
        end_ms = self._time_ms() + self.refresh_retry_backoff_max_ms
        for attempt in range(1, 64):  # the deadline ends it long before
            try:
                return call()
            except (OSError, ValueError) as exc:
                logger.warning("Error during retry attempt %d: %s", attempt, exc)
                wait_ms = min(self.refresh_retry_backoff_ms * 2 ** (attempt - 1), end_ms - self._time_ms())
                if wait_ms <= 0:
                    raise
                with self._lock:
                    if self._closed or self._lock.wait_for(lambda: self._closed, wait_ms / 1000):
                        raise
        raise OSError("Exhausted all retry attempts but no attempt returned value or encountered exception")

    def maybe_expedite_refresh(self, key_id: str) -> bool:
        """Refresh at once for a kid no key has, unless that kid asked within the last minute."""
        if len(key_id) > MISSING_KEY_ID_MAX_KEY_LENGTH:
            logger.warning("Key ID %s (trimmed to first %d characters out of %d total) was too long to cache",
                           key_id[:MISSING_KEY_ID_MAX_KEY_LENGTH], MISSING_KEY_ID_MAX_KEY_LENGTH, len(key_id))
            return False
        with self._lock:
            next_check_ms = self._missing_key_ids.get(key_id)
            now_ms = self._time_ms()
            logger.debug("For key ID %s, nextCheckTime: %s, currTime: %d", key_id, next_check_ms, now_ms)
            if next_check_ms is not None and next_check_ms > now_ms:
                self._missing_key_ids.move_to_end(key_id)  # an access-ordered LinkedHashMap
                return False
            self._missing_key_ids[key_id] = now_ms + MISSING_KEY_ID_CACHE_IN_FLIGHT_MS
            self._missing_key_ids.move_to_end(key_id)
            while len(self._missing_key_ids) > MISSING_KEY_ID_CACHE_MAX_ENTRIES:
                self._missing_key_ids.popitem(last=False)
            self._schedule(0, scheduled=False)
            return True


class RefreshingHttpsJwksVerificationKeyResolver:
    def __init__(self, jwks: RefreshingHttpsJwks) -> None:
        self.jwks = jwks

    def init(self) -> None:
        self.jwks.init()

    def close(self) -> None:
        self.jwks.close()

    def resolve_key(self, jws: JsonWebSignature) -> JsonWebKey:
        keys = self.jwks.json_web_keys()
        jwk = select_key(jws, keys)
        if jwk is not None:
            return jwk
        if self.jwks.maybe_expedite_refresh(jws.kid or ""):
            logger.debug("Refreshing JWKs from %s as no suitable verification key for JWS w/ header %s was found "
                         "in %s", self.jwks.location, jws.header_json, keys)
        raise UnresolvableKeyError(f"Unable to find a suitable verification key for JWS w/ header {jws.header_json} "
                                   f"from JWKs {keys} obtained from {self.jwks.location}")


class JwksFileVerificationKeyResolver:
    """The keys of a JWKS file, read again when its modification time changes."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._snapshot: tuple[int, list[JsonWebKey]] | None = None

    def init(self) -> None:
        self._load()

    def close(self) -> None:
        pass

    def _load(self) -> list[JsonWebKey]:
        modified_ns = os.stat(self.path).st_mtime_ns
        if self._snapshot is None or self._snapshot[0] != modified_ns:
            logger.debug("Starting creation of new VerificationKeyResolver from %s", self.path)
            with open(self.path, "rb") as file:
                text = file.read(JWKS_SIZE_MAX_BYTES + 1)
            try:
                self._snapshot = (modified_ns, parse_jwks(text))
            except ValueError as exc:
                raise JwksFileError(str(exc)) from None
        return self._snapshot[1]

    def resolve_key(self, jws: JsonWebSignature) -> JsonWebKey:
        try:
            keys = self._load()
        except (OSError, JwksFileError) as exc:
            logger.warning("Error reading the file contents of OAuth resource %s for caching: %s", self.path, exc)
            keys = self._snapshot[1] if self._snapshot is not None else []
        jwk = select_key(jws, keys)
        if jwk is None:
            raise UnresolvableKeyError(f"Unable to find a suitable verification key for JWS w/ header "
                                       f"{jws.header_json} from JWKs {keys}")
        return jwk
