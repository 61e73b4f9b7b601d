"""The input limits of a Hydra compose, checked before Hydra reads a file (``_compose`` composes).

Hydra reads the files of a defaults tree itself, with nothing bounding them, so what it could
read is measured first: the folders it searches are listed (``max_config_files`` files and
folders), every file the defaults tree can reach (with the overrides' groups) is read within the
limits any config file meets, the overrides' text is bounded, and so is the size of the tree. A
config may name the same group twice under two packages, and each option again, so a few small
files can form a tree of millions of configs; the bound counts every group entry at its largest
option (whatever overrides choose) and refuses a tree above ``max_composed_configs`` before
Hydra builds it, and a cycle, which Hydra would refuse only after recursing through it."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig, Node, OmegaConf

from solver_placement._errors import PlacementConfigError, shown
from solver_placement._limits import check, current, exceeded
from solver_placement._limits.yaml_scan import check_text, load_checked, read_bounded


def read_config(path: Path, name: str) -> DictConfig:
    """One config file of a Hydra folder, unresolved, within the limits any config file meets."""
    text = read_bounded(path, name)
    check_text(text, name)
    try:
        loaded = load_checked(text)
    except Exception as error:  # the loader's many error types; Hydra would refuse the file the same way
        raise PlacementConfigError(f"config file {shown(str(path))} is not valid YAML: {type(error).__name__}") from None
    if not isinstance(loaded, DictConfig):
        raise PlacementConfigError(f"config file {shown(str(path))} must hold a mapping at the top level")
    return loaded


def check_overrides(overrides: Sequence[str]) -> tuple[str, ...]:
    """The overrides, each a ``str``, their text within ``max_file_bytes`` and their brackets within ``max_depth``."""
    if isinstance(overrides, str) or not isinstance(overrides, Sequence):
        raise PlacementConfigError(f"overrides must be a list of strings (['env/train=maniskill']), not {type(overrides).__name__}")
    if not all(isinstance(item, str) for item in overrides):
        raise PlacementConfigError("overrides must be strings such as 'cluster.num_nodes=2'")
    check("max_file_bytes", sum(len(item) for item in overrides), "overrides", "the characters of the overrides")
    for item in overrides:
        depth = deepest = 0
        for char in item:
            depth += (char in "[{(") - (char in "]})")
            deepest = max(deepest, depth)
        check("max_depth", deepest, f"override {shown(item)}", "its nesting")
    return tuple(overrides)


@dataclass
class _Folders:
    """The searched folders: every config path there (``env/maniskill``) and its file, and the
    defaults entries of each config read so far (only those the tree can reach are read)."""

    roots: list[Path]
    files: dict[str, Path] = field(default_factory=dict)
    defaults: dict[str, list[Any]] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    open: list[str] = field(default_factory=list)

    def entries(self, config: str) -> list[Any]:
        """The defaults entries of ``config``, its file read within the limits the first time."""
        if config not in self.defaults:
            file = self.files[config]
            self.defaults[config] = _defaults_of(read_config(file, str(file)))
        return self.defaults[config]


def check_folders(folders: list[Path], primary_folder: Path, name: str, overrides: Sequence[str] = ()) -> None:
    """Measure the YAML files under ``folders`` that the defaults tree of config ``name`` (with
    ``overrides``' groups) can reach, and that tree, refusing above a limit. Listing the folders is
    bounded by ``max_config_files``; a file is read only when the tree can reach it, as Hydra reads it."""
    found = _Folders(folders)
    seen = 0
    for folder in folders:
        for root, dirs, files in os.walk(folder, followlinks=True):
            dirs.sort()
            seen += len(dirs) + len(files)
            check("max_config_files", seen, shown(str(folder)), "the number of files and folders Hydra would search")
            for file in sorted(files):
                if file.endswith(".yaml"):
                    path = Path(root) / file
                    found.files.setdefault(path.relative_to(folder).with_suffix("").as_posix(), path)
    tree = _size(found, name) if name in found.files else 1
    for item in overrides:
        key, equals, value = item.lstrip("+~").partition("=")
        if equals and "." not in key.split("@")[0] and "/" + key.split("@")[0].strip() != "/hydra":
            tree += _entry_size(found, {key: value}, "")
    check("max_composed_configs", tree, f"config {name!r} of {shown(str(primary_folder))}", "the size its defaults tree may reach")


def _defaults_of(config: DictConfig) -> list[Any]:
    node = config._get_node("defaults")
    if not isinstance(node, Node):
        return []
    value = OmegaConf.to_container(node, resolve=False) if isinstance(node, (DictConfig, ListConfig)) else node._value()
    return value if isinstance(value, list) else [value]


def _size(found: _Folders, config: str) -> int:
    """The most configs the defaults tree of ``config`` may hold (itself included; module docstring)."""
    if config in found.sizes:
        return found.sizes[config]
    if config in found.open:
        cycle = " -> ".join([*found.open[found.open.index(config):], config])
        raise PlacementConfigError(f"Hydra defaults lists include each other ({shown(cycle)}): no config can be composed from them")
    found.open.append(config)
    group = config.rpartition("/")[0]
    total = 1
    for entry in found.entries(config):
        total += _entry_size(found, entry, group)
        if total > current().max_composed_configs:
            raise exceeded("max_composed_configs", f"more than {current().max_composed_configs}", f"config {config!r}", "the size its defaults tree may reach")
    found.open.pop()
    found.sizes[config] = total
    return total


def _entry_size(found: _Folders, entry: Any, group: str) -> int:
    """The most configs one defaults entry may bring: a config path's tree, or a group's largest option's, once per option named."""
    if isinstance(entry, str):
        path = _within(entry.split("@")[0].strip(), group)
        if path.startswith("../"):
            _read_outside(found, path)
        return 0 if path in ("_self_", "") or path.startswith("hydra/") else _size(found, path) if path in found.files else 1
    if not isinstance(entry, dict) or len(entry) != 1:
        return 1
    key, value = next(iter(entry.items()))
    words = str(key).split()
    path = _within(words[-1].split("@")[0] if words else "", group)
    if path == "hydra" or path.startswith("hydra/") or value is None:
        return 0
    options = [config for config in found.files if config.startswith(f"{path}/")]
    largest = max((_size(found, option) for option in options), default=1)
    return largest * (len(value) if isinstance(value, list) else 1)


def _within(path: str, group: str) -> str:
    """A defaults entry's path as a config path: absolute (``/env/x``) from the top, else within
    the containing config's group; ``..`` steps up a group, and above the top out of the folder
    (RLinf's reasoning configs name ``../hybrid_engines/fsdp``), as Hydra reads them."""
    if path.startswith("/"):
        return posixpath.normpath(path.lstrip("/"))
    return posixpath.normpath(f"{group}/{path}" if group else path)


def _read_outside(found: _Folders, path: str) -> None:
    """Admit a config a ``..`` entry names above the searched folders, which Hydra reads too."""
    if path in found.files:
        return
    for root in found.roots:
        file = root / f"{path}.yaml"
        if file.is_file():
            check("max_config_files", len(found.files) + 1, shown(path), "the number of configs in and above the searched folders")
            found.files[path] = file
            return
