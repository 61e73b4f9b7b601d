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
from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from solver_placement._config import existing_file, load_config
from solver_placement._errors import PlacementConfigError, cut, shown
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
    #: For a script, the index in ``arguments`` where each shell command line ends (after its
    #: ``\\`` continuations are joined), so a command's arguments stop where its line does.
    line_ends: tuple[int, ...] = ()

    def with_arguments(self, arguments: Sequence[str]) -> LaunchInput:
        """The input with ``arguments`` in place of its words: a command line (no longer a script
        file, so the framework's command need not be among them)."""
        return LaunchInput(tuple(arguments), self.config, self.origin, None, self.variables)


def launch_input(source: LaunchSource, read_yaml: bool = True) -> LaunchInput:
    """``source`` as a :class:`LaunchInput`: a list of words is a command line; a ``.yaml`` file
    or a mapping a config; any other file a launch script (its words, variables resolved).

    ``read_yaml=False`` hands a ``.yaml`` file over unread (``config`` None, ``path`` set), for a
    framework whose own loader differs from Hydra's composition (NeMo-RL's ``defaults:`` names
    parent files, which Hydra refuses)."""
    if isinstance(source, Mapping):
        return LaunchInput(config=load_config(source), origin="the config")
    if isinstance(source, (str, Path)):
        path = existing_file(source)
        if path.suffix in YAML_SUFFIXES and not read_yaml:
            return LaunchInput(origin=str(path), path=path)
        if path.suffix in YAML_SUFFIXES:
            return LaunchInput(config=load_config(path), origin=str(path), path=path)
        return _script(path)
    if isinstance(source, Sequence) and all(isinstance(word, str) for word in source):
        check("max_arguments", len(source), "the arguments", "the number of arguments")
        # a command line is text, bounded as a script file is (the kernel itself caps one at ARG_MAX, about 2 MB)
        check("max_file_bytes", sum(len(word) for word in source), "the arguments", "the characters of the arguments")
        return LaunchInput(arguments=tuple(source))
    raise PlacementConfigError(f"a framework's input is a list of arguments, a file or a mapping, not {shown(source)}")


def script_arguments(given: LaunchInput, markers: Sequence[str]) -> tuple[str, ...]:
    """The arguments after the first word that ends with one of ``markers`` (the framework's
    module or script, e.g. ``openrlhf.cli.train_ppo_ray``, ``train.py``), or all of them when
    none does (arguments given without the command in front). In a script the arguments end with
    the command's line: later commands are not its arguments."""
    for index, word in enumerate(given.arguments):
        if any(word == marker or word.endswith("/" + marker) for marker in markers):
            end = next((line_end for line_end in given.line_ends if line_end > index), len(given.arguments))
            return given.arguments[index + 1 : end]
    if given.path is not None:
        raise PlacementConfigError(f"{given.origin}: no command runs {' or '.join(markers)}; give the script that launches it, or its arguments")
    return given.arguments


#: ``$NAME`` and ``${NAME}`` in a script word (shell parameter expansion beyond these is not read).
_VARIABLE = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
#: How deep ``${A:-${B:-...}}`` defaults may nest in one word (scripts nest two or three).
MAX_DEFAULT_DEPTH = 16
#: The inside of ``${NAME:-default}``, ``${NAME-default}`` or the assigning ``${NAME:=default}``,
#: ``${NAME=default}``: the name, the colon, ``-`` or ``=``, the default.
_WITH_DEFAULT = re.compile(r"^([A-Za-z_]\w*)(:?)([-=])(.*)$", re.S)
#: ``NAME=value`` words that set a shell variable (``export NAME=value`` included).
_ASSIGNMENT = re.compile(r"^([A-Za-z_]\w*)=(.*)$", re.S)
#: ``NAME=(`` or ``NAME+=(`` opening a bash array (its words may run over several lines to ``)``).
_ARRAY_START = re.compile(r"^([A-Za-z_]\w*)(\+?)=\((.*)$", re.S)
#: A word that is a whole bash array, ``${NAME[@]}`` or ``${NAME[*]}`` (quoted or not: the shell
#: splitter has removed the quotes), replaced by the array's words.
_ARRAY_WORD = re.compile(r"^\$\{(\w+)\[[@*]\]\}$")


def _script(path: Path) -> LaunchInput:
    """A launch script's words: lines joined where they end in ``\\``, comments dropped, split
    as the shell splits them, with the variables its earlier assignments set replaced, and the
    bash arrays it sets (``ARGS=( ... )``, over several lines; slime's scripts keep their flags
    so) spliced in where a word is ``"${ARGS[@]}"``."""
    limit = current().max_file_bytes
    with path.open("rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise PlacementConfigError(f"{path}: longer than the limit max_file_bytes={limit} (input limits, see SECURITY.md)")
    text = data.decode("utf-8", errors="replace").replace("\\\n", " ")
    variables: dict[str, str] = {}
    arrays: dict[str, list[str]] = {}
    words: list[str] = []
    line_ends: list[int] = []
    filling: str | None = None
    written = 0  # characters of the expanded words so far: A=$A$A on every line doubles a value, 64 lines make 2^64
    for parts in _command_lines(text, path):
        expanded = [(word, _expand(word, variables)) for word in parts]
        written += sum(len(new) for _, new in expanded)
        check("max_file_bytes", written, str(path), "the characters of its words with the script's variables replaced")
        parts = _spliced([new for old, new in expanded if new or not old], arrays)  # a word the expansion empties goes, as unquoted in the shell
        opened = _ARRAY_START.match(parts[0]) if parts and filling is None else None
        if opened:
            filling = opened.group(1)
            if not opened.group(2):
                arrays[filling] = []
            parts = ([opened.group(3)] if opened.group(3) else []) + parts[1:]
        if filling is not None:
            filling = _fill(arrays.setdefault(filling, []), parts, filling)
            check("max_arguments", sum(map(len, arrays.values())), str(path), "the number of array words")
            continue
        if parts and parts[0] == "export":
            parts = parts[1:]
        assigned = [_ASSIGNMENT.match(word) for word in parts]
        if parts and all(assigned):
            variables.update((match.group(1), match.group(2)) for match in assigned if match)
            continue
        words.extend(parts)
        if parts:
            line_ends.append(len(words))
        check("max_arguments", len(words), str(path), "the number of words")
    return LaunchInput(arguments=tuple(words), origin=str(path), path=path, variables=variables, line_ends=tuple(line_ends))


def _command_lines(text: str, path: Path) -> list[list[str]]:
    """The script's lines split as the shell splits them, a quoted text that runs over several
    lines (a JSON runtime environment, say) kept as one word of its line. Where a quotation is
    open is tracked line by line, so a line is split once, whatever the script's size."""
    lines: list[list[str]] = []
    pending: list[str] = []
    quote: str | None = None
    for line in text.splitlines():
        pending.append(line)
        quote = _open_quote(line, quote)
        if quote is not None:
            continue
        joined = "\n".join(pending)
        try:
            lines.append(shlex.split(joined, comments=True))
        except ValueError as error:
            raise PlacementConfigError(f"{path}: a line the shell cannot split ({error}): {shown(joined)}") from None
        pending = []
    if pending:
        raise PlacementConfigError(f"{path}: a quotation that is never closed, from: {shown(pending[0])}")
    return lines


def _open_quote(line: str, quote: str | None) -> str | None:
    """The quotation still open after ``line`` (``'``, ``"`` or None), given the one open before
    it: single quotes take everything literally, a backslash escapes outside them, and ``#``
    starting a word outside quotes comments the rest of the line out."""
    escaped = False
    for index, char in enumerate(line):
        if escaped:
            escaped = False
        elif quote == "'":
            quote = None if char == "'" else quote
        elif char == "\\":
            escaped = True
        elif quote == '"':
            quote = None if char == '"' else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1].isspace()):
            break
    return quote


def _fill(array: list[str], parts: Sequence[str], name: str) -> str | None:
    """Add one line's words to the array being set; the name while it stays open, None once a
    word closes it with ``)``."""
    for word in parts:
        if word.endswith(")"):
            if word[:-1]:
                array.append(word[:-1])
            return None
        array.append(word)
    return name


def _spliced(parts: Sequence[str], arrays: Mapping[str, Sequence[str]]) -> list[str]:
    """``parts`` with each ``${NAME[@]}`` word of an array the script set replaced by its words
    (an array the script does not set, e.g. one from a sourced file, stays as written)."""
    spliced: list[str] = []
    for word in parts:
        whole = _ARRAY_WORD.match(word)
        spliced.extend(arrays[whole.group(1)] if whole and whole.group(1) in arrays else [word])
    return spliced


def _expand(word: str, variables: MutableMapping[str, str], depth: int = 0) -> str:
    """``word`` with the variables the script set replaced; others stay as written, so a reader
    that needs one names it. ``${NAME:-default}`` (and ``${NAME-default}``) take the default when
    the script does not set the variable, as the shell does when the environment does not either
    (launch scripts give their knobs so: ``--actor-num-nodes ${ACTOR_NUM_NODES:-4}``).
    ``${NAME:=default}`` also sets the variable, as the shell does (SkyRL's scripts give their
    knobs as ``: "${NUM_GPUS:=4}"``)."""
    resolved = _defaults(word, variables, depth)
    grown = sum(len(variables.get(match.group(1) or match.group(2), match.group(0))) - len(match.group(0)) for match in _VARIABLE.finditer(resolved))
    _check_length(len(resolved) + grown, word)
    return _VARIABLE.sub(lambda match: variables.get(match.group(1) or match.group(2), match.group(0)), resolved)


def _check_length(length: int, word: str) -> None:
    """Refuse a word whose variables would make it longer than a script may be, before it is
    built (``$A$A$A...`` of a long ``A`` on one line)."""
    check("max_file_bytes", length, f"the script word {shown(cut(word, 60))}", "the characters of the word with its variables replaced")


def _defaults(word: str, variables: MutableMapping[str, str], depth: int) -> str:
    """``word`` with each ``${NAME:-default}`` / ``${NAME-default}`` resolved, and each
    ``${NAME:=default}`` / ``${NAME=default}`` resolved and assigned (defaults may nest, up to
    :data:`MAX_DEFAULT_DEPTH` deep)."""
    if "${" not in word or ("-" not in word and "=" not in word):
        return word
    if depth > MAX_DEFAULT_DEPTH:
        raise PlacementConfigError(f"a script word nests ${{NAME:-default}} deeper than {MAX_DEFAULT_DEPTH}: {shown(word)}")
    closing = _closing_braces(word)
    out: list[str] = []
    built = 0
    index = 0
    while index < len(word):
        start = word.find("${", index)
        if start < 0:
            break
        end = closing.get(start + 1)
        match = _WITH_DEFAULT.match(word[start + 2 : end]) if end is not None else None
        if end is None or match is None:
            out.append(word[index : start + 2])
            index = start + 2
            continue
        name, colon, operator, default = match.groups()
        value = variables.get(name)
        unset = value is None or (colon and value == "")
        if unset:
            value = _expand(default, variables, depth + 1)
            if operator == "=":
                variables[name] = value
        out.append(word[index:start] + str(value))
        built += len(out[-1])
        _check_length(built, word)
        index = end + 1
    return "".join(out) + word[index:]


def _closing_braces(word: str) -> dict[int, int]:
    """Each ``{`` of ``word`` that is closed, mapped to the index of its ``}`` (one pass)."""
    opened: list[int] = []
    closing: dict[int, int] = {}
    for index, char in enumerate(word):
        if char == "{":
            opened.append(index)
        elif char == "}" and opened:
            closing[opened.pop()] = index
    return closing
