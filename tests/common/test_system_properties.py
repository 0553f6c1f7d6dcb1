"""System properties as a broker's JVM has them from KAFKA_OPTS, and PropertyExpander's ${name}."""

from __future__ import annotations

import os
import pwd

import pytest

from franz.common.system_properties import (
    ExpandError,
    expand,
    kafka_opts_properties,
    system_properties,
    system_property,
)


def test_kafka_opts_gives_its_d_options_split_at_whitespace_the_last_one_winning():
    environ = {"KAFKA_OPTS": "-Xmx1G  -Da=1\t-Dpath==/etc/x=y -Dempty -D -Da=2\n-Dquoted=\"a b\" -XX:+UseG1GC"}
    assert kafka_opts_properties(environ) == {"a": "2", "path": "=/etc/x=y", "empty": "", "quoted": '"a'}
    assert system_property("a", environ) == "2" and system_property("b", environ) is None
    assert kafka_opts_properties({}) == {}


def test_the_jvms_own_properties_are_under_kafka_opts():
    properties = system_properties({"KAFKA_OPTS": "-Duser.dir=/srv/kafka -Dmine=1"})
    assert properties["user.home"] == pwd.getpwuid(os.getuid()).pw_dir
    assert (properties["user.dir"], properties["mine"], properties["file.separator"]) == ("/srv/kafka", "1", "/")


@pytest.mark.parametrize("value, expanded", [
    ("plain", "plain"),
    ("${home}/kafka.keytab", "/home/k/kafka.keytab"),
    ("${home}${/}a${/}${name}", "/home/k/a/kafka"),
    ("x${{home}}y${name}", "x${{home}}ykafka"),  # ${{...}} is not expanded
    ("${{home}}", "${{home}}"),
    ("a${home", "a${home"),  # no closing brace: as written
    ("$home and {home}", "$home and {home}"),
    ("${}", ""),  # the property named "" is set here
])
def test_property_expander_replaces_each_property(value, expanded):
    assert expand(value, {"home": "/home/k", "name": "kafka", "": ""}) == expanded


def test_a_property_not_set_cannot_be_expanded():
    with pytest.raises(ExpandError, match="^unable to expand property user.nope$"):
        expand("${user.nope}/x", {})
