"""FILE and its dot-list overrides: ``solver-placement solve m.yaml cluster.num_nodes=4``, or ``-`` for stdin;
with ``--ray``/``--local``, its cluster from the live Ray cluster (``live_model``).

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

from solver_placement.cli.live_model import on_live_cluster
from solver_placement.cli.options import Command, ray_choice
from solver_placement.config import existing_file, load_config, load_yaml
from solver_placement.errors import PlacementConfigError

#: The FILE that means "read the model from standard input".
STDIN = "-"


@dataclass(frozen=True)
class Model:
    """One model as the user gave it: what to call it in messages, the overrides, the merged config,
    and whether its cluster was read from or checked against a live Ray (``--ray``/``--local``;
    this process is then connected to that Ray until the command ends)."""

    name: str
    overrides: tuple[str, ...]
    config: dict[str, Any]
    on_ray: bool = False


def model_arguments(command: Command) -> Command:
    """Add the FILE and [KEY=VALUE]... arguments every command that takes a model shares."""
    command = click.argument("overrides", nargs=-1, metavar="[KEY=VALUE]...")(command)
    return click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))(command)


def read_model(file: str, overrides: Sequence[str]) -> Model:
    """Load FILE (or stdin for ``-``), merge the overrides into it and resolve it to plain values;
    with the command's ``--ray``/``--local``, its cluster comes from (or is checked against) that Ray."""
    name = "<stdin>" if file == STDIN else file
    loaded = _load(file, name)
    merged = OmegaConf.merge(loaded, *(_parsed(item, file) for item in overrides)) if overrides else loaded
    config = load_config(cast(DictConfig, merged))  # merged into a DictConfig: a DictConfig
    choice = ray_choice(click.get_current_context(silent=True))
    if choice is None:
        return Model(name, tuple(overrides), config)
    return Model(name, tuple(overrides), on_live_cluster(config, choice, name), on_ray=True)


def _load(file: str, name: str) -> DictConfig:
    """FILE as an unresolved DictConfig; the messages match the library's for a path it loads itself."""
    source: IO[str] | Path
    if file == STDIN:
        source = sys.stdin
    else:
        source = existing_file(file)
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
