"""The last line of a counting conflict: what the nodes offer, next to what the statements need.

The statements say what the user asked for; this line says the arithmetic that rules it out,
in the user's terms: "counting: the cluster has 16 nodes x 8 GPUs = 128 GPUs; together they
need 129", "... room for 0 of actor's 4 groups of 8 GPUs" or "... inference may use 0 of them".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np

from solver_placement._arrays import distinct
from solver_placement._constants import CLUSTER_LABEL
from solver_placement._errors import Statement, agreeing, counted
from solver_placement._solver.bounds.model import packings
from solver_placement._solver.bounds.needs import Need
from solver_placement._solver.bounds.relations import APART, ROOM, TOGETHER, Relation
from solver_placement._solver.statements import COUNTING, noun
from solver_placement._specification.placement_spec import PlacementSpec


def counting_line(spec: PlacementSpec, needs: Sequence[Need], relations: Sequence[Relation]) -> Statement:
    """What the nodes of ``needs`` offer, and the count they fall short of."""
    unit = _noun(spec, needs)
    hardware = distinct(np.concatenate([need.hardware for need in needs]))
    per_node = np.bincount(spec.cluster.hw_node[hardware], minlength=spec.cluster.num_nodes)
    shapes = Counter(int(n) for n in per_node[per_node > 0])
    shape = " + ".join(f"{counted(nodes, 'node')} x {counted(items, unit)}" for items, nodes in sorted(shapes.items(), reverse=True))
    offered = int(per_node.sum())
    total = f" = {counted(offered, unit)}" if len(shapes) > 1 or max(shapes.values()) > 1 else ""
    text = "; ".join([f"counting: {_where(spec, needs)} has {shape}{total}", *_shortfall(needs, relations, shapes, offered, unit)])
    return Statement(text, rule=COUNTING, others=tuple(need.name for need in needs))


def _shortfall(needs: Sequence[Need], relations: Sequence[Relation], shapes: Counter[int], offered: int, unit: str) -> list[str]:
    """The count that fails, in the first form that applies."""
    rooms = [r for r in relations if r.kind == ROOM]
    if rooms:
        return [f"{r.first} may use {counted(int(r.room[r.nodes].sum()), unit)} of them" for r in rooms if r.room is not None]
    kinds = {r.kind for r in relations}
    if {APART, TOGETHER} <= kinds:
        pair = next(r for r in relations if r.kind == TOGETHER)
        return [f"{pair.first} and {pair.second} must use the same {unit}s but cannot share one"]
    if APART in kinds and len(needs) > 1:
        needed = sum(need.total for need in needs)
        if needed > offered:
            return [f"together they need {needed}"]
        if len(shapes) == 1:
            return _wide_blocks(needs, *next(iter(shapes.items())), unit)
    wide = [n for n in needs if not n.fixed and n.width > 1]
    return [f"room for {int(n.fits().sum())} of {n.name}'s {counted(n.units, *n.block)} of {counted(n.width, unit)}" for n in wide]


def _wide_blocks(needs: Sequence[Need], size: int, nodes: int, unit: str) -> list[str]:
    """Blocks wider than ``size / (j + 1)`` fit ``j`` per node: the first ``j`` that fails."""
    free = [n for n in needs if not n.fixed]
    for j in range(1, size + 1):
        wide = [n for n in free if n.width * (j + 1) > size]
        if sum(n.units for n in wide) > j * nodes:
            listed = ", ".join(f"{n.units} of {n.name}" for n in wide)
            return [f"at most {counted(j, 'block')} of more than {size / (j + 1):g} {unit}s fit on a node, but they need {listed} on {counted(nodes, 'node')}"]
    ways_to_pack = packings([n.width for n in free], [size // n.width for n in free], size) or []
    ways = " or ".join(", ".join(f"{k} of {n.name}" for k, n in zip(p, free, strict=True) if k) for p in ways_to_pack)
    needed = ", ".join(f"{n.units} of {n.name}" for n in free)
    widths = [n.width for n in free]
    return [f"a node holds {ways} (blocks of {', '.join(map(str, widths))} {agreeing(max(widths), unit)}), but they need {needed} on {counted(nodes, 'node')}"] if ways else []


def _where(spec: PlacementSpec, needs: Sequence[Need]) -> str:
    groups = {spec.components[need.name].node_groups for need in needs}
    if len(groups) != 1:
        return "their node groups"
    labels = groups.pop()
    return "the cluster" if labels == (CLUSTER_LABEL,) else "node group " + " + ".join(repr(label) for label in labels)


def _noun(spec: PlacementSpec, needs: Sequence[Need]) -> str:
    nouns = {noun(spec.requests[need.name]) for need in needs}
    return nouns.pop() if len(nouns) == 1 else "item"
