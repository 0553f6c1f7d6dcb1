import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from franz.storage.checkpoint import (
    CheckpointError,
    MetaProperties,
    OffsetCheckpointFile,
    PartitionMetadataFile,
    uuid_from_kafka_string,
    uuid_to_kafka_string,
)


def test_offset_checkpoint_layout_is_version_count_and_topic_partition_offset_lines(tmp_path):
    checkpoint = OffsetCheckpointFile(tmp_path / "recovery-point-offset-checkpoint")
    checkpoint.write({("b", 1): 20, ("a", 0): 10})
    assert checkpoint.path.read_text() == "0\n2\na 0 10\nb 1 20\n"
    assert checkpoint.read() == {("a", 0): 10, ("b", 1): 20}
    assert not (tmp_path / "recovery-point-offset-checkpoint.tmp").exists()


def test_an_empty_file_reads_as_no_entries(tmp_path):
    assert OffsetCheckpointFile(tmp_path / "x").read() == {}


@pytest.mark.parametrize("content, message", [
    ("1\n0\n", "Unrecognised version"),
    ("0\n2\na 0 1\n", "Expected \\[2\\] entries"),
    ("0\n1\na zero 1\n", "Malformed line"),
    ("zero\n", "Malformed line"),
])
def test_malformed_offset_checkpoints_raise_naming_the_file(tmp_path, content, message):
    path = tmp_path / "log-start-offset-checkpoint"
    path.write_text(content)
    with pytest.raises(CheckpointError, match=message) as info:
        OffsetCheckpointFile(path).read()
    assert "log-start-offset-checkpoint" in str(info.value)


@settings(max_examples=50, deadline=None)
@given(st.dictionaries(st.tuples(st.from_regex(r"[A-Za-z0-9._-]{1,20}", fullmatch=True), st.integers(0, 1000)),
                       st.integers(0, 2**63 - 1), max_size=30))
def test_offset_checkpoints_round_trip(tmp_path_factory, offsets):
    checkpoint = OffsetCheckpointFile(tmp_path_factory.mktemp("cp") / "replication-offset-checkpoint")
    checkpoint.write(offsets)
    assert checkpoint.read() == offsets


def test_kafka_uuid_strings_are_url_safe_base64_without_padding():
    value = uuid.UUID("b1a9d8c7-1234-4abc-8def-0123456789ab")
    text = uuid_to_kafka_string(value)
    assert len(text) == 22 and "=" not in text
    assert uuid_from_kafka_string(text) == value


def test_partition_metadata_file(tmp_path):
    topic_id = uuid.uuid4()
    metadata = PartitionMetadataFile(tmp_path)
    metadata.write(topic_id)
    assert metadata.path.read_text() == f"version: 0\ntopic_id: {uuid_to_kafka_string(topic_id)}"
    assert metadata.read() == topic_id


def test_partition_metadata_with_a_zero_topic_id_is_refused(tmp_path):
    (tmp_path / "partition.metadata").write_text("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA")
    with pytest.raises(CheckpointError, match="Invalid topic ID"):
        PartitionMetadataFile(tmp_path).read()


def test_meta_properties_round_trip(tmp_path):
    meta = MetaProperties(node_id=1, cluster_id="abc", directory_id=uuid_to_kafka_string(uuid.uuid4()))
    meta.write(tmp_path)
    text = (tmp_path / "meta.properties").read_text()
    assert "node.id=1" in text and "version=1" in text and text.startswith("#")
    assert MetaProperties.read(tmp_path) == meta
