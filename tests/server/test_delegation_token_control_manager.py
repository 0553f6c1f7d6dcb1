"""DelegationTokenControlManager: Kafka's DelegationTokenManagerTest cases (testCreateToken,
testRenewToken, testExpireToken, testRemoveTokenHmac, testPeriodicTokenExpiry,
testTokenRequestsWithDelegationTokenDisabled) against the KRaft controller's rules, KAFKA-17415's
saturating sums (SaslSslAdminIntegrationTest), what the file keeps across a restart, a failed store
that changes nothing, and the sweep scheduled on the broker's scheduler."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from franz.common.config_def import INT64_MAX
from franz.protocol.errors import Errors
from franz.server.controller import ApiError
from franz.server.delegation_token_control_manager import (
    DELEGATION_TOKENS_FILE,
    SWEEP_TASK,
    DelegationTokenControlManager,
)
from franz.server.delegation_token_manager import DelegationTokenManager, create_hmac, hmac_as_base64
from franz.storage.checkpoint import uuid_from_kafka_string

SECRET_KEY = "secretKey"
HOUR_MS = 60 * 60 * 1000
MAX_LIFETIME_MS = 7 * 24 * HOUR_MS  # delegation.token.max.lifetime.ms's default
EXPIRY_TIME_MS = 24 * HOUR_MS  # delegation.token.expiry.time.ms's default
OWNER, RENEWER = ("User", "owner"), ("User", "renewer1")
START_MS = 1_700_000_000_000


class Clock:
    """MockTime's milliseconds: moved by sleep only."""

    def __init__(self) -> None:
        self.now_ms = START_MS

    def __call__(self) -> int:
        return self.now_ms

    def sleep(self, ms: int) -> None:
        self.now_ms += ms


async def write_json(path: Path, rows: object) -> None:
    path.write_text(json.dumps(rows), encoding="utf-8")


async def fail_to_store(path: Path, rows: object) -> None:
    raise ApiError(Errors.KAFKA_STORAGE_ERROR, f"Could not store {path.name}: disk full")


def new_manager(data_dir: Path, clock: Clock, secret_key: str | None = SECRET_KEY, write=write_json,
                max_lifetime_ms: int = MAX_LIFETIME_MS, expiry_time_ms: int = EXPIRY_TIME_MS
                ) -> DelegationTokenControlManager:
    return DelegationTokenControlManager(data_dir / DELEGATION_TOKENS_FILE, write, DelegationTokenManager(secret_key),
                                         max_lifetime_ms, expiry_time_ms, clock)


def create(manager: DelegationTokenControlManager, owner=OWNER, renewers=(RENEWER,), max_lifetime_ms=-1,
           requester=None) -> dict:
    return asyncio.run(manager.create_delegation_token(requester or owner, owner, list(renewers), max_lifetime_ms))


def renew(manager, principal, token_hmac: bytes, period_ms: int) -> tuple[Errors, int]:
    answer = asyncio.run(manager.renew_delegation_token(principal, token_hmac, period_ms))
    return answer["error_code"], answer["expiry_timestamp_ms"]


def expire(manager, principal, token_hmac: bytes, period_ms: int) -> tuple[Errors, int]:
    answer = asyncio.run(manager.expire_delegation_token(principal, token_hmac, period_ms))
    return answer["error_code"], answer["expiry_timestamp_ms"]


def test_every_change_is_auth_disabled_without_a_secret_key(tmp_path):
    """testTokenRequestsWithDelegationTokenDisabled, with the controller's answers (their data's
    defaults: times 0, no HMAC); the file is not read (nor written)."""
    (tmp_path / DELEGATION_TOKENS_FILE).write_text("not json")
    manager = new_manager(tmp_path, Clock(), secret_key="")
    assert not manager.enabled
    created = create(manager)
    assert (created["error_code"], created["hmac"], created["token_id"], created["issue_timestamp_ms"],
            created["principal_name"]) == (Errors.DELEGATION_TOKEN_AUTH_DISABLED, b"", "", 0, "owner")
    assert renew(manager, OWNER, b"test", 1_000_000) == (Errors.DELEGATION_TOKEN_AUTH_DISABLED, 0)
    assert expire(manager, OWNER, b"test", 1_000_000) == (Errors.DELEGATION_TOKEN_AUTH_DISABLED, 0)
    assert (tmp_path / DELEGATION_TOKENS_FILE).read_text() == "not json"


def test_create_token(tmp_path):
    """testCreateToken: the default lifetimes, a Kafka Uuid id, HmacSHA512 of it with the key."""
    clock = Clock()
    manager = new_manager(tmp_path, clock)
    created = create(manager)
    token_id = created["token_id"]
    uuid_from_kafka_string(token_id)
    password = create_hmac(token_id, SECRET_KEY)
    assert created == {"error_code": Errors.NONE, "principal_type": "User", "principal_name": "owner",
                       "token_requester_principal_type": "User", "token_requester_principal_name": "owner",
                       "issue_timestamp_ms": START_MS, "expiry_timestamp_ms": START_MS + EXPIRY_TIME_MS,
                       "max_timestamp_ms": START_MS + MAX_LIFETIME_MS, "token_id": token_id, "hmac": password}
    token = manager.token_manager.token_cache.token(token_id)
    assert token is not None and token.renewers == (RENEWER,)
    assert manager.token_manager.get_delegation_token(token).hmac == password


def test_create_token_takes_a_shorter_requested_lifetime_and_never_overflows(tmp_path):
    """The request's positive max lifetime below the broker's wins (testCreateDelegationTokenWithSmallerTimeout);
    with Long.MAX_VALUE lifetimes the times saturate rather than wrap (KAFKA-17415)."""
    manager = new_manager(tmp_path, Clock())
    assert create(manager, max_lifetime_ms=5000)["max_timestamp_ms"] == START_MS + 5000
    assert create(manager, max_lifetime_ms=5000)["expiry_timestamp_ms"] == START_MS + 5000  # never past the max
    assert create(manager, max_lifetime_ms=MAX_LIFETIME_MS + 1)["max_timestamp_ms"] == START_MS + MAX_LIFETIME_MS
    unbounded = new_manager(tmp_path / "unbounded", Clock(), max_lifetime_ms=INT64_MAX, expiry_time_ms=INT64_MAX)
    (tmp_path / "unbounded").mkdir()
    created = create(unbounded)
    assert (created["max_timestamp_ms"], created["expiry_timestamp_ms"]) == (INT64_MAX, INT64_MAX)
    assert renew(unbounded, OWNER, created["hmac"], -1) == (Errors.NONE, INT64_MAX)


def test_a_renewer_must_be_a_user(tmp_path):
    manager = new_manager(tmp_path, Clock())
    created = create(manager, renewers=[RENEWER, ("Group", "renewers")])
    assert (created["error_code"], created["token_id"]) == (Errors.INVALID_PRINCIPAL_TYPE, "")
    assert not manager.token_manager.token_cache.tokens()


def test_renew_token(tmp_path):
    """testRenewToken."""
    clock = Clock()
    manager = new_manager(tmp_path, clock)
    password = create(manager)["hmac"]
    max_timestamp = START_MS + MAX_LIFETIME_MS
    assert renew(manager, OWNER, b"test", -1) == (Errors.DELEGATION_TOKEN_NOT_FOUND, 0)
    assert renew(manager, ("User", "Unknown"), password, -1) == (Errors.DELEGATION_TOKEN_OWNER_MISMATCH, 0)
    clock.sleep(24 * HOUR_MS)  # the default period
    assert renew(manager, OWNER, password, -1) == (Errors.NONE, clock() + EXPIRY_TIME_MS)
    clock.sleep(24 * HOUR_MS)  # a period of its own
    assert renew(manager, OWNER, password, HOUR_MS) == (Errors.NONE, clock() + HOUR_MS)
    clock.sleep(HOUR_MS)  # never longer than the expiry time (the ZooKeeper-era manager took any period)
    assert renew(manager, OWNER, password, 8 * 24 * HOUR_MS) == (Errors.NONE, clock() + EXPIRY_TIME_MS)
    for _ in range(5):  # by a renewer, every 23 hours, up to the max and never past it
        clock.sleep(23 * HOUR_MS)
        renewed = renew(manager, RENEWER, password, -1)
    assert renewed == (Errors.NONE, max_timestamp)
    clock.sleep(8 * 24 * HOUR_MS)
    assert renew(manager, OWNER, password, -1) == (Errors.DELEGATION_TOKEN_EXPIRED, 0)


def test_only_the_owner_or_a_renewer_renews_not_the_requester(tmp_path):
    manager = new_manager(tmp_path, Clock())
    requester = ("User", "requester1")
    password = create(manager, owner=("User", "owner5"), requester=requester)["hmac"]
    assert renew(manager, requester, password, -1) == (Errors.DELEGATION_TOKEN_OWNER_MISMATCH, 0)
    assert expire(manager, requester, password, -1) == (Errors.DELEGATION_TOKEN_OWNER_MISMATCH, 0)
    assert renew(manager, RENEWER, password, -1)[0] == Errors.NONE


def test_expire_token(tmp_path):
    """testExpireToken, with the KRaft order (KAFKA-17315): an expired token may still be
    expired at once, and is then gone."""
    clock = Clock()
    manager = new_manager(tmp_path, clock)
    created = create(manager)
    password, token_id = created["hmac"], created["token_id"]
    assert expire(manager, OWNER, b"test", -1) == (Errors.DELEGATION_TOKEN_NOT_FOUND, 0)
    assert expire(manager, ("User", "Unknown"), password, -1) == (Errors.DELEGATION_TOKEN_OWNER_MISMATCH, 0)
    clock.sleep(24 * HOUR_MS)
    assert expire(manager, OWNER, password, 2 * HOUR_MS) == (Errors.NONE, clock() + 2 * HOUR_MS)
    clock.sleep(8 * 24 * HOUR_MS)
    assert renew(manager, OWNER, password, -1) == (Errors.DELEGATION_TOKEN_EXPIRED, 0)
    assert expire(manager, OWNER, password, HOUR_MS) == (Errors.DELEGATION_TOKEN_EXPIRED, 0)
    assert expire(manager, OWNER, password, -1) == (Errors.NONE, clock())
    assert manager.token_manager.token_cache.token(token_id) is None


def test_an_expiry_period_of_zero_expires_now_and_the_sweep_removes_it_once_past(tmp_path):
    clock = Clock()
    manager = new_manager(tmp_path, clock)
    created = create(manager)
    assert expire(manager, OWNER, created["hmac"], 0) == (Errors.NONE, START_MS)
    assert asyncio.run(manager.sweep_expired_delegation_tokens()) == []  # expiring now, not yet past
    clock.sleep(1)
    assert asyncio.run(manager.sweep_expired_delegation_tokens()) == [created["token_id"]]


def test_remove_token_hmac(tmp_path):
    """testRemoveTokenHmac: a token expired at once leaves no HMAC entry behind."""
    manager = new_manager(tmp_path, Clock())
    created = create(manager)
    expire(manager, OWNER, created["hmac"], -1)
    cache = manager.token_manager.token_cache
    assert cache.token_id_for_hmac(hmac_as_base64(created["hmac"])) is None
    assert cache.token(created["token_id"]) is None
    assert manager.token_manager.token_credential(created["token_id"], 1) is None


def test_periodic_token_expiry(tmp_path):
    """testPeriodicTokenExpiry: two hours on, the tokens of a one-hour max are swept; those of a
    two-hour one are at their max, not past it, and stay."""
    clock = Clock()
    manager = new_manager(tmp_path, clock)
    short = [create(manager, max_lifetime_ms=HOUR_MS)["token_id"] for _ in range(2)]
    for _ in range(2):
        create(manager, max_lifetime_ms=2 * HOUR_MS)
    clock.sleep(2 * HOUR_MS)
    assert sorted(asyncio.run(manager.sweep_expired_delegation_tokens())) == sorted(short)
    assert len(manager.token_manager.token_cache.tokens()) == 2
    assert len(new_manager(tmp_path, clock).token_manager.token_cache.tokens()) == 2  # as stored


def test_the_tokens_outlive_a_restart_as_stored(tmp_path):
    """DelegationTokenRecord's fields, no HMAC; the next start derives it from the key again, and
    finds the token by it."""
    clock = Clock()
    manager = new_manager(tmp_path, clock)
    created = create(manager, owner=("User", "ow:ner"), requester=("User", "admin"))
    renew(manager, ("User", "ow:ner"), created["hmac"], HOUR_MS)
    rows = json.loads((tmp_path / DELEGATION_TOKENS_FILE).read_text())
    assert rows == [{"owner": "User:ow:ner", "requester": "User:admin", "renewers": ["User:renewer1"],
                     "issue_timestamp": START_MS, "max_timestamp": START_MS + MAX_LIFETIME_MS,
                     "expiration_timestamp": START_MS + HOUR_MS, "token_id": created["token_id"]}]
    restarted = new_manager(tmp_path, clock)
    token = restarted.token_manager.token_for_hmac(created["hmac"])
    assert token is not None and (token.owner, token.token_requester, token.expiry_timestamp) == (
        ("User", "ow:ner"), ("User", "admin"), START_MS + HOUR_MS)
    assert restarted.token_manager.token_credential(created["token_id"], 2)[0] == "ow:ner"
    assert new_manager(tmp_path, clock, secret_key="another").token_manager.token_for_hmac(created["hmac"]) is None


def test_a_token_is_kept_as_its_record_reads_before_a_restart_as_after(tmp_path):
    """The brokers' caches take a token from its DelegationTokenRecord (DelegationTokenPublisher),
    whose principals are text split at the first colon: an owner whose type holds a colon is kept,
    described and authenticated as another principal than the create answered, and a restart,
    which reads the same text, changes none of it."""
    manager = new_manager(tmp_path, Clock())
    created = create(manager, owner=("Group:x", "y"), requester=("User", "admin"))
    assert (created["principal_type"], created["principal_name"]) == ("Group:x", "y")
    for kept in (manager, new_manager(tmp_path, Clock())):
        token = kept.token_manager.token_for_hmac(created["hmac"])
        assert token is not None and token.owner == ("Group", "x:y")
        assert kept.token_manager.token_credential(created["token_id"], 1)[0] == "x:y"


@pytest.mark.parametrize("content", ["not json", '[{"token_id": "a"}]', '[{"owner": "nocolon", "requester": "User:a", '
                                     '"renewers": [], "issue_timestamp": 1, "max_timestamp": 2, '
                                     '"expiration_timestamp": 2, "token_id": "a"}]'])
def test_a_file_that_cannot_be_read_stops_the_start(tmp_path, content):
    (tmp_path / DELEGATION_TOKENS_FILE).write_text(content)
    with pytest.raises(RuntimeError, match="Cannot read the delegation tokens"):
        new_manager(tmp_path, Clock())


def test_a_change_that_could_not_be_stored_is_not_in_force(tmp_path):
    clock = Clock()
    manager = new_manager(tmp_path, clock)
    created = create(manager)
    manager._write = fail_to_store
    with pytest.raises(ApiError) as failed:
        create(manager, owner=("User", "other"))
    assert failed.value.code == Errors.KAFKA_STORAGE_ERROR
    with pytest.raises(ApiError):
        renew(manager, OWNER, created["hmac"], HOUR_MS)
    with pytest.raises(ApiError):
        expire(manager, OWNER, created["hmac"], -1)
    clock.sleep(30 * 24 * HOUR_MS)
    with pytest.raises(ApiError):
        asyncio.run(manager.sweep_expired_delegation_tokens())
    [token] = manager.token_manager.token_cache.tokens()
    assert (token.token_id, token.expiry_timestamp) == (created["token_id"], created["expiry_timestamp_ms"])


class RecordingScheduler:
    def __init__(self) -> None:
        self.tasks: list[tuple[str, object, int, int]] = []

    def schedule(self, name, action, delay_ms, period_ms) -> None:
        self.tasks.append((name, action, delay_ms, period_ms))


def test_the_sweep_runs_every_check_interval_on_the_loop_only_with_tokens(tmp_path):
    """QuorumController schedules it only with tokens enabled; each run, posted from the
    scheduler's thread, removes the expired tokens on the loop; none begins after shutdown."""

    async def scenario() -> tuple[list, int, int]:
        loop = asyncio.get_running_loop()
        disabled = RecordingScheduler()
        new_manager(tmp_path / "disabled", Clock(), secret_key=None).schedule_sweeps(disabled, loop, 1000)
        clock = Clock()
        manager = new_manager(tmp_path, clock)
        await manager.create_delegation_token(OWNER, OWNER, [], HOUR_MS)
        scheduler = RecordingScheduler()
        manager.schedule_sweeps(scheduler, loop, 5000)
        [(name, action, delay_ms, period_ms)] = scheduler.tasks
        assert (name, delay_ms, period_ms) == (SWEEP_TASK, 5000, 5000)
        clock.sleep(2 * HOUR_MS)
        await asyncio.to_thread(action)  # as a scheduler thread runs it: the sweep begins on the loop
        await manager.shutdown()  # waits for it
        swept = len(manager.token_manager.token_cache.tokens())
        await manager.create_delegation_token(OWNER, OWNER, [], HOUR_MS)
        clock.sleep(2 * HOUR_MS)
        await asyncio.to_thread(action)
        await asyncio.sleep(0)  # what a sweep begun now would need to finish
        return disabled.tasks, swept, len(manager.token_manager.token_cache.tokens())

    assert asyncio.run(scenario()) == ([], 0, 1)
