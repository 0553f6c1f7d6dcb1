"""AclControlManager: the cluster's ACLs, created and deleted (org.apache.kafka.controller.AclControlManager).

Each ACL has an id (a Kafka Uuid, as StandardAclWithId's). They live in
`acls.json` in the first log dir, one row per ACL with the fields of Kafka's
AccessControlEntryRecord (codes as numbers), replaced atomically on each
change through the controller's config writer (write, fsync, rename, fsync the
dir), and read at startup. A change is stored before it is in force: only once
the file holds it do the manager and the authorizer (add_acl, remove_acl) see
it, in one step of the loop, as Kafka's authorizer sees the controller's
records only once they are committed. A file that cannot be read stops the
start: going on without the ACLs would drop every DENY.

Creation checks are validateNewAcl's, with its messages (INVALID_REQUEST):
UNKNOWN or ANY resource type or operation, a pattern type other than LITERAL
or PREFIXED, a permission type other than ALLOW or DENY, an empty resource
name, a principal with no colon (KAFKA-18051, Kafka 4.0). An ACL that exists
already is no error and is not stored twice. Nothing checks the host: Kafka
stores an empty one too. Deletion takes AclBindingFilters; one ACL that two
filters of a request match is listed in both results and removed once, and
the removals of a request are stored together.

A request makes at most RECORDS_PER_USER_OP_MAX records (QuorumController's
MAX_RECORDS_PER_USER_OP, its batch size). CreateAcls counts the new ACLs only
(one there already, or refused, makes no record); past the limit the
controller's BoundedList throws and the whole operation fails as a
PolicyViolationException, every binding answered with it. DeleteAcls counts
each match of each filter against the removals gathered so far: a match once
that many are gathered, even of an ACL gathered already, fails the whole
request with INVALID_REQUEST (Kafka 4.1+, KAFKA-19411; before it the filter
that crossed the limit answered UNKNOWN_SERVER_ERROR and the controller failed
over). Either way nothing is stored.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

from franz.protocol.errors import Errors
from franz.server.controller import ApiError
from franz.server.standard_authorizer import (
    AclBindingFilter,
    AclDeleteResult,
    AclOperation,
    AclPermissionType,
    PatternType,
    ResourceType,
    StandardAcl,
    StandardAuthorizer,
    from_code,
)
from franz.storage.checkpoint import random_kafka_uuid, uuid_from_kafka_string, uuid_to_kafka_string

ACLS_FILE: Final = "acls.json"
RECORDS_PER_USER_OP_MAX: Final = 10_000
# EventHandlerExceptionInfo's PolicyViolationException for a BoundedListTooLongException.
EXCESSIVE_BATCH: Final = "Unable to perform excessively large batch operation."
TOO_MANY_REMOVALS: Final = f"Cannot remove more than {RECORDS_PER_USER_OP_MAX} acls in a single delete operation."

logger = logging.getLogger(__name__)

Writer = Callable[[Path, object], Awaitable[None]]


def validate_new_acl(acl: StandardAcl) -> ApiError | None:
    """AclControlManager.validateNewAcl: the first fault of a new ACL, None if it has none."""
    if acl.resource_type in (ResourceType.UNKNOWN, ResourceType.ANY):
        return _invalid(f"Invalid resourceType {acl.resource_type.name}")
    if acl.pattern_type not in (PatternType.LITERAL, PatternType.PREFIXED):
        return _invalid(f"Invalid patternType {acl.pattern_type.name}")
    if acl.operation in (AclOperation.UNKNOWN, AclOperation.ANY):
        return _invalid(f"Invalid operation {acl.operation.name}")
    if acl.permission_type not in (AclPermissionType.DENY, AclPermissionType.ALLOW):
        return _invalid(f"Invalid permissionType {acl.permission_type.name}")
    if not acl.resource_name:
        return _invalid("Resource name should not be empty")
    if ":" not in acl.principal:
        return _invalid(f"Could not parse principal from `{acl.principal}` (no colon is present separating the "
                        f"principal type from the principal name)")
    return None


def validate_filter(acl_filter: AclBindingFilter) -> ApiError | None:
    """AclControlManager.validateFilter."""
    if acl_filter.pattern_filter.is_unknown():
        return _invalid("Unknown patternFilter.")
    if acl_filter.entry_filter.is_unknown():
        return _invalid("Unknown entryFilter.")
    return None


def _invalid(message: str) -> ApiError:
    return ApiError(Errors.INVALID_REQUEST, message)


class AclControlManager:
    def __init__(self, path: Path, write: Writer, authorizer: StandardAuthorizer) -> None:
        self.path = path
        self._write = write
        self._authorizer = authorizer
        # One change at a time, from reading what is in force to putting it in force (see Controller._storing).
        self._altering = asyncio.Lock()
        self.id_to_acl: dict[uuid.UUID, StandardAcl] = self._read()
        authorizer.load_snapshot(self.id_to_acl)
        authorizer.set_acl_mutator(self)

    def _read(self) -> dict[uuid.UUID, StandardAcl]:
        if not self.path.exists():
            return {}
        try:
            rows = json.loads(self.path.read_text(encoding="utf-8"))
            acls = {uuid_from_kafka_string(row["id"]): StandardAcl(
                from_code(ResourceType, int(row["resource_type"])), str(row["resource_name"]),
                from_code(PatternType, int(row["pattern_type"])), str(row["principal"]), str(row["host"]),
                from_code(AclOperation, int(row["operation"])),
                from_code(AclPermissionType, int(row["permission_type"]))) for row in rows}
        except (OSError, ValueError, TypeError, KeyError) as exc:
            raise RuntimeError(f"Cannot read the ACLs in {self.path}: {exc}") from exc
        if len(set(acls.values())) != len(acls):
            raise RuntimeError(f"Cannot read the ACLs in {self.path}: an ACL is stored twice")
        return acls

    @staticmethod
    def _rows(acls: dict[uuid.UUID, StandardAcl]) -> list[dict]:
        return [{"id": uuid_to_kafka_string(acl_id), "resource_type": int(acl.resource_type),
                 "resource_name": acl.resource_name, "pattern_type": int(acl.pattern_type),
                 "principal": acl.principal, "host": acl.host, "operation": int(acl.operation),
                 "permission_type": int(acl.permission_type)} for acl_id, acl in acls.items()]

    async def create_acls(self, bindings: list[StandardAcl]) -> list[ApiError | None]:
        """One result per binding (None: created or there already). Raises ApiError when the
        change is too large or could not be stored: then nothing was created."""
        async with self._altering:
            results: list[ApiError | None] = []
            existing = set(self.id_to_acl.values())
            created: dict[uuid.UUID, StandardAcl] = {}
            for acl in bindings:
                error = validate_new_acl(acl)
                if error is None and acl not in existing:
                    existing.add(acl)
                    created[self._new_acl_id(created)] = acl
                results.append(error)
            if len(created) > RECORDS_PER_USER_OP_MAX:
                logger.info("createAcls: event failed with BoundedListTooLongException (treated as "
                            "PolicyViolationException). Exception message: Cannot add another element to the list "
                            "because it would exceed the maximum length of %d", RECORDS_PER_USER_OP_MAX)
                raise ApiError(Errors.POLICY_VIOLATION, EXCESSIVE_BATCH)
            if created:
                await self._write(self.path, self._rows({**self.id_to_acl, **created}))  # stored before in force
                for acl_id, acl in created.items():
                    self.id_to_acl[acl_id] = acl
                    self._authorizer.add_acl(acl_id, acl)
                    logger.info("Replayed AccessControlEntryRecord for %s, setting %s", uuid_to_kafka_string(acl_id),
                                acl)
            return results

    def _new_acl_id(self, created: dict[uuid.UUID, StandardAcl]) -> uuid.UUID:
        while True:  # a collision of 122 random bits: the loop ends at once
            acl_id = random_kafka_uuid()
            if acl_id not in self.id_to_acl and acl_id not in created:
                return acl_id

    async def delete_acls(self, filters: list[AclBindingFilter]) -> list[AclDeleteResult]:
        """One result per filter, listing the ACLs it matched. Raises ApiError when the change
        is too large or could not be stored: then nothing was deleted."""
        async with self._altering:
            results: list[AclDeleteResult] = []
            deleted: set[uuid.UUID] = set()
            for acl_filter in filters:
                error = validate_filter(acl_filter)
                if error is not None:
                    results.append(AclDeleteResult(error))
                    continue
                matched = []
                for acl_id, acl in self.id_to_acl.items():
                    if acl_filter.matches(acl):
                        if len(deleted) == RECORDS_PER_USER_OP_MAX:  # before each match, even of one gathered
                            logger.info("deleteAcls: event failed with InvalidRequestException. Exception message: "
                                        "%s", TOO_MANY_REMOVALS)
                            raise ApiError(Errors.INVALID_REQUEST, TOO_MANY_REMOVALS)
                        deleted.add(acl_id)
                        matched.append(acl)
                results.append(AclDeleteResult(None, tuple(matched)))
            if deleted:
                remaining = {acl_id: acl for acl_id, acl in self.id_to_acl.items() if acl_id not in deleted}
                await self._write(self.path, self._rows(remaining))  # stored before in force
                for acl_id in [acl_id for acl_id in self.id_to_acl if acl_id in deleted]:
                    acl = self.id_to_acl.pop(acl_id)
                    self._authorizer.remove_acl(acl_id)
                    logger.info("Replayed RemoveAccessControlEntryRecord for %s, removing %s",
                                uuid_to_kafka_string(acl_id), acl)
            return results
