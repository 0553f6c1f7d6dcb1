"""The streams TopologyMetadata, ported from Kafka 4.3's TopologyMetadataTest (ConfiguredSubtopology
stood in for by objects with its two fields TopologyMetadata reads)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from franz.coordinator.group.streams.topology_metadata import NoSuchElementError, TopologyMetadata

METADATA_IMAGE = {"source_topic": (bytes(range(16)), 3), "repartition_source_topic": (bytes(16), 4)}


def _subtopology(number_of_tasks: int = 1, state_changelog_topics: dict | None = None) -> SimpleNamespace:
    return SimpleNamespace(number_of_tasks=number_of_tasks, state_changelog_topics=state_changelog_topics or {})


def test_metadata_image_and_topology():
    """testMetadataImage, testTopology."""
    subtopologies = {"subtopology1": _subtopology()}
    metadata = TopologyMetadata(METADATA_IMAGE, subtopologies)
    assert metadata.metadata_image == METADATA_IMAGE and metadata.subtopology_map == subtopologies


def test_is_stateful():
    metadata = TopologyMetadata(METADATA_IMAGE, {
        "subtopology1": _subtopology(state_changelog_topics={"state_changelog_topic": object()}),
        "subtopology2": _subtopology()})
    assert metadata.is_stateful("subtopology1")
    assert not metadata.is_stateful("subtopology2")


def test_max_num_input_partitions_is_the_number_of_tasks():
    metadata = TopologyMetadata(METADATA_IMAGE, {"subtopology1": _subtopology(number_of_tasks=4)})
    assert metadata.max_num_input_partitions("subtopology1") == 4
    assert metadata.max_number_input_partitions("subtopology1") == 4


def test_subtopologies_are_listed_in_id_order():
    metadata = TopologyMetadata(METADATA_IMAGE, {"subtopology2": _subtopology(), "subtopology1": _subtopology()})
    assert metadata.subtopologies() == ["subtopology1", "subtopology2"]


@pytest.mark.parametrize("method", ["is_stateful", "max_num_input_partitions"])
def test_unknown_subtopology_raises(method):
    """testIsStatefulThrowsExceptionWhenSubtopologyIdDoesNotExist and its MaxNumInputPartitions twin."""
    with pytest.raises(NoSuchElementError, match="Topology does not contain subtopology non_existent_subtopology"):
        getattr(TopologyMetadata(METADATA_IMAGE, {}), method)("non_existent_subtopology")
    with pytest.raises(LookupError):
        getattr(TopologyMetadata(METADATA_IMAGE, {}), method)("non_existent_subtopology")
