"""Loading configs from YAML files, OmegaConf objects or dicts into plain Python containers.

Everything downstream works on plain ``dict``/``list`` values, so OmegaConf's ``ListConfig``
(which RLinf mistakes for a string) never reaches the parsers. YAML is read by OmegaConf, which
uses PyYAML's safe loader: no object construction, nothing executed.

Interpolations are resolved value by value. A whole RLinf job config holds sections placement
never reads whose values cannot be resolved here (``reward.tokenizer`` pointing at
``${actor.tokenizer...}`` of a composed config, ``${not:...}`` resolvers that RLinf registers
only when it is imported); such a value becomes an :class:`Unresolved` marker instead of failing
the whole load, and fails with its path and reason only if placement reads it.
"""

from __future__ import annotations

import copy
import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from omegaconf import DictConfig, ListConfig, Node, OmegaConf
from omegaconf.errors import OmegaConfBaseException
from yaml import YAMLError

from solver_placement.errors import PlacementConfigError

ConfigSource = str | Path | Mapping[str, Any] | DictConfig


def load_yaml(source: Path | IO[str], name: str) -> DictConfig:
    """A YAML file or stream as an unresolved DictConfig with a mapping at the top; ``name`` says
    which file in messages (the CLI reads ``-`` from stdin through this too)."""
    try:
        loaded = OmegaConf.load(source)
    except (YAMLError, OmegaConfBaseException, UnicodeDecodeError) as error:
        raise PlacementConfigError(f"config file {name!r} is not valid YAML: {error}") from None
    if not isinstance(loaded, DictConfig):
        raise PlacementConfigError(f"config file {name!r} must hold a mapping at the top level")
    return loaded


def load_config(source: ConfigSource) -> dict[str, Any]:
    """Return ``source`` (a YAML path, a ``DictConfig`` or a mapping) as a plain, resolved dict."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise PlacementConfigError(f"config file {str(path)!r} does not exist")
        return to_plain(load_yaml(path, str(path)), "")
    if isinstance(source, (DictConfig, Mapping)):
        return to_plain(source, "")
    raise PlacementConfigError(
        f"a config must be a YAML path, a DictConfig or a mapping, not {type(source).__name__}"
    )


@dataclass(frozen=True)
class Unresolved:
    """A config value whose interpolation could not be resolved (or a ``???`` placeholder).

    Harmless where nothing reads it. Where placement reads it, every validator reports it by its
    ``repr`` (path, text and reason), and asking for its truth value raises, because a flag such
    as ``auto_scheduler: ${oops}`` has no answer.
    """

    path: str
    text: str
    reason: str

    def __repr__(self) -> str:
        return f"<unresolved {self.path}: {self.text!r} ({self.reason})>"

    def __bool__(self) -> bool:
        raise PlacementConfigError(f"{self.path}: cannot resolve {self.text!r}: {self.reason}")


def to_plain(value: Any, where: str = "") -> Any:
    """Convert OmegaConf containers to plain dicts/lists and copy mappings, resolving each value
    on its own (an unresolvable one becomes :class:`Unresolved`, see the module docstring).

    ``where`` is the dotted path of ``value`` in the whole config ("" for the config itself).
    """
    if isinstance(value, DictConfig):
        return {key: _resolved(value, key, _path(where, key)) for key in value.keys()}
    if isinstance(value, ListConfig):
        return [_resolved(value, index, f"{where}[{index}]") for index in range(len(value))]
    if isinstance(value, Mapping):
        return {key: to_plain(item, _path(where, key)) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_plain(item, f"{where}[{index}]") for index, item in enumerate(value)]
    return copy.copy(value)


def _resolved(container: DictConfig | ListConfig, key: Any, path: str) -> Any:
    """One entry of an OmegaConf container, resolved, or :class:`Unresolved` when it cannot be."""
    try:
        value = container[key]
    except OmegaConfBaseException as error:
        node = container._get_node(key)
        text = str(node._value()) if isinstance(node, Node) else "???"
        return Unresolved(path, text, str(error).splitlines()[0])
    return to_plain(value, path)


def _path(where: str, key: Any) -> str:
    return f"{where}.{key}" if where else str(key)


def require_mapping(value: Any, where: str) -> dict[str, Any]:
    """Return ``value`` as a dict with string keys, or raise naming ``where``."""
    if not isinstance(value, Mapping):
        raise PlacementConfigError(f"{where} must be a mapping, not {type(value).__name__}")
    return {str(key): item for key, item in value.items()}



def check_keys(
    mapping: Mapping[str, Any],
    allowed: Iterable[str],
    where: str,
    required: Iterable[str] = (),
) -> None:
    """Reject unknown keys (suggesting the closest known one) and report missing required keys."""
    allowed = list(allowed)
    for key in mapping:
        if key in allowed:
            continue
        close = difflib.get_close_matches(key, allowed, n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; known keys: {', '.join(allowed)}"
        raise PlacementConfigError(f"{where}: unknown key {key!r}{hint}")
    missing = [key for key in required if key not in mapping]
    if missing:
        raise PlacementConfigError(f"{where}: missing required key(s) {', '.join(map(repr, missing))}")


#: Largest count accepted for any integer setting (nodes, GPUs, processes, sizes).
MAX_COUNT = 10_000_000


def positive_int(value: Any, where: str, *, allow_zero: bool = False, maximum: int = MAX_COUNT) -> int:
    """Validate a (non-negative or positive) int that is not a bool, up to ``maximum``.

    The bound keeps absurd values (``num_nodes: 10**30``) from reaching numpy or CP-SAT.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise PlacementConfigError(f"{where} must be an integer, not {value!r}")
    if value < 0 or (value == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise PlacementConfigError(f"{where} must be {bound}, got {value}")
    if value > maximum:
        raise PlacementConfigError(f"{where} is {value}, above the supported limit of {maximum}")
    return value


def text(value: Any, where: str) -> str:
    """A name given as a string (or an int, as YAML reads ``4090``), never None/bool/containers."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise PlacementConfigError(f"{where} must be a string, not {value!r}")
    return str(value)


#: Largest memory size accepted anywhere, in GB.
MAX_GIGABYTES = 1_000_000


def gigabytes(value: Any, where: str, *, allow_zero: bool) -> float:
    """A memory size in GB: a number up to ``MAX_GIGABYTES``; zero only where ``allow_zero``
    (a part of a process's memory may be empty, a GPU's memory may not)."""
    number = not isinstance(value, bool) and isinstance(value, (int, float))
    if not number or (value < 0 if allow_zero else value <= 0) or value > MAX_GIGABYTES:
        bound = "non-negative" if allow_zero else "positive"
        raise PlacementConfigError(f"{where} must be a {bound} number of GB, not {value!r}")
    return float(value)
