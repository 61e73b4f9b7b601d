"""The content of the layout figure's rows: which cells a node shows, the lane each component
takes, the boxes with their rank labels, and which boxes belong to one process.

No geometry here (that is :mod:`~solver_placement._plot.row_geometry`): a :class:`Row` says what
is drawn, so tests can check a layout without reading pixels.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from solver_placement._constants import NODE
from solver_placement._plot.aggregate import like_node_runs
from solver_placement._plot.labels import Cell
from solver_placement._plot.source import Drawn


@dataclass
class NodeUse:
    """What the drawn components hold on one node: ranks per (component, cell), cells per process."""

    ranks: dict[tuple[str, Cell], list[int]] = field(default_factory=lambda: defaultdict(list))
    items: dict[tuple[str, int], list[Cell]] = field(default_factory=dict)


def occupancy(drawn: Drawn, shown: Sequence[str], nodes: Sequence[int]) -> dict[int, NodeUse]:
    """Per drawn node, what the ``shown`` components hold on it (a node process holds the node cell)."""
    wanted = set(nodes)
    use: dict[int, NodeUse] = {node: NodeUse() for node in nodes}
    for name in shown:
        for p in drawn.placements[name]:
            if p.cluster_node_rank not in wanted:
                continue
            cells = [(NODE, 0)] if p.hardware_type == NODE else [(p.hardware_type, i) for i in p.local_hardware_ranks]
            node_use = use[p.cluster_node_rank]
            node_use.items[(name, p.rank)] = cells
            for cell in cells:
                node_use.ranks[(name, cell)].append(p.rank)
    return use


@dataclass
class Box:
    """A lane box: adjacent cells of one kind holding the same ranks of one component."""

    component: str
    kind: str
    first: int
    last: int
    ranks: tuple[int, ...]


class Join(NamedTuple):
    """A process spanning several boxes (a strided process on GPUs 0 and 2): joined by a bracket."""

    component: str
    kind: str
    boxes: list[int]  # indices into Row.boxes


@dataclass
class Row:
    """One drawn row: a node, or a run of like nodes (aggregate mode)."""

    nodes: list[int]
    cells: list[Cell]
    lanes: dict[tuple[str, str], int]  # (kind, component) -> lane; components sharing no cell share a lane
    boxes: list[Box]
    joins: list[Join]
    steps: dict[str, int]  # aggregate rows: per-component rank step from one node of the run to the next
    model: str
    groups: frozenset[str]


def layout_rows(drawn: Drawn, shown: Sequence[str], nodes: Sequence[int], use_by_node: Mapping[int, NodeUse], aggregate: bool) -> list[Row]:
    """One row per node, or (``aggregate``) per run of like nodes."""
    group_list = drawn.groups()

    def describe(node: int) -> tuple[list[Cell], str, frozenset[str]]:
        hardware = drawn.hardware_of(node)
        uses_node = any(cell[0] == NODE for (_, cell) in use_by_node[node].ranks)
        cells = [*hardware, (NODE, 0)] if uses_node or not hardware else hardware
        return cells, drawn.model_of(node), frozenset(label for label, members in group_list if node in members)

    def bases(node: int) -> dict[str, int]:
        found: dict[str, int] = {}
        for name, rank in use_by_node[node].items:
            found[name] = min(rank, found.get(name, rank))
        return found

    def signature(node: int) -> Hashable:
        base = bases(node)
        relative = sorted((name, cell, tuple(r - base[name] for r in ranks)) for (name, cell), ranks in use_by_node[node].ranks.items())
        cells, model, groups = describe(node)
        return (tuple(cells), model, groups, tuple(relative))

    rows = []
    for run_nodes, steps in like_node_runs(nodes, signature, bases, aggregate):
        cells, model, groups = describe(run_nodes[0])
        rows.append(build_row(shown, run_nodes, cells, use_by_node[run_nodes[0]], steps, model, groups))
    return rows


def build_row(
    shown: Sequence[str], nodes: list[int], cells: list[Cell], use: NodeUse, steps: dict[str, int], model: str, groups: frozenset[str]
) -> Row:
    """Lanes, boxes and joins of one row, from what its (first) node holds."""
    lanes: dict[tuple[str, str], int] = {}
    boxes: list[Box] = []
    box_of: dict[tuple[str, Cell], int] = {}
    for kind in dict.fromkeys(kind for kind, _ in cells):
        indices = [i for k, i in cells if k == kind]
        for name, lane in _lanes(kind, indices, shown, use).items():
            lanes[(kind, name)] = lane
            _add_boxes(boxes, box_of, name, kind, indices, use)
    joins = []
    for (name, _), items in sorted(use.items.items()):
        spanned = sorted({box_of[(name, cell)] for cell in items})
        if len(spanned) > 1:
            joins.append(Join(name, items[0][0], spanned))
    return Row(nodes, cells, lanes, boxes, joins, steps, model, groups)


def _lanes(kind: str, indices: Sequence[int], shown: Sequence[str], use: NodeUse) -> dict[str, int]:
    """First fit: a component takes the first lane where it shares no cell with those already in it,
    so disjoint components (GPUs 0-3 and 4-7) share a lane and collocated ones stack."""
    taken: list[set[int]] = []  # per lane, the cells its components hold
    lanes: dict[str, int] = {}
    for name in shown:
        held = {i for i in indices if use.ranks.get((name, (kind, i)))}
        if not held:
            continue
        lane = next((index for index, cells_taken in enumerate(taken) if not cells_taken & held), len(taken))
        if lane == len(taken):
            taken.append(set())
        taken[lane] |= held
        lanes[name] = lane
    return lanes


def _add_boxes(boxes: list[Box], box_of: dict[tuple[str, Cell], int], name: str, kind: str, indices: Sequence[int], use: NodeUse) -> None:
    """Append one box per run of adjacent cells holding the same ranks of ``name``; note each cell's box."""
    for i in indices:
        ranks = tuple(sorted(use.ranks.get((name, (kind, i)), ())))
        if not ranks:
            continue
        previous = boxes[-1] if boxes else None
        if previous and (previous.component, previous.kind, previous.last + 1, previous.ranks) == (name, kind, i, ranks):
            previous.last = i
        else:
            boxes.append(Box(name, kind, i, i, ranks))
        box_of[(name, (kind, i))] = len(boxes) - 1
