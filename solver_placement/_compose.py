"""Composing a config with a Hydra ``defaults:`` list by Hydra's own compose API, as RLinf's and verl's ``@hydra.main`` do.

RLinf's embodied and FSDP configs (and verl's trainer configs) are not whole files: their
``defaults:`` list pulls config groups (``env/maniskill@env.train``, ``model/openvla_oft@actor.model``)
from the folders beside them. Read alone, such a file lacks what those bring, so it is composed
the way the framework composes it: ``hydra.initialize_config_dir`` on its folder, then
``hydra.compose`` with its name and the overrides, which Hydra parses in its own grammar (group
overrides such as ``env/train=maniskill``, ``_self_`` ordering and packages all mean what they mean
to Hydra, because Hydra applies them). The result is an unresolved ``DictConfig`` that loads like
any other (``_config_copy.to_plain`` bounds it and resolves it value by value).

Hydra is an optional extra (``solver_placement[hydra]``): RLinf's environments pin their own Hydra
1.3, and a core install must not move it. Without Hydra a ``defaults:`` list is refused, saying how
to install it; YAML given as text or on stdin is refused too, since Hydra composes from a folder.

**Bounded before Hydra reads anything.** Hydra reads every file of the defaults tree itself, so
what it would read is measured first (``_compose_bounds``): the folders it searches hold at most
``max_config_files`` files and folders, each file the tree can reach is within the byte, nesting,
value and alias limits of any config, and the tree (every group counted at its largest option,
so any group override is covered) holds at most ``max_composed_configs`` configs. The primary config's ``hydra.searchpath`` is honoured for
``file://`` folders it names (measured the same way); an entry needing an environment variable
that is unset, or naming a Python package (``pkg://``, which would import code), is left out, and
a config Hydra then cannot find names that entry and its variable.
"""

from __future__ import annotations

import logging
import os
import re
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from omegaconf import DictConfig, ListConfig, Node, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from solver_placement._compose_bounds import check_folders, check_overrides, read_config
from solver_placement._errors import PlacementConfigError, counted, first_line, shown

log = logging.getLogger(__name__)

#: What to install for composing.
HYDRA_EXTRA = "pip install 'solver_placement[hydra]'"
#: The version base RLinf's entry scripts give ``@hydra.main`` (verl's is None: Hydra's current rules).
RLINF_VERSION_BASE = "1.1"
#: Defaults entries that set only Hydra's own settings (``override hydra/job_logging: stdout``).
_HYDRA_OWN = re.compile(r"(?:(?:override|optional)\s+)?hydra/[^@]*")
#: An environment variable read without a default (``${oc.env:EMBODIED_PATH}``), and OmegaConf's words for one that is unset.
ENV_VARIABLE = re.compile(r"\$\{\s*oc\.env\s*:\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}")
_UNSET_VARIABLE = re.compile(r"Environment variable '([A-Za-z_][A-Za-z0-9_]*)' not found")


def unset_variable(text: str, error: Exception) -> str | None:
    """The environment variable a config value ``text`` needs and the environment lacks (RLinf's
    run scripts export ``EMBODIED_PATH``): read from the value itself, else (a reference to a
    value that needs one) from OmegaConf's error."""
    unset = [name for name in ENV_VARIABLE.findall(text) if name not in os.environ]
    if unset:
        return unset[0]
    named = _UNSET_VARIABLE.search(str(error)[:1_000])
    return named.group(1) if named else None


def composed_entries(loaded: DictConfig) -> list[Any]:
    """The entries of ``loaded``'s ``defaults:`` list that compose other files into it: every entry
    but ``_self_`` and those changing only Hydra's own settings (``hydra/job_logging``)."""
    node = loaded._get_node("defaults")
    if not isinstance(node, Node):
        return []
    value = OmegaConf.to_container(node, resolve=False) if isinstance(node, (DictConfig, ListConfig)) else node._value()
    return [entry for entry in (value if isinstance(value, list) else [value]) if entry is not None and not _hydra_own(entry)]


def _hydra_own(entry: Any) -> bool:
    if isinstance(entry, dict) and len(entry) == 1:
        entry = next(iter(entry))
    return isinstance(entry, str) and (entry.strip() == "_self_" or _HYDRA_OWN.fullmatch(entry.strip()) is not None)


def uncomposed_error(name: str, entries: list[Any], why: str) -> PlacementConfigError:
    """The refusal of a file whose ``defaults:`` list cannot be composed here, ``why`` saying what to do."""
    more = f" and {len(entries) - 1} more" if len(entries) > 1 else ""
    return PlacementConfigError(
        f"config file {name!r} has a Hydra defaults: list, which composes other files into it ({shown(entries[0])}{more}); "
        f"read alone, what they bring would be missing: {why}"
    )


def hydra_available() -> bool:
    """Whether Hydra can be imported (the ``[hydra]`` extra)."""
    try:
        import hydra  # noqa: F401
    except ImportError:
        return False
    return True


#: The refusal's advice when Hydra is not installed.
WITHOUT_HYDRA = f"{HYDRA_EXTRA} to compose it as RLinf does, or give the composed config (a Hydra app prints it with --cfg job)"


def compose_file(path: Path, overrides: Sequence[str] = ()) -> DictConfig:
    """The config file ``path`` composed from its own folder (its stem the config name), as the
    ``@hydra.main`` of the app beside it would compose it with ``overrides``."""
    if path.suffix != ".yaml":
        raise PlacementConfigError(f"config file {shown(str(path))} has a Hydra defaults: list, and Hydra composes only .yaml files: rename it")
    return compose(path.parent, path.stem, overrides)


def compose(
    config_path: str | Path, config_name: str, overrides: Sequence[str] = (), *, version_base: str | None = RLINF_VERSION_BASE
) -> DictConfig:
    """The config ``config_name`` of folder ``config_path`` composed by Hydra's compose API with
    ``overrides`` in Hydra's grammar (``env/train=maniskill``, ``cluster.num_nodes=2``,
    ``+actor.seed=1``), as the app's ``@hydra.main(config_path=..., config_name=...)`` composes it:
    an unresolved ``DictConfig`` for ``load_job``, ``solve`` or any call that takes a config.

    ``version_base`` is the one the app gives ``@hydra.main``: RLinf's ``"1.1"`` by default, ``None``
    for verl's. Every folder Hydra will search is measured within the input limits first (the
    module docstring); Hydra's own state (an app already running, its version base) is restored after.
    """
    folder, name = _folder(config_path), _name(config_name)
    overrides = check_overrides(overrides)
    if not hydra_available():
        raise PlacementConfigError(f"composing config {name!r} of {shown(str(folder))} needs Hydra: {WITHOUT_HYDRA}")
    searched, skipped = _search_path(folder, name)
    check_folders(searched, folder, name, overrides)
    searchpath = "hydra.searchpath=[" + ",".join(f"'file://{_quoted(str(extra))}'" for extra in searched[1:]) + "]"
    try:
        with _hydra_state(folder, version_base):
            from hydra import compose as hydra_compose

            composed = hydra_compose(config_name=name, overrides=[searchpath, *overrides])
    except Exception as error:  # Hydra's and OmegaConf's errors have no common base below Exception
        if not _is_compose_error(error):
            raise
        note = _skipped_note(skipped) if type(error).__name__ == "MissingConfigException" else ""
        raise PlacementConfigError(f"composing config {name!r} of {shown(str(folder))} with Hydra: {first_line(error)}{note}") from None
    if not isinstance(composed, DictConfig):
        raise PlacementConfigError(f"composing config {name!r} of {shown(str(folder))} with Hydra gave no mapping")
    log.info("composed config %r of %s with Hydra (%s)", name, folder, counted(len(overrides), "override"))
    return composed


def _is_compose_error(error: Exception) -> bool:
    """Whether ``error`` is Hydra's or OmegaConf's word on the input (a missing config, a bad override)."""
    from hydra.errors import HydraException

    return isinstance(error, (HydraException, OmegaConfBaseException))


def _folder(config_path: Any) -> Path:
    if not isinstance(config_path, (str, Path)):
        raise PlacementConfigError(f"config_path must be a folder's path (str or Path), not {type(config_path).__name__}")
    try:
        folder = Path(config_path).resolve()
        usable = folder.is_dir()
    except (OSError, ValueError) as error:  # a name too long for the OS, a NUL byte in it
        raise PlacementConfigError(f"config_path {shown(str(config_path))} is not a usable path ({first_line(error)})") from None
    if not usable:
        raise PlacementConfigError(f"config_path {shown(str(config_path))} is not a folder")
    return folder


def _name(config_name: Any) -> str:
    """The config's name as Hydra takes it: relative to the folder, without ``.yaml``."""
    if not isinstance(config_name, str) or not config_name.strip() or "\0" in config_name or len(config_name) > 1_000:
        raise PlacementConfigError(f"config_name must be a config's name in the folder (maniskill_ppo_openvlaoft), not {shown(config_name)}")
    return config_name.removesuffix(".yaml")


def _quoted(text: str) -> str:
    """``text`` inside a single-quoted string of Hydra's override grammar."""
    return text.replace("\\", "\\\\").replace("'", "\\'")


def _search_path(folder: Path, name: str) -> tuple[list[Path], list[str]]:
    """The folders Hydra will search (``folder`` first, then the primary config's usable
    ``hydra.searchpath`` folders) and the entries left out, each with why (module docstring)."""
    file = folder / f"{name}.yaml"
    primary = read_config(file, str(file)) if file.is_file() else None
    node = primary._get_node("hydra") if primary is not None else None
    node = node._get_node("searchpath") if isinstance(node, DictConfig) else None
    raw = OmegaConf.to_container(node, resolve=False) if isinstance(node, ListConfig) else []
    searched, skipped = [folder], []
    for entry in raw if isinstance(raw, list) else []:
        text = str(entry)
        unset = [variable for variable in ENV_VARIABLE.findall(text) if variable not in os.environ]
        if unset:
            skipped.append(f"{text!r} (environment variable {unset[0]} is not set; {_how_to_set(unset[0], text, folder)})")
            continue
        resolved = ENV_VARIABLE.sub(lambda match: os.environ[match.group(1)], text)
        if not resolved.startswith("file://") or "${" in resolved:
            skipped.append(f"{text!r} (only file:// folders are searched, with no interpolation but ${{oc.env:NAME}})")
            continue
        extra = Path(resolved.removeprefix("file://"))
        extra = extra if extra.is_absolute() else Path.cwd() / extra
        if extra.is_dir() and extra.resolve() not in searched:
            searched.append(extra.resolve())
    return searched, skipped


def _how_to_set(variable: str, entry: str, folder: Path) -> str:
    """How to set ``variable`` so the searchpath ``entry`` names a folder. RLinf's run scripts
    export the repository's root (``REPO_PATH``, ``EMBODIED_PATH``) before Hydra reads
    ``file://${oc.env:REPO_PATH}/examples/sft/config/``, so when the entry starts with the variable
    the nearest folder at or above the config's where the rest of the entry exists is offered
    (checked to exist: a folder the user can paste)."""
    named = ENV_VARIABLE.search(entry)
    path = entry.removeprefix("file://")
    rest = path[len(named.group(0)) :].strip("/") if named is not None and path.startswith(named.group(0)) else ""
    if rest and "${" not in rest:
        for above in (folder, *folder.parents):
            if (above / rest).is_dir():
                return f"export {variable}={above} (its {rest}/ is there), as the example's run script does"
    return f"export {variable} as the example's run script does, so that the entry names a folder"


def _skipped_note(skipped: list[str]) -> str:
    return f"; hydra.searchpath entries left out: {', '.join(skipped)}" if skipped else ""


@contextmanager
def _hydra_state(folder: Path, version_base: str | None) -> Iterator[None]:
    """Hydra initialised on ``folder`` for one compose, its global state put back after (an app
    calling us from its own ``@hydra.main`` keeps its own); Hydra's warnings become log records."""
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from hydra.version import VersionBase

    running, base = GlobalHydra.instance().hydra, VersionBase.instance().version_base
    GlobalHydra.instance().clear()
    try:
        with warnings.catch_warnings(record=True) as caught, initialize_config_dir(config_dir=str(folder), version_base=version_base, job_name="solver_placement"):
            warnings.simplefilter("always")
            yield
        for warning in caught:
            log.info("Hydra: %s", warning.message)
    finally:
        GlobalHydra.instance().hydra = running
        VersionBase.instance().version_base = base
