"""Java system properties as a Kafka broker's JVM has them, and sun.security.util.PropertyExpander,
which expands `${name}` in the JAAS file with them.

A Kafka broker's operator sets system properties as `-Dname=value` options of KAFKA_OPTS, which
kafka-run-class.sh passes to the JVM unquoted: the variable splits at whitespace, no quoting
applies, the last option for a name wins, and `-Dname` alone sets it empty. franz reads them
there. Expansion also sees the few properties every JVM has that a file may name (user.home and
the like, as the JVM sets them on Linux); a -D option overrides those as it does in Java.
"""

from __future__ import annotations

import os
import pwd
from collections.abc import Mapping
from typing import Final

KAFKA_OPTS: Final = "KAFKA_OPTS"


class ExpandError(ValueError):
    """PropertyExpander.ExpandException: a `${name}` no property has."""


def kafka_opts_properties(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """Every -D option of KAFKA_OPTS, by name."""
    properties = {}
    for option in environ.get(KAFKA_OPTS, "").split():
        if option.startswith("-D") and len(option) > 2:
            name, _, value = option[2:].partition("=")
            properties[name] = value
    return properties


def system_property(name: str, environ: Mapping[str, str] = os.environ) -> str | None:
    """System.getProperty(name) for a property only an operator sets: its -D option of KAFKA_OPTS."""
    return kafka_opts_properties(environ).get(name)


def system_properties(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The properties a JAAS file's `${name}` may name: the JVM's own, under KAFKA_OPTS' options."""
    try:
        account = pwd.getpwuid(os.getuid())
        user_name, user_home = account.pw_name, account.pw_dir  # the JVM asks getpwuid, not $HOME
    except KeyError:
        user_name, user_home = "?", "?"
    return {"user.name": user_name, "user.home": user_home, "user.dir": os.getcwd(),
            "java.io.tmpdir": "/tmp",
            "file.separator": os.sep, "path.separator": os.pathsep, "line.separator": "\n",
            **kafka_opts_properties(environ)}


def expand(value: str, properties: Mapping[str, str]) -> str:
    """PropertyExpander.expand: each `${name}` replaced by the property, `${/}` by the file
    separator; `${{...}}` is kept as written, and so is a `${` no `}` closes. ExpandError names a
    property that is not set."""
    start = value.find("${")
    if start < 0:
        return value
    out, copied, end = [], 0, len(value)
    while start < end:
        out.append(value[copied:start])
        copied = start
        close = start + 2
        if close < end and value[close] == "{":  # ${{...}}: text
            close = value.find("}}", close)
            if close < 0 or close + 2 == end:
                out.append(value[start:])
                return "".join(out)
            close += 1
            out.append(value[start:close + 1])
        else:
            close = value.find("}", close)
            if close < 0:
                out.append(value[start:])
                return "".join(out)
            name = value[start + 2:close]
            if name == "/":
                out.append(os.sep)
            elif name in properties:
                out.append(properties[name])
            else:
                raise ExpandError(f"unable to expand property {name}")
        copied = close + 1
        start = value.find("${", copied)
        if start < 0:
            out.append(value[copied:])
            break
    return "".join(out)
