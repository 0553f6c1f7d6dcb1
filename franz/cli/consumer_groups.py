"""`franz consumer-groups`: list, describe and delete consumer groups, reset their offsets (Kafka's
kafka-consumer-groups.sh).

Speaks to any Kafka-compatible broker through librdkafka's admin client and behaves as Kafka 4.3's
ConsumerGroupCommand, so that scripts written for Kafka keep working: --list prints one group a line,
or the GROUP / TYPE / STATE columns asked for with --type and --state (which also filter);
--describe prints, for each group in name order, the offsets view (GROUP TOPIC PARTITION
CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID), --members or --state, with Kafka's
column widths and "-" for what is unknown; --delete reports each group's outcome; --reset-offsets
plans (--dry-run, the default) or commits (--execute) new offsets for inactive groups, as
franz/cli/offset_reset.py computes them (Kafka's OffsetsUtils). Kafka's checks of the command line
come first, with its messages.

Where ConsumerGroupCommand's output goes, so does ours: tables, "Error: ..." lines (a group that
does not exist, a failed request: "Error: Executing consumer group command failed due to ...") and
the reset plan on stdout, and the exit code stays 0 after them as Kafka's does; "has no active
members", "is rebalancing" and the --dry-run reminder on stderr; a bad command line, or an argument
Kafka refuses while it runs (a state or type list, a --topic of partitions), prints its message and
the usage on stderr with exit 1; a command config that cannot be used prints its message on stderr
with exit 1 (as for franz topics).

--export prints the plan as Kafka's CSV (topic,partition,offset for one --group; group first for
more), which --from-file reads back.

Not done: --delete-offsets, as librdkafka's Python admin client has no DeleteConsumerGroupOffsets;
--validate-regex (an RE2 syntax check), refused with a message. librdkafka
describes neither member nor group epochs, nor whether a member was upgraded from the classic
protocol: --verbose prints "-" for CURRENT-EPOCH, TARGET-EPOCH, GROUP-EPOCH and
TARGET-ASSIGNMENT-EPOCH, and no UPGRADED column. It knows no Assigning or Reconciling state either:
such a consumer group reads "Unknown" (and gets Kafka's "is rebalancing" warning). Kafka prints a
Java stack trace after a failure; franz prints the message only, naming the error by Kafka's
exception class where the broker gave an error code.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys

from franz.cli.admin_client import AdminClientError, create_admin_client, error_code, exception_text
from franz.cli.command_line import (StartError, UsageError, check_invalid_args, given, java_split, print_usage,
                                    refused_by_checks)
from franz.cli.offset_reset import CHECKED_ORDER, SCENARIOS, CommandFailed, OffsetReset, failed
from franz.cli.usage_errors import exit_1_on_usage_errors
from franz.protocol.errors import Errors

DEFAULT_TIMEOUT_MS = 30_000
MISSING = "-"  # MISSING_COLUMN_VALUE
HELP_MESSAGE = ("This tool helps to list all consumer groups, describe a consumer group, delete consumer group info, "
                "or reset consumer group offsets.")
DRY_RUN_WARNING = ("WARN: No action will be performed as the --execute option is missing. In version 5.0, this command "
                   "will require either --dry-run or --execute to be specified. You should add the --dry-run option "
                   "explicitly if you are scripting this command and want to keep the current default behavior "
                   "without prompting.")
FAILED = "Executing consumer group command failed due to "
# Kafka's tools log at WARN (tools-log4j2.yaml): librdkafka's notices ("%6|...|BGQUEUE|...") are not printed.
ADMIN_DEFAULTS = {"log_level": "4"}
# The actions, in the order ConsumerGroupCommand.main names them.
ACTIONS = ("list", "describe", "delete", "reset-offsets", "delete-offsets", "validate-regex")
GROUP_SCOPES = ("group", "all-groups")
DESCRIBE_VIEWS = ("members", "offsets", "state")
# Options joptsimple offers only beside others (availableIf), in the order they are declared.
AVAILABLE_IF = {"members": ("describe",), "verbose": ("describe",), "offsets": ("describe",),
                "state": ("describe", "list"), "type": ("list",)}
NOT_DONE = {"delete-offsets": "librdkafka's admin client has no DeleteConsumerGroupOffsets",
            "validate-regex": "RE2's syntax is not checked here"}
# GroupState's names of librdkafka's ConsumerGroupState members; the consumer protocol's Assigning and
# Reconciling reach us as UNKNOWN.
STATE_NAMES = {"UNKNOWN": "Unknown", "PREPARING_REBALANCING": "PreparingRebalance",
               "COMPLETING_REBALANCING": "CompletingRebalance", "STABLE": "Stable", "DEAD": "Dead", "EMPTY": "Empty"}
# GroupState.groupStatesForType(CONSUMER), as a state list names them (case folded).
CONSUMER_GROUP_STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty", "Assigning",
                         "Reconciling")
REBALANCING_STATES = frozenset({"PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling"})
TYPE_NAMES = {"UNKNOWN": "Unknown", "CONSUMER": "Consumer", "CLASSIC": "Classic"}
VALID_TYPES = ("Classic", "Consumer")
MEMBER_HEADERS = ("GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "CURRENT-EPOCH",
                  "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("consumer-groups", help="list, describe and delete consumer groups, reset offsets",
                                   description=HELP_MESSAGE)
    for name in ("list", "describe", "delete", "reset-offsets", "delete-offsets"):
        parser.add_argument(f"--{name}", action="store_true")
    parser.add_argument("--validate-regex", metavar="REGEX")
    parser.add_argument("--bootstrap-server", help="REQUIRED: host:port of a broker")
    parser.add_argument("--command-config", metavar="FILE",
                        help="properties file of admin client configs (Java client names)")
    parser.add_argument("--timeout", type=int, metavar="MS",
                        help=f"timeout of each request (default {DEFAULT_TIMEOUT_MS})")
    parser.add_argument("--group", action="append", metavar="GROUP", help="the consumer group (repeatable)")
    parser.add_argument("--all-groups", action="store_true")
    parser.add_argument("--topic", action="append", metavar="TOPIC[:P,P...]",
                        help="reset-offsets: a topic, or some of its partitions (repeatable)")
    parser.add_argument("--all-topics", action="store_true", help="reset-offsets: every topic the group has offsets of")
    parser.add_argument("--members", action="store_true")
    parser.add_argument("--offsets", action="store_true")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--state", nargs="?", const="", metavar="STATES",
                        help="describe: the group's state; list: the STATE column, and only these states")
    parser.add_argument("--type", nargs="?", const="", metavar="TYPES",
                        help="list: the TYPE column, and only these types (classic, consumer)")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--execute", action="store_true")
    parser.add_argument("--export", action="store_true")
    parser.add_argument("--from-file", metavar="FILE")
    parser.add_argument("--to-offset", type=int)
    parser.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss")
    parser.add_argument("--by-duration", metavar="PnDTnHnMnS")
    parser.add_argument("--to-earliest", action="store_true")
    parser.add_argument("--to-latest", action="store_true")
    parser.add_argument("--to-current", action="store_true")
    parser.add_argument("--shift-by", type=int, metavar="N")
    exit_1_on_usage_errors(parser)
    parser.set_defaults(func=lambda args: _run(parser, args))


def _specs(options) -> str:
    return ", ".join(f"[{option}]" for option in options)


def _check_args(args: argparse.Namespace) -> None:
    """joptsimple's availableIf, ConsumerGroupCommandOptions.checkArgs and main's one-action check,
    in Kafka's order, with its messages."""
    unavailable = [option for option, needs in AVAILABLE_IF.items()
                   if given(args, option) and not any(given(args, need) for need in needs)]
    if unavailable:
        raise StartError(f"Option(s) [{', '.join(unavailable)}] are unavailable given other options on the "
                         "command line")
    if not any(given(args, name) for name in vars(args) if name not in ("func", "command", "command_parser")):
        raise UsageError(HELP_MESSAGE)
    if args.validate_regex is None and args.bootstrap_server is None:
        raise UsageError('Missing required argument "[bootstrap-server]"')
    scoped = args.group or args.all_groups
    if args.describe:
        if not scoped:
            raise UsageError(f"Option [describe] takes one of these options: {_specs(GROUP_SCOPES)}")
        if sum(given(args, view) for view in DESCRIBE_VIEWS) > 1:
            raise UsageError(f"Option [describe] takes at most one of these options: {_specs(DESCRIBE_VIEWS)}")
        if args.state:
            raise UsageError("Option [describe] does not take a value for [state]")
    if args.delete:
        if not scoped:
            raise UsageError(f"Option [delete] takes one of these options: {_specs(GROUP_SCOPES)}")
        if args.topic:
            raise UsageError("The consumer does not support topic-specific offset deletion from a consumer group.")
    if args.delete_offsets and not (args.group and args.topic):
        raise UsageError("Option [delete-offsets] takes the following options: [group], [topic]")
    if args.reset_offsets:
        if args.dry_run and args.execute:
            raise UsageError("Option [reset-offsets] only accepts one of [execute] and [dry-run]")
        if not args.dry_run and not args.execute:
            print(DRY_RUN_WARNING, file=sys.stderr)
        if not scoped:
            raise UsageError(f"Option [reset-offsets] takes one of these options: {_specs(GROUP_SCOPES)}")
        check_invalid_args(args, [(used, [other for other in SCENARIOS if other != used]) for used in CHECKED_ORDER])
    check_invalid_args(args, [("group", ["all-groups"]), ("group", ["list"]), ("topic", ["list", "describe"])])
    if sum(given(args, action) for action in ACTIONS) != 1:
        raise UsageError("Command must include exactly one action: " + ", ".join(f"--{a}" for a in ACTIONS))


def _run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    if refused_by_checks(parser, _check_args, args):
        return 1
    refused = next((option for option in NOT_DONE if given(args, option)), None)
    if refused:
        print(f"franz consumer-groups: --{refused} is not supported: {NOT_DONE[refused]}", file=sys.stderr)
        return 1
    try:
        admin = create_admin_client(args.command_config, args.bootstrap_server, ADMIN_DEFAULTS)
    except AdminClientError as exc:
        print(f"franz consumer-groups: {exc}", file=sys.stderr)
        return 1
    timeout_s = (args.timeout if args.timeout is not None else DEFAULT_TIMEOUT_MS) / 1000
    service = ConsumerGroupService(admin, args, timeout_s)
    action = {"list": service.list_groups, "describe": service.describe_groups, "delete": service.delete_groups,
              "reset_offsets": service.reset_offsets}
    try:
        action[next(name for name in action if getattr(args, name))]()
    except UsageError as exc:  # IllegalArgumentException, and printUsageAndExit while running
        print_usage(parser, exc)
        return 1
    except Exception as exc:  # ConsumerGroupCommand.run catches every Throwable, prints it and exits 0
        text = str(exc) if isinstance(exc, CommandFailed) else exception_text(exc)
        print_error(f"{FAILED}{text}")
    return 0


def print_error(message: str) -> None:
    """ConsumerGroupCommand.printError: an empty line and the message, on stdout."""
    print(f"\nError: {message}")


def state_name(group) -> str:
    """The GroupState name of a librdkafka group listing or description."""
    state = getattr(group, "state", None)
    return STATE_NAMES[state.name] if state is not None else "Unknown"


def type_name(group) -> str:
    group_type = getattr(group, "type", None)
    return TYPE_NAMES[group_type.name] if group_type is not None else "Unknown"


def _states_from_string(text: str) -> set[str]:
    """ConsumerGroupCommand.groupStatesFromString: case-insensitive names of consumer group states."""
    by_key = {name.upper(): name for name in CONSUMER_GROUP_STATES}
    parsed = {by_key.get(part.strip().upper()) for part in java_split(text, ",")}
    if None in parsed:
        raise UsageError(f"Invalid state list '{text}'. Valid states are: {', '.join(CONSUMER_GROUP_STATES)}")
    return parsed


def _types_from_string(text: str) -> set[str]:
    by_key = {name.lower(): name for name in VALID_TYPES}
    parsed = {by_key.get(part.strip()) for part in java_split(text.lower(), ",")}
    if None in parsed:
        raise UsageError(f"Invalid types list '{text}'. Valid types are: {', '.join(VALID_TYPES)}")
    return parsed


def _assignment_string(partitions) -> str:
    """getAssignmentString: "topic:0,1,2" for each topic, sorted, joined by ";"; "-" for none."""
    by_topic: dict[str, list[int]] = {}
    for partition in partitions:
        by_topic.setdefault(partition.topic, []).append(partition.partition)
    return ";".join(sorted(f"{topic}:{','.join(map(str, sorted(ids)))}" for topic, ids in by_topic.items())) or MISSING


def _target(member) -> list:
    return member.target_assignment.topic_partitions if member.target_assignment is not None else []


def _value(value) -> str:
    return MISSING if value is None else str(value)


def _width(minimum: int, values) -> int:
    return max([minimum, *map(len, values)])


class ConsumerGroupService:
    """ConsumerGroupCommand.ConsumerGroupService: the actions, each request bounded by --timeout."""

    def __init__(self, admin, args: argparse.Namespace, timeout_s: float) -> None:
        self.admin = admin
        self.args = args
        self.timeout_s = timeout_s
        self.offsets = OffsetReset(admin, args, timeout_s)

    def _result(self, future):
        return future.result(self.timeout_s + 5)  # librdkafka ends the request itself after timeout_s

    # --- --list ---

    def _listings(self, types: set[str] | None = None, wrapped: bool = True) -> list:
        """Consumer groups (classic groups of the "consumer" protocol type or of none, and consumer
        groups), of the given types only when some are given."""
        from confluent_kafka import ConsumerGroupType  # noqa: PLC0415 - only this command needs it
        kwargs = {"types": {ConsumerGroupType[name.upper()] for name in types}} if types else {}
        result = self._result(self.admin.list_consumer_groups(request_timeout=self.timeout_s, **kwargs))
        if result.errors:
            raise failed(result.errors[0], wrapped)
        return result.valid

    def group_ids(self) -> list[str]:
        """--group's values (once each, in order), or every consumer group with --all-groups."""
        if self.args.all_groups:
            return [listing.group_id for listing in self._listings()]
        return list(dict.fromkeys(self.args.group))

    def list_groups(self) -> None:
        include_type, include_state = self.args.type is not None, self.args.state is not None
        if not include_type and not include_state:
            for listing in self._listings():
                print(listing.group_id)
            return
        types = _types_from_string(self.args.type) if self.args.type else set()
        states = _states_from_string(self.args.state) if self.args.state else set()
        # Filtered here, not by the broker: librdkafka cannot ask for Assigning or Reconciling (its Unknown).
        listings = [listing for listing in self._listings(types, wrapped=False)
                    if not states or state_name(listing) in states
                    or (state_name(listing) == "Unknown" and states & REBALANCING_STATES)]
        width = _width(15, (listing.group_id for listing in listings)) + 10
        columns = ([("TYPE", type_name)] if include_type else []) + ([("STATE", state_name)] if include_state else [])
        print(f"{'GROUP':<{width}}" + "".join(f" {header:<20}" for header, _ in columns))
        for listing in listings:
            print(f"{listing.group_id:<{width}}" + "".join(f" {column(listing):<20}" for _, column in columns))

    # --- --describe ---

    def _describe_consumer_groups(self, group_ids: list[str]) -> dict:
        """The descriptions of `group_ids`, by group id in name order (ConsumerGroupCommand's TreeMap)."""
        if not group_ids:
            return {}
        futures = self.admin.describe_consumer_groups(group_ids, request_timeout=self.timeout_s)
        try:
            return {group_id: self._result(futures[group_id]) for group_id in sorted(group_ids)}
        except Exception as exc:
            raise failed(exc) from None

    def describe_groups(self) -> None:
        descriptions = self._describe_consumer_groups(self.group_ids())
        if self.args.members:
            self._print_members(descriptions)
        elif self.args.state is not None:
            self._print_states(descriptions)
        else:
            self._print_offsets({group_id: (description, self._offset_rows(group_id, description))
                                 for group_id, description in descriptions.items()})

    def _should_print_member_state(self, group_id: str, description, rows: int) -> bool:
        """shouldPrintMemberState: a word on stdout for a dead group, on stderr for an empty or a
        rebalancing one; whether there is something to print."""
        state = state_name(description)
        if state == "Unknown" and type_name(description) == "Consumer":
            state = "Assigning"  # or Reconciling: librdkafka knows neither
        if state == "Dead":
            print_error(f"Consumer group '{group_id}' does not exist.")
            return False
        if state == "Empty" or state in REBALANCING_STATES:
            sys.stdout.flush()
            message = (f"Consumer group '{group_id}' has no active members." if state == "Empty"
                       else f"Warning: Consumer group '{group_id}' is rebalancing.")
            print(f"\n{message}", file=sys.stderr)
        elif state != "Stable":
            raise CommandFailed(f"Expected a valid consumer group state, but found '{state}'.")
        return rows > 0

    def _offset_rows(self, group_id: str, description) -> list[tuple]:
        """collectGroupsOffsets for one group: the partitions of each member that has some (most
        partitions first), then those with a committed offset that no member has."""
        committed = self.offsets.committed_offsets(group_id)
        rows: list[tuple] = []
        assigned: set[tuple[str, int]] = set()
        members = sorted((member for member in description.members if member.assignment.topic_partitions),
                         key=lambda member: -len(member.assignment.topic_partitions))
        for member in members:
            partitions = [(tp.topic, tp.partition) for tp in member.assignment.topic_partitions]
            assigned.update(partitions)
            rows += self._partition_rows(group_id, partitions, committed, member.member_id, member.host,
                                         member.client_id)
        unassigned = [partition for partition in committed if partition not in assigned]
        if unassigned:
            rows += self._partition_rows(group_id, unassigned, committed, MISSING, MISSING, MISSING)
        return rows

    def _partition_rows(self, group_id: str, partitions: list[tuple[str, int]], committed: dict,
                        consumer_id: str, host: str, client_id: str) -> list[tuple]:
        """describePartitions: a row a partition, in order; no log end offset without a leader."""
        leaderless = set(self.offsets.leaderless_partitions(partitions))
        end_offsets = self.offsets.log_offsets([p for p in partitions if p not in leaderless], "latest")
        rows = []
        for partition in sorted(partitions):
            offset, leader_epoch = committed.get(partition, (None, None))
            end_offset = end_offsets.get(partition)
            lag = end_offset - offset if offset not in (None, -1) and end_offset is not None else None
            rows.append((group_id, *partition, leader_epoch, offset, end_offset, lag, consumer_id, host, client_id))
        return rows

    def _print_offsets(self, groups: dict) -> None:
        """printOffsets: with --verbose, the committed offsets' LEADER-EPOCH too."""
        headers = ("GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                   "CONSUMER-ID", "HOST", "CLIENT-ID")
        for group_id, (description, rows) in groups.items():
            if not self._should_print_member_state(group_id, description, len(rows)):
                continue
            group_w, topic_w, consumer_w, host_w = (_width(15, (row[index] for row in rows)) for index in (0, 1, 7, 8))
            print()
            for row in [headers, *rows]:
                group, topic, partition, epoch, offset, end_offset, lag, consumer, host, client = map(_value, row)
                numbers = ([epoch] if self.args.verbose else []) + [offset, end_offset, lag]
                print(f"{group:<{group_w}} {topic:<{topic_w}} {partition:<10} "
                      + "".join(f"{number:<15} " for number in numbers)
                      + f"{consumer:<{consumer_w}} {host:<{host_w}} {client}")

    def _print_members(self, descriptions: dict) -> None:
        """printMembers: the header comes even for a group that has no member, as in Kafka."""
        for group_id, description in descriptions.items():
            rows = [(group_id, member.member_id, member.group_instance_id or "", member.host, member.client_id,
                     str(len(member.assignment.topic_partitions)), MISSING,
                     _assignment_string(member.assignment.topic_partitions), MISSING,
                     _assignment_string(_target(member)))
                    for member in description.members]  # the epochs: librdkafka does not describe them
            widths = [15, 15, 17, 15, 15, 15, 15, 20, 15, 20]  # the epochs' and #PARTITIONS' stay
            with_instance_id = False
            if self._should_print_member_state(group_id, description, len(rows)):
                widths = [_width(minimum, (row[index] for row in rows)) if index not in (5, 6, 8) else minimum
                          for index, minimum in enumerate(widths)]
                with_instance_id = any(row[2] for row in rows)
            shown = [index for index in range(10 if self.args.verbose else 6) if index != 2 or with_instance_id]
            print()
            for row in [MEMBER_HEADERS, *rows]:
                text = "".join(f"{row[index]:<{widths[index]}} " for index in shown)
                print(text[:-1] if self.args.verbose else text)  # a space after #PARTITIONS, none after the last

    def _print_states(self, descriptions: dict) -> None:
        for group_id, description in descriptions.items():
            if not self._should_print_member_state(group_id, description, 1):
                continue
            node = description.coordinator
            coordinator = f"{node.host}:{node.port}  ({node.id_string})"
            headers = ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE"]
            values = [group_id, coordinator, description.partition_assignor or MISSING, state_name(description)]
            widths = [max(15, len(group_id)), max(25, len(coordinator)), 20, 20]
            if self.args.verbose:  # the epochs: librdkafka does not describe them
                headers += ["GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH"]
                values += [MISSING, MISSING]
                widths += [15, 25]
            print()
            for line in (headers + ["#MEMBERS"], values + [str(len(description.members))]):
                print("".join(f"{text:<{width}} " for text, width in zip(line, widths)) + line[-1])

    # --- --delete ---

    def delete_groups(self) -> None:
        group_ids = self.group_ids()
        futures = self.admin.delete_consumer_groups(group_ids, request_timeout=self.timeout_s) if group_ids else {}
        deleted, failures = [], {}
        for group_id in group_ids:
            try:
                self._result(futures[group_id])
                deleted.append(group_id)
            except Exception as exc:
                failures[group_id] = exception_text(exc)
        quoted = ", ".join(f"'{group_id}'" for group_id in deleted)
        if not failures:
            print(f"Deletion of requested consumer groups ({quoted}) was successful.")
            return
        print_error("Deletion of some consumer groups failed:")
        for group_id, error in failures.items():
            print(f"* Group '{group_id}' could not be deleted due to: {error}")
        if deleted:
            print(f"\nThese consumer groups were deleted successfully: {quoted}")

    # --- --reset-offsets ---

    def reset_offsets(self) -> None:
        """ConsumerGroupService.resetOffsets: the plan of each inactive group (committed with
        --execute), an error for each active one, then the plans as Kafka prints them."""
        group_ids = self.group_ids()
        futures = self.admin.describe_consumer_groups(group_ids, request_timeout=self.timeout_s) if group_ids else {}
        plans: dict[str, dict[tuple[str, int], int]] = {}
        for group_id in group_ids:
            try:
                state = state_name(self._result(futures[group_id]))
            except Exception as exc:
                if error_code(exc) != Errors.GROUP_ID_NOT_FOUND:
                    raise failed(exc, wrapped=True) from None
                state = "Dead"
            if state in ("Empty", "Dead"):
                plans[group_id] = self.offsets.reset_inactive_group(group_id)
            else:
                print_error(f"Assignments can only be reset if the group '{group_id}' is inactive, but the current "
                            f"state is {state}.")
                plans[group_id] = {}
        if self.args.export:
            print(export_offsets_to_csv(plans, single_group=len(self.args.group or ()) == 1))
        else:
            _print_offsets_to_reset(plans)


def export_offsets_to_csv(plans: dict[str, dict[tuple[str, int], int]], single_group: bool) -> str:
    """exportOffsetsToCsv: a row a partition, "topic,partition,offset" when one --group was named,
    "group,topic,partition,offset" otherwise (what --from-file reads)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for group_id, plan in plans.items():
        for (topic, partition), offset in sorted(plan.items()):
            writer.writerow([topic, partition, offset] if single_group else [group_id, topic, partition, offset])
    return out.getvalue()


def _print_offsets_to_reset(plans: dict[str, dict[tuple[str, int], int]]) -> None:
    """OffsetsUtils.printOffsetsToReset (partitions in order): the header only when there is a group."""
    group_w = _width(15, plans)
    topic_w = _width(15, (topic for plan in plans.values() for topic, _ in plan))
    rows = [("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET")] if plans else []
    rows += [(group_id, topic, str(partition), offset) for group_id, plan in plans.items()
             for (topic, partition), offset in sorted(plan.items())]
    print("".join(f"\n{group:<{group_w}} {topic:<{topic_w}} {partition:<10} {offset}"
                  for group, topic, partition, offset in rows))
