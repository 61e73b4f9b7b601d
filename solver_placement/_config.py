"""Loading configs from YAML files, YAML text, OmegaConf objects or dicts into plain Python containers.

Everything downstream works on plain ``dict``/``list`` values, so OmegaConf's ``ListConfig``
(which RLinf mistakes for a string) never reaches the parsers. YAML is read by OmegaConf, which
uses PyYAML's safe loader: no object construction, nothing executed.

**One input contract.** A ``str`` or ``Path`` is always a file path, never YAML text: YAML text
is passed as :class:`YamlText`; a ``DictConfig`` or a mapping is taken as the config itself.
Nothing is told apart by looking at the content.

**Bounded work.** A config may come from someone else, so every step checks a named limit
(``limits``) before the work it bounds: bytes read, then nesting, values and characters of the
YAML (aliases counted as copies), then the work of its interpolations; copying a mapping
(``_config_copy.py``) checks nesting, counts the values copied (a list shared by reference
counted at every place, the Python form of an alias bomb) and refuses a mapping that contains
itself. Keys become exact ``str``/``int``/... values and scalars exact built-in types, so no
user object's ``__str__`` runs past the copy.

Interpolations are resolved value by value. A whole RLinf job config holds sections placement
never reads whose values cannot be resolved here (``reward.tokenizer`` pointing at
``${actor.tokenizer...}`` of a composed config, ``${not:...}`` resolvers that RLinf registers
only when it is imported); such a value becomes an ``Unresolved`` marker instead of failing
the whole load, and fails with its path and reason only if placement reads it. So does a value
whose interpolation is above the limits (see ``_limits/interpolations.py``).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import yaml
from omegaconf import DictConfig
from omegaconf.errors import OmegaConfBaseException
from yaml import MarkedYAMLError, YAMLError

from solver_placement._compose import WITHOUT_HYDRA, compose_file, composed_entries, hydra_available, uncomposed_error
from solver_placement._config_copy import key_text, plain_key, plain_scalar, to_plain
from solver_placement._errors import PlacementConfigError, agreeing, cut, first_line, shown
from solver_placement._limits.keys import distinct_as_text
from solver_placement._limits.yaml_scan import PARSERS, check_text, load_checked, read_bounded


@dataclass(frozen=True)
class YamlText:
    """YAML given as text rather than as a file: ``solve(YamlText("cluster: ..."))``.

    ``name`` is what messages call it.
    """

    text: str
    name: str = "<yaml text>"


ConfigSource = str | Path | YamlText | Mapping[str, Any] | DictConfig


def load_yaml(source: Path | IO[str] | YamlText, name: str) -> DictConfig:
    """A YAML file, stream or text as an unresolved DictConfig with a mapping at the top; ``name``
    says which file in messages (the CLI reads ``-`` from stdin through this too). A file with a
    Hydra ``defaults:`` list is composed from its folder (:func:`composed`)."""
    return composed(source, name, read_yaml(source, name), ())


def read_yaml(source: Path | IO[str] | YamlText, name: str) -> DictConfig:
    """The file, stream or text as written, its ``defaults:`` list not composed."""
    text = source.text if isinstance(source, YamlText) else read_bounded(source, name)
    if not isinstance(text, str):
        raise PlacementConfigError(f"YAML text {name!r} must be a str, not {type(text).__name__}")
    check_text(text, name)
    try:
        loaded = load_checked(text)
    except MarkedYAMLError as error:
        raise PlacementConfigError(f"config file {name!r} is not valid YAML: {_placed(error, text)}") from None
    except (YAMLError, OmegaConfBaseException, ValueError, TypeError, OSError) as error:
        # ValueError: an int past Python's 4,300-digit limit; TypeError: an unhashable key
        raise PlacementConfigError(f"config file {name!r} is not valid YAML: {first_line(error)}") from None
    if not isinstance(loaded, DictConfig):
        raise PlacementConfigError(f"config file {name!r} must hold a mapping at the top level")
    return loaded


def _placed(error: MarkedYAMLError, text: str) -> str:
    """The loader's problem with its place: ``found duplicate key num_nodes at line 3, column 3,
    while constructing a mapping at line 2, column 3 (key 'cluster.num_nodes')``. Lines and
    columns count from 1, as editors do (PyYAML's marks count from 0)."""
    parts = [
        f"{_bounded(words)} at line {mark.line + 1}, column {mark.column + 1}"
        for words, mark in ((error.problem, error.problem_mark), (error.context, error.context_mark))
        if words and mark is not None
    ]
    if not parts:
        return first_line(error)
    mark = error.problem_mark or error.context_mark
    key, exact = _key_at(text, (mark.line, mark.column)) if mark is not None else ("", False)
    where = f" ({'key' if exact else 'the last key read:'} {shown(key)})" if key else ""
    return ", ".join(parts) + where


def _key_at(text: str, target: tuple[int, int]) -> tuple[str, bool]:
    """The dotted key of the node at ``target`` (line, column; exact: True) or, when the document
    breaks before a node starts there, of the last key read (False). One pass over the parser's
    events up to ``target``, bounded as ``check_text``'s pass over the same text was."""
    frames: list[list[Any]] = []  # per open mapping or list: [is a mapping, its latest key or [index], nodes begun in it]
    try:
        for event in yaml.parse(text, Loader=PARSERS[0]):
            if isinstance(event, yaml.NodeEvent):
                if frames:
                    frame = frames[-1]
                    if not frame[0] or frame[2] % 2 == 0:  # a list item, or a mapping's key
                        frame[1] = f"[{frame[2]}]" if not frame[0] else cut(event.value, 40) if isinstance(event, yaml.ScalarEvent) else "<key>"
                    frame[2] += 1
                start = (event.start_mark.line, event.start_mark.column)
                if start >= target:
                    return _dotted(frames), start == target
                if isinstance(event, yaml.CollectionStartEvent):
                    frames.append([isinstance(event, yaml.MappingStartEvent), "", 0])
            elif isinstance(event, yaml.CollectionEndEvent):
                frames.pop()
    except YAMLError:  # the syntax error itself: the keys read so far end before it
        pass
    while frames and not frames[-1][0]:  # "the last key read", not the list item after it
        frames.pop()
    return _dotted(frames), False


def _dotted(frames: list[list[Any]]) -> str:
    return "".join(key if key.startswith("[") else f".{key}" for _, key, _ in frames if key).lstrip(".")


def _bounded(words: str) -> str:
    """A loader's words for a one-line message: whitespace collapsed, cut and escaped (they may quote the input)."""
    return repr(cut(" ".join(words.split()), 160))[1:-1]


def composed(source: Path | IO[str] | YamlText, name: str, loaded: DictConfig, overrides: Sequence[str]) -> DictConfig:
    """``loaded`` as it is, or, when its ``defaults:`` list composes other files, the file
    ``source`` composed from its folder by Hydra with ``overrides`` in Hydra's grammar
    (``_compose``). Text and streams have no folder, and without Hydra nothing composes: those
    are refused, since read alone the file lacks what its defaults bring."""
    entries = composed_entries(loaded)
    if not entries:
        return loaded
    if not isinstance(source, Path):
        folder = "Hydra composes a config from its folder: give the file's path (or --config-path DIR --config-name NAME)"
        raise uncomposed_error(name, entries, folder if hydra_available() else f"{folder}, after {WITHOUT_HYDRA}")
    if not hydra_available():
        raise uncomposed_error(name, entries, WITHOUT_HYDRA)
    return compose_file(source, overrides)


def load_config(source: ConfigSource) -> dict[str, Any]:
    """Return ``source`` (a YAML path, :class:`YamlText`, a ``DictConfig`` or a mapping) as a plain dict.

    YAML and a ``DictConfig`` have their interpolations resolved value by value (one that cannot be
    is an :class:`Unresolved`); a plain mapping is copied as given: its ``${...}`` strings are the
    caller's text, not OmegaConf's, so they stay strings."""
    if isinstance(source, YamlText):
        return to_plain(load_yaml(source, source.name), "")
    if isinstance(source, (str, Path)):
        return to_plain(load_yaml(existing_file(source), str(source)), "")
    if isinstance(source, (DictConfig, Mapping)):
        return to_plain(source, "")
    raise PlacementConfigError(
        f"a config must be a YAML path, YamlText, a DictConfig or a mapping, not {type(source).__name__}"
    )


def existing_file(source: str | Path) -> Path:
    """``source`` as the path of a regular file, or an error that says what it is instead."""
    hint = "; YAML text is passed as YamlText(text)" if isinstance(source, str) and ("\n" in source or ": " in source) else ""
    try:
        path = Path(source)
        if path.is_file():
            return path
        problem = "is not a regular file" if path.exists() else "does not exist"
    except (OSError, ValueError) as error:  # a name too long for the OS, a NUL byte in it
        problem = f"is not a usable path ({error.__class__.__name__}: {first_line(error)})"
    raise PlacementConfigError(f"config file {shown(str(source))} {problem}{hint}")


def require_mapping(value: Any, where: str) -> dict[str, Any]:
    """Return ``value`` as a dict with string keys, or raise naming ``where``."""
    if type(value) is dict and all(type(key) is str for key in value):
        return dict(value)  # what every loaded config holds (``to_plain``): its keys are already their text
    if not isinstance(value, Mapping):
        raise PlacementConfigError(f"{where} must be a mapping, not {type(value).__name__}")
    pairs = list(value.items())
    keys = distinct_as_text([plain_key(key, where) for key, _ in pairs], where)  # two keys naming one thing: refused, not merged
    return {key_text(key, where): item for key, (_, item) in zip(keys, pairs)}


def check_keys(
    mapping: Mapping[str, Any],
    allowed: Iterable[str],
    where: str,
    required: Iterable[str] = (),
) -> None:
    """Reject unknown keys (suggesting the closest known one) and report missing required keys."""
    allowed = list(allowed)
    for key in mapping:
        if key not in allowed:
            raise PlacementConfigError(f"{where}: unknown key {shown(key)}{did_you_mean(key, allowed, 'keys')}")
    missing = [key for key in required if key not in mapping]
    if missing:
        raise PlacementConfigError(f"{where}: missing required {agreeing(len(missing), 'key')} {', '.join(map(repr, missing))}")


#: Longest name a close match is looked for (longer ones are not typos) and most names listed.
_MATCHED_NAME_CHARS, _LISTED_NAMES = 100, 20


def did_you_mean(name: Any, known: Iterable[str], noun: str) -> str:
    """The hint after "unknown X": ``; did you mean 'actor'?``, else ``; known <noun>: a, b, c``.

    The one close-match hint of the library, for keys, component names and node groups alike.
    """
    known = [str(item) for item in known]
    close = difflib.get_close_matches(name, known, n=1) if isinstance(name, str) and len(name) <= _MATCHED_NAME_CHARS else []
    if close:
        return f"; did you mean {close[0]!r}?"
    listed = ", ".join(known[:_LISTED_NAMES]) + (f", ... ({len(known)} in all)" if len(known) > _LISTED_NAMES else "")
    return f"; known {noun}: {listed or 'none'}"


#: Largest count accepted for any integer setting (nodes, GPUs, processes, sizes).
MAX_COUNT = 10_000_000


def positive_int(value: Any, where: str, *, allow_zero: bool = False, maximum: int = MAX_COUNT) -> int:
    """Validate a (non-negative or positive) int that is not a bool, up to ``maximum``.

    The bound keeps absurd values (``num_nodes: 10**30``) from reaching numpy or CP-SAT.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise PlacementConfigError(f"{where} must be an integer, not {shown(value)}")
    if value < 0 or (value == 0 and not allow_zero):
        bound = "non-negative" if allow_zero else "positive"
        raise PlacementConfigError(f"{where} must be {bound}, got {shown(value)}")
    if value > maximum:
        raise PlacementConfigError(f"{where} is {shown(value)}, above the supported limit of {maximum}")
    return value


def text(value: Any, where: str) -> str:
    """A name given as a string (or an int, as YAML reads ``4090``), never None/bool/containers."""
    if isinstance(value, bool) or not isinstance(value, (str, int)) or (isinstance(value, int) and value.bit_length() > 1_000):
        raise PlacementConfigError(f"{where} must be a string, not {shown(value)}")
    return str(plain_scalar(value))


#: Largest memory size accepted anywhere, in GB.
MAX_GIGABYTES = 1_000_000


def gigabytes(value: Any, where: str, *, allow_zero: bool) -> float:
    """A memory size in GB: a number up to ``MAX_GIGABYTES``; zero only where ``allow_zero``
    (a part of a process's memory may be empty, a GPU's memory may not)."""
    number = not isinstance(value, bool) and isinstance(value, (int, float)) and not (isinstance(value, float) and math.isnan(value))
    if not number or (value < 0 if allow_zero else value <= 0) or value > MAX_GIGABYTES:
        bound = "non-negative" if allow_zero else "positive"
        raise PlacementConfigError(f"{where} must be a {bound} number of GB, not {shown(value)}")
    return float(value)
