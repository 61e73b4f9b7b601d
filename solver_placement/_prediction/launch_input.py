"""What a user hands a framework's front end, before the framework reads it.

Frameworks take their placement from different places: OpenRLHF and slime from the command line
after their module or script (``python -m openrlhf.cli.train_ppo_ray --actor.num_nodes 2 ...``),
which users keep in shell scripts; ROLL from a YAML config. :func:`launch_input` turns what the
caller gave (a list of arguments, a file, a mapping) into one bounded value; each front end then
reads the part it understands (:func:`script_arguments` finds its command in a script).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from solver_placement._config import existing_file, load_config
from solver_placement._errors import PlacementConfigError, shown
from solver_placement._limits import check, current

#: What :func:`launch_input` accepts: argument words, a path to a script or YAML file, or a mapping.
LaunchSource = Sequence[str] | str | Path | Mapping[str, Any]

#: File suffixes read as a YAML config rather than as a launch script.
YAML_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class LaunchInput:
    """One user input to a framework front end: ``arguments`` (the command line, or the words of
    a script, not yet cut at the framework's command), or ``config`` (a plain YAML mapping);
    ``origin`` says where it came from, for messages; ``path`` is the file it was read from."""

    arguments: tuple[str, ...] = ()
    config: Mapping[str, Any] | None = None
    origin: str = "the arguments"
    path: Path | None = None
    #: A script's ``NAME=value`` assignments before the command, which its ``$NAME`` words use.
    variables: Mapping[str, str] = field(default_factory=dict)

    def with_arguments(self, arguments: Sequence[str]) -> LaunchInput:
        return LaunchInput(tuple(arguments), self.config, self.origin, self.path, self.variables)


def launch_input(source: LaunchSource) -> LaunchInput:
    """``source`` as a :class:`LaunchInput`: a list of words is a command line; a ``.yaml`` file
    or a mapping a config; any other file a launch script (its words, variables resolved)."""
    if isinstance(source, Mapping):
        return LaunchInput(config=load_config(source), origin="the config")
    if isinstance(source, (str, Path)):
        path = existing_file(source)
        if path.suffix in YAML_SUFFIXES:
            return LaunchInput(config=load_config(path), origin=str(path), path=path)
        return _script(path)
    if isinstance(source, Sequence) and all(isinstance(word, str) for word in source):
        check("max_arguments", len(source), "the arguments", "the number of arguments")
        return LaunchInput(arguments=tuple(source))
    raise PlacementConfigError(f"a framework's input is a list of arguments, a file or a mapping, not {shown(source)}")


def script_arguments(given: LaunchInput, markers: Sequence[str]) -> tuple[str, ...]:
    """The arguments after the first word that ends with one of ``markers`` (the framework's
    module or script, e.g. ``openrlhf.cli.train_ppo_ray``, ``train.py``), or all of them when
    none does (arguments given without the command in front)."""
    for index, word in enumerate(given.arguments):
        if any(word == marker or word.endswith("/" + marker) for marker in markers):
            return given.arguments[index + 1 :]
    if given.path is not None:
        raise PlacementConfigError(f"{given.origin}: no command runs {' or '.join(markers)}; give the script that launches it, or its arguments")
    return given.arguments


#: ``$NAME`` and ``${NAME}`` in a script word (shell parameter expansion beyond these is not read).
_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
#: ``NAME=value`` words that set a shell variable (``export NAME=value`` included).
_ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*)=(.*)$", re.S)
#: The first word of a bash array assignment, ``ARGS=(`` (with its first element when it is joined).
_ARRAY_START = re.compile(r"^([A-Za-z_]\w*)=\((.*)$", re.S)
#: A word that is all of a bash array, ``${ARGS[@]}`` (the shell's quotes already removed).
_ARRAY_USE = re.compile(r"^\$\{(\w+)\[[@*]\]\}$")


def _script(path: Path) -> LaunchInput:
    """A launch script's words: lines joined where they end in ``\\``, comments dropped, split
    as the shell splits them, with the variables its earlier assignments set replaced, and bash
    arrays (``ARGS=( ... )`` over one or more lines) spliced in where ``"${ARGS[@]}"`` uses them."""
    limit = current().max_file_bytes
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise PlacementConfigError(f"{path}: longer than the limit max_file_bytes={limit} (input limits, see SECURITY.md)")
    text = data.decode("utf-8", errors="replace").replace("\\\n", " ")
    variables: dict[str, str] = {}
    arrays: dict[str, list[str]] = {}
    filling: str | None = None  # the array whose elements the lines are giving
    words: list[str] = []
    for line in text.splitlines():
        try:
            parts = shlex.split(line, comments=True)
        except ValueError as error:
            raise PlacementConfigError(f"{path}: a line the shell cannot split ({error}): {shown(line)}") from None
        parts = [_expand(word, variables) for word in parts]
        if filling is None and parts and (opened := _ARRAY_START.match(parts[0])):
            filling = opened.group(1)
            arrays[filling] = []
            parts = [opened.group(2), *parts[1:]] if opened.group(2) else parts[1:]
        if filling is not None:
            closed = bool(parts) and parts[-1].endswith(")")
            elements = [*parts[:-1], parts[-1][:-1]] if closed else parts
            arrays[filling].extend(element for element in elements if element)
            check("max_arguments", sum(map(len, arrays.values())), str(path), "the number of words")
            filling = None if closed else filling
            continue
        parts = _spliced(parts, arrays, len(words), str(path))
        if parts and parts[0] == "export":
            parts = parts[1:]
        assigned = [_ASSIGNMENT.match(word) for word in parts]
        if parts and all(assigned):
            variables.update((match.group(1), match.group(2)) for match in assigned if match)
            continue
        words.extend(parts)
        check("max_arguments", len(words), str(path), "the number of words")
    return LaunchInput(arguments=tuple(words), origin=str(path), path=path, variables=variables)


def _spliced(parts: list[str], arrays: Mapping[str, list[str]], before: int, where: str) -> list[str]:
    """``parts`` with each ``${NAME[@]}`` of a known array replaced by its elements (others stay as
    written, so a reader that needs one names it), checked against the word limit as it grows."""
    spliced: list[str] = []
    for word in parts:
        use = _ARRAY_USE.match(word)
        elements = arrays.get(use.group(1), [word]) if use else [word]
        check("max_arguments", before + len(spliced) + len(elements), where, "the number of words")
        spliced.extend(elements)
    return spliced


def _expand(word: str, variables: Mapping[str, str]) -> str:
    """``word`` with the variables the script set replaced; others stay as written, so a reader
    that needs one names it."""
    return _VARIABLE.sub(lambda match: variables.get(match.group(1) or match.group(2), match.group(0)), word)
