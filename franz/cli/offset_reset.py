"""The new offsets of `franz consumer-groups --reset-offsets` for one inactive group, and the log
offsets --describe shows (Kafka 4.3's OffsetsUtils and the reset part of ConsumerGroupService).

The partitions to reset are every one the group has an offset for (--all-topics) or those --topic
names (TOPIC for all of its partitions, TOPIC:P,P,... for some), each of which must exist and have
a leader. The scenario then gives each partition its offset: the log start (--to-earliest) or end
(--to-latest), --to-offset N or the committed offset shifted by N (--shift-by), both moved into
[log start, log end] with a WARN log line on stderr as Kafka's log4j prints it, the first offset at
or after a time (--to-datetime, --by-duration; the log end for a partition with no such record,
after a "Warn: ... is empty" line on stdout), or the committed offset (--to-current; the log end
where there is none), or what the --from-file CSV gives the group (moved into the log's range, as
--to-offset). With --execute the offsets are committed for the group.

What Kafka refuses through the usage (an IllegalArgumentException, printUsageAndExit) is a
UsageError; any other failure is a CommandFailed whose text is what Kafka prints after
"Executing consumer group command failed due to ", exception class and wrapping included.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import re
import sys
import time

from franz.cli.admin_client import exception_text
from franz.cli.command_line import UsageError, java_split
from franz.coordinator.group.group_config import by_duration_ms

Partition = tuple[str, int]  # (topic, partition): Kafka's TopicPartition
INT_MIN, INT_MAX = -(1 << 31), (1 << 31) - 1
EXECUTION_EXCEPTION = "java.util.concurrent.ExecutionException: "  # a RuntimeException(ExecutionException)'s text
PARSE_EXCEPTION = "java.text.ParseException: "
LOGGER = "org.apache.kafka.tools.OffsetsUtils"
# ConsumerGroupCommandOptions.allResetOffsetScenarioOpts, as declared; checkArgs checks them in CHECKED_ORDER.
SCENARIOS = ("to-offset", "shift-by", "to-datetime", "by-duration", "to-earliest", "to-latest", "to-current",
             "from-file")
CHECKED_ORDER = ("to-offset", "to-datetime", "by-duration", "to-earliest", "to-latest", "to-current", "shift-by",
                 "from-file")
_DATETIME = re.compile(r"([0-9]+)-([0-9]+)-([0-9]+)T([0-9]+):([0-9]+):([0-9]+)\.([0-9]+)")
# SimpleDateFormat's XXX (Z or +hh:mm), then X (Z or +hh, what follows being ignored), as Utils.getDateTime tries them
_ZONES = (re.compile(r"Z|([+-])([0-9]{2}):([0-9]{2})"), re.compile(r"Z|([+-])([0-9]{2})"))
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


class CommandFailed(Exception):
    """A failure ConsumerGroupCommand.run prints as "Error: Executing consumer group command failed due to <text>"."""


def failed(exc: Exception, wrapped: bool = False) -> CommandFailed:
    """The admin client's failure as Kafka's ExecutionException (cause.toString()), or `wrapped` in a
    RuntimeException as Kafka's tools wrap most of them."""
    return CommandFailed(f"{EXECUTION_EXCEPTION if wrapped else ''}{exception_text(exc)}")


def partition_name(partition: Partition) -> str:
    """TopicPartition.toString."""
    return f"{partition[0]}-{partition[1]}"


def datetime_ms(text: str) -> int:
    """Utils.getDateTime: YYYY-MM-DDThh:mm:ss.sss with an optional zone (Z, +hh:mm, +hh; UTC without),
    as milliseconds since the epoch; strict about each field's range."""
    parts = java_split(text, "T")
    if len(parts) < 2:
        raise CommandFailed(f"{PARSE_EXCEPTION}Error parsing timestamp. It does not contain a 'T' according to "
                            "ISO8601 format")
    if not any(sign in parts[1] for sign in "+-Z"):
        text += "Z"
    fields = _DATETIME.match(text)
    for zone_pattern in _ZONES if fields else ():
        zone = zone_pattern.match(text, fields.end())
        if zone is None:
            continue
        sign, hours, minutes = zone.groups() + (None,) * (3 - len(zone.groups()))
        try:
            offset = datetime.timedelta(hours=int(hours or 0), minutes=int(minutes or 0))
            if offset >= datetime.timedelta(hours=24) or int(minutes or 0) > 59:
                continue
            year, month, day, hour, minute, second, millis = map(int, fields.groups())
            moment = datetime.datetime(year, month, day, hour, minute, second, millis * 1000,
                                       datetime.timezone(-offset if sign == "-" else offset))
        except ValueError:  # a field out of its range: SimpleDateFormat is not lenient here
            continue
        return (moment - _EPOCH) // datetime.timedelta(milliseconds=1)
    raise CommandFailed(f'{PARSE_EXCEPTION}Unparseable date: "{text}"')


def _log_warning(message: str) -> None:
    """A WARN line as Kafka's tools-log4j2.yaml lays it out ("[%d] %p %m (%c)%n"), on stderr."""
    now = time.time()
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now)) + f",{int(now * 1000) % 1000:03d}"
    print(f"[{stamp}] WARN {message} ({LOGGER})", file=sys.stderr)


def _topic_with_partitions(arg: str) -> list[Partition]:
    """OffsetsUtils.parseTopicsWithPartitions: TOPIC:P,P,..."""
    parts = java_split(arg, ":")
    if len(parts) != 2:
        raise UsageError(f"Invalid topic arg '{arg}', expected topic name and partitions")
    topic, partitions = parts
    parsed = []
    for partition in java_split(partitions, ","):
        if not re.fullmatch(r"[+-]?[0-9]+", partition) or not INT_MIN <= int(partition) <= INT_MAX:
            raise UsageError(f"Invalid partition '{partition}' specified in topic arg '{arg}''")
        parsed.append((topic, int(partition)))
    return parsed


class OffsetReset:
    """Log offsets, committed offsets and the reset plan of a group, each request bounded by `timeout_s`."""

    def __init__(self, admin, args: argparse.Namespace, timeout_s: float) -> None:
        self.admin = admin
        self.args = args
        self.timeout_s = timeout_s

    def _result(self, future):
        return future.result(self.timeout_s + 5)  # librdkafka ends the request itself after timeout_s

    def committed_offsets(self, group_id: str) -> dict[Partition, tuple[int | None, int | None]]:
        """(offset, leader epoch) of each partition the group has an offset for."""
        from confluent_kafka import ConsumerGroupTopicPartitions  # noqa: PLC0415 - only this command needs it
        try:
            futures = self.admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group_id)],
                                                             request_timeout=self.timeout_s)
            committed = self._result(futures[group_id]).topic_partitions
        except Exception as exc:
            raise failed(exc, wrapped=True) from None
        return {(tp.topic, tp.partition): (tp.offset if tp.offset >= 0 else None, tp.leader_epoch)
                for tp in committed}

    def _topic_descriptions(self, topics) -> dict:
        from confluent_kafka import TopicCollection  # noqa: PLC0415
        topics = list(dict.fromkeys(topics))
        if not topics:
            return {}
        futures = self.admin.describe_topics(TopicCollection(topics), request_timeout=self.timeout_s)
        return {topic: self._result(futures[topic]) for topic in topics}

    def _existing_partitions(self, partitions: list[Partition]) -> dict[Partition, bool]:
        """Whether each existing partition among `partitions` has a leader (describeTopics of their topics)."""
        try:
            descriptions = self._topic_descriptions(topic for topic, _ in partitions)
        except Exception as exc:
            raise failed(exc, wrapped=True) from None
        return {(topic, info.id): info.leader is not None and info.leader.id >= 0
                for topic, description in descriptions.items() for info in description.partitions}

    def leaderless_partitions(self, partitions: list[Partition]) -> list[Partition]:
        """OffsetsUtils.filterNoneLeaderPartitions."""
        existing = self._existing_partitions(partitions)
        return [partition for partition in partitions if existing.get(partition) is False]

    def log_offsets(self, partitions: list[Partition], spec: str | int) -> dict[Partition, int]:
        """OffsetsUtils.getLogOffsets: the "earliest" or "latest" offset, or the first at a timestamp
        (-1 where there is none), of each partition the broker answered for."""
        from confluent_kafka import TopicPartition  # noqa: PLC0415
        from confluent_kafka.admin import OffsetSpec  # noqa: PLC0415
        if not partitions:
            return {}
        offset_spec = OffsetSpec.for_timestamp(spec) if isinstance(spec, int) else getattr(OffsetSpec, spec)()
        try:
            futures = self.admin.list_offsets({TopicPartition(*partition): offset_spec for partition in partitions},
                                              request_timeout=self.timeout_s)
            return {(tp.topic, tp.partition): self._result(future).offset for tp, future in futures.items()}
        except Exception as exc:
            raise failed(exc, wrapped=True) from None

    def reset_inactive_group(self, group_id: str) -> dict[Partition, int]:
        """resetOffsetsForInactiveGroup: the plan, committed with --execute."""
        from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException, TopicPartition  # noqa: PLC0415
        if self.args.all_topics:
            partitions = list(self.committed_offsets(group_id))
        elif self.args.topic:
            partitions = self._parse_topic_partitions(self.args.topic)
        elif self.args.from_file is not None:
            partitions = []  # the file names them
        else:
            raise UsageError("One of the reset scopes should be defined: --all-topics, --topic.")
        plan = self._prepare(group_id, partitions)
        if self.args.execute and plan:
            offsets = [TopicPartition(topic, partition, offset) for (topic, partition), offset in sorted(plan.items())]
            try:
                futures = self.admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group_id, offsets)],
                                                                  request_timeout=self.timeout_s)
                errors = [tp.error for tp in self._result(futures[group_id]).topic_partitions if tp.error]
                if errors:
                    raise KafkaException(errors[0])
            except Exception as exc:  # the cause of Kafka's ExecutionException, rethrown: its message alone
                raise CommandFailed(exception_text(exc, with_class=False)) from None
        return plan

    def _parse_topic_partitions(self, topic_args: list[str]) -> list[Partition]:
        """OffsetsUtils.parseTopicPartitionsToReset: the partitions named, then every partition of the
        topics named alone."""
        named = [partition for arg in topic_args if ":" in arg for partition in _topic_with_partitions(arg)]
        try:
            descriptions = self._topic_descriptions(arg for arg in topic_args if ":" not in arg)
        except Exception as exc:
            raise CommandFailed(exception_text(exc, with_class=False)) from None
        every = [(topic, info.id) for topic, description in descriptions.items()
                 for info in sorted(description.partitions, key=lambda info: info.id)]
        return list(dict.fromkeys(named + every))

    def _prepare(self, group_id: str, partitions: list[Partition]) -> dict[Partition, int]:
        """prepareOffsetsToReset: every partition must exist and have a leader; then the scenario's offsets."""
        existing = self._existing_partitions(partitions)
        for problem, failing in (("do not exist", [p for p in partitions if p not in existing]),
                                 ("have no leader", [p for p in partitions if existing.get(p) is False])):
            if failing:
                raise CommandFailed(f'The partitions "{",".join(map(partition_name, failing))}" {problem}')
        args = self.args
        if args.to_offset is not None:
            return self._check_offsets_range({partition: args.to_offset for partition in partitions})
        if args.to_earliest:
            return self._known_offsets(self.log_offsets(partitions, "earliest"), partitions, "starting")
        if args.to_latest:
            return self._known_offsets(self.log_offsets(partitions, "latest"), partitions, "ending")
        if args.shift_by is not None:
            committed = self.committed_offsets(group_id)
            requested = {}
            for partition in partitions:
                if committed.get(partition, (None,))[0] is None:
                    raise UsageError(f"Cannot shift offset for partition {partition_name(partition)} since there is "
                                     "no current committed offset")
                requested[partition] = committed[partition][0] + args.shift_by
            return self._check_offsets_range(requested)
        if args.to_datetime is not None:
            return self._offsets_at(partitions, datetime_ms(args.to_datetime))
        if args.by_duration is not None:
            duration_ms = by_duration_ms(f"by_duration:{args.by_duration}")  # java.time.Duration.parse
            if duration_ms is None:
                raise CommandFailed("Text cannot be parsed to a Duration")
            return self._offsets_at(partitions, int(time.time() * 1000) - duration_ms)
        if args.from_file is not None:
            return self._reset_from_file(group_id)
        if args.to_current:
            committed = self.committed_offsets(group_id)
            plan = {partition: committed[partition][0] for partition in partitions if partition in committed}
            uncommitted = [partition for partition in partitions if partition not in committed]
            return {**plan, **self._known_offsets(self.log_offsets(uncommitted, "latest"), uncommitted, "ending")}
        raise UsageError("Option '[reset-offsets]' requires one of the following scenarios: "
                         f"[{', '.join(f'[{scenario}]' for scenario in SCENARIOS)}]")

    def _reset_from_file(self, group_id: str) -> dict[Partition, int]:
        """resetFromFile: the file's offsets for the group, within the log's range."""
        plan = read_reset_plan(self.args.from_file, self.args.group or [])
        if group_id not in plan:
            print(f"\nError: No reset plan for group {group_id} found")  # printError, on stdout
            return {}
        return self._check_offsets_range(plan[group_id])

    @staticmethod
    def _known_offsets(offsets: dict[Partition, int], partitions: list[Partition], which: str) -> dict[Partition, int]:
        for partition in partitions:
            if partition not in offsets:
                raise UsageError(f"Error getting {which} offset of topic partition: {partition_name(partition)}")
        return {partition: offsets[partition] for partition in partitions}

    def _check_offsets_range(self, requested: dict[Partition, int]) -> dict[Partition, int]:
        """OffsetsUtils.checkOffsetsRange: an offset past the log end becomes the log end, one before the
        log start the log start, each with a WARN."""
        starts = self.log_offsets(list(requested), "earliest")
        ends = self.log_offsets(list(requested), "latest")
        checked = {}
        for partition, offset in requested.items():
            end, start = ends.get(partition), starts.get(partition)
            checked[partition] = offset
            if end is not None and offset > end:
                _log_warning(f"New offset ({offset}) is higher than latest offset for topic partition "
                             f"{partition_name(partition)}. Value will be set to {end}")
                checked[partition] = end
            elif start is not None and offset < start:
                _log_warning(f"New offset ({offset}) is lower than earliest offset for topic partition "
                             f"{partition_name(partition)}. Value will be set to {start}")
                checked[partition] = start
        return checked

    def _offsets_at(self, partitions: list[Partition], timestamp_ms: int) -> dict[Partition, int]:
        """OffsetsUtils.getLogTimestampOffsets: the first offset at or after `timestamp_ms`, or the log end."""
        found = self.log_offsets(partitions, timestamp_ms)
        empty = [partition for partition in partitions if found.get(partition) == -1]
        for topic, partition in empty:
            print(f"\nWarn: Partition {partition} from topic {topic} is empty. Falling back to latest known offset.")
        offsets = {partition: offset for partition, offset in found.items() if offset != -1}
        offsets.update(self.log_offsets(empty, "latest"))
        for partition in partitions:
            if partition not in offsets:
                raise UsageError(f"Error getting offset by timestamp of topic partition: {partition_name(partition)}")
        return {partition: offsets[partition] for partition in partitions}


def read_reset_plan(path: str, groups: list[str]) -> dict[str, dict[Partition, int]]:
    """OffsetsUtils.parseResetPlan: "topic,partition,offset" rows for the one --group named, or
    "group,topic,partition,offset" rows (always when more groups, or --all-groups, are asked for)."""
    try:
        with open(path, newline="", encoding="utf-8") as file:
            rows = [row for row in csv.reader(file.read().split("\n")) if row]
    except OSError as exc:
        raise CommandFailed(f"java.io.IOException: {exc}") from None
    by_group = not (len(groups) == 1 and rows and len(rows[0]) == 3)
    plan: dict[str, dict[Partition, int]] = {}
    for number, row in enumerate(rows, 1):
        try:
            if by_group:
                group_id, topic, partition, offset = row
            else:
                (topic, partition, offset), group_id = row, groups[0]
            plan.setdefault(group_id, {})[(topic, int(partition))] = int(offset)
        except ValueError:
            form = "group,topic,partition,offset" if by_group else "topic,partition,offset"
            raise CommandFailed(f"Line {number} of {path} is not {form}: {','.join(row)}") from None
    return plan
