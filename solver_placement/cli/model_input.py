"""FILE and its dot-list overrides: ``solver-placement solve m.yaml cluster.num_nodes=4``, or ``-`` for stdin.

Overrides follow OmegaConf's ``from_dotlist`` merge, the form Hydra and RLinf users already type:
each ``KEY=VALUE`` is parsed as YAML (``4`` is a number, ``[8,8,0]`` a list), replaces the value
at the dotted KEY (a list replaces the whole list), and may add a key FILE does not have. The
merge happens before interpolations are resolved, so ``${...}`` references see the new values.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, cast

import click
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException
from yaml import YAMLError

from solver_placement.cli.options import Command
from solver_placement.config import load_config, load_yaml
from solver_placement.errors import PlacementConfigError

#: The FILE that means "read the model from standard input".
STDIN = "-"


@dataclass(frozen=True)
class Model:
    """One model as the user gave it: what to call it in messages, the overrides, the merged config."""

    name: str
    overrides: tuple[str, ...]
    config: dict[str, Any]


def model_arguments(command: Command) -> Command:
    """Add the FILE and [KEY=VALUE]... arguments every command that takes a model shares."""
    command = click.argument("overrides", nargs=-1, metavar="[KEY=VALUE]...")(command)
    return click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))(command)


def read_model(file: str, overrides: Sequence[str]) -> Model:
    """Load FILE (or stdin for ``-``), merge the overrides into it and resolve it to plain values."""
    name = "<stdin>" if file == STDIN else file
    loaded = _load(file, name)
    merged = OmegaConf.merge(loaded, *(_parsed(item, file) for item in overrides)) if overrides else loaded
    return Model(name, tuple(overrides), load_config(cast(DictConfig, merged)))  # merged into a DictConfig: a DictConfig


def _load(file: str, name: str) -> DictConfig:
    """FILE as an unresolved DictConfig; the messages match the library's for a path it loads itself."""
    source: IO[str] | Path
    if file == STDIN:
        source = sys.stdin
    else:
        source = Path(file)
        if not source.is_file():
            raise PlacementConfigError(f"config file {name!r} does not exist")
    return load_yaml(source, name)


def _parsed(item: str, file: str) -> DictConfig:
    """One ``KEY=VALUE`` override as a DictConfig, refused with the argument named if malformed."""
    key, equals, _ = item.partition("=")
    if not equals or not key.strip():
        looks_like_file = item.endswith((".yaml", ".yml")) or item == STDIN
        hint = f"; give one FILE (already {file!r})" if looks_like_file else "; write it as KEY=VALUE, e.g. cluster.num_nodes=4"
        raise PlacementConfigError(f"override {item!r} is not KEY=VALUE{hint}")
    try:
        return OmegaConf.from_dotlist([item])
    except (YAMLError, OmegaConfBaseException) as error:
        reason = " ".join(str(error).split())
        raise PlacementConfigError(f"override {item!r}: the value is not valid YAML ({reason})") from None
