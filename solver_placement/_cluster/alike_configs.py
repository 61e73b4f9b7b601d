"""A node group's hardware configs read column by column when they are alike, not config by config.

A robot group's configs are alike: every one a plain mapping with the same text keys (its
``node_rank`` and ``robot_ip``), each key's values of one exact scalar type. Read one by one,
with a fingerprint each for duplicates, 655,360 robots on 65,536 nodes took 4-5 s; read as
columns (one C-speed pass per key for its values and their type, one set of rows for the
duplicates) they take a tenth of that.

:func:`alike_configs` accepts every config of a group or declines (None), and then
``schema_groups`` reads them one by one again: that reading alone refuses a config, so a refusal
names the first wrong config, with the message it always had, whatever made these decline. What
is accepted here is exactly what the one-by-one reading accepts: a ``node_rank`` of type int on
a node of the group, and no two configs equal as JSON text (with one type per key and the same
keys, equal JSON text is equal values, floats compared by their text as JSON writes them).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import repeat
from operator import itemgetter
from typing import Any

from solver_placement._cluster.layout import HardwareItems
from solver_placement._limits.reading import CONFIGS_PER_CHECK, check_reading

#: The value types a column may hold (exact types: a subclass could compare or print otherwise).
_SCALARS = frozenset({str, int, float, bool, type(None)})


def alike_configs(configs: Sequence[Any], members: frozenset[int], where: str) -> HardwareItems | None:
    """The items of ``configs`` (a group's ``hardware.configs``, on the nodes ``members``) when they
    are alike and all valid, else None. Checks the reading call's limit every
    ``CONFIGS_PER_CHECK`` configs, as the one-by-one reading does."""
    if not configs or type(configs[0]) is not dict:
        return None
    keys = tuple(configs[0])
    if "node_rank" not in keys or not all(type(key) is str for key in keys):
        return None
    columns: list[list[Any]] = [[] for _ in keys]
    kinds: list[type | None] = [None] * len(keys)
    for start in range(0, len(configs), CONFIGS_PER_CHECK):
        check_reading(f"reading the hardware configs of {where}")
        batch = configs[start : start + CONFIGS_PER_CHECK]
        if set(map(type, batch)) != {dict} or set(map(tuple, batch)) != {keys}:  # the same keys in the same order
            return None
        for position, key in enumerate(keys):
            values = list(map(itemgetter(key), batch))
            found = set(map(type, values))
            if len(found) != 1 or not found <= _SCALARS or kinds[position] not in (None, *found):
                return None
            kinds[position] = found.pop()
            columns[position] += values
    return _items(configs, keys, columns, kinds, members)


def _items(configs: Sequence[Any], keys: tuple[str, ...], columns: list[list[Any]], kinds: list[type | None], members: frozenset[int]) -> HardwareItems | None:
    """The items of alike configs read as ``columns``, or None when one is refused (a node_rank
    not an int or off the group, a duplicate). Their configs share one tuple of keys."""
    rank = keys.index("node_rank")
    nodes = columns[rank]
    if kinds[rank] is not int or not members.issuperset(nodes):
        return None
    if not _all_distinct(columns, kinds, len(configs)):
        return None
    others = tuple(key for key in keys if key != "node_rank")
    values = zip(*(column for key, column in zip(keys, columns) if key != "node_rank")) if others else repeat((), len(configs))
    return HardwareItems(tuple(nodes), (others,) * len(configs), tuple(values))


def _all_distinct(columns: list[list[Any]], kinds: list[type | None], count: int) -> bool:
    """Whether no two rows of ``columns`` are equal (floats compared by their text): at once
    when one column is (a robot's own address, a serial: one set of 131,072 strings, a quarter
    of the time of a set of rows), else row by row."""
    compared = [list(map(repr, column)) if kind is float else column for column, kind in zip(columns, kinds)]
    return any(len(set(column)) == count for column in compared) or len(set(zip(*compared))) == count
