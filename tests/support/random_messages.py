"""Random messages of a schema: every field present in a version gets a random value of its type.

Codec tests encode them on one side and decode them on another (kafka-python's codec,
kafka-clients' generated classes) to find fields franz lost, misordered or mistyped.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable

from franz.protocol.schema import Field


def _never(field: Field) -> bool:
    return False


def random_value(field: Field, version: int, rng: random.Random,
                 keep_default: Callable[[Field], bool] = _never, full: bool = False):
    """A value for `field` in `version`; None for a nullable one about one time in five.
    Fields `keep_default` picks keep their default. A `full` value has no null and no empty array
    anywhere."""
    kind = field.type
    if keep_default(field):
        return field.default
    if not full and field.nullable_in(version) and rng.random() < 0.2:
        return None
    least = 1 if full else 0
    if kind == "[]":
        return [random_message(field.fields, version, rng, keep_default, full)
                for _ in range(rng.randint(least, 2))]
    if kind == "{}":
        return random_message(field.fields, version, rng, keep_default, full)
    if kind.startswith("[]"):
        element = Field(field.name, kind[2:], field.versions, None, None, None)
        return [random_value(element, version, rng) for _ in range(rng.randint(least, 3))]
    return {
        "bool": lambda: rng.random() < 0.5,
        "int8": lambda: rng.randint(-128, 127),
        "int16": lambda: rng.randint(-2**15, 2**15 - 1),
        "int32": lambda: rng.randint(-2**31, 2**31 - 1),
        "int64": lambda: rng.randint(-2**63, 2**63 - 1),
        "uint16": lambda: rng.randint(0, 2**16 - 1),
        "uint32": lambda: rng.randint(0, 2**32 - 1),
        "float64": lambda: rng.random(),
        "string": lambda: rng.choice(["", "t", "topic-é", "x" * 40]),
        "bytes": lambda: bytes(rng.randrange(256) for _ in range(rng.randint(0, 9))),
        "records": lambda: bytes(rng.randrange(256) for _ in range(rng.randint(0, 9))),
        "uuid": lambda: uuid.UUID(int=rng.getrandbits(128)).bytes,
    }[kind]()


def random_message(fields: tuple[Field, ...], version: int, rng: random.Random,
                   keep_default: Callable[[Field], bool] = _never, full: bool = False) -> dict:
    """A struct of `fields` with every field present in `version` (see random_value)."""
    return {f.name: random_value(f, version, rng, keep_default, full) for f in fields if f.present_in(version)}
