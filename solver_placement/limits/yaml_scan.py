"""Reading YAML within the limits: bounded bytes, then one flat pass over the parser's events.

PyYAML builds documents recursively (a flow list nested 100,000 deep crashed the interpreter)
and expands aliases into copies (ten aliases of ten aliases ... is a "billion laughs"). The
parser underneath is a flat state machine, so one pass over its events measures the document
without building it: nesting depth, values and scalar characters, each alias counted as a full
copy of the node it names. Only a document within ``max_depth``, ``max_values`` and
``max_text_chars`` is then handed to the loader, whose recursion is then shallow.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import IO

import yaml

from solver_placement.errors import PlacementConfigError, shown
from solver_placement.limits import current, exceeded
from solver_placement.limits.interpolations import nesting_depth

_PARSER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml's parser when installed: same events, faster


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

    Also refuses a document whose top level is not a mapping. Syntax errors are left to the
    loader, which words them better; the scan stops at the first one.
    """
    where = f"config file {name!r}"
    limits = current()
    check_size(len(text), limits.max_file_bytes, where)
    sizes: dict[str, tuple[int, int]] = {}  # anchor -> (values, characters) of the node it names
    open_nodes: list[tuple[str | None, int, int]] = []
    values = chars = interpolations = 0
    top_level_seen = False
    try:
        for event in yaml.parse(text, Loader=_PARSER):
            if isinstance(event, yaml.NodeEvent) and not top_level_seen:
                top_level_seen = True
                if not isinstance(event, yaml.MappingStartEvent):
                    raise PlacementConfigError(f"{where} must hold a mapping at the top level, not {_kind(event)}")
            if isinstance(event, yaml.CollectionStartEvent):
                open_nodes.append((event.anchor, values, chars))
                values += 1
                if len(open_nodes) > limits.max_depth:
                    raise exceeded("max_depth", f"more than {limits.max_depth} levels", where, "its nesting")
            elif isinstance(event, yaml.CollectionEndEvent):
                anchor, values_before, chars_before = open_nodes.pop()
                if anchor is not None:
                    sizes[anchor] = (values - values_before, chars - chars_before)
            elif isinstance(event, (yaml.ScalarEvent, yaml.AliasEvent)):
                added = sizes.get(event.anchor or "", (1, 0)) if isinstance(event, yaml.AliasEvent) else (1, len(event.value))
                if isinstance(event, yaml.ScalarEvent):
                    interpolations += _check_interpolation(event.value, where)
                    if event.anchor is not None:
                        sizes[event.anchor] = added
                values, chars = values + added[0], chars + added[1]
            if values > limits.max_values:
                raise exceeded("max_values", f"more than {limits.max_values} values", where, "the number of values (aliases counted as copies)")
            if interpolations > limits.max_interpolations:
                raise exceeded("max_interpolations", f"more than {limits.max_interpolations}", where, "the number of values holding ${...}")
            if chars > limits.max_text_chars:
                raise exceeded("max_text_chars", f"more than {limits.max_text_chars} characters", where, "the text of its values (aliases counted as copies)")
    except yaml.YAMLError:
        return  # the loader reports the syntax error with its position
    except UnicodeError as error:  # a lone surrogate in a str cannot be YAML
        raise PlacementConfigError(f"{where} is not valid text: {shown(str(error))}") from None


def _check_interpolation(value: str, where: str) -> int:
    """1 if ``value`` holds ``${...}`` (refused if nested past ``max_interpolation_depth``: the
    loader's grammar parser recurses per level), else 0."""
    if "${" not in value:
        return 0
    depth = nesting_depth(value)
    if depth > current().max_interpolation_depth:
        raise exceeded("max_interpolation_depth", depth, where, f"the nesting of ${{...}} in {shown(value)}")
    return 1


def check_size(size: int, limit: int, where: str) -> None:
    """Refuse a text longer than ``max_file_bytes`` (a YAML text is measured like a file)."""
    if size > limit:
        raise exceeded("max_file_bytes", size, where, "its size")


def _kind(event: yaml.Event) -> str:
    if isinstance(event, yaml.SequenceStartEvent):
        return "a list"
    if isinstance(event, yaml.ScalarEvent):
        return f"the scalar {shown(event.value)}"
    return "an alias"
