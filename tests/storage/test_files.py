from pathlib import Path

import pytest

from franz.storage import files


def test_names_are_the_base_offset_padded_to_twenty_digits(tmp_path):
    assert files.log_file(tmp_path, 0).name == "00000000000000000000.log"
    assert files.offset_index_file(tmp_path, 123).name == "00000000000000000123.index"
    assert files.time_index_file(tmp_path, 2**63 - 1).name == "09223372036854775807.timeindex"
    assert files.transaction_index_file(tmp_path, 5, ".swap").name == "00000000000000000005.txnindex.swap"
    assert files.producer_snapshot_file(tmp_path, 42).name == "00000000000000000042.snapshot"


def test_lexical_order_is_offset_order():
    offsets = [0, 9, 10, 99, 100, 12345678901]
    names = [files.filename_prefix_from_offset(o) for o in offsets]
    assert sorted(names) == names


def test_offset_is_read_back_from_any_suffix():
    for name in ("00000000000000000077.log", "00000000000000000077.index.deleted",
                 "00000000000000000077.snapshot"):
        assert files.offset_from_file_name(name) == 77


def test_suffix_predicates():
    assert files.is_log_file(Path("00000000000000000000.log"))
    assert files.is_index_file(Path("00000000000000000000.timeindex"))
    assert not files.is_index_file(Path("00000000000000000000.log"))
    assert files.strip_suffix(Path("a/00000000000000000000.log.swap"), ".swap") == Path("a/00000000000000000000.log")


def test_partition_dir_names_round_trip_including_dashes_in_topics():
    assert files.parse_topic_partition_name(files.partition_dir_name("my-topic", 12)) == ("my-topic", 12)
    deleted = files.delete_dir_name("my-topic", 3)
    assert files.is_delete_dir(deleted)
    assert files.parse_topic_partition_name(deleted) == ("my-topic", 3)


@pytest.mark.parametrize("bad", ["topic", "-1", "topic-", "topic-x"])
def test_a_directory_that_is_not_a_partition_is_refused(bad):
    with pytest.raises(ValueError, match="topic-partition"):
        files.parse_topic_partition_name(bad)
