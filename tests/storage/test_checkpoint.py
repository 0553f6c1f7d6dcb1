"""Behaviours of Kafka's CheckpointFile, OffsetCheckpointFile, LeaderEpochCheckpointFile,
PartitionMetadataFile, MetaProperties and Uuid, as franz's own tests, plus garbage-file
cases and round-trip properties."""

import os
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from franz.storage import checkpoint as checkpoint_module
from franz.storage.checkpoint import (
    ONE_UUID,
    ZERO_UUID,
    CheckpointError,
    CheckpointFile,
    EpochEntry,
    InconsistentTopicIdError,
    LeaderEpochCheckpointFile,
    MetaProperties,
    OffsetCheckpointFile,
    PartitionMetadata,
    PartitionMetadataFile,
    java_date_string,
    java_read_lines,
    parse_java_properties,
    random_kafka_uuid,
    uuid_from_kafka_string,
    uuid_to_kafka_string,
)

# -- offset checkpoints -----------------------------------------------------------------------


def test_offset_checkpoint_layout_is_version_count_and_topic_partition_offset_lines(tmp_path):
    checkpoint = OffsetCheckpointFile(tmp_path / "recovery-point-offset-checkpoint")
    checkpoint.write({("b", 1): 20, ("a", 0): 10})
    assert checkpoint.path.read_bytes() == b"0\n2\na 0 10\nb 1 20\n"
    assert checkpoint.read() == {("a", 0): 10, ("b", 1): 20}
    assert not (tmp_path / "recovery-point-offset-checkpoint.tmp").exists()


def test_persist_overwrite_and_reload(tmp_path):
    path = tmp_path / "replication-offset-checkpoint"
    checkpoint = OffsetCheckpointFile(path)
    checkpoint.write({("foo", 1): 5, ("bar", 2): 10})
    assert checkpoint.read() == {("foo", 1): 5, ("bar", 2): 10}
    checkpoint.write({("foo", 2): 15, ("bar", 3): 20})
    assert OffsetCheckpointFile(path).read() == {("foo", 2): 15, ("bar", 3): 20}


def test_many_lines(tmp_path):
    offsets = {(topic, p): 5 * p for topic in ("foo", "bar") for p in range(1, 11)}
    checkpoint = OffsetCheckpointFile(tmp_path / "c")
    checkpoint.write(offsets)
    assert checkpoint.read() == offsets


def test_a_missing_file_is_created_empty_and_reads_as_no_entries(tmp_path):
    checkpoint = OffsetCheckpointFile(tmp_path / "x")
    assert (tmp_path / "x").exists() and checkpoint.read() == {}
    checkpoint.write({})
    assert (tmp_path / "x").read_text() == "0\n0\n" and checkpoint.read() == {}


def test_opening_an_existing_checkpoint_does_not_touch_it(tmp_path):
    path = tmp_path / "c"
    path.write_text("0\n0\n")
    os.utime(path, (1_000_000, 1_000_000))
    OffsetCheckpointFile(path)
    assert path.stat().st_mtime == 1_000_000


def test_a_version_and_no_count_reads_as_no_entries(tmp_path):
    (tmp_path / "c").write_text("0\n")
    assert OffsetCheckpointFile(tmp_path / "c").read() == {}


def test_kafkas_line_ends_and_whitespace_are_accepted(tmp_path):
    path = tmp_path / "c"
    path.write_bytes(b"0\r\n2\ra\t0  7 \nb 1 8")
    assert OffsetCheckpointFile(path).read() == {("a", 0): 7, ("b", 1): 8}


@pytest.mark.parametrize("content, message", [
    ("1\n0\n", r"Unrecognised version:1, expected version: 0"),
    ("0\n2\na 0 1\n", r"Expected \[2\] entries"),
    ("0\n1\na 0 1\nb 0 2\n", r"Expected \[1\] entries"),
    ("0\n1\na zero 1\n", r"Malformed line in checkpoint file \[.*\]: a zero 1 \(line 3\)"),
    ("0\n1\n a 0 1\n", r"Malformed line .*\(line 3\)"),  # Java's split keeps a leading empty field
    ("0\n1\na 0\n", r"\(line 3\)"),
    ("0\n1\na 0 1 2\n", r"\(line 3\)"),
    ("0\n1\na 2147483648 1\n", r"\(line 3\)"),  # partition must be an int32
    ("0\n1\na 0 9223372036854775808\n", r"\(line 3\)"),  # offset must be an int64
    ("0\n1\na 0 1_0\n", r"\(line 3\)"),
    ("0\n1\n\n", r"\(line 3\)"),
    ("0\n1\na 0 1\n\n", r"\(line 4\)"),
    ("zero\n", r"Malformed line .*: zero \(line 1\)"),
    (" 0\n0\n", r"\(line 1\)"),
    ("0\nx\n", r"\(line 2\)"),
])
def test_malformed_offset_checkpoints_raise_naming_the_file_and_line(tmp_path, content, message):
    path = tmp_path / "log-start-offset-checkpoint"
    path.write_text(content)
    with pytest.raises(CheckpointError, match=message) as info:
        OffsetCheckpointFile(path).read()
    assert "log-start-offset-checkpoint" in str(info.value)


def test_binary_garbage_raises_a_checkpoint_error(tmp_path):
    path = tmp_path / "c"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(CheckpointError, match="not utf-8"):
        OffsetCheckpointFile(path).read()


def test_a_file_past_the_size_limit_is_refused_without_reading_it_all(tmp_path, monkeypatch):
    monkeypatch.setattr(checkpoint_module, "CHECKPOINT_SIZE_BYTES_MAX", 16)
    path = tmp_path / "c"
    path.write_text("0\n3\na 0 1\nb 0 2\nc 0 3\n")
    with pytest.raises(CheckpointError, match="larger than 16 bytes"):
        OffsetCheckpointFile(path).read()


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=80))
def test_any_bytes_read_as_entries_or_raise_only_checkpoint_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("cp") / "c"
    path.write_bytes(data)
    for make in (OffsetCheckpointFile, LeaderEpochCheckpointFile):
        try:
            make(path).read()
        except CheckpointError:
            pass


_topics = st.from_regex(r"[A-Za-z0-9._-]{1,30}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.tuples(_topics, st.integers(0, 2**31 - 1)), st.integers(-(2**63), 2**63 - 1),
                       max_size=30))
def test_offset_checkpoints_round_trip(tmp_path_factory, offsets):
    checkpoint = OffsetCheckpointFile(tmp_path_factory.mktemp("cp") / "replication-offset-checkpoint")
    checkpoint.write(offsets)
    assert checkpoint.read() == offsets


def test_a_topic_with_whitespace_cannot_be_written(tmp_path):
    with pytest.raises(AssertionError):
        OffsetCheckpointFile(tmp_path / "c").write({("a b", 0): 1})


def test_write_if_dir_exists_tolerates_a_directory_renamed_away(tmp_path):
    directory = tmp_path / "t-0"
    directory.mkdir()
    checkpoint = LeaderEpochCheckpointFile(LeaderEpochCheckpointFile.new_file(directory))
    directory.rename(tmp_path / "t-0.abc-delete")
    assert not checkpoint.write_if_dir_exists([EpochEntry(1, 42)])
    with pytest.raises(FileNotFoundError):
        checkpoint.write([EpochEntry(1, 42)])


def test_a_crash_between_tmp_write_and_rename_leaves_the_old_file_whole(tmp_path, monkeypatch):
    checkpoint = OffsetCheckpointFile(tmp_path / "c")
    checkpoint.write({("a", 0): 1})

    def crash(*_args):
        raise OSError("crash before the rename")

    monkeypatch.setattr(checkpoint_module.os, "replace", crash)
    with pytest.raises(OSError, match="crash"):
        checkpoint.write({("a", 0): 2})
    monkeypatch.undo()
    assert checkpoint.read() == {("a", 0): 1}
    checkpoint.write({("a", 0): 3})  # the stale .tmp is simply overwritten
    assert checkpoint.read() == {("a", 0): 3}


def test_a_generic_checkpoint_reports_a_from_line_value_error_as_malformed(tmp_path):
    checkpoint = CheckpointFile(tmp_path / "c", 3, str, int)
    checkpoint.write([1, 2])
    assert checkpoint.read() == [1, 2]
    (tmp_path / "c").write_text("3\n1\nnot-an-int\n")
    with pytest.raises(CheckpointError, match="line 3"):
        checkpoint.read()


def test_java_read_lines():
    assert java_read_lines("") == []
    assert java_read_lines("a\n") == ["a"]
    assert java_read_lines("a\n\n") == ["a", ""]
    assert java_read_lines("a\r\nb\rc\nd") == ["a", "b", "c", "d"]
    assert java_read_lines("a\x0bb\u2028c") == ["a\x0bb\u2028c"]  # only \n and \r end lines


# -- leader-epoch-checkpoint -------------------------------------------------------------------

def test_leader_epoch_checkpoint_persists_overwrites_and_reloads(tmp_path):
    path = tmp_path / "leader-epoch-checkpoint"
    checkpoint = LeaderEpochCheckpointFile(path)
    epochs = [EpochEntry(0, 1), EpochEntry(1, 2), EpochEntry(2, 3)]
    checkpoint.write(epochs)
    assert path.read_text() == "0\n3\n0 1\n1 2\n2 3\n"
    assert checkpoint.read() == epochs
    checkpoint.write([EpochEntry(3, 4), EpochEntry(4, 5)])
    assert LeaderEpochCheckpointFile(path).read() == [EpochEntry(3, 4), EpochEntry(4, 5)]


@pytest.mark.parametrize("content", ["0\n1\nnot numbers\n", "7\n0\n", "0\n2\n1 5\n", "garbage",
                                     "0\n1\n1 2 3\n", "0\n1\n2147483648 0\n", "0\n1\n1\n"])
def test_garbage_leader_epoch_checkpoints_raise(tmp_path, content):
    path = tmp_path / "leader-epoch-checkpoint"
    path.write_text(content)
    with pytest.raises(CheckpointError, match="leader-epoch-checkpoint"):
        LeaderEpochCheckpointFile(path).read()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-(2**31), 2**31 - 1), st.integers(-(2**63), 2**63 - 1)), max_size=30))
def test_leader_epoch_checkpoints_round_trip(tmp_path_factory, entries):
    checkpoint = LeaderEpochCheckpointFile(tmp_path_factory.mktemp("cp") / "leader-epoch-checkpoint")
    checkpoint.write([EpochEntry(*e) for e in entries])
    assert checkpoint.read() == [EpochEntry(*e) for e in entries]


# -- Uuid -------------------------------------------------------------------------------------

def test_kafka_uuid_strings_are_url_safe_base64_without_padding():
    value = uuid.UUID("b1a9d8c7-1234-4abc-8def-0123456789ab")
    text = uuid_to_kafka_string(value)
    assert text == "sanYxxI0SryN7wEjRWeJqw" and len(text) == 22
    assert uuid_from_kafka_string(text) == value
    assert uuid_from_kafka_string(text + "==") == value  # Java's decoder accepts padding
    assert uuid_to_kafka_string(ZERO_UUID) == "AAAAAAAAAAAAAAAAAAAAAA"
    assert uuid_to_kafka_string(ONE_UUID) == "AAAAAAAAAAAAAAAAAAAAAQ"


@pytest.mark.parametrize("bad", ["", "abc", "sanYxxI0SryN7wEjRWeJq", "sanYxxI0SryN7wEjRWeJqwAA",
                                 "sanYxxI0SryN7wEjRWeJq+", "sanYxxI0SryN7wEjRWeJq/", "sanYxxI0Sry N7wEjRWeJqw",
                                 "sanYxxI0SryN7wEjRWeJqwAAAAAAAAAA"])
def test_kafka_uuid_parsing_is_strict(bad):
    with pytest.raises(ValueError):
        uuid_from_kafka_string(bad)


@settings(max_examples=200, deadline=None)
@given(st.uuids(version=4) | st.builds(lambda n: uuid.UUID(int=n), st.integers(0, 2**128 - 1)))
def test_kafka_uuid_strings_round_trip(value):
    assert uuid_from_kafka_string(uuid_to_kafka_string(value)) == value


def test_random_kafka_uuids_are_never_reserved_nor_start_with_a_dash():
    for _ in range(300):
        value = random_kafka_uuid()
        assert value not in (ZERO_UUID, ONE_UUID) and not uuid_to_kafka_string(value).startswith("-")


# -- partition.metadata -----------------------------------------------------------------------

def test_partition_metadata_file_layout(tmp_path):
    topic_id = random_kafka_uuid()
    metadata = PartitionMetadataFile(tmp_path)
    assert not metadata.exists()
    metadata.write(topic_id)
    assert metadata.path == PartitionMetadataFile.new_file(tmp_path) == tmp_path / "partition.metadata"
    assert metadata.path.read_bytes() == f"version: 0\ntopic_id: {uuid_to_kafka_string(topic_id)}".encode()
    assert metadata.read() == topic_id
    assert metadata.read_metadata() == PartitionMetadata(0, topic_id)
    metadata.delete()
    assert not metadata.exists()


def test_record_refuses_a_different_topic_id_and_accepts_the_same(tmp_path):
    metadata = PartitionMetadataFile(tmp_path)
    topic_id = random_kafka_uuid()
    metadata.record(topic_id)
    metadata.record(uuid_from_kafka_string(uuid_to_kafka_string(topic_id)))
    with pytest.raises(InconsistentTopicIdError):
        metadata.record(random_kafka_uuid())


def test_maybe_flush_writes_only_a_recorded_topic_id(tmp_path):
    metadata = PartitionMetadataFile(tmp_path)
    metadata.maybe_flush()
    assert not metadata.exists()
    topic_id = random_kafka_uuid()
    metadata.record(topic_id)
    metadata.maybe_flush()
    assert metadata.path.read_text().splitlines() == ["version: 0", f"topic_id: {uuid_to_kafka_string(topic_id)}"]
    metadata.record(random_kafka_uuid())  # flushed: a new id may be recorded


def test_a_later_partition_metadata_version_still_reads(tmp_path):
    (tmp_path / "partition.metadata").write_text("version: 3\ntopic_id: sanYxxI0SryN7wEjRWeJqw\n")
    assert PartitionMetadataFile(tmp_path).read_metadata().version == 3


@pytest.mark.parametrize("content, message", [
    ("", r"line 1"),
    ("version: 0", r"line 2"),
    ("version:0\ntopic_id: sanYxxI0SryN7wEjRWeJqw", r"line 1"),
    ("version: x\ntopic_id: sanYxxI0SryN7wEjRWeJqw", r"line 1"),
    ("version: -1\ntopic_id: sanYxxI0SryN7wEjRWeJqw", r"Unrecognized version"),
    ("version: 0\ntopic_id sanYxxI0SryN7wEjRWeJqw", r"line 2"),
    ("version: 0\ntopic_id: not-a-uuid", r"Invalid topic ID"),
    ("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA", r"Invalid topic ID"),
])
def test_malformed_partition_metadata_raises_naming_the_file(tmp_path, content, message):
    (tmp_path / "partition.metadata").write_text(content)
    with pytest.raises(CheckpointError, match=message) as info:
        PartitionMetadataFile(tmp_path).read()
    assert "partition.metadata" in str(info.value)


# -- meta.properties --------------------------------------------------------------------------

def test_meta_properties_are_written_as_java_properties_store_does(tmp_path):
    directory_id = uuid_to_kafka_string(random_kafka_uuid())
    MetaProperties(node_id=1, cluster_id="J8qXRwI-Qyi2G0guFTiuYw", directory_id=directory_id).write(tmp_path)
    lines = (tmp_path / "meta.properties").read_text().splitlines()
    assert lines[0] == "#" and lines[1].startswith("#")
    assert lines[2:] == ["cluster.id=J8qXRwI-Qyi2G0guFTiuYw", f"directory.id={directory_id}", "node.id=1",
                         "version=1"]
    assert not (tmp_path / "meta.properties.tmp").exists()


def test_meta_properties_round_trip(tmp_path):
    meta = MetaProperties(node_id=1, cluster_id="abc", directory_id=uuid_to_kafka_string(uuid.uuid4()))
    meta.write(tmp_path)
    assert MetaProperties.read(tmp_path) == meta


def test_a_log_dir_without_meta_properties_reads_as_none(tmp_path):
    assert MetaProperties.read(tmp_path) is None


def test_a_kafka_written_meta_properties_is_read(tmp_path):
    (tmp_path / "meta.properties").write_text(
        "#\n#Thu Nov 21 10:15:42 UTC 2024\nnode.id=3\ndirectory.id=sanYxxI0SryN7wEjRWeJqw\nversion=1\n"
        "cluster.id=MkU3OEVBNTcwNTJENDM2Qk\n")
    assert MetaProperties.read(tmp_path) == MetaProperties(3, "MkU3OEVBNTcwNTJENDM2Qk", "sanYxxI0SryN7wEjRWeJqw", 1)


def test_version_0_meta_properties_have_an_optional_broker_id(tmp_path):
    (tmp_path / "meta.properties").write_text("broker.id=7\ncluster.id=abc\nnode.id=9\n")
    assert MetaProperties.read(tmp_path) == MetaProperties(7, "abc", None, 0)  # no version: v0, node.id ignored
    (tmp_path / "meta.properties").write_text("version=0\n")
    assert MetaProperties.read(tmp_path) == MetaProperties(None, None, None, 0)
    MetaProperties(5, "abc", None, 0).write(tmp_path)
    assert (tmp_path / "meta.properties").read_text().splitlines()[2:] == ["broker.id=5", "cluster.id=abc",
                                                                          "version=0"]


@pytest.mark.parametrize("content, message", [
    ("version=1\ncluster.id=abc\n", "Failed to find node.id"),
    ("version=1\nnode.id=1\n", "cluster.id was not found"),
    ("version=1\nnode.id=one\ncluster.id=abc\n", "Unable to read node.id as a base-10 number"),
    ("version=2\nnode.id=1\ncluster.id=abc\n", "Unknown meta.properties version number 2"),
    ("version=v1\n", "Invalid meta.properties version string 'v1'"),
    ("version=1\nnode.id=1\ncluster.id=abc\ndirectory.id=xyz\n", "Unable to read directory.id as a Uuid"),
    ("version=1\nnode.id=\\u00zz\n", "Malformed"),
])
def test_malformed_meta_properties_raise_naming_the_file(tmp_path, content, message):
    (tmp_path / "meta.properties").write_text(content)
    with pytest.raises(CheckpointError, match=message) as info:
        MetaProperties.read(tmp_path)
    assert "meta.properties" in str(info.value)


def test_java_properties_parsing():
    text = ("# comment\n! also a comment\n   \n  a = 1\nb:2\nc 3\nd=\\\n    continued\ne=x\\\\\n"
            "f\\=g=h\\u0041\\t\nempty\n  #comment=after\\\ng=after\\\n# not a comment: continued\n"
            "last==v \n")
    assert parse_java_properties(text) == {
        "a": "1", "b": "2", "c": "3", "d": "continued", "e": "x\\", "f=g": "hA\t", "empty": "",
        "g": "after# not a comment: continued", "last": "=v "}


@settings(max_examples=100, deadline=None)
@given(st.integers(-(2**31), 2**31 - 1), st.text(max_size=30), st.text(max_size=30))
def test_meta_properties_with_any_text_round_trip(tmp_path_factory, node_id, cluster_id, directory_text):
    directory = tmp_path_factory.mktemp("meta")
    directory_id = uuid_to_kafka_string(uuid.uuid5(uuid.NAMESPACE_DNS, directory_text))
    meta = MetaProperties(node_id, cluster_id, directory_id)
    meta.write(directory)
    (directory / "meta.properties").read_bytes().decode("ascii")  # escapes keep the file ASCII
    assert MetaProperties.read(directory) == meta


def test_java_date_string_shape():
    text = java_date_string(0)
    parts = text.split(" ")
    assert len(parts) == 6 and parts[0] in ("Wed", "Thu") and parts[1] in ("Dec", "Jan")
    assert parts[-1] in ("1969", "1970") and len(parts[3]) == 8
