"""Copying a loaded config into plain Python containers, bounded and value by value.

Why a module of its own: the copy is the one pass over every value a config holds (131,072
robots' hardware configs on 65,536 nodes), so it carries the limits a hostile config meets
(nesting, values copied, a mapping that holds itself) and the fast paths that keep large
configs cheap, apart from reading YAML (``_config.py``). An interpolation that cannot be
resolved becomes an :class:`Unresolved` marker here, failing only where placement reads it.
"""

from __future__ import annotations

import enum
import gc
import itertools
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from omegaconf import DictConfig, ListConfig, Node
from omegaconf.errors import OmegaConfBaseException

from solver_placement._compose import unset_variable
from solver_placement._errors import PlacementConfigError, WholeRepr, cut, first_line, shown
from solver_placement._limits import current, exceeded
from solver_placement._limits.interpolations import blocked_interpolations
from solver_placement._limits.keys import distinct_as_text


@dataclass(frozen=True)
class Unresolved(WholeRepr):
    """A config value whose interpolation could not be resolved (or a ``???`` placeholder).

    Harmless where nothing reads it. Where placement reads it, every validator reports it by its
    ``repr`` (path, text and reason, each bounded, so messages quote it whole), and asking for its
    truth value raises, because a flag such as ``auto_scheduler: ${oops}`` has no answer. A value
    that needs an unset environment variable (``${oc.env:EMBODIED_PATH}``, which RLinf's run
    scripts export) names the ``variable`` first, since that is what the user has to set.
    """

    path: str
    text: str
    reason: str
    variable: str | None = None

    def __repr__(self) -> str:
        if self.variable is not None:
            return f"<unresolved {cut(self.path, 60)}: environment variable {self.variable} is not set ({shown(cut(self.text, 60))})>"
        return f"<unresolved {cut(self.path, 60)}: {shown(cut(self.text, 60))} ({cut(self.reason, 120)})>"

    def __bool__(self) -> bool:
        raise PlacementConfigError(f"{self.path}: cannot resolve {shown(self.text)}: {self.reason}")


def to_plain(value: Any, where: str = "") -> Any:
    """Convert OmegaConf containers to plain dicts/lists and copy mappings, resolving each value
    on its own (an unresolvable one becomes :class:`Unresolved`, see the module docstring).

    ``where`` is the dotted path of ``value`` in the whole config ("" for the config itself).
    Refuses nesting deeper than ``max_depth`` and a mapping or list that contains itself.
    """
    blocked = blocked_interpolations(value) if isinstance(value, DictConfig) else {}
    with collector_paused():
        return _Copier(blocked).copy(value, where, 0)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a config is copied or read into typed values:
    neither makes cycles (a container holding itself is refused), yet a million new lists would
    trigger collections that walk every live object (4x the copy time; 131,072 robots, 2x)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


@dataclass
class _Copier:
    """One copy of a config: the interpolations not to resolve, and the containers being copied."""

    blocked: dict[str, str]

    def __post_init__(self) -> None:
        self.open: set[int] = set()
        self.copied = 0

    def copy(self, value: Any, where: str, depth: int) -> Any:
        kind = type(value)
        if kind in _EXACT_SCALARS:
            return value
        if kind is not dict and kind is not list and not isinstance(value, (DictConfig, ListConfig, Mapping, list, tuple)):
            return plain_scalar(value)
        if depth >= current().max_depth:
            raise exceeded("max_depth", f"more than {current().max_depth} levels", where or "config", "its nesting")
        self._count(len(value), where)
        if id(value) in self.open:
            raise PlacementConfigError(f"{where or 'config'}: contains itself (a mapping or list that holds itself cannot be a config)")
        self.open.add(id(value))
        try:
            return self._children(value, where, depth + 1)
        finally:
            self.open.discard(id(value))

    def _children(self, value: Any, where: str, depth: int) -> Any:
        if type(value) is dict and set(map(type, value)) <= {str}:  # the common mapping, exact types only
            if set(map(type, value.values())) <= _EXACT_SCALARS:
                return dict(value)  # the common leaf mapping (labels, env vars, hardware configs) at C speed
            return {key: self.copy(item, _path(where, key), depth) for key, item in value.items()}
        if isinstance(value, DictConfig):
            keys = list(value.keys())
            plain = distinct_as_text([plain_key(key, where) for key in keys], where)
            return {name: self._resolved(value, key, _path(where, key_text(name, where)), depth) for name, key in zip(plain, keys)}
        if isinstance(value, ListConfig):
            return [self._resolved(value, index, f"{where}[{index}]", depth) for index in range(len(value))]
        if isinstance(value, Mapping):
            pairs = list(value.items())
            names = distinct_as_text([plain_key(key, where) for key, _ in pairs], where)
            return {key: self.copy(item, _path(where, key_text(key, where)), depth) for key, (_, item) in zip(names, pairs)}
        flat = self._flat_copy(value, where) if depth < current().max_depth else None
        if flat is not None:
            return flat
        return [self.copy(item, f"{where}[{index}]", depth) for index, item in enumerate(value)]

    def _flat_copy(self, value: list[Any] | tuple[Any, ...], where: str) -> list[Any] | None:
        """The common long lists (ranks, per-node values, explicit placements: exact scalars, or
        lists of them; hardware configs: mappings of text to scalars) copied at C speed; None for
        any other list. A list of scalars cannot hold itself, so nothing is tracked; inner lists
        and mappings are counted before they are read."""
        kinds = set(map(type, value))
        if kinds <= _EXACT_SCALARS:
            return list(value)
        if kinds == {dict}:
            return self._leaf_mappings(value, where)
        if not kinds <= _EXACT_SCALARS | _SEQUENCES:
            return None
        inner = [item for item in value if type(item) in _SEQUENCES]
        inner_values = sum(map(len, inner))
        self._count(inner_values, where)
        if not set(map(type, itertools.chain.from_iterable(inner))) <= _EXACT_SCALARS:
            self.copied -= inner_values  # the item-by-item copy counts them
            return None
        return [list(item) if type(item) in _SEQUENCES else item for item in value]

    def _leaf_mappings(self, value: list[dict[Any, Any]] | tuple[dict[Any, Any], ...], where: str) -> list[Any] | None:
        """A list of mappings of text to exact scalars (131,072 robots' configs: a copy each one
        by one took 0.4 s) copied at C speed, each counted as its own copy counts it; None when
        one holds anything else, or when they pass the limit (the copy one by one names where)."""
        values = sum(map(len, value))
        if self.copied + values > current().max_copied_values:
            return None  # the item-by-item copy refuses it, naming the first mapping over the limit
        if set(map(type, itertools.chain.from_iterable(value))) <= {str} and set(map(type, itertools.chain.from_iterable(map(dict.values, value)))) <= _EXACT_SCALARS:
            self._count(values, where)
            return list(map(dict, value))
        return None

    def _count(self, values: int, where: str) -> None:
        """Count ``values`` more copied values, refusing before the copy above ``max_copied_values``
        (a list shared by reference many times over is copied, and counted, each time)."""
        self.copied += values
        if self.copied > current().max_copied_values:
            raise exceeded("max_copied_values", f"more than {current().max_copied_values}", where or "config", "the number of values copied (shared lists and mappings counted as copies)")

    def _resolved(self, container: DictConfig | ListConfig, key: Any, path: str, depth: int) -> Any:
        """One entry of an OmegaConf container, resolved, or :class:`Unresolved` when it cannot be."""
        if path in self.blocked:
            return Unresolved(path, _raw_text(container, key), self.blocked[path])
        try:
            value = container[key]
        except OmegaConfBaseException as error:
            raw = _raw_text(container, key)
            return Unresolved(path, raw, first_line(error), unset_variable(raw, error))
        return self.copy(value, path, depth)


#: Scalars copied as they are (exact types: no user override can run).
_EXACT_SCALARS = frozenset({str, int, float, bool, type(None)})
#: Sequences a config holds as lists.
_SEQUENCES = frozenset({list, tuple})


def _raw_text(container: DictConfig | ListConfig, key: Any) -> str:
    node = container._get_node(key)
    return str(node._value()) if isinstance(node, Node) else "???"


def _path(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def plain_key(key: Any, where: str) -> Any:
    """A mapping key as an exact built-in value (a ``str`` subclass's ``__str__`` never runs)."""
    if isinstance(key, enum.Enum):
        return key.name
    if key is None or isinstance(key, (str, int, float)):
        return plain_scalar(key)
    raise PlacementConfigError(f"{where or 'config'}: a key must be a string or a number, not a {type(key).__name__}")


def plain_scalar(value: Any) -> Any:
    """A scalar as its exact built-in type (subclasses' overrides dropped); other objects as they are."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int.__int__(value)
    if isinstance(value, float):
        return float.__float__(value)
    return value


def key_text(key: Any, where: str) -> str:
    """A mapping key as the text messages and lookups use; a huge int key is refused, not printed."""
    key = plain_key(key, where)
    if isinstance(key, int) and key.bit_length() > 1_000:
        raise PlacementConfigError(f"{where}: key {shown(key)} is not a name")
    return str(key)
