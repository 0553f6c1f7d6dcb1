"""SCRAM credentials of users: AlterUserScramCredentials and DescribeUserScramCredentials
(org.apache.kafka.controller.ScramControlManager, org.apache.kafka.image.ScramImage).

A client sends a credential already salted (the password never reaches the
broker); like Kafka, franz keeps only what a SCRAM server needs to check a
client: the salt, the iteration count, StoredKey = H(HMAC(SaltedPassword,
"Client Key")) and ServerKey = HMAC(SaltedPassword, "Server Key") (RFC 5802,
ScramFormatter), with SHA-256 or SHA-512 as the mechanism says. They live in
`scram-credentials.json` in the first log dir, replaced atomically on each
change through the controller's config writer. Checks and messages are
Kafka's: an empty user name or an unknown mechanism, 4,096 to 16,384
iterations, a user altered twice in one request, the deletion of a credential
that does not exist. kafka-configs.sh --entity-type users describes users
with this API and DescribeClientQuotas together.

Connections of SASL_PLAINTEXT listeners with SCRAM-SHA-256/512 enabled
authenticate with them (sasl_server_authenticator).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

from franz.protocol.errors import Errors
from franz.server.auth_helper import ALTER, DESCRIBE, AuthHelper
from franz.server.cluster_authorization import authorize_cluster_operation, cluster_authorization_failed
from franz.server.controller import ApiError

SCRAM_CREDENTIALS_FILE: Final = "scram-credentials.json"
MECHANISMS: Final = {1: ("SCRAM-SHA-256", hashlib.sha256), 2: ("SCRAM-SHA-512", hashlib.sha512)}
ITERATIONS_MIN: Final = 4096  # ScramMechanism.minIterations, both mechanisms
ITERATIONS_MAX: Final = 16384  # ScramControlManager.MAX_ITERATIONS

logger = logging.getLogger(__name__)

Writer = Callable[[Path, object], Awaitable[None]]
Key = tuple[str, int]  # (user, mechanism type)


def stored_and_server_keys(mechanism: int, salted_password: bytes) -> tuple[bytes, bytes]:
    """ScramFormatter.storedKey(clientKey(saltedPassword)) and serverKey(saltedPassword)."""
    digest = MECHANISMS[mechanism][1]
    client_key = hmac.new(salted_password, b"Client Key", digest).digest()
    return digest(client_key).digest(), hmac.new(salted_password, b"Server Key", digest).digest()


class ScramControlManager:
    def __init__(self, path: Path, write: Writer) -> None:
        self.path = path
        self._write = write
        self.auth = AuthHelper()  # the broker's, once registered
        # One change at a time, from reading what is in force to putting it in force (see Controller._storing).
        self._altering = asyncio.Lock()
        self.credentials: dict[Key, dict] = self._read()

    def credential(self, user: str, mechanism: int) -> dict | None:
        """What a SCRAM server checks a client of `user` against (salt, stored_key, server_key,
        iterations); None when the user has no credential of that mechanism type."""
        return self.credentials.get((user, mechanism))

    def register(self, apis) -> None:
        self.auth = apis.auth
        apis.register("DescribeUserScramCredentials", self.handle_describe_user_scram_credentials)
        apis.register("AlterUserScramCredentials", self.handle_alter_user_scram_credentials)

    def _read(self) -> dict[Key, dict]:
        if not self.path.exists():
            return {}
        try:
            rows = json.loads(self.path.read_text(encoding="utf-8"))
            return {(str(row["name"]), int(row["mechanism"])): {
                "salt": base64.b64decode(row["salt"]), "stored_key": base64.b64decode(row["stored_key"]),
                "server_key": base64.b64decode(row["server_key"]), "iterations": int(row["iterations"])}
                for row in rows}
        except (OSError, ValueError, TypeError, KeyError) as exc:
            logger.warning("Ignoring unreadable %s: %s", self.path, exc)
            return {}

    @staticmethod
    def _rows(credentials: dict[Key, dict]) -> list[dict]:
        return [{"name": name, "mechanism": mechanism, "iterations": value["iterations"],
                 **{field: base64.b64encode(value[field]).decode("ascii")
                    for field in ("salt", "stored_key", "server_key")}}
                for (name, mechanism), value in sorted(credentials.items())]

    # -- AlterUserScramCredentials ---------------------------------------------

    async def handle_alter_user_scram_credentials(self, request, body: dict) -> dict:
        authorize_cluster_operation(self.auth, request, ALTER)  # ControllerApis, before anything else
        async with self._altering:
            deletions: dict[str, dict] = {}
            upsertions: dict[str, dict] = {}
            errors: dict[str, ApiError] = {}
            twice = ApiError(Errors.DUPLICATE_RESOURCE, "A user credential cannot be altered twice in the same request")
            for deletion in body["deletions"]:
                name = deletion["name"]
                if name in errors:
                    continue
                if deletions.pop(name, None) is not None:
                    errors[name] = twice
                elif (error := self._deletion_error(deletion)) is not None:
                    errors[name] = error
                else:
                    deletions[name] = deletion
            for upsertion in body["upsertions"]:
                name = upsertion["name"]
                if name in errors:
                    continue
                if deletions.pop(name, None) is not None or upsertions.pop(name, None) is not None:
                    errors[name] = twice
                elif (error := _upsertion_error(upsertion)) is not None:
                    errors[name] = error
                else:
                    upsertions[name] = upsertion
            proposed = dict(self.credentials)
            for deletion in deletions.values():
                del proposed[(deletion["name"], deletion["mechanism"])]
            for upsertion in upsertions.values():
                stored_key, server_key = stored_and_server_keys(upsertion["mechanism"], upsertion["salted_password"])
                proposed[(upsertion["name"], upsertion["mechanism"])] = {
                    "salt": bytes(upsertion["salt"]), "stored_key": stored_key, "server_key": server_key,
                    "iterations": upsertion["iterations"]}
            stored: ApiError | None = None
            if deletions or upsertions:
                try:
                    await self._write(self.path, self._rows(proposed))  # stored before it is in force
                    self.credentials = proposed
                    logger.info("Altered SCRAM credentials: deleted %s, set %s", sorted(deletions), sorted(upsertions))
                except ApiError as exc:  # nothing was altered
                    stored = exc
            results = [{"user": name, "error_code": stored.code if stored else Errors.NONE,
                        "error_message": stored.message if stored else None}
                       for name in [*deletions, *upsertions]]
            results += [{"user": name, "error_code": error.code, "error_message": error.message}
                        for name, error in errors.items()]
            return {"throttle_time_ms": 0, "results": results}

    def _deletion_error(self, deletion: dict) -> ApiError | None:
        error = _name_and_mechanism_error(deletion["name"], deletion["mechanism"])
        if error is None and (deletion["name"], deletion["mechanism"]) not in self.credentials:
            error = ApiError(Errors.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist")
        return error

    # -- DescribeUserScramCredentials --------------------------------------------

    async def handle_describe_user_scram_credentials(self, request, body: dict) -> dict:
        """ScramImage.describe: every user with a credential when none is named, to a principal
        that may DESCRIBE the cluster (KafkaApis); any other gets CLUSTER_AUTHORIZATION_FAILED."""
        if not self.auth.authorize_cluster(request, DESCRIBE):
            raise cluster_authorization_failed()
        if not body["users"]:
            users = {name: False for name, _ in sorted(self.credentials)}
        else:
            users = {}
            for user in body["users"]:
                users[user["name"]] = user["name"] in users  # True: named twice
        results = []
        for name, twice in users.items():
            result = {"user": name, "error_code": Errors.NONE, "error_message": None, "credential_infos": []}
            if twice:
                result.update(error_code=Errors.DUPLICATE_RESOURCE, error_message=(
                    f"Cannot describe SCRAM credentials for the same user twice in a single request: {name}"))
            else:
                infos = [{"mechanism": mechanism, "iterations": value["iterations"]}
                         for (user, mechanism), value in sorted(self.credentials.items()) if user == name]
                if infos:
                    result["credential_infos"] = infos
                else:
                    result.update(error_code=Errors.RESOURCE_NOT_FOUND,
                                  error_message=f"Attempt to describe a user credential that does not exist: {name}")
            results.append(result)
        return {"throttle_time_ms": 0, "error_code": Errors.NONE, "error_message": None, "results": results}


def _name_and_mechanism_error(name: str, mechanism: int) -> ApiError | None:
    if not name:
        return ApiError(Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty")
    if mechanism not in MECHANISMS:
        return ApiError(Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism")
    return None


def _upsertion_error(upsertion: dict) -> ApiError | None:
    error = _name_and_mechanism_error(upsertion["name"], upsertion["mechanism"])
    if error is None and upsertion["iterations"] < ITERATIONS_MIN:
        error = ApiError(Errors.UNACCEPTABLE_CREDENTIAL, "Too few iterations")
    elif error is None and upsertion["iterations"] > ITERATIONS_MAX:
        error = ApiError(Errors.UNACCEPTABLE_CREDENTIAL, "Too many iterations")
    return error
