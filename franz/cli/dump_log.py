"""`franz dump-log --files FILE[,FILE...]`: print segment, index and state files as
Kafka's kafka-dump-log (DumpLogSegments) prints them. The files may also be given as
plain arguments (`franz dump-log FILE...`).

Handles `.log` (batches; records with --deep-iteration / --print-data-log, their keys
and values through Kafka's decoders or a coordinator's record schemas: see
franz.cli.dump_log_parsers), `.index` and `.timeindex` (entries, cross-checked against the `.log` beside
them; --index-sanity-check / --verify-index-only), `.txnindex`, producer
`.snapshot` files and, beyond Kafka's tool, `leader-epoch-checkpoint` and the
offset checkpoint files (`cleaner-offset-checkpoint` too). `--json` prints one
JSON object per file instead.

Exit code: 0 if every file was read whole and consistent, 1 otherwise (a
corrupt batch, trailing invalid bytes, an index mismatch or a failed check).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from franz.cli import dump_log_parsers
from franz.cli.dump_log_parsers import DECODERS, STRING_DECODER, DecoderMessageParser, DumpStopped
from franz.cli.standard_out import discard_stdout
from franz.cli.usage_errors import exit_1_on_usage_errors
from franz.records import CompressionType, ControlRecordType, EndTransactionMarker, FileRecords, RecordsError

INT32_MAX = 2**31 - 1
DEFAULT_MAX_MESSAGE_SIZE = 5 * 1024 * 1024
_TIMESTAMP_TYPES = {-1: "NoTimestampType", 0: "CreateTime", 1: "LogAppendTime"}


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("dump-log", help="print log segments, indexes and state files as kafka-dump-log")
    exit_1_on_usage_errors(parser)
    parser.add_argument("--files", dest="listed", action="append", default=[], metavar="FILE[,FILE...]",
                        help="comma separated data and index log files to be dumped (Kafka's option)")
    parser.add_argument("files", nargs="*", metavar="FILE", help="more files, as plain arguments")
    parser.add_argument("--print-data-log", action="store_true",
                        help="print record keys and payloads (set by any decoder option)")
    parser.add_argument("--deep-iteration", action="store_true",
                        help="print every record, not only batches (set by --print-data-log)")
    parser.add_argument("--index-sanity-check", action="store_true", help="only check index sanity")
    parser.add_argument("--verify-index-only", action="store_true", help="verify indexes without printing them")
    parser.add_argument("--max-bytes", type=int, default=INT32_MAX, help="limit on bytes read from a .log")
    parser.add_argument("--max-message-size", type=int, default=DEFAULT_MAX_MESSAGE_SIZE,
                        help="size of the largest batch an index entry may point at")
    parser.add_argument("--key-decoder-class", nargs="?", const=STRING_DECODER, metavar="CLASS",
                        help=f"Kafka's decoder of keys: one of {', '.join(sorted(DECODERS))}")
    parser.add_argument("--value-decoder-class", nargs="?", const=STRING_DECODER, metavar="CLASS",
                        help="Kafka's decoder of values (as --key-decoder-class)")
    parser.add_argument("--offsets-decoder", action="store_true",
                        help="print records as the __consumer_offsets topic's")
    parser.add_argument("--transaction-log-decoder", action="store_true",
                        help="print records as the __transaction_state topic's")
    parser.add_argument("--share-group-state-decoder", action="store_true",
                        help="print records as the __share_group_state topic's")
    parser.add_argument("--cluster-metadata-decoder", action="store_true",
                        help="refused: franz keeps no __cluster_metadata log")
    parser.add_argument("--remote-log-metadata-decoder", action="store_true",
                        help="refused: franz has no tiered storage")
    parser.add_argument("--skip-record-metadata", action="store_true",
                        help="print only the keys and payloads of records, no control records")
    parser.add_argument("--json", action="store_true", help="one JSON object per file")
    parser.set_defaults(func=run)


class Dumper:
    def __init__(self, args: argparse.Namespace, out=sys.stdout, err=sys.stderr) -> None:
        self.args = args
        self.out = out
        self.err = err
        self.problems = 0
        self.doc: dict | None = None
        self.message_parser = message_parser(args)

    def line(self, text: str) -> None:
        if not self.args.json:
            self._print(text)

    def _print(self, text: str) -> None:
        try:
            print(text, file=self.out)
        except BrokenPipeError:
            # Nobody reads any more (`| head`): Kafka's System.out drops the rest and the dump goes
            # on to its end, and so does this one, into /dev/null.
            discard_stdout()

    def problem(self, text: str) -> None:
        self.problems += 1
        if self.doc is not None:
            self.doc.setdefault("errors", []).append(text)
        print(text, file=self.err)

    # -- .log ----------------------------------------------------------------------------
    def dump_log(self, path: Path) -> None:
        print_data = should_print_data_log(self.args)
        deep = self.args.deep_iteration or print_data
        start_offset = int(path.name.split(".")[0])
        self.line(f"Log starting offset: {start_offset}")
        self.doc["log_start_offset"] = start_offset
        batches_doc = self.doc.setdefault("batches", [])
        records = FileRecords.open(path, mutable=False)
        view = records.slice(0, min(self.args.max_bytes, records.size_in_bytes))
        valid_bytes = 0
        last_offset = -1
        try:
            for batch in view.batches():
                header = batch.header()
                is_valid = batch.is_valid()
                delete_horizon = batch.delete_horizon_ms if hasattr(batch, "delete_horizon_ms") else None
                horizon_text = "OptionalLong.empty" if delete_horizon is None else f"OptionalLong[{delete_horizon}]"
                ts_type = _TIMESTAMP_TYPES[int(batch.timestamp_type)]
                codec = CompressionType(batch.compression_type).name.lower()
                self.line(
                    f"baseOffset: {header.base_offset} lastOffset: {batch.last_offset} count: {header.record_count} "
                    f"baseSequence: {header.base_sequence} lastSequence: {batch.last_sequence} "
                    f"producerId: {header.producer_id} producerEpoch: {header.producer_epoch} "
                    f"partitionLeaderEpoch: {header.partition_leader_epoch} "
                    f"isTransactional: {str(batch.is_transactional).lower()} "
                    f"isControl: {str(batch.is_control_batch).lower()} deleteHorizonMs: {horizon_text} "
                    f"position: {valid_bytes} {ts_type}: {header.max_timestamp} size: {batch.size_in_bytes} "
                    f"magic: 2 compresscodec: {codec} crc: {header.crc} isvalid: {str(is_valid).lower()}")
                batch_doc = {"baseOffset": header.base_offset, "lastOffset": batch.last_offset,
                             "count": header.record_count, "baseSequence": header.base_sequence,
                             "lastSequence": batch.last_sequence, "producerId": header.producer_id,
                             "producerEpoch": header.producer_epoch,
                             "partitionLeaderEpoch": header.partition_leader_epoch,
                             "isTransactional": batch.is_transactional, "isControl": batch.is_control_batch,
                             "position": valid_bytes, "timestampType": ts_type,
                             "maxTimestamp": header.max_timestamp, "size": batch.size_in_bytes,
                             "compresscodec": codec, "crc": header.crc, "isValid": is_valid}
                batches_doc.append(batch_doc)
                if not is_valid:
                    self.problem(f"Batch at position {valid_bytes} of {path} fails its CRC check")
                if deep:
                    batch_doc["records"] = self._dump_records(path, batch, ts_type, print_data, last_offset)
                    if batch_doc["records"]:
                        last_offset = batch_doc["records"][-1]["offset"]
                valid_bytes += batch.size_in_bytes
        except RecordsError as exc:
            self.problem(f"Corrupt batch at position {getattr(exc, 'position', valid_bytes)} of {path}: {exc}")
        finally:
            trailing = view.size_in_bytes - valid_bytes
            records.close_handlers()
        if trailing > 0 and self.args.max_bytes == INT32_MAX:
            self.line(f"Found {trailing} invalid bytes at the end of {path.name}")
            self.doc["trailingInvalidBytes"] = trailing
            self.problems += 1

    def _dump_records(self, path: Path, batch, ts_type: str, print_data: bool, last_offset: int) -> list[dict]:
        docs = []
        skip_metadata = self.args.skip_record_metadata
        for record in batch.records():
            if last_offset != -1 and record.offset != last_offset + 1:
                self.problem(f"Non-consecutive offsets in {path}\n  {last_offset} is followed by {record.offset}")
            last_offset = record.offset
            key_size = -1 if record.key is None else len(record.key)
            value_size = -1 if record.value is None else len(record.value)
            doc = {"offset": record.offset, "timestamp": record.timestamp, "keySize": key_size,
                   "valueSize": value_size, "sequence": record.sequence,
                   "headerKeys": [k for k, _ in record.headers]}
            text = ""
            if not skip_metadata:
                text = (f"| offset: {record.offset} {ts_type}: {record.timestamp} keySize: {key_size} "
                        f"valueSize: {value_size} sequence: {record.sequence} "
                        f"headerKeys: [{','.join(k for k, _ in record.headers)}]")
                if batch.is_control_batch:
                    text += _control_record_text(record, doc)
            if print_data and not batch.is_control_batch:
                prefix = "| " if skip_metadata else " "
                parsed = self.message_parser.parse(record.offset, record.key, record.value)
                if parsed.key is not None:
                    text += f"{prefix}key: {parsed.key}"
                    doc["key"] = parsed.key
                    prefix = " "
                if parsed.value is not None:
                    text += f"{prefix}payload: {parsed.value}"
                    doc["payload"] = parsed.value
            self.line(text)
            docs.append(doc)
        return docs

    # -- indexes -------------------------------------------------------------------------
    def dump_index(self, path: Path) -> None:
        from franz.storage.index import CorruptIndexError, OffsetIndex  # noqa: PLC0415

        base = int(path.name.split(".")[0])
        index = OffsetIndex(path, base, -1, writable=False)
        log_path = path.with_name(path.name.split(".")[0] + ".log")
        entries = []
        try:
            if index.entries == 0:
                self.line(f"{path} is empty.")
                return
            if self.args.index_sanity_check:
                try:
                    index.sanity_check()
                    self._check_index_points_into_log(path, index, log_path)
                except CorruptIndexError as exc:
                    self.problem(str(exc))
                    return
                if not self.problems:
                    self.line(f"{path} passed sanity check.")
                return
            records = FileRecords.open(log_path, mutable=False) if log_path.exists() else None
            for n in range(index.entries):
                entry = index.entry(n)
                if entry.offset == base and n > 0:
                    break
                if records is not None:
                    found = next(records.batches(entry.position), None) if entry.position < records.size_in_bytes \
                        else None
                    if found is not None and found.size_in_bytes > self.args.max_message_size:
                        raise DumpStopped(f"The batch at position {entry.position} of {log_path} has "
                                          f"{found.size_in_bytes} bytes, more than --max-message-size "
                                          f"({self.args.max_message_size}): Kafka's tool stops there too")
                    if found is None or found.last_offset != entry.offset:
                        self.problem(f"Mismatches in :{path}\n  Index offset: {entry.offset}, log offset: "
                                     f"{-1 if found is None else found.last_offset}")
                if not self.args.verify_index_only:
                    self.line(f"offset: {entry.offset} position: {entry.position}")
                entries.append({"offset": entry.offset, "position": entry.position})
            if records is not None:
                records.close_handlers()
        finally:
            self.doc["entries"] = entries
            index.close_handler()

    def _check_index_points_into_log(self, path: Path, index, log_path: Path) -> None:
        """franz's addition to the sanity check: every entry must point at a batch start in the .log."""
        if not log_path.exists():
            return
        records = FileRecords.open(log_path, mutable=False)
        try:
            size = records.size_in_bytes
            starts = {b.position for b in records.batches()}
            for n in range(index.entries):
                entry = index.entry(n)
                if entry.offset == index.base_offset and entry.position == 0 and (n > 0 or size == 0):
                    break  # the zero-filled, pre-allocated tail of an active segment's index
                if entry.position >= size or entry.position not in starts:
                    self.problem(f"Index {path} entry {n} ({entry.offset} -> {entry.position}) does not point at "
                                 f"a batch start in {log_path.name} (size {size})")
                    return
        finally:
            records.close_handlers()

    def dump_time_index(self, path: Path) -> None:
        """Each entry checked against the `.log` beside it, as dumpTimeIndex checks it: the batch
        found through the offset index must end at the entry's offset, its records' largest
        timestamp must be the entry's, and timestamps must rise."""
        from franz.storage.index import CorruptIndexError, OffsetIndex, TimeIndex  # noqa: PLC0415

        base = int(path.name.split(".")[0])
        index = TimeIndex(path, base, -1, writable=False)
        entries = []
        log_path = path.with_name(path.name.split(".")[0] + ".log")
        offset_index_path = path.with_name(path.name.split(".")[0] + ".index")
        records = FileRecords.open(log_path, mutable=False) if log_path.exists() else None
        offset_index = OffsetIndex(offset_index_path, base, -1, writable=False) \
            if records is not None and offset_index_path.exists() else None
        try:
            if self.args.index_sanity_check:
                try:
                    index.sanity_check()
                except CorruptIndexError as exc:
                    self.problem(str(exc))
                    return
                self.line(f"{path} passed sanity check.")
                return
            previous = -1
            for n in range(index.entries):
                entry = index.entry(n)
                if entry.offset == base and n > 0:
                    break
                if offset_index is not None:
                    self._check_time_index_entry(path, entry, previous, records, offset_index)
                elif previous >= entry.timestamp:
                    self.problem(f"Found out of order timestamp in :{path}\n  Index timestamp: {entry.timestamp}, "
                                 f"Previously indexed timestamp: {previous}")
                previous = entry.timestamp
                if not self.args.verify_index_only:
                    self.line(f"timestamp: {entry.timestamp} offset: {entry.offset}")
                entries.append({"timestamp": entry.timestamp, "offset": entry.offset})
        finally:
            self.doc["entries"] = entries
            index.close_handler()
            if offset_index is not None:
                offset_index.close_handler()
            if records is not None:
                records.close_handlers()

    def _check_time_index_entry(self, path: Path, entry, previous: int, records: FileRecords, offset_index) -> None:
        position = offset_index.lookup(entry.offset).position
        batch = next((b for b in records.batches(position) if b.last_offset >= entry.offset), None) \
            if position < records.size_in_bytes else None
        if batch is None or batch.last_offset != entry.offset:
            self.problem(f"The following indexed offsets are not found in :{path}\nIndexed offset: {entry.offset}, "
                         f"found log offset: {-1 if batch is None else batch.last_offset}")
            return
        largest = max((record.timestamp for record in batch.records()), default=-1)
        if largest != entry.timestamp:
            self.problem(f"Found timestamp mismatch in :{path}\n  Index timestamp: {entry.timestamp}, "
                         f"log timestamp: {largest}")
        if previous >= entry.timestamp:
            self.problem(f"Found out of order timestamp in :{path}\n  Index timestamp: {entry.timestamp}, "
                         f"Previously indexed timestamp: {previous}")

    def dump_txn_index(self, path: Path) -> None:
        from franz.storage.txn_index import TransactionIndex  # noqa: PLC0415

        index = TransactionIndex(int(path.name.split(".")[0]), path)
        entries = []
        try:
            for txn in index.all_aborted_txns():
                self.line(f"version: {txn.version} producerId: {txn.producer_id} firstOffset: {txn.first_offset} "
                          f"lastOffset: {txn.last_offset} lastStableOffset: {txn.last_stable_offset}")
                entries.append(txn._asdict())
        finally:
            self.doc["entries"] = entries
            index.close()

    def dump_snapshot(self, path: Path) -> None:
        from franz.storage.producer_snapshot import read_snapshot_file  # noqa: PLC0415

        entries = []
        try:
            rows = read_snapshot_file(path)
        except Exception as exc:  # noqa: BLE001 - any unreadable snapshot is reported, not raised
            self.problem(str(exc))
            return
        for row in rows:
            txn = "OptionalLong.empty" if row.current_txn_first_offset < 0 else \
                f"OptionalLong[{row.current_txn_first_offset}]"
            text = (f"producerId: {row.producer_id} producerEpoch: {row.epoch} coordinatorEpoch: "
                    f"{row.coordinator_epoch} currentTxnFirstOffset: {txn} lastTimestamp: {row.timestamp} ")
            if row.last_offset >= 0:
                text += (f"firstSequence: {row.last_sequence - row.offset_delta} lastSequence: {row.last_sequence} "
                         f"lastOffset: {row.last_offset} offsetDelta: {row.offset_delta} timestamp: {row.timestamp}")
            self.line(text)
            entries.append({k: getattr(row, k) for k in row.__dataclass_fields__})
        self.doc["entries"] = entries

    def dump_checkpoint(self, path: Path) -> None:
        from franz.storage.checkpoint import CheckpointError, LeaderEpochCheckpointFile, OffsetCheckpointFile  # noqa

        try:
            if path.name == "leader-epoch-checkpoint":
                entries = [{"epoch": e.epoch, "startOffset": e.start_offset}
                           for e in LeaderEpochCheckpointFile(path).read()]
                for entry in entries:
                    self.line(f"epoch: {entry['epoch']} startOffset: {entry['startOffset']}")
            else:
                entries = [{"topic": t, "partition": p, "offset": o}
                           for (t, p), o in OffsetCheckpointFile(path).read().items()]
                for entry in entries:
                    self.line(f"topic: {entry['topic']} partition: {entry['partition']} offset: {entry['offset']}")
        except CheckpointError as exc:
            self.problem(str(exc))
            return
        self.doc["entries"] = entries

    # -- dispatch ------------------------------------------------------------------------
    def dump(self, path: Path) -> None:
        self.doc = {"file": str(path)}
        self.line(f"Dumping {path}")
        name = path.name
        handlers = {".log": self.dump_log, ".index": self.dump_index, ".timeindex": self.dump_time_index,
                    ".txnindex": self.dump_txn_index, ".snapshot": self.dump_snapshot}
        suffix = name[name.rfind("."):] if "." in name else ""
        try:
            if suffix in handlers:
                handlers[suffix](path)
            elif name in ("leader-epoch-checkpoint", "recovery-point-offset-checkpoint",
                          "log-start-offset-checkpoint", "replication-offset-checkpoint",
                          "cleaner-offset-checkpoint"):
                self.dump_checkpoint(path)
            else:
                print(f"Ignoring unknown file {path}", file=self.err)
        except OSError as exc:
            self.problem(f"Cannot read {path}: {exc}")
        if self.args.json:
            self._print(json.dumps(self.doc))


def _control_record_text(record, doc: dict) -> str:
    try:
        marker = EndTransactionMarker.deserialize(record)
    except (RecordsError, ValueError) as exc:
        return f" controlType: unknown ({exc})"
    doc["endTxnMarker"] = ControlRecordType(marker.control_type).name
    doc["coordinatorEpoch"] = marker.coordinator_epoch
    return f" endTxnMarker: {doc['endTxnMarker']} coordinatorEpoch: {marker.coordinator_epoch}"


def should_print_data_log(args: argparse.Namespace) -> bool:
    """DumpLogSegmentsOptions.shouldPrintDataLog: any decoder option prints the records' data."""
    return (args.print_data_log or args.offsets_decoder or args.transaction_log_decoder
            or args.share_group_state_decoder or args.key_decoder_class is not None
            or args.value_decoder_class is not None)


def message_parser(args: argparse.Namespace):
    """DumpLogSegmentsOptions.messageParser: the first decoder option in Kafka's order."""
    if args.offsets_decoder:
        return dump_log_parsers.OFFSETS_PARSER
    if args.transaction_log_decoder:
        return dump_log_parsers.TRANSACTION_LOG_PARSER
    if args.share_group_state_decoder:
        return dump_log_parsers.SHARE_GROUP_STATE_PARSER
    return DecoderMessageParser(DECODERS[args.key_decoder_class or STRING_DECODER],
                                DECODERS[args.value_decoder_class or STRING_DECODER])


def run(args: argparse.Namespace) -> int:
    names = [name for listed in args.listed for name in listed.split(",") if name] + args.files
    if not names:
        args.command_parser.error('Missing required argument "[files]"')
    if args.cluster_metadata_decoder:
        args.command_parser.error("--cluster-metadata-decoder: franz keeps no __cluster_metadata log to decode")
    if args.remote_log_metadata_decoder:
        args.command_parser.error("--remote-log-metadata-decoder: franz has no tiered storage metadata to decode")
    for option in ("key_decoder_class", "value_decoder_class"):
        decoder = getattr(args, option)
        if decoder is not None and decoder not in DECODERS:
            args.command_parser.error(f"--{option.replace('_', '-')}: Failed to load decoder class {decoder}: "
                                      f"franz has {', '.join(sorted(DECODERS))}")
    # DefaultDecoder's bytes go out as they are.
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(errors="surrogateescape")
    dumper = Dumper(args)
    try:
        for name in names:
            dumper.dump(Path(name))
    except DumpStopped as exc:
        print(exc, file=sys.stderr)
        return 1
    return 1 if dumper.problems else 0
