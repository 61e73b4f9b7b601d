"""Hydra-style overrides applied to a config as Hydra applies them: the command line's arguments
after FILE, and :func:`apply_overrides` for code (``load_job(apply_overrides(path, ["cluster.num_nodes=4"]))``).

RLinf's entry scripts are Hydra apps, so RLinf users type Hydra overrides; each form means here
what it means to Hydra, and a form Hydra reads differently from this module is refused, never
half-applied or ignored:

``key=value``
    replaces a value FILE has; refused when FILE has no such key (Hydra: "Could not override").
``+key=value``
    adds a key FILE does not have (a ``null`` counts as none, as in Hydra); refused when it has one.
``++key=value``
    adds the key or replaces its value.
``~key`` and ``~key=value``
    deletes a key FILE has; with a value, only when the key holds that value.

A dotted key walks mappings by name and lists by index (``cluster.node_groups.0.label``); keys
may hold commas (RLinf's ``actor,rollout``), which Hydra's grammar cannot address. A value is read
by Hydra's own override grammar (``_override_values``), not as YAML: ``4``, ``[8,8,0]``,
``{processes: 2}``, ``null``, ``'0-3'``, ``1:2``, ``yes`` mean what they mean to Hydra, and a value
Hydra cannot read (or reads as a sweep, ``0-3,4-7``) is refused with the quoted form to write; an
empty value is the empty string, as in Hydra. A mapping given for a mapping is merged into it, anything else replaces the
value (so a list replaces the whole list), as Hydra merges. The overrides apply in order before
interpolations are resolved, so ``${...}`` references see the new values.

Refused with a reason: config-group overrides (``/`` or ``@`` in the key) and ``hydra.*``
settings, which need Hydra's composition and configure nothing placement reads; Hydra's sweep
and cast functions (``choice(...)``, ``int(...)``, ...), which only Hydra evaluates. Where Hydra
accepts ``+key=value`` over an existing mapping or list (merging it silently), this module asks
for ``++`` instead: ``+`` here always means "this key is new".
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from omegaconf import DictConfig, ListConfig, Node, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from solver_placement._compose import composed_entries
from solver_placement._config import ConfigSource, YamlText, composed, existing_file, read_yaml
from solver_placement._config_copy import to_plain
from solver_placement._errors import PlacementConfigError, counted, cut, first_line, shown
from solver_placement._limits import check
from solver_placement._limits.numbers import decimal
from solver_placement._override_values import override_value, written_value

#: Characters no key part may hold: Hydra's prefixes, and OmegaConf's brackets and escapes.
_NOT_IN_KEYS = "+~[]\\"
#: How the forms read, for the message of an argument that is none of them.
_FORMS = "KEY=VALUE replaces a value, +KEY=VALUE adds a key, ++KEY=VALUE adds or replaces, ~KEY deletes"


@dataclass(frozen=True)
class Override:
    """One parsed argument: as typed, its form (``""``, ``"+"``, ``"++"`` or ``"~"``), the key's
    parts, and the value (``has_value`` is False for ``~key`` and ``~key=``: delete whatever it holds)."""

    text: str
    form: str
    path: tuple[str, ...]
    value: Any = None
    has_value: bool = True

    @property
    def key(self) -> str:
        """The dotted key for messages, cut so a long one cannot swamp them."""
        return cut(".".join(self.path), 120)

    def refused(self, problem: str) -> PlacementConfigError:
        """The error for this argument: the argument as typed, then ``problem``."""
        return PlacementConfigError(f"override {shown(self.text)}: {problem}")


def apply_overrides(source: ConfigSource, overrides: Sequence[str]) -> DictConfig:
    """``source`` (a YAML path, :class:`YamlText`, a mapping or a ``DictConfig``) with
    ``overrides`` (``["cluster.num_nodes=4", "+actor.model.tensor_model_parallel_size=2"]``)
    applied in order, as a new unresolved ``DictConfig``: interpolations see the new values, and
    the caller's config is left as it was. Give the result to ``load_job``, ``solve`` or any
    call that takes a config. Paths and text are read within the input limits first; a mapping is
    copied within them; a ``DictConfig`` (built in the caller's process, as Hydra builds one) is
    copied as it is, and bounded when a call loads it.
    """
    name = source.name if isinstance(source, YamlText) else str(source) if isinstance(source, (str, Path)) else "the config"
    if isinstance(source, YamlText):
        return load_overridden(source, name, overrides, name)
    if isinstance(source, (str, Path)):
        return load_overridden(existing_file(source), name, overrides, name)
    if isinstance(source, DictConfig):
        loaded = copy.deepcopy(source)
    elif isinstance(source, Mapping):
        loaded = OmegaConf.create(to_plain(source, ""))
    else:
        raise PlacementConfigError(f"a config must be a YAML path, YamlText, a DictConfig or a mapping, not {type(source).__name__}")
    apply_to(loaded, overrides, name, name)
    return loaded


def load_overridden(source: Path | IO[str] | YamlText, name: str, overrides: Sequence[str], file: str) -> DictConfig:
    """FILE (a path, stdin or text) with ``overrides``: composed by Hydra, which parses them in its
    own grammar, when its ``defaults:`` list composes other files (``_compose``); else read as
    written and the overrides applied here (:func:`apply_to`; ``file`` is FILE as given)."""
    loaded = read_yaml(source, name)
    if composed_entries(loaded):
        return composed(source, name, loaded, overrides)
    apply_to(loaded, overrides, file, name)
    return loaded


def apply_to(config: DictConfig, overrides: Sequence[str], file: str, name: str) -> None:
    """Apply ``overrides`` to ``config`` (FILE as loaded, unresolved) in order, in place; ``file``
    is FILE as given (named when an argument looks like a second FILE), ``name`` what messages call it.
    Their number is checked first (``max_overrides``): each one is parsed and merged on its own."""
    check("max_overrides", len(overrides), "overrides", "the number of overrides")
    for item in overrides:
        override = parse_override(item, file)
        if override.form == "~":
            _delete(config, override, name)
        else:
            _assign(config, override, name)


def override_text(key: str, value: str | None, form: str = "") -> str:
    """The override that sets ``key`` to ``value`` (the text as a user types it: ``4``,
    ``list(range(0,4))``), written so Hydra's grammar reads it back as that text; ``~key`` for
    None. ``form`` is ``"+"`` or ``"++"`` to add the key."""
    return f"~{key}" if value is None else f"{form}{key}={written_value(value)}"


def parse_override(item: str, file: str) -> Override:
    """One argument as an :class:`Override`, refused with the reason if it is not one of the forms."""
    form = next((prefix for prefix in ("++", "+", "~") if item.startswith(prefix)), "")
    key, equals, raw = item[len(form):].partition("=")
    if not equals and form != "~":
        looks_like_file = item.endswith((".yaml", ".yml")) or item == "-"
        hint = f"; give one FILE (already {shown(file)})" if looks_like_file else f"; write it as KEY=VALUE ({_FORMS}), e.g. cluster.num_nodes=4"
        raise PlacementConfigError(f"override {shown(item)} is not KEY=VALUE{hint}")
    path = _path(item, key)
    if not equals or (form == "~" and not raw.strip()):
        return Override(item, form, path, has_value=False)
    return Override(item, form, path, override_value(item, raw))


def _path(item: str, key: str) -> tuple[str, ...]:
    """The key's parts, refused when it is empty, addresses Hydra itself or a config group, or is not a dotted key."""
    if not key:
        raise PlacementConfigError(f"override {shown(item)} has no KEY before '='; {_FORMS}")
    if "/" in key or "@" in key:
        raise PlacementConfigError(
            f"override {shown(item)} selects a Hydra config group (a '/' or '@' in the key), which only Hydra's defaults list "
            "composes; solver-placement reads one YAML file: pass the composed config (a Hydra app prints it with --cfg job)"
        )
    check("max_depth", key.count(".") + 1, f"override {shown(item)}", "the number of parts of its key (each a level of nesting)")
    parts = tuple(key.split("."))
    if parts[0] == "hydra":
        raise PlacementConfigError(
            f"override {shown(item)} sets Hydra's own settings (run directory, logging, launcher), which place nothing; leave it out"
        )
    if any(not part or not part.isprintable() or any(c.isspace() or c in _NOT_IN_KEYS for c in part) for part in parts):
        raise PlacementConfigError(
            f"override {shown(item)}: {shown(key)} is not a dotted key (names joined by single dots, list items as .0, .1, ...; "
            f"no spaces or any of {_NOT_IN_KEYS})"
        )
    return parts


def _assign(config: DictConfig, override: Override, name: str) -> None:
    """Apply ``key=``, ``+key=`` or ``++key=``: check the key is there (or not) as the form asks, then set or merge."""
    container, last = _parent(config, override, create=override.form != "")
    node = None if container is None else _node(container, last)
    if container is None or (override.form == "" and node is None):
        raise override.refused(f"{name} has no {override.key} to replace{_close_key(container, last)}; to add it, write +{override.text}")
    if override.form == "+" and node is not None and not node._is_none():
        raise override.refused(
            f"{name} already has {override.key} ({shown(_raw(node))}); +KEY=VALUE only adds a new key: write "
            f"{override.text[1:]} to replace it, or +{override.text} to add or replace it"
        )
    try:
        if isinstance(override.value, dict) and isinstance(node, DictConfig) and not node._is_none() and not node._is_interpolation():
            node.merge_with(override.value)
        else:
            _put(container, last, override.value)
    except OmegaConfBaseException as error:
        raise override.refused(f"cannot set {override.key}: {first_line(error)}") from None


def _delete(config: DictConfig, override: Override, name: str) -> None:
    """Apply ``~key`` (and ``~key=value``, only when the key holds that value)."""
    container, last = _parent(config, override, create=False)
    node = None if container is None else _node(container, last)
    if container is None or node is None:
        raise override.refused(f"{name} has no {override.key} to delete{_close_key(container, last)}")
    if override.has_value and _raw(node) != override.value:
        raise override.refused(f"{override.key} is {shown(_raw(node))}, not {shown(override.value)}, so it is kept (~KEY=VALUE deletes only that value)")
    if isinstance(container, ListConfig):
        del container[int(last)]
    else:
        del container[last]


def _parent(config: DictConfig, override: Override, create: bool) -> tuple[DictConfig | ListConfig | None, str | int]:
    """The mapping or list holding the key's last part, and that part as its key or index.

    Walks the parts before the last: a missing or null one ends the walk (None) unless ``create``,
    which makes it an empty mapping, as adding does in Hydra. A part holding a plain value or an
    interpolation is refused: overriding below it would replace it, or change what it refers to.
    """
    container: DictConfig | ListConfig = config
    for depth in range(len(override.path) - 1):
        key = _index(container, override, depth)
        node = _node(container, key)
        where = cut(".".join(override.path[: depth + 1]), 120)
        if node is not None and node._is_interpolation():
            raise override.refused(f"{where} is an interpolation ({shown(_raw(node))}); override what it refers to instead")
        if node is None or node._is_none():
            if not create:
                return None, override.path[-1]
            _put(container, key, {})
            node = _node(container, key)
        if not isinstance(node, (DictConfig, ListConfig)):
            raise override.refused(f"{where} holds {shown(_raw(node))}, not a mapping or a list, so it has no {override.key}")
        container = node
    return container, _index(container, override, len(override.path) - 1)


def _index(container: DictConfig | ListConfig, override: Override, depth: int) -> str | int:
    """The key's part at ``depth`` as a key of ``container`` (a mapping), or as an index of it (a
    list; refused unless it is one, read within the list's length: ``²`` or 5,000 digits are no index)."""
    part = override.path[depth]
    if isinstance(container, DictConfig):
        return part
    index = decimal(part, max(len(container) - 1, 0))
    if index is None or index >= len(container):
        where = cut(".".join(override.path[:depth]), 120)
        raise override.refused(f"{where} is a list of {counted(len(container), 'item')}, so {shown(part)} is not one of its indices")
    return index


def _node(container: DictConfig | ListConfig, key: str | int) -> Node | None:
    """The node at ``key`` (a key or an index ``_index`` checked) without resolving it; None when absent."""
    node = container._get_node(int(key)) if isinstance(container, ListConfig) else container._get_node(key)
    return node if isinstance(node, Node) else None


def _put(container: DictConfig | ListConfig, key: str | int, value: Any) -> None:
    """Set ``key`` (a key or an index ``_index`` checked) of ``container`` to ``value``."""
    if isinstance(container, ListConfig):
        container[int(key)] = value
    else:
        container[key] = value


def _raw(node: Node | None) -> Any:
    """A node's value as written (interpolations as their text), for comparing and quoting."""
    if isinstance(node, (DictConfig, ListConfig)) and not node._is_none() and not node._is_interpolation():
        return OmegaConf.to_container(node, resolve=False)
    return None if node is None else node._value()


def _close_key(container: DictConfig | ListConfig | None, last: str | int) -> str:
    """`` (did you mean 'x'?)`` when the mapping holds a key close to the one asked for."""
    if not isinstance(container, DictConfig) or not isinstance(last, str):
        return ""
    close = difflib.get_close_matches(last, [str(key) for key in container.keys()], n=1)
    return f" (did you mean {shown(close[0])}?)" if close else ""

