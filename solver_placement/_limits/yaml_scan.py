"""Reading YAML within the limits: bounded bytes, then one flat pass over the parser's events.

PyYAML builds documents recursively (a flow list nested 100,000 deep crashed the interpreter)
and expands aliases into copies (ten aliases of ten aliases ... is a "billion laughs"). The
parser underneath is a flat state machine, so one pass over its events measures the document
without building it: nesting depth, values and scalar characters, each alias counted as a full
copy of the node it names, and integers too long for Python to convert. Only a document within
``max_depth``, ``max_values`` and ``max_text_chars`` is then handed to the loader, whose
recursion is then shallow.

The pass runs on libyaml's parser when PyYAML has it (same events, faster). libyaml has nesting
limits of its own that change between PyYAML builds (6.0.4's stops flow nesting at 1,000 levels
before emitting a single event), so a document libyaml refuses is measured again with PyYAML's
pure-Python parser, which has none: a limit of ours is always reported as ours, naming it,
whatever PyYAML version is installed, and only a document within every limit gets the
loader's syntax error.

The loader is OmegaConf's (:func:`load_checked`). Since 2.4.0's release candidates it bounds
aliases too: 10,000 expanded nodes by default, and never more than 100 times the nodes written.
Earlier versions (2.2, 2.3, and the 2.4 development releases RLinf pins) have no such bounds.
This pass is the bound on every version, so OmegaConf's own are turned off where it has them: a
document reads the same under each, and a refusal names our limit, not an OmegaConf setting.
"""

from __future__ import annotations

import codecs
import inspect
import io
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import yaml
from omegaconf import DictConfig, ListConfig, OmegaConf

from solver_placement._errors import PlacementConfigError, cut, shown
from solver_placement._limits import current, exceeded
from solver_placement._limits.interpolations import nesting_depth

#: The parsers whose events are measured, fastest first: libyaml's when installed, then PyYAML's
#: pure-Python one, which has no nesting limit of its own (see the module docstring).
PARSERS: tuple[type[yaml.SafeLoader], ...] = (*((yaml.CSafeLoader,) if hasattr(yaml, "CSafeLoader") else ()), yaml.SafeLoader)
#: A decimal integer as YAML 1.1 writes one in a plain scalar (underscores allowed).
_DECIMAL_INT = re.compile(r"[-+]?[0-9][0-9_]*")
#: Whether ``OmegaConf.load`` has bounds of its own on aliases (see the module docstring).
_LOAD_IS_BOUNDED = "max_yaml_expanded_nodes" in inspect.signature(OmegaConf.load).parameters


def read_bounded(source: Path | IO[str] | IO[bytes], name: str) -> str:
    """The text of a file or stream, refused past ``max_file_bytes`` without reading the rest."""
    limit = current().max_file_bytes
    try:
        if isinstance(source, Path):
            with source.open("rb") as stream:
                data: str | bytes = stream.read(limit + 1)
        else:
            data = source.read(limit + 1)
    except UnicodeDecodeError as error:
        raise PlacementConfigError(f"config file {name!r} is not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise PlacementConfigError(f"config file {name!r} cannot be read: {error.strerror or error}") from None
    if len(data) > limit:
        raise exceeded("max_file_bytes", f"more than {limit} bytes", f"config file {name!r}", "its size")
    return data if isinstance(data, str) else _decoded(data, name)


def _decoded(data: bytes, name: str) -> str:
    """UTF-8 (or UTF-16 with its byte-order mark, as YAML allows) text of a file's bytes."""
    encoding = "utf-16" if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else "utf-8-sig"
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as error:
        raise PlacementConfigError(f"config file {name!r} is not {encoding.upper()} text ({error.reason} at byte {error.start})") from None


def check_text(text: str, name: str) -> None:
    """Refuse YAML text past the size, depth, value and character limits, before it is loaded.

    Also refuses a document whose top level is not a mapping and an integer too long for Python
    to convert. Syntax errors are left to the loader, which words them better.
    """
    where = f"config file {name!r}"
    check_text_size(len(text), current().max_file_bytes, where)
    for parser in PARSERS:
        try:
            _measure(yaml.parse(text, Loader=parser), where)
            return
        except yaml.YAMLError:
            continue  # the next parser measures again; past the last, the loader reports the error
        except UnicodeError as error:  # a lone surrogate in a str cannot be YAML
            raise PlacementConfigError(f"{where} is not valid text: {shown(str(error))}") from None


def load_checked(text: str) -> DictConfig | ListConfig:
    """YAML text that :func:`check_text` passed, loaded by OmegaConf with its own alias bounds off
    (see the module docstring). Errors are the loader's, for the caller to word."""
    unbounded = {"max_yaml_expanded_nodes": None} if _LOAD_IS_BOUNDED else {}
    return OmegaConf.load(io.StringIO(text), **unbounded)


@dataclass
class _Open:
    """A mapping or list whose end event has not come yet."""

    anchor: str | None
    values_before: int  # values counted before it began (its own size is the difference at its end)
    chars_before: int
    mapping: bool
    key: str = ""  # the mapping's latest key, for messages
    expect_key: bool = True  # whether the mapping's next node is a key


@dataclass
class _Measure:
    """What one pass over a document's events has counted so far."""

    sizes: dict[str, tuple[int, int]] = field(default_factory=dict)  # anchor -> (values, characters) of its node
    open_nodes: list[_Open] = field(default_factory=list)
    open_anchors: set[str] = field(default_factory=set)  # anchors of the open nodes
    values: int = 0
    chars: int = 0
    interpolations: int = 0

    def enter(self, event: yaml.NodeEvent) -> None:
        """Note that ``event`` starts a node: a key or a value of the mapping it sits in."""
        parent = self.open_nodes[-1] if self.open_nodes else None
        if parent is None or not parent.mapping:
            return
        if parent.expect_key:
            parent.key = cut(event.value, 40) if isinstance(event, yaml.ScalarEvent) else "<key>"
        parent.expect_key = not parent.expect_key

    def path(self) -> str:
        """The dotted path of the value being read, for messages."""
        return cut(".".join(node.key for node in self.open_nodes if node.mapping and node.key), 120) or "the top level"


def _measure(events: Iterator[yaml.Event], where: str) -> None:
    """Count the events of one document against the limits; raises on the first one exceeded."""
    limits = current()
    seen = _Measure()
    for event in events:
        if isinstance(event, yaml.NodeEvent):
            if seen.values == 0 and not isinstance(event, yaml.MappingStartEvent):
                raise PlacementConfigError(f"{where} must hold a mapping at the top level, not {_kind(event)}")
            seen.enter(event)
        if isinstance(event, yaml.CollectionStartEvent):
            seen.open_nodes.append(_Open(event.anchor, seen.values, seen.chars, isinstance(event, yaml.MappingStartEvent)))
            if event.anchor is not None:
                seen.open_anchors.add(event.anchor)
            seen.values += 1
            if len(seen.open_nodes) > limits.max_depth:
                raise exceeded("max_depth", f"more than {limits.max_depth} levels", where, f"the nesting at {seen.path()}")
        elif isinstance(event, yaml.CollectionEndEvent):
            node = seen.open_nodes.pop()
            if node.anchor is not None:
                seen.sizes[node.anchor] = (seen.values - node.values_before, seen.chars - node.chars_before)
                seen.open_anchors.discard(node.anchor)
        elif isinstance(event, yaml.AliasEvent):
            _check_not_recursive(event, where, seen)
            added = seen.sizes.get(event.anchor or "", (1, 0))
            seen.values, seen.chars = seen.values + added[0], seen.chars + added[1]
        elif isinstance(event, yaml.ScalarEvent):
            _check_integer_digits(event, where, seen)
            seen.interpolations += _check_interpolation(event.value, where)
            if event.anchor is not None:
                seen.sizes[event.anchor] = (1, len(event.value))
            seen.values, seen.chars = seen.values + 1, seen.chars + len(event.value)
        if seen.values > limits.max_values:
            raise exceeded("max_values", f"more than {limits.max_values} values", where, "the number of values (aliases counted as copies)")
        if seen.interpolations > limits.max_interpolations:
            raise exceeded("max_interpolations", f"more than {limits.max_interpolations}", where, "the number of values holding ${...}")
        if seen.chars > limits.max_text_chars:
            raise exceeded("max_text_chars", f"more than {limits.max_text_chars} characters", where, "the text of its values (aliases counted as copies)")


def _check_not_recursive(event: yaml.AliasEvent, where: str, seen: _Measure) -> None:
    """Refuse an alias inside the node it names (``a: &a [*a]``): the loader would build a mapping
    or list that holds itself, which OmegaConf before 2.4.0's release candidates recurses into
    until Python's stack runs out (later ones refuse it in their own words)."""
    if event.anchor in seen.open_anchors:
        raise PlacementConfigError(
            f"{where}: {seen.path()} is the alias {shown('*' + cut(event.anchor, 40))} of a mapping or list that holds it "
            "(a mapping or list that holds itself cannot be a config)"
        )


def _check_integer_digits(event: yaml.ScalarEvent, where: str, seen: _Measure) -> None:
    """Refuse a plain decimal integer longer than Python converts (``sys.get_int_max_str_digits``,
    4,300 digits by default): the loader would fail on it with a bare ``ValueError`` and no key."""
    allowed = sys.get_int_max_str_digits()
    if not allowed or len(event.value) <= allowed or not event.implicit[0] or not _DECIMAL_INT.fullmatch(event.value):
        return
    digits = sum(character.isdigit() for character in event.value)
    if digits > allowed:
        raise PlacementConfigError(
            f"{where}: {seen.path()} is an integer of {digits} digits, above Python's limit of {allowed} digits for "
            "converting text to an integer (sys.set_int_max_str_digits); no placement setting needs a number this long"
        )


def _check_interpolation(value: str, where: str) -> int:
    """1 if ``value`` holds ``${...}`` (refused if nested past ``max_interpolation_depth``: the
    loader's grammar parser recurses per level), else 0."""
    if "${" not in value:
        return 0
    depth = nesting_depth(value)
    if depth > current().max_interpolation_depth:
        raise exceeded("max_interpolation_depth", depth, where, f"the nesting of ${{...}} in {shown(value)}")
    return 1


def check_text_size(size: int, limit: int, where: str) -> None:
    """Refuse a text longer than ``max_file_bytes`` (a YAML text is measured like a file)."""
    if size > limit:
        raise exceeded("max_file_bytes", size, where, "its size")


def _kind(event: yaml.Event) -> str:
    if isinstance(event, yaml.SequenceStartEvent):
        return "a list"
    if isinstance(event, yaml.ScalarEvent):
        return f"the scalar {shown(event.value)}"
    return "an alias"
