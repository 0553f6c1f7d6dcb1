"""DelegationTokenControlManager: delegation tokens created, renewed, expired and swept
(org.apache.kafka.controller.DelegationTokenControlManager, with QuorumController's periodic sweep).

Tokens are enabled by a non-empty `delegation.token.secret.key`; without one every change is
answered DELEGATION_TOKEN_AUTH_DISABLED. The answers are the controller's: a refused one carries
its data's defaults (times 0, no token id, no HMAC), not the broker's -1.

- Create: the token lives `delegation.token.max.lifetime.ms` at most (less if the request asks
  for a positive maximum below it) and expires `delegation.token.expiry.time.ms` after its issue
  unless renewed, never past its max; sums saturate at Long.MAX_VALUE (KAFKA-17415). Renewers
  must be User principals (INVALID_PRINCIPAL_TYPE). The id is a random Kafka Uuid.
- Renew, found by HMAC: DELEGATION_TOKEN_NOT_FOUND, then DELEGATION_TOKEN_EXPIRED (past its max
  or its expiry), then DELEGATION_TOKEN_OWNER_MISMATCH unless the principal owns it or is a
  renewer; the new expiry is now plus the expiry time (or the request's positive period below it),
  never past the max.
- Expire: not found, then owner mismatch; a negative period removes the token at once, expired or
  not, answering now; otherwise an expired token is DELEGATION_TOKEN_EXPIRED, and a live one
  expires at now plus the period, never past its max (0 leaves it expiring now: the sweep
  removes it once that is past).
- Every `delegation.token.expiry.check.interval.ms` the tokens past their max or expiry are
  removed (sweepExpiredDelegationTokens), on the broker's scheduler, the work done on the loop.
  Until then an expired token is still described, and authenticates a session that ends at once.

The tokens live in `delegation-tokens.json` in the first log dir, one row per token with the
fields of Kafka's DelegationTokenRecord (no HMAC: it follows from the secret key), replaced
atomically through the controller's config writer. A change is stored before it is in force: the
token manager's cache, which the APIs and SCRAM read, sees it only once the file holds it, and as
its row reads (principals parsed from text, as brokers replay a record). A file that cannot be read
stops the start: going on would drop its tokens at the next change. With tokens disabled the file
is neither read nor written.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Final

from franz.common.config_def import INT64_MAX
from franz.protocol.errors import Errors
from franz.server.controller import ApiError
from franz.server.delegation_token_cache import Principal, TokenInformation, principal_string
from franz.server.delegation_token_manager import DelegationTokenManager
from franz.storage.checkpoint import random_kafka_uuid, uuid_to_kafka_string

DELEGATION_TOKENS_FILE: Final = "delegation-tokens.json"
SWEEP_TASK: Final = "sweepExpiredDelegationTokens"

logger = logging.getLogger(__name__)

Writer = Callable[[Path, object], Awaitable[None]]


def _sum(now: int, duration: int) -> int:
    """DelegationTokenControlManager.sum: saturating at Long.MAX_VALUE."""
    return INT64_MAX if now > INT64_MAX - duration else now + duration


def _expiry_answer(error: Errors, expiry_timestamp_ms: int = 0) -> dict:
    """A Renew/ExpireDelegationToken answer; a refused one keeps its data's default expiry, 0."""
    return {"error_code": error, "expiry_timestamp_ms": expiry_timestamp_ms}


def allowed_to_renew(token: TokenInformation, principal: Principal) -> bool:
    """The owner or a renewer (not the requester) may renew or expire a token."""
    return principal == token.owner or principal in token.renewers


class DelegationTokenControlManager:
    def __init__(self, path: Path, write: Writer, token_manager: DelegationTokenManager, max_lifetime_ms: int,
                 expiry_time_ms: int, clock_ms: Callable[[], int] = lambda: time.time_ns() // 1_000_000) -> None:
        """`max_lifetime_ms`, `expiry_time_ms`: delegation.token.max.lifetime.ms and
        delegation.token.expiry.time.ms; `clock_ms`: wall-clock time, as tokens' times are."""
        self.path = path
        self._write = write
        self.token_manager = token_manager
        self.max_lifetime_ms = max_lifetime_ms
        self.expiry_time_ms = expiry_time_ms
        self._clock_ms = clock_ms
        # One change at a time, from reading what is in force to putting it in force (see Controller._storing).
        self._altering = asyncio.Lock()
        self._sweep: asyncio.Task | None = None
        self._stopped = False
        if token_manager.enabled:
            for token in self._read():
                token_manager.update_token(token)

    @property
    def enabled(self) -> bool:
        return self.token_manager.enabled

    def _read(self) -> list[TokenInformation]:
        if not self.path.exists():
            return []
        try:
            tokens = [TokenInformation.from_record(row)
                      for row in json.loads(self.path.read_text(encoding="utf-8"))]
        except (OSError, ValueError, TypeError, KeyError) as exc:
            raise RuntimeError(f"Cannot read the delegation tokens in {self.path}: {exc}") from exc
        if len({token.token_id for token in tokens}) != len(tokens):
            raise RuntimeError(f"Cannot read the delegation tokens in {self.path}: a token is stored twice")
        return tokens

    async def _store(self, tokens: Iterable[TokenInformation]) -> None:
        """Raises ApiError (KAFKA_STORAGE_ERROR) when the tokens could not be stored."""
        await self._write(self.path, [token.to_record() for token in tokens])

    def _kept(self) -> dict[str, TokenInformation]:
        return {token.token_id: token for token in self.token_manager.token_cache.tokens()}

    async def _put(self, token: TokenInformation) -> None:
        await self._store({**self._kept(), token.token_id: token}.values())  # stored before in force
        # in force as its record reads, as a restart will read it (principals re-parsed from text)
        self.token_manager.update_token(TokenInformation.from_record(token.to_record()))
        logger.info("Replayed DelegationTokenRecord for %s.", token.token_id)

    async def _remove(self, token_ids: set[str]) -> None:
        await self._store(token for token in self._kept().values() if token.token_id not in token_ids)
        for token_id in token_ids:
            self.token_manager.remove_token(token_id)
            logger.info("Replayed RemoveDelegationTokenRecord for %s.", token_id)

    # -- the requests ----------------------------------------------------------------------------

    async def create_delegation_token(self, requester: Principal, owner: Principal, renewers: list[Principal],
                                      max_lifetime_ms: int) -> dict:
        """CreateDelegationToken's answer (without throttle_time_ms). Raises ApiError when the
        token could not be stored: then there is none."""
        response = {"error_code": Errors.NONE, "principal_type": owner[0], "principal_name": owner[1],
                    "token_requester_principal_type": requester[0], "token_requester_principal_name": requester[1],
                    "issue_timestamp_ms": 0, "expiry_timestamp_ms": 0, "max_timestamp_ms": 0, "token_id": "",
                    "hmac": b""}
        if not self.enabled:
            return {**response, "error_code": Errors.DELEGATION_TOKEN_AUTH_DISABLED}
        if any(renewer[0] != "User" for renewer in renewers):
            return {**response, "error_code": Errors.INVALID_PRINCIPAL_TYPE}
        async with self._altering:
            now = self._clock_ms()
            max_lifetime = self.max_lifetime_ms if max_lifetime_ms <= 0 else min(self.max_lifetime_ms,
                                                                                  max_lifetime_ms)
            max_timestamp = _sum(now, max_lifetime)
            token = TokenInformation(self._new_token_id(), owner, requester, tuple(renewers), now, max_timestamp,
                                     min(max_timestamp, _sum(now, self.expiry_time_ms)))
            await self._put(token)
        return {**response, "issue_timestamp_ms": now, "expiry_timestamp_ms": token.expiry_timestamp,
                "max_timestamp_ms": max_timestamp, "token_id": token.token_id,
                "hmac": self.token_manager.hmac_of(token.token_id)}

    def _new_token_id(self) -> str:
        while True:  # a collision of 122 random bits: the loop ends at once
            token_id = uuid_to_kafka_string(random_kafka_uuid())
            if self.token_manager.token_cache.token(token_id) is None:
                return token_id

    async def _change_found_token(self, token_hmac: bytes,
                                  change: Callable[[TokenInformation, int], Awaitable[dict]]) -> dict:
        """Renewal's and expiry's first checks, tokens enabled and the token found by its HMAC;
        then `change` of the token, given now, answers, holding the lock."""
        if not self.enabled:
            return _expiry_answer(Errors.DELEGATION_TOKEN_AUTH_DISABLED)
        async with self._altering:
            now = self._clock_ms()
            token = self.token_manager.token_for_hmac(token_hmac)
            if token is None:
                return _expiry_answer(Errors.DELEGATION_TOKEN_NOT_FOUND)
            return await change(token, now)

    async def renew_delegation_token(self, principal: Principal, token_hmac: bytes, renew_period_ms: int) -> dict:
        """RenewDelegationToken's answer (without throttle_time_ms). Raises ApiError when the
        renewal could not be stored: then the token is as it was."""

        async def renew(token: TokenInformation, now: int) -> dict:
            if token.expired(now):
                return _expiry_answer(Errors.DELEGATION_TOKEN_EXPIRED)
            if not allowed_to_renew(token, principal):
                return _expiry_answer(Errors.DELEGATION_TOKEN_OWNER_MISMATCH)
            renew_lifetime = self.expiry_time_ms if renew_period_ms <= 0 else min(self.expiry_time_ms,
                                                                                   renew_period_ms)
            # Kafka adds without saturating here, so a renewal of a token whose expiry time is near
            # Long.MAX_VALUE wraps to a past expiry: saturating keeps the token alive instead.
            expiry = min(token.max_timestamp, _sum(now, renew_lifetime))
            await self._put(dataclasses.replace(token, expiry_timestamp=expiry))
            return _expiry_answer(Errors.NONE, expiry)

        return await self._change_found_token(token_hmac, renew)

    async def expire_delegation_token(self, principal: Principal, token_hmac: bytes, expiry_period_ms: int) -> dict:
        """ExpireDelegationToken's answer (without throttle_time_ms). Raises ApiError when the
        change could not be stored: then the token is as it was."""

        async def expire(token: TokenInformation, now: int) -> dict:
            if not allowed_to_renew(token, principal):
                return _expiry_answer(Errors.DELEGATION_TOKEN_OWNER_MISMATCH)
            if expiry_period_ms < 0:
                await self._remove({token.token_id})
                return _expiry_answer(Errors.NONE, now)
            if token.expired(now):
                return _expiry_answer(Errors.DELEGATION_TOKEN_EXPIRED)
            expiry = min(token.max_timestamp, _sum(now, expiry_period_ms))
            await self._put(dataclasses.replace(token, expiry_timestamp=expiry))
            return _expiry_answer(Errors.NONE, expiry)

        return await self._change_found_token(token_hmac, expire)

    # -- the periodic sweep ----------------------------------------------------------------------

    async def sweep_expired_delegation_tokens(self) -> list[str]:
        """Removes every token past its max or its expiry; their ids. Raises ApiError when the
        removal could not be stored: then every token stays."""
        async with self._altering:
            now = self._clock_ms()
            expired = [token for token in self.token_manager.token_cache.tokens() if token.expired(now)]
            for token in expired:
                logger.info("Delegation token expired for token: %s for owner: %s", token.token_id,
                            principal_string(token.owner))
            if expired:
                await self._remove({token.token_id for token in expired})
            return [token.token_id for token in expired]

    def schedule_sweeps(self, scheduler, loop: asyncio.AbstractEventLoop, interval_ms: int) -> None:
        """QuorumController.maybeScheduleNextExpiredDelegationTokenSweep: with tokens enabled, a
        sweep every interval_ms on `scheduler` (a KafkaScheduler), each run on `loop`, where the
        tokens change, and never two at once."""
        if self.enabled:
            scheduler.schedule(SWEEP_TASK, lambda: loop.call_soon_threadsafe(self._begin_sweep), interval_ms,
                               interval_ms)

    def _begin_sweep(self) -> None:
        if self._stopped or (self._sweep is not None and not self._sweep.done()):
            return
        self._sweep = asyncio.get_running_loop().create_task(self._sweep_logging_failure())

    async def _sweep_logging_failure(self) -> None:
        try:
            await self.sweep_expired_delegation_tokens()
        except ApiError as exc:  # tried again at the next interval
            logger.error("Could not remove expired delegation tokens: %s", exc.message)

    async def shutdown(self) -> None:
        """No sweep begins from now on; one under way finishes (before the config writer stops)."""
        self._stopped = True
        if self._sweep is not None:
            await self._sweep
