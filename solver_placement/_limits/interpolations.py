"""Bounding OmegaConf interpolations before any is resolved.

OmegaConf resolves ``${...}`` recursively and without memoising: a chain ``a1: ${a0}${a0}``,
``a2: ${a1}${a1}`` ... doubles a string per step (2 GB at step 27), a chain of ``oc.select``
defaults takes minutes, and a chain 100 long overflows the stack. So the raw (unresolved)
config is measured first, in one flat pass: for every interpolated value, the *work* of
resolving it (its own characters, plus one step and the work of the target for every
reference in it) and its *depth* (``${`` nested in its text plus the longest chain below it).
A value above ``max_interpolation_depth``, above ``max_interpolation_work`` (alone or with
the values before it), in a cycle, or whose key is itself computed (``${${k}}``, which cannot
be measured) is reported here and never handed to OmegaConf; the loader keeps it as an
unresolved marker that fails, naming the limit, only if placement reads it.

References are over-counted rather than missed: every dotted name inside ``${...}`` that
names a node (absolute, or relative with leading dots) counts as a reference to it, resolver
arguments included, and a path through an interpolated value counts the whole value.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from omegaconf import DictConfig, ListConfig, Node

from solver_placement._limits import current, exceeded

Parts = tuple[str, ...]
_NAME = re.compile(r"(\.*)([A-Za-z_0-9][\w\-]*(?:\.[\w\-]+|\[\w+\])*)")
_UNBOUNDED = 1 << 62
#: Characters produced per step of work (see ``max_interpolation_work``).
_CHARS_PER_STEP = 1_000


@dataclass
class _Value:
    """One node of the raw config: its shown path, what it needs resolved (the targets of an
    interpolated value, the children of a container) and its own cost."""

    shown: str
    refs: list[Parts] = field(default_factory=list)
    own_work: int = 1
    own_depth: int = 0
    problem: str | None = None
    interpolated: bool = False


def blocked_interpolations(config: DictConfig) -> dict[str, str]:
    """Paths (as the loader shows them: ``a.b[0]``) whose interpolation must not be resolved,
    with the reason; refuses a config deeper than ``max_depth`` or with more than ``max_interpolations``."""
    values = _raw_values(config)
    if not any(value.interpolated for value in values.values()):
        return {}
    limits = current()
    interpolated = sum(value.interpolated for value in values.values())
    if interpolated > limits.max_interpolations:
        raise exceeded("max_interpolations", interpolated, "config", "the number of values holding ${...}")
    work, depth = _measure(values)
    blocked: dict[str, str] = {}
    total = 0
    for parts, value in values.items():
        if not value.interpolated:
            continue
        if value.problem is not None:
            blocked[value.shown] = value.problem
        elif depth[parts] > limits.max_interpolation_depth:
            blocked[value.shown] = str(exceeded("max_interpolation_depth", depth[parts], value.shown, "its interpolation depth"))
        elif work[parts] >= _UNBOUNDED:
            blocked[value.shown] = "the interpolation refers to itself (a cycle)"
        elif total + work[parts] > limits.max_interpolation_work:
            blocked[value.shown] = str(exceeded("max_interpolation_work", total + work[parts], value.shown, "the work of resolving it (with the values before it)"))
        else:
            total += work[parts]  # only what will be resolved costs
    return blocked


def _raw_values(config: DictConfig) -> dict[Parts, _Value]:
    """Every node of ``config`` without resolving anything, containers with their children as refs."""
    limits = current()
    values: dict[Parts, _Value] = {}
    stack: list[tuple[Parts, str, Node]] = [((), "", config)]
    while stack:
        parts, shown, node = stack.pop()
        if len(parts) > limits.max_depth:
            raise exceeded("max_depth", f"more than {limits.max_depth} levels", shown, "its nesting")
        if isinstance(node, (DictConfig, ListConfig)) and not (node._is_interpolation() or node._is_none() or node._is_missing()):
            children = _children(node, parts, shown)
            values[parts] = _Value(shown, [child for child, _, _ in children])
            stack.extend(children)
        else:
            values[parts] = _leaf(shown, parts, node._value() if isinstance(node, Node) else None)
    return values


def _children(node: DictConfig | ListConfig, parts: Parts, shown: str) -> list[tuple[Parts, str, Node]]:
    """The child nodes of a container with their parts and shown paths."""
    if isinstance(node, ListConfig):
        entries: list[tuple[object, object]] = [(index, node._get_node(index)) for index in range(len(node))]
    else:
        entries = [(key, node._get_node(key)) for key in node.keys()]
    in_list = isinstance(node, ListConfig)
    return [(parts + (str(key),), _shown(shown, key, in_list), child) for key, child in entries if isinstance(child, Node)]


def _shown(where: str, key: object, in_list: bool) -> str:
    if in_list:
        return f"{where}[{key}]"
    return f"{where}.{key}" if where else str(key)


def _leaf(shown: str, parts: Parts, raw: object) -> _Value:
    """A scalar: plain text costs its length; ``${...}`` text also its references."""
    if not isinstance(raw, str):
        return _Value(shown)
    if "${" not in raw:
        return _Value(shown, own_work=1 + len(raw) // _CHARS_PER_STEP)
    refs: list[Parts] = []
    nesting = 0
    problem = None
    for body, level, computed_key in _bodies(raw):
        nesting = max(nesting, level)
        if computed_key:
            problem = "an interpolation whose key is itself an interpolation cannot be measured before it is resolved"
        refs.extend(_target(parts, dots, name) for dots, name in _NAME.findall(body))
    return _Value(shown, refs, 1 + len(raw) // _CHARS_PER_STEP, nesting, problem, interpolated=True)


def nesting_depth(text: str) -> int:
    """How deep ``${`` nests in ``text`` (0: no interpolation)."""
    return max((level for _, level, _ in _bodies(text)), default=0)


def _bodies(text: str) -> list[tuple[str, int, bool]]:
    """The text of every ``${...}`` in ``text`` (nested ones apart), its nesting level, and
    whether it sits in the key of an enclosing node interpolation (``${${k}}``, ``${a.${k}}``)."""
    found: list[tuple[str, int, bool]] = []
    frames: list[list[str]] = []
    computed: list[bool] = []
    position = 0
    while position < len(text):
        char = text[position]
        if char == "\\" and text.startswith("${", position + 1):
            position += 3
            continue
        if text.startswith("${", position):
            computed.append(bool(frames) and ":" not in "".join(frames[-1]))
            frames.append([])
            position += 2
            continue
        if char == "}" and frames:
            found.append(("".join(frames.pop()), len(frames) + 1, computed.pop()))
        elif frames:
            frames[-1].append(char)
        position += 1
    return found


def _target(parts: Parts, dots: str, name: str) -> Parts:
    """The node a dotted name inside an interpolation at ``parts`` names (absolute or relative)."""
    names = tuple(piece for piece in re.split(r"[.\[\]]", name) if piece)
    base = parts[: max(0, len(parts) - len(dots))] if dots else ()
    return base + names


def _measure(values: dict[Parts, _Value]) -> tuple[dict[Parts, int], dict[Parts, int]]:
    """Work and depth of every value, post-order over references, without recursion; a value
    on a cycle gets unbounded work."""
    work: dict[Parts, int] = {}
    depth: dict[Parts, int] = {}
    on_path: set[Parts] = set()
    for start in values:
        if start in work:
            continue
        stack = [(start, iter(_existing(values, values[start].refs)))]
        on_path.add(start)
        while stack:
            parts, pending = stack[-1]
            step = next(pending, None)
            if step is None:
                stack.pop()
                on_path.discard(parts)
                _finish(parts, values, work, depth)
            elif step in on_path:
                work[step] = _UNBOUNDED
            elif step not in work:
                on_path.add(step)
                stack.append((step, iter(_existing(values, values[step].refs))))
    return work, depth


def _finish(parts: Parts, values: dict[Parts, _Value], work: dict[Parts, int], depth: dict[Parts, int]) -> None:
    value = values[parts]
    targets = _existing(values, value.refs)
    step = 1 if value.interpolated else 0  # following a reference is a step; holding a child is not
    cost = value.own_work + sum(step + work.get(target, _UNBOUNDED) for target in targets)
    work[parts] = _UNBOUNDED if work.get(parts) == _UNBOUNDED else min(cost, _UNBOUNDED)
    depth[parts] = value.own_depth + max((depth.get(target, 0) for target in targets), default=0)


def _existing(values: dict[Parts, _Value], refs: list[Parts]) -> list[Parts]:
    """Each reference as the longest prefix of it that is a node (names that are none are dropped)."""
    found = []
    for ref in refs:
        for end in range(len(ref), 0, -1):
            if ref[:end] in values:
                found.append(ref[:end])
                break
    return found
