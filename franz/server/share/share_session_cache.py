"""Share sessions (ShareSessionCache, ShareSession, ShareRequestMetadata of KIP-932).

A share consumer's ShareFetch and ShareAcknowledge requests run in a session keyed
by (group id, member id): epoch 0 opens it with the partitions of that request (an
open session of the same key is replaced), -1 closes it, and every other request
must carry the session's next epoch, which the request then moves on (after
Integer.MAX_VALUE comes 1). A session's partitions are what its fetches read; a
request adds partitions and forgets others.

The cache holds at most group.share.max.share.sessions sessions and never evicts
one: a full cache answers SHARE_SESSION_LIMIT_REACHED. Sessions end with a final
epoch, a new epoch 0 of the same key, or when the connection that opened them
closes (then the member's acquired records are released).
"""

from __future__ import annotations

import dataclasses
from typing import Final

from franz.protocol.errors import Errors, default_message

INITIAL_EPOCH: Final = 0
FINAL_EPOCH: Final = -1
INT32_MAX: Final = 2**31 - 1

SessionKey = tuple[str, str]  # (group id, member id)
TopicIdPartition = tuple[bytes, int]


def next_epoch(epoch: int) -> int:
    if epoch < 0:
        return FINAL_EPOCH
    return 1 if epoch == INT32_MAX else epoch + 1


class ShareSessionError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclasses.dataclass(eq=False)
class ShareSession:
    key: SessionKey
    epoch: int
    connection_id: str
    # partition -> whether the next response must name it (new to the session, or in error)
    partitions: dict[TopicIdPartition, bool] = dataclasses.field(default_factory=dict)

    def update(self, added: list[TopicIdPartition], forgotten: list[TopicIdPartition]) -> None:
        for partition in added:
            self.partitions.setdefault(partition, True)
        for partition in forgotten:
            self.partitions.pop(partition, None)


class ShareSessionCache:
    def __init__(self, max_sessions: int) -> None:
        self.max_sessions = max_sessions
        self.sessions: dict[SessionKey, ShareSession] = {}

    def open(self, key: SessionKey, partitions: list[TopicIdPartition], connection_id: str) -> ShareSession:
        """Epoch 0: a new session in place of any open one of the key (whose records the caller
        does not release, as Kafka does not). Raises ShareSessionError when the cache is full."""
        self.sessions.pop(key, None)
        if len(self.sessions) >= self.max_sessions:
            raise ShareSessionError(Errors.SHARE_SESSION_LIMIT_REACHED, "The limit of share sessions has been "
                                                                        "reached.")
        session = ShareSession(key, next_epoch(INITIAL_EPOCH), connection_id,
                               {partition: False for partition in partitions})
        self.sessions[key] = session
        return session

    def find(self, key: SessionKey, epoch: int) -> ShareSession:
        """The open session at `epoch` (any epoch for the final one). Raises ShareSessionError."""
        session = self.sessions.get(key)
        if session is None:
            raise ShareSessionError(Errors.SHARE_SESSION_NOT_FOUND, default_message(Errors.SHARE_SESSION_NOT_FOUND))
        if epoch != FINAL_EPOCH and session.epoch != epoch:
            raise ShareSessionError(Errors.INVALID_SHARE_SESSION_EPOCH,
                                    default_message(Errors.INVALID_SHARE_SESSION_EPOCH))
        return session

    def advance(self, session: ShareSession) -> None:
        session.epoch = next_epoch(session.epoch)

    def remove(self, key: SessionKey) -> ShareSession | None:
        return self.sessions.pop(key, None)

    def remove_all_sessions(self) -> None:
        self.sessions.clear()

    def of_connection(self, connection_id: str) -> list[ShareSession]:
        return [s for s in self.sessions.values() if s.connection_id == connection_id]
