"""The error codes an answer carries, counted as Kafka counts them for ErrorsPerSec
(AbstractResponse.errorCounts of each response class).

Most responses count every ErrorCode field they hold, at every depth, once per
occurrence, NONE included: the paths to those fields are read from the response's
schema once per version. The responses whose errorCounts counts otherwise are
listed in _COUNTERS, each with its own counting: Kafka counts from the response
object, so some count a top-level code in versions that do not send it (its
default, NONE), some skip a level, some count a code only when it is an error.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import Any, Final

from franz.protocol import api_keys
from franz.protocol.schema import Field

ErrorCounts = dict[int, int]

_ERROR_FIELD: Final = "error_code"


def _error_paths(fields: Iterable[Field], version: int) -> list[tuple[str, ...]]:
    paths = []
    for field in fields:
        if not field.present_in(version):
            continue
        if field.name == _ERROR_FIELD and field.type == "int16":
            paths.append((field.name,))
        elif field.is_struct:
            paths.extend((field.name, *path) for path in _error_paths(field.fields, version))
    return paths


@functools.cache
def error_paths(api_key: int, version: int) -> tuple[tuple[str, ...], ...]:
    """The field paths of every ErrorCode in the response of this API version."""
    return tuple(_error_paths(api_keys.SCHEMAS[api_key].response, version))


def _count_path(node: Any, path: tuple[str, ...], counts: ErrorCounts) -> None:
    if node is None:
        return
    if isinstance(node, list):
        for element in node:
            _count_path(element, path, counts)
        return
    if len(path) == 1:
        code = node.get(path[0], 0)  # left out: the encoder writes the default, NONE
        counts[code] = counts.get(code, 0) + 1
    else:
        _count_path(node.get(path[0]), path[1:], counts)


def count(counts: ErrorCounts, code: int, times: int = 1) -> None:
    counts[code] = counts.get(code, 0) + times


def _each(rows: list | None, *path: str) -> Iterable[dict]:
    """The dicts at the end of `path` (list fields) below `rows`."""
    for row in rows or ():
        if path:
            yield from _each(row.get(path[0]), *path[1:])
        else:
            yield row


def _codes(counts: ErrorCounts, rows: Iterable[dict], field: str = _ERROR_FIELD) -> ErrorCounts:
    for row in rows:
        count(counts, row.get(field, 0))
    return counts


def _fetch(version: int, body: dict) -> ErrorCounts:
    # the top-level code counts in every version, from the response object (v4-6 do not send it)
    counts = {body.get("error_code", 0): 1}
    return _codes(counts, _each(body.get("responses"), "partitions"))


def _produce(version: int, body: dict) -> ErrorCounts:  # the default rule, unrolled: once per produce
    counts: ErrorCounts = {}
    for topic in body.get("responses") or ():
        for partition in topic.get("partition_responses") or ():
            code = partition.get("error_code", 0)
            counts[code] = counts.get(code, 0) + 1
    return counts


def _metadata(version: int, body: dict) -> ErrorCounts:  # the top-level code (v13+) never counts
    counts: ErrorCounts = {}
    for topic in body.get("topics") or ():
        count(counts, topic.get("error_code", 0))
        _codes(counts, topic.get("partitions") or ())
    return counts


def _add_partitions_to_txn(version: int, body: dict) -> ErrorCounts:
    counts: ErrorCounts = {}
    old_results = body.get("results_by_topic_v3_and_below")
    if not old_results:  # v4+ always: the top-level code, a default NONE before v4
        count(counts, body.get("error_code", 0))
    _codes(counts, _each(old_results, "results_by_partition"), "partition_error_code")
    return _codes(counts, _each(body.get("results_by_transaction"), "topic_results", "results_by_partition"),
                  "partition_error_code")


def _find_coordinator(version: int, body: dict) -> ErrorCounts:
    coordinators = body.get("coordinators")
    if coordinators:
        return _codes({}, coordinators)
    return {body.get("error_code", 0): 1}  # v4+ no longer sends it: the default NONE


def _describe_log_dirs(version: int, body: dict) -> ErrorCounts:  # the top-level code from v1 on
    return _codes({body.get("error_code", 0): 1}, body.get("results") or ())


def _elect_leaders(version: int, body: dict) -> ErrorCounts:  # the top-level code from v0 on
    return _codes({body.get("error_code", 0): 1}, _each(body.get("replica_election_results"), "partition_result"))


def _describe_share_group_offsets(version: int, body: dict) -> ErrorCounts:
    counts: ErrorCounts = {}
    failed_groups: dict[str, int] = {}  # one per group in error, as a map by group id holds them
    for group in body.get("groups") or ():
        if group.get("error_code", 0):
            failed_groups[group.get("group_id", "")] = group["error_code"]
        _codes(counts, _each(group.get("topics"), "partitions"))
    for code in failed_groups.values():
        count(counts, code)
    return counts


def _nonzero_top_level(version: int, body: dict) -> ErrorCounts:
    code = body.get("error_code", 0)
    return {code: 1} if code else {}


# The responses whose errorCounts counts other than every ErrorCode field of the version.
_COUNTERS: Final[dict[str, Callable[[int, dict], ErrorCounts]]] = {
    "Produce": _produce,
    "Fetch": _fetch,
    "Metadata": _metadata,
    "AddPartitionsToTxn": _add_partitions_to_txn,  # its partitions' codes are PartitionErrorCode
    "FindCoordinator": _find_coordinator,
    "DescribeLogDirs": _describe_log_dirs,
    "ElectLeaders": _elect_leaders,
    "DescribeShareGroupOffsets": _describe_share_group_offsets,
    "DeleteAcls": lambda version, body: _codes({}, body.get("filter_results") or ()),  # not the matching ACLs'
    "DescribeUserScramCredentials": lambda version, body: _codes({}, body.get("results") or ()),  # no top level
    "UnregisterBroker": _nonzero_top_level,
}


def error_counts(api_key: int, version: int, body: dict) -> ErrorCounts:
    """Error code -> how many times the answer `body` (a response dict) carries it."""
    counter = _COUNTERS.get(api_keys.SCHEMAS[api_key].name)
    if counter is not None:
        return counter(version, body)
    counts: ErrorCounts = {}
    for path in error_paths(api_key, version):
        _count_path(body, path, counts)
    return counts
