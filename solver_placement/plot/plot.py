"""Pictures of a placement: which hardware item holds which rank of which component.

* :func:`plot_layout` draws nodes as rows of hardware cells (GPUs, robots or other custom
  hardware, and the node itself for node-only processes), one colour per component. Collocated
  components stack in lanes inside a cell; each box is labelled with the process ranks on it; a
  process holding several adjacent items is one joined box, and a strided process (GPUs 0 and 2)
  is joined by a bracket under its boxes. Node groups are labelled bands on the left.
* :func:`plot_weight_sync` draws the CUDA IPC pairing of collocated mode: every rollout process
  linked to the actor ranks on its GPUs, with the actor's tensor-parallel groups marked.

Both return a :class:`matplotlib.figure.Figure` on an Agg canvas: no display and no pyplot
state, so they work in scripts, tests, CI and (with ``%matplotlib inline``) notebooks. All
geometry is in inches (one data unit is one inch and the axes fill the figure), so fonts in
points and boxes keep their proportions: the figure grows with the cluster instead of shrinking
its labels. Up to ``max_rows`` rows (128 by default) every node gets a row, wrapped into side by
side columns of at most 32 rows; beyond that, runs of consecutive nodes with the same layout
(ranks shifted by a constant step per node) are drawn as one row each, and ``nodes=`` picks a
slice of a larger cluster.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeAlias

import matplotlib
import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from omegaconf import DictConfig

from solver_placement.cluster.cluster import Cluster
from solver_placement.rlinf.component_placement import ComponentPlacement, ModelParallelComponentPlacement
from solver_placement.errors import PlacementConfigError
from solver_placement.constants import ACCELERATOR, NODE, RESERVED_LABELS
from solver_placement.cluster.ranks import parse_rank_list
from solver_placement.records import Placement
from solver_placement.solver.solution import Solution
from solver_placement.solver.solve import solve
from solver_placement.spec.placement_spec import PlacementSpec

__all__ = [
    "SAVE_FORMATS",
    "WeightSyncLink",
    "component_colors",
    "plot_layout",
    "plot_weight_sync",
    "save_figure",
    "weight_sync_links",
]

#: What :func:`plot_layout` and :func:`plot_weight_sync` accept: a solved layout, the inputs of a
#: solve (a spec, a YAML path, a config mapping or DictConfig), or placement records.
LayoutSource: TypeAlias = (
    Solution | ComponentPlacement | PlacementSpec | Mapping[str, Sequence[Placement]] | Sequence[Placement] | str | Path | DictConfig
)

#: File formats :func:`save_figure` writes (by file suffix).
SAVE_FORMATS = ("png", "svg", "pdf")

#: Tableau 10, then matplotlib's tab10 for an 11th component on: distinct mid-tone hues on which a dark or
#: white label stays legible; Tableau's grey comes last so it rarely meets the grey of empty cells.
PALETTE = (
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
    "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf",
)  # fmt: skip
BAND_COLORS = ("#e8edf5", "#f6ece0", "#e6f1e4", "#f5e4e4", "#ece6f2", "#e4f1f0")
BRACKET_COLOR = "#555555"
#: Dark link colours (Dark2 without its orange and yellow, which vanish on light component fills).
LINK_COLORS = ("#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#a6761d", "#333333")

# Geometry, in inches.
MARGIN = 0.3
CELL_W = 0.58
LANE_H = 0.25
MIN_ROW_H = 0.36  # room for the two-line node label
TRACK_H = 0.06
TP_H = 0.07  # strip above a lane for tensor-parallel group brackets
HEADER_H = 0.17
ROW_GAP = 0.1
KIND_GAP = 0.14
BAND_W = 0.78
LABEL_W = 0.95
COLUMN_GAP = 0.45
BOX_PAD = 0.025
ROWS_PER_COLUMN = 32
SYNC_ROW_H = 0.3  # weight sync: actor and rollout rows, the links between them, the TP brackets above
SYNC_LINK_H = 0.75
SYNC_BRACKET_H = 0.24
# Text, in points. CHAR_EM is a DejaVu Sans digit's width in ems (the widest common glyph in rank labels).
BASE_FONT = 7.0
MIN_FONT = 4.5
STEP_FONT = 6.5
CHAR_EM = 0.64

MODES = ("auto", "cells", "aggregate")
SCREEN_DPI = 120  # notebooks show figures at this resolution; save_figure picks its own


# ====================================================================== public API
def plot_layout(
    source: LayoutSource,
    *,
    cluster: Cluster | None = None,
    components: Sequence[str] | None = None,
    nodes: str | Iterable[int] | None = None,
    mode: str = "auto",
    max_rows: int = 128,
    title: str | None = None,
) -> Figure:
    """Draw where every process runs: one row of hardware cells per node, one colour per component.

    ``source`` is a :class:`Solution`, a :class:`ComponentPlacement`, placement records (a
    ``{component: [Placement]}`` mapping or a flat list), or anything :func:`solve` takes (then it
    is solved first). ``cluster`` completes bare records with the hardware no process uses.
    ``components`` restricts (and orders) the components drawn; colours stay those of the full
    job, so figures of one job agree. ``nodes`` selects nodes (``"0-15"`` or ints). ``mode``:
    ``cells`` draws every node, ``aggregate`` draws runs of like nodes as one row, ``auto`` picks
    ``cells`` up to ``max_rows`` nodes. Rows past ``max_rows`` are left out, with a note.
    """
    job = _resolve(source, cluster)
    shown = job.select(components)
    node_list = _select_nodes(nodes, job)
    occupancy = _occupancy(job, shown, node_list)
    aggregate = _aggregate_mode(mode, len(node_list), max_rows)
    rows = _layout_rows(job, shown, node_list, occupancy, aggregate)
    omitted = rows[max_rows:] if len(rows) > max_rows else []
    rows = rows[:max_rows]
    scene = _Scene()
    colors = component_colors(job.names)
    processes = {name: len(job.placements[name]) for name in shown}
    heading = title or f"Layout{job.title_suffix}"
    used = sorted({p.cluster_node_rank for name in shown for p in job.placements[name]})
    summary = (
        f"{len(job.nodes)} node(s), {len(used)} in use · {sum(processes.values())} processes · "
        "labels are process ranks · collocated components stack in lanes"
    )
    tp = {name: job.tensor_parallel_size(name) for name in shown if job.tensor_parallel_size(name) > 1}
    legend = [(colors[name], f"{name} ({processes[name]})", "box") for name in shown]
    if any(row.joins for row in rows):
        legend.append((BRACKET_COLOR, "one process on several items", "bracket"))
    if tp:
        legend.append((BRACKET_COLOR, "tensor-parallel group", "tp"))
    top = _draw_header(scene, heading, summary, legend)
    bottom = _draw_rows(scene, job, rows, colors, tp, top)
    notes = []
    if any(len(row.nodes) > 1 for row in rows):
        notes.append(
            "A row 'nodes a-b' stands for a run of nodes with the same layout; its labels are the ranks on node a, "
            "and each further node adds the per-node step shown on the right."
        )
    if omitted:
        first, last = omitted[0].nodes[0], omitted[-1].nodes[-1]
        notes.append(f"{len(omitted)} more row(s) (nodes {first}-{last}) not drawn; pass nodes= (CLI: --nodes) to draw a slice.")
    _draw_notes(scene, notes, bottom)
    return scene.figure()


def plot_weight_sync(
    source: LayoutSource,
    *,
    actor: str = "actor",
    rollout: str = "rollout",
    cluster: Cluster | None = None,
    mode: str = "auto",
    max_rows: int = 8,
    title: str | None = None,
) -> Figure:
    """Draw the CUDA IPC weight-sync pairing: each rollout process and the actor ranks on its GPUs.

    In collocated mode every GPU of a rollout process also holds an actor rank, which hands its
    weight shard over CUDA IPC without a copy; a strided rollout engine links to every
    ``stride``-th rank of one actor tensor-parallel group (bracketed above the actor row). A
    rollout GPU with no actor rank (disaggregated mode) gets a dashed link to an empty cell: its
    weights must come over the network. One panel per node; like nodes are merged when there are
    more than ``max_rows`` of them (``mode`` as in :func:`plot_layout`). ``source`` is anything
    :func:`plot_layout` takes; for a :class:`ModelParallelComponentPlacement` in collocated mode
    its own :meth:`~ModelParallelComponentPlacement.weight_sync_map` gives the pairing.
    """
    job = _resolve(source, cluster)
    if isinstance(source, ModelParallelComponentPlacement):
        links, actor_tp = weight_sync_links(source, actor=actor, rollout=rollout), source.actor_tp_size
    else:
        links, actor_tp = _links_from_records(job, actor, rollout), job.tensor_parallel_size(actor)
    colors = component_colors(job.names)
    nodes = sorted({link.node for link in links})
    by_node: dict[int, list[WeightSyncLink]] = defaultdict(list)
    for link in links:
        by_node[link.node].append(link)
    actor_cells = _actor_cells(job, actor, nodes)
    aggregate = _aggregate_mode(mode, len(nodes), max_rows)
    panels = _sync_panels(job, nodes, by_node, actor_cells, aggregate)
    omitted = panels[max_rows:] if len(panels) > max_rows else []
    panels = panels[:max_rows]
    paired = sum(1 for link in links if link.actor_ranks)
    rollouts = len({link.rollout_rank for link in links})
    verdict = (
        "every rollout GPU holds an actor rank: weights go over CUDA IPC"
        if paired == len(links)
        else f"{len(links) - paired} rollout GPU(s) hold no actor rank: their weights must go over the network"
    )
    heading = title or f"Weight sync {actor} -> {rollout}{job.title_suffix}"
    summary = f"{rollouts} {rollout} processes on {len(links)} GPUs, {paired} paired with {actor} ranks · {verdict}"
    legend = [(colors[actor], f"{actor} rank on the GPU", "box"), (colors[rollout], f"{rollout} process", "box")]
    if actor_tp > 1 and any(panel.actor_ranks for panel in panels):
        legend.append((BRACKET_COLOR, f"{actor} tensor-parallel group of {actor_tp}", "tp"))
    scene = _Scene()
    top = _draw_header(scene, heading, summary, legend)
    bottom = _draw_sync_panels(scene, panels, colors, actor, rollout, actor_tp, top)
    notes = []
    if any(len(panel.nodes) > 1 for panel in panels):
        notes.append("A panel 'nodes a-b' stands for nodes with the same pairing; its ranks are those of node a.")
    if omitted:
        notes.append(f"{len(omitted)} more panel(s) not drawn (nodes {omitted[0].nodes[0]}-{omitted[-1].nodes[-1]}).")
    _draw_notes(scene, notes, bottom)
    return scene.figure()


@dataclass(frozen=True)
class WeightSyncLink:
    """One GPU of one rollout process and the actor ranks on that same GPU (its CUDA IPC peers).

    ``actor_ranks`` is empty when no actor rank shares the GPU (disaggregated mode).
    """

    rollout_rank: int
    node: int
    gpu: int
    actor_ranks: tuple[int, ...]


def weight_sync_links(source: LayoutSource, *, actor: str = "actor", rollout: str = "rollout") -> list[WeightSyncLink]:
    """Per rollout process and per GPU it holds: the actor ranks on that same (node, GPU).

    A :class:`ModelParallelComponentPlacement` in collocated mode answers with its own
    ``weight_sync_map`` (RLinf's pairing); anything else is read from the placement records.
    """
    if isinstance(source, ModelParallelComponentPlacement) and source.is_collocated and (actor, rollout) == ("actor", "rollout"):
        sync_map = source.weight_sync_map()
        return [
            WeightSyncLink(p.rank, p.cluster_node_rank, gpu, (actor_rank,))
            for p in source.get_placements(rollout)
            for gpu, actor_rank in zip(sorted(p.local_hardware_ranks), sync_map[p.rank], strict=True)
        ]
    return _links_from_records(_resolve(source, None), actor, rollout)


def _links_from_records(job: _Job, actor: str, rollout: str) -> list[WeightSyncLink]:
    job.select([actor, rollout])
    on_gpu: dict[tuple[int, int], list[int]] = defaultdict(list)
    for p in job.placements[actor]:
        if p.hardware_type == ACCELERATOR:
            for gpu in p.local_hardware_ranks:
                on_gpu[(p.cluster_node_rank, gpu)].append(p.rank)
    links: list[WeightSyncLink] = []
    for p in job.placements[rollout]:
        if p.hardware_type != ACCELERATOR:
            raise PlacementConfigError(
                f"weight sync: {rollout} process {p.rank} holds {p.hardware_type} items, not GPUs; CUDA IPC needs GPUs"
            )
        links.extend(
            WeightSyncLink(p.rank, p.cluster_node_rank, gpu, tuple(on_gpu.get((p.cluster_node_rank, gpu), ())))
            for gpu in p.local_hardware_ranks
        )
    return links


def component_colors(names: Sequence[str]) -> dict[str, str]:
    """One colour per component, by position, so every figure of one job uses the same colours."""
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


def save_figure(figure: Figure, path: str | Path, *, dpi: int = 150) -> Path:
    """Save as PNG, SVG or PDF (from the suffix); SVG keeps its text as text, so it can be searched.

    Raises :class:`PlacementConfigError` for another suffix; an unwritable path raises ``OSError``.
    """
    target = Path(path)
    suffix = target.suffix.lower().lstrip(".")
    if suffix not in SAVE_FORMATS:
        raise PlacementConfigError(f"cannot save a figure as {target.name!r}: the file name must end in .png, .svg or .pdf")
    with matplotlib.rc_context({"svg.fonttype": "none", "pdf.fonttype": 42}):
        figure.savefig(target, dpi=dpi, format=suffix)
    return target


# ====================================================================== the job being drawn
@dataclass
class _Job:
    """Placement records per component plus what is known of the cluster they run on."""

    placements: dict[str, list[Placement]]
    cluster: Cluster | None
    solution: Solution | None
    title_suffix: str
    names: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.names = list(self.placements)

    def select(self, components: Sequence[str] | None) -> list[str]:
        """The components to draw, checked against the job's names."""
        if components is None:
            return self.names
        for name in components:
            if name not in self.placements:
                raise PlacementConfigError(f"unknown component {name!r}; known: {', '.join(self.names)}")
        return list(dict.fromkeys(components))

    @property
    def nodes(self) -> list[int]:
        if self.cluster is not None:
            return list(range(self.cluster.num_nodes))
        return sorted({p.cluster_node_rank for records in self.placements.values() for p in records})

    @cached_property
    def kinds(self) -> tuple[str, ...]:
        """Hardware kinds in drawing order: GPUs, custom hardware, then the node itself."""
        if self.cluster is not None:
            return self.cluster.kinds
        custom = [p.hardware_type for records in self.placements.values() for p in records]
        return (ACCELERATOR, *dict.fromkeys(k for k in custom if k not in (ACCELERATOR, NODE)), NODE)

    def hardware_of(self, node: int) -> list[tuple[str, int]]:
        """The node's GPUs and custom items as (kind, local index), in drawing order."""
        counts = self._hardware_counts.get(node, {})
        return [(kind, i) for kind in self.kinds if kind != NODE for i in range(counts.get(kind, 0))]

    @cached_property
    def _hardware_counts(self) -> dict[int, dict[str, int]]:
        """Items per kind on every node: from the cluster tables, or the most the records reveal."""
        counts: dict[int, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        if self.cluster is not None:
            for node, gpus in enumerate(self.cluster.gpus_per_node.tolist()):
                counts[node][ACCELERATOR] = gpus
            for index, kind in enumerate(self.cluster.kinds):
                if kind not in (ACCELERATOR, NODE):
                    per_node = np.bincount(self.cluster.hw_node[self.cluster.hw_kind == index], minlength=self.cluster.num_nodes)
                    for node in np.flatnonzero(per_node).tolist():
                        counts[node][kind] = int(per_node[node])
            return counts
        for records in self.placements.values():
            for p in records:
                seen = counts[p.cluster_node_rank]
                if p.hardware_type != NODE:
                    seen[p.hardware_type] = max(seen[p.hardware_type], max(p.local_hardware_ranks) + 1)
                if p.hardware_type != ACCELERATOR or not p.isolate_accelerator:
                    seen[ACCELERATOR] = max(seen[ACCELERATOR], len(p.visible_accelerators))
        return counts

    def model_of(self, node: int) -> str:
        """What the node is, for its row label: accelerator model or type, or 'no GPU'."""
        if self.cluster is not None:
            if not self.cluster.gpus_per_node[node]:
                return "no GPU"
            return self.cluster.accelerator_models[node] or self.cluster.accelerator_types[node]
        return self._record_models.get(node, "no GPU")

    @cached_property
    def _record_models(self) -> dict[int, str]:
        """Accelerator model (or type) of every node where some record sees GPUs."""
        return {
            p.cluster_node_rank: p.accelerator_model or p.accelerator_type
            for records in self.placements.values()
            for p in records
            if p.visible_accelerators
        }

    def groups(self) -> list[tuple[str, frozenset[int]]]:
        """User node groups (reserved labels left out) with their nodes, in config order."""
        if self.cluster is not None:
            return [(g.label, frozenset(g.node_ranks)) for g in self.cluster.node_groups.values() if g.label not in RESERVED_LABELS]
        found: dict[str, set[int]] = defaultdict(set)
        for records in self.placements.values():
            for p in records:
                if p.node_group_label not in RESERVED_LABELS:
                    found[p.node_group_label].add(p.cluster_node_rank)
        return [(label, frozenset(nodes)) for label, nodes in found.items()]

    def gpus_of(self, node: int) -> int:
        return sum(1 for kind, _ in self.hardware_of(node) if kind == ACCELERATOR)

    def tensor_parallel_size(self, component: str) -> int:
        """The component's TP group size as the spec states it (1 when only records are known)."""
        if self.solution is None:
            return 1
        return self.solution.spec.components[component].constraints.tensor_parallel_size


def _resolve(source: Any, cluster: Cluster | None) -> _Job:
    """Normalise every accepted input to a :class:`_Job` (solving configs and specs first)."""
    if isinstance(source, ComponentPlacement):
        source = source.solution
    if isinstance(source, Solution):
        return _Job(source.placements_by_component(), source.cluster, source, "")
    if isinstance(source, Sequence) and not isinstance(source, str) and source and all(isinstance(p, Placement) for p in source):
        grouped: dict[str, list[Placement]] = defaultdict(list)
        for p in source:
            grouped[p.component].append(p)
        return _Job(dict(grouped), cluster, None, "")
    if isinstance(source, Mapping) and source and all(_is_records(value) for value in source.values()):
        return _Job({str(name): list(records) for name, records in source.items()}, cluster, None, "")
    if isinstance(source, (PlacementSpec, str, Path, Mapping, DictConfig)):
        solution = solve(source)
        suffix = f" of {Path(source).name}" if isinstance(source, (str, Path)) else ""
        return _Job(solution.placements_by_component(), solution.cluster, solution, suffix)
    raise PlacementConfigError(
        f"cannot plot a {type(source).__name__}: give a Solution, a ComponentPlacement, placement records, "
        "or a config (YAML path, mapping, DictConfig, PlacementSpec)"
    )


def _is_records(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str) and all(isinstance(p, Placement) for p in value)


def _select_nodes(nodes: str | Iterable[int] | None, job: _Job) -> list[int]:
    known = job.nodes
    if nodes is None:
        return known
    limit = (max(known) + 1) if known else 0
    ranks = parse_rank_list(nodes if isinstance(nodes, str) else list(nodes), "nodes", "plot", available=limit)
    missing = sorted(set(ranks.tolist()) - set(known))
    if missing:
        raise PlacementConfigError(f"plot: nodes {missing} run no process and the cluster is unknown; pass cluster=")
    return ranks.tolist()


def _aggregate_mode(mode: str, count: int, max_rows: int) -> bool:
    if mode not in MODES:
        raise PlacementConfigError(f"plot mode must be one of {', '.join(MODES)}, not {mode!r}")
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise PlacementConfigError(f"plot max_rows must be a positive integer, not {max_rows!r}")
    return mode == "aggregate" or (mode == "auto" and count > max_rows)


# ====================================================================== layout rows
Cell = tuple[str, int]  # (hardware kind, local index on the node)
Color = str | tuple[float, float, float]


@dataclass
class _NodeUse:
    """What the drawn components hold on one node: ranks per (component, cell), items per process."""

    ranks: dict[tuple[str, Cell], list[int]] = field(default_factory=lambda: defaultdict(list))
    items: dict[tuple[str, int], list[Cell]] = field(default_factory=dict)


def _occupancy(job: _Job, shown: Sequence[str], nodes: Sequence[int]) -> dict[int, _NodeUse]:
    wanted = set(nodes)
    use: dict[int, _NodeUse] = {node: _NodeUse() for node in nodes}
    for name in shown:
        for p in job.placements[name]:
            if p.cluster_node_rank not in wanted:
                continue
            cells = [(NODE, 0)] if p.hardware_type == NODE else [(p.hardware_type, i) for i in p.local_hardware_ranks]
            node_use = use[p.cluster_node_rank]
            node_use.items[(name, p.rank)] = cells
            for cell in cells:
                node_use.ranks[(name, cell)].append(p.rank)
    return use


@dataclass
class _Box:
    """A lane box: adjacent cells of one kind holding the same ranks of one component."""

    component: str
    kind: str
    first: int
    last: int
    ranks: tuple[int, ...]


@dataclass
class _Row:
    """One drawn row: a node, or a run of like nodes (aggregate mode)."""

    nodes: list[int]
    cells: list[Cell]
    lanes: dict[tuple[str, str], int]  # (kind, component) -> lane; components sharing no cell share a lane
    boxes: list[_Box]
    joins: list[tuple[str, str, list[int]]]  # (component, kind, indices of the boxes one process spans)
    steps: dict[str, int]
    model: str
    groups: frozenset[str]


def _layout_rows(
    job: _Job, shown: Sequence[str], nodes: Sequence[int], occupancy: Mapping[int, _NodeUse], aggregate: bool
) -> list[_Row]:
    group_list = job.groups()

    def cells_of(node: int) -> list[Cell]:
        hardware = job.hardware_of(node)
        uses_node = any(cell[0] == NODE for (_, cell) in occupancy[node].ranks)
        return [*hardware, (NODE, 0)] if uses_node or not hardware else hardware

    def describe(node: int) -> tuple[list[Cell], str, frozenset[str]]:
        return cells_of(node), job.model_of(node), frozenset(label for label, members in group_list if node in members)

    def bases(node: int) -> dict[str, int]:
        found: dict[str, int] = {}
        for (name, rank) in occupancy[node].items:
            found[name] = min(rank, found.get(name, rank))
        return found

    def signature(node: int) -> Hashable:
        base = bases(node)
        relative = sorted((name, cell, tuple(r - base[name] for r in ranks)) for (name, cell), ranks in occupancy[node].ranks.items())
        cells, model, groups = describe(node)
        return (tuple(cells), model, groups, tuple(relative))

    runs = _runs(nodes, signature, bases) if aggregate else [([node], {}) for node in nodes]
    rows = []
    for run_nodes, steps in runs:
        first = run_nodes[0]
        cells, model, groups = describe(first)
        rows.append(_build_row(shown, run_nodes, cells, occupancy[first], steps, model, groups))
    return rows


def _build_row(
    shown: Sequence[str], nodes: list[int], cells: list[Cell], use: _NodeUse, steps: dict[str, int], model: str, groups: frozenset[str]
) -> _Row:
    lanes: dict[tuple[str, str], int] = {}
    boxes: list[_Box] = []
    box_of: dict[tuple[str, Cell], int] = {}
    for kind in dict.fromkeys(kind for kind, _ in cells):
        locals_ = [i for k, i in cells if k == kind]
        taken: list[set[int]] = []  # per lane, the cells its components hold
        for name in shown:
            held = {i for i in locals_ if use.ranks.get((name, (kind, i)))}
            if not held:
                continue
            lane = next((index for index, cells_taken in enumerate(taken) if not cells_taken & held), len(taken))
            if lane == len(taken):
                taken.append(set())
            taken[lane] |= held
            lanes[(kind, name)] = lane
            for i in locals_:
                ranks = tuple(sorted(use.ranks.get((name, (kind, i)), ())))
                if not ranks:
                    continue
                previous = boxes[-1] if boxes else None
                if previous and (previous.component, previous.kind, previous.last + 1, previous.ranks) == (name, kind, i, ranks):
                    previous.last = i
                else:
                    boxes.append(_Box(name, kind, i, i, ranks))
                box_of[(name, (kind, i))] = len(boxes) - 1
    joins = []
    for (name, _), items in sorted(use.items.items()):
        spanned = sorted({box_of[(name, cell)] for cell in items})
        if len(spanned) > 1:
            joins.append((name, items[0][0], spanned))
    return _Row(nodes, cells, lanes, boxes, joins, steps, model, groups)


def _runs(
    nodes: Sequence[int], signature: Callable[[int], Hashable], bases: Callable[[int], dict[str, int]]
) -> list[tuple[list[int], dict[str, int]]]:
    """Group consecutive node ids with equal signatures whose ranks advance by a constant step per node."""
    runs: list[tuple[list[int], dict[str, int]]] = []
    previous_signature: Hashable = None
    for node in nodes:
        sig, base = signature(node), bases(node)
        if runs and node == runs[-1][0][-1] + 1 and sig == previous_signature:
            run_nodes, steps = runs[-1]
            last = bases(run_nodes[-1])
            step = {name: base[name] - last[name] for name in base}
            if len(run_nodes) == 1 or step == steps:
                run_nodes.append(node)
                runs[-1] = (run_nodes, step)
                continue
        runs.append(([node], {}))
        previous_signature = sig
    return runs


# ====================================================================== drawing primitives
@dataclass
class _Scene:
    """Rectangles, lines and texts in inches, y pointing down; rendered once into a Figure."""

    rects: list[tuple[int, list[tuple[float, float]], Color, Color, float, str]] = field(default_factory=list)
    lines: list[tuple[list[tuple[float, float]], Color, float, str]] = field(default_factory=list)
    texts: list[tuple[float, float, str, bool, dict[str, Any]]] = field(default_factory=list)
    dots: list[tuple[float, float, Color]] = field(default_factory=list)
    width: float = 0.0
    height: float = 0.0

    def rect(
        self, x: float, y: float, w: float, h: float, face: Color, edge: Color = "none", lw: float = 0.0, z: int = 1, style: str = "solid"
    ) -> None:
        self.rects.append((z, [(x, y), (x + w, y), (x + w, y + h), (x, y + h)], face, edge, lw, style))
        self.width, self.height = max(self.width, x + w), max(self.height, y + h)

    def line(self, points: list[tuple[float, float]], color: Color, lw: float = 1.0, style: str = "solid") -> None:
        self.lines.append((points, color, lw, style))

    def dot(self, x: float, y: float, color: Color) -> None:
        """A junction mark: where a bracket's tick meets its own line (a crossing has none)."""
        self.dots.append((x, y, color))

    def text(self, x: float, y: float, s: str, size: float, measure: bool = False, **style: Any) -> None:
        """Place a text; ``measure`` texts (titles, notes) grow the figure until they fit."""
        self.texts.append((x, y, s, measure, {"fontsize": size, "ha": "center", "va": "center", "color": "#222222", **style}))

    def figure(self, min_width: float = 6.0) -> Figure:
        width, height = max(self.width + MARGIN, min_width), self.height + MARGIN
        figure = Figure(figsize=(width, height), dpi=SCREEN_DPI, facecolor="white")
        FigureCanvasAgg(figure)
        ax = figure.add_axes((0.0, 0.0, 1.0, 1.0))
        ax.set_xlim(0.0, width)
        ax.set_ylim(height, 0.0)
        ax.set_axis_off()
        for z in sorted({item[0] for item in self.rects}):
            layer = [item for item in self.rects if item[0] == z]
            ax.add_collection(
                PolyCollection(
                    [item[1] for item in layer],
                    facecolors=[item[2] for item in layer],
                    edgecolors=[item[3] for item in layer],
                    linewidths=[item[4] for item in layer],
                    linestyles=[item[5] for item in layer],
                    zorder=z,
                )
            )
        if self.lines:
            ax.add_collection(
                LineCollection(
                    [item[0] for item in self.lines],
                    colors=[item[1] for item in self.lines],
                    linewidths=[item[2] for item in self.lines],
                    linestyles=[item[3] for item in self.lines],
                    zorder=5,
                    capstyle="round",
                )
            )
        if self.dots:
            ax.scatter([d[0] for d in self.dots], [d[1] for d in self.dots], s=7.0, c=[d[2] for d in self.dots], zorder=5, linewidths=0)
        measured = [ax.text(x, y, s, zorder=6, clip_on=False, **style) for x, y, s, measure, style in self.texts if measure]
        for x, y, s, measure, style in self.texts:
            if not measure:
                ax.text(x, y, s, zorder=6, clip_on=False, **style)
        renderer = figure.canvas.get_renderer()
        boxes = [artist.get_window_extent(renderer) for artist in measured]
        right = max([width, *(box.x1 / figure.dpi + MARGIN for box in boxes)])
        bottom = max([height, *(height - box.y0 / figure.dpi + MARGIN for box in boxes)])
        figure.set_size_inches(right, bottom)
        ax.set_xlim(0.0, right)
        ax.set_ylim(bottom, 0.0)
        return figure


def _fit(text: str, width: float, height: float, base: float = BASE_FONT) -> tuple[str, float]:
    """The largest font (<= base) at which ``text`` fits the box; shortened with an ellipsis below MIN_FONT."""
    width_pt, height_pt = width * 72.0 - 2.0, height * 72.0
    size = min(base, height_pt * 0.72, width_pt / (CHAR_EM * max(len(text), 1)))
    if size >= MIN_FONT:
        return text, size
    keep = max(1, int(width_pt / (CHAR_EM * MIN_FONT)) - 1)
    return text[:keep] + "…", MIN_FONT


def _text_width(text: str, size: float, em: float = 0.6) -> float:
    """Estimated width in inches (``em``: mean glyph width in ems), for laying out; the figure
    itself is sized by measuring its texts."""
    return len(text) * size * em / 72.0


def _text_color(face: str) -> str:
    red, green, blue = to_rgb(face)
    return "#111111" if 0.299 * red + 0.587 * green + 0.114 * blue > 0.6 else "white"


def _darker(color: str, factor: float = 0.6) -> tuple[float, float, float]:
    red, green, blue = to_rgb(color)
    return (red * factor, green * factor, blue * factor)


def _ranks_text(ranks: Iterable[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2,5"``: a rank set as the user writes it."""
    values = sorted(set(ranks))
    runs: list[list[int]] = []
    for value in values:
        if runs and value == runs[-1][-1] + 1:
            runs[-1].append(value)
        else:
            runs.append([value])
    return ",".join(str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}" for run in runs)


def _cell_name(cell: Cell) -> str:
    kind, index = cell
    if kind == ACCELERATOR:
        return f"GPU {index}"
    return "node" if kind == NODE else f"{kind} {index}"


def _nodes_text(nodes: Sequence[int]) -> str:
    return f"node {nodes[0]}" if len(nodes) == 1 else f"nodes {nodes[0]}-{nodes[-1]}"


def _draw_header(scene: _Scene, title: str, summary: str, legend: Sequence[tuple[Color, str, str]]) -> float:
    """Title, a summary line and a legend of (colour, label, glyph); returns the y below them.

    Glyphs: ``box`` (a component's colour), ``bracket`` (the one under a multi-item process) and
    ``tp`` (the one over a tensor-parallel group).
    """
    scene.text(MARGIN, MARGIN + 0.1, title, 11.0, measure=True, ha="left", weight="bold")
    scene.text(MARGIN, MARGIN + 0.34, summary, 7.0, measure=True, ha="left", color="#555555")
    x, y = MARGIN, MARGIN + 0.58
    for color, label, glyph in legend:
        if glyph == "bracket":
            scene.line([(x, y - 0.06), (x, y + 0.03), (x + 0.16, y + 0.03), (x + 0.16, y - 0.06)], color, 1.1)
        elif glyph == "tp":
            scene.line([(x, y + 0.06), (x, y - 0.03), (x + 0.16, y - 0.03), (x + 0.16, y + 0.06)], color, 1.1)
        else:
            scene.rect(x, y - 0.07, 0.16, 0.14, color, z=2)
        scene.text(x + 0.22, y, label, 7.5, measure=True, ha="left")
        x += 0.22 + _text_width(label, 7.5, em=0.53) + 0.3
    return y + 0.3


def _draw_notes(scene: _Scene, notes: Sequence[str], top: float) -> None:
    for i, note in enumerate(notes):
        scene.text(MARGIN, top + 0.1 + i * 0.2, note, 7.0, measure=True, ha="left", color="#555555", style="italic")


# ====================================================================== drawing the layout
@dataclass
class _RowGeometry:
    header: bool
    lane_tops: dict[tuple[str, int], float]  # (kind, lane) -> offset below the row's body top
    tracks: dict[int, int]  # join index -> connector track in its lane
    height: float


def _row_geometry(row: _Row, header: bool, tp: Mapping[str, int]) -> _RowGeometry:
    """Lane offsets and bracket tracks: overlapping brackets of one lane get separate tracks, and a
    lane holding a tensor-parallel component gets a strip above it for the TP group brackets."""
    tracks: dict[int, int] = {}
    ends: dict[tuple[str, int], list[float]] = defaultdict(list)  # per lane: x extent end of each track
    centers = [(box.first + box.last) / 2 for box in row.boxes]
    for index in sorted(range(len(row.joins)), key=lambda i: centers[row.joins[i][2][0]]):
        name, kind, spanned = row.joins[index]
        lane_ends = ends[(kind, row.lanes[(kind, name)])]
        start, end = centers[spanned[0]], centers[spanned[-1]]
        free = next((t for t, last in enumerate(lane_ends) if last < start), len(lane_ends))
        if free == len(lane_ends):
            lane_ends.append(end)
        else:
            lane_ends[free] = end
        tracks[index] = free
    lane_tops: dict[tuple[str, int], float] = {}
    with_tp = {(kind, lane) for (kind, name), lane in row.lanes.items() if name in tp}
    lanes_height = 0.0
    for kind in dict.fromkeys(kind for kind, _ in row.cells):
        y = 0.0
        for lane in range(1 + max((index for (k, _), index in row.lanes.items() if k == kind), default=-1)):
            y += TP_H if (kind, lane) in with_tp else 0.0
            lane_tops[(kind, lane)] = y
            count = len(ends[(kind, lane)])
            y += LANE_H + (count * TRACK_H + 0.03 if count else 0.0)
        lanes_height = max(lanes_height, y)
    slack = max(0.0, MIN_ROW_H - lanes_height) / 2  # centre the lanes of a short row on its two-line label
    lane_tops = {key: top + slack for key, top in lane_tops.items()}
    return _RowGeometry(header, lane_tops, tracks, max(MIN_ROW_H, lanes_height) + (HEADER_H if header else 0.0))


def _draw_rows(scene: _Scene, job: _Job, rows: Sequence[_Row], colors: Mapping[str, str], tp: Mapping[str, int], top: float) -> float:
    """Draw the rows in columns of at most ROWS_PER_COLUMN; returns the y below the lowest."""
    if not rows:
        scene.text(MARGIN, top + 0.2, "nothing to draw: no node selected", 8.0, ha="left")
        return top + 0.4
    columns = -(-len(rows) // ROWS_PER_COLUMN)
    per_column = -(-len(rows) // columns)
    labels = [label for label, _ in job.groups()]
    tracks = _band_tracks(job.groups())
    band_width = (max(tracks.values()) + 1) * BAND_W if tracks else 0.0
    cells_width = max(_cells_width(row.cells) for row in rows)
    step_width = max((_text_width(_steps_text(row.steps), STEP_FONT) + 0.3 for row in rows if row.steps), default=0.0)
    column_width = band_width + LABEL_W + cells_width + step_width
    bottom = top
    for column in range(columns):
        chunk = rows[column * per_column:(column + 1) * per_column]
        x0 = MARGIN + column * (column_width + COLUMN_GAP)
        y = top
        spans: list[tuple[_Row, float, float]] = []
        previous_cells: list[Cell] | None = None
        for row in chunk:
            geometry = _row_geometry(row, row.cells != previous_cells, tp)
            _draw_row(scene, row, geometry, colors, tp, x0 + band_width, y)
            spans.append((row, y, y + geometry.height))
            previous_cells = row.cells
            y += geometry.height + ROW_GAP
        _draw_bands(scene, spans, labels, tracks, x0)
        bottom = max(bottom, y)
    return bottom


def _cells_width(cells: Sequence[Cell]) -> float:
    kinds = len(dict.fromkeys(kind for kind, _ in cells))
    return len(cells) * CELL_W + (kinds - 1) * KIND_GAP


def _cell_x(cells: Sequence[Cell], x0: float) -> dict[Cell, float]:
    positions, x, previous = {}, x0, None
    for cell in cells:
        if previous is not None and cell[0] != previous:
            x += KIND_GAP
        positions[cell] = x
        x += CELL_W
        previous = cell[0]
    return positions


def _draw_row(
    scene: _Scene, row: _Row, geometry: _RowGeometry, colors: Mapping[str, str], tp: Mapping[str, int], x0: float, y0: float
) -> None:
    """Node label, cells, lane boxes with rank labels, brackets under multi-item processes and over TP groups."""
    label, size = _fit(_nodes_text(row.nodes), LABEL_W - 0.12, 0.2, 7.0)
    scene.text(x0 + 0.06, y0 + geometry.height / 2 - 0.07, label, size, ha="left", weight="bold")
    detail = f"×{len(row.nodes)} · {row.model}" if len(row.nodes) > 1 else row.model
    detail, size = _fit(detail, LABEL_W - 0.12, 0.2, 6.0)
    scene.text(x0 + 0.06, y0 + geometry.height / 2 + 0.08, detail, size, ha="left", color="#555555")
    xs = _cell_x(row.cells, x0 + LABEL_W)
    body_top = y0 + (HEADER_H if geometry.header else 0.0)
    body_height = geometry.height - (body_top - y0)
    for cell, x in xs.items():
        if geometry.header:
            label, size = _fit(_cell_name(cell), CELL_W, HEADER_H, 6.0)
            scene.text(x + CELL_W / 2, y0 + HEADER_H / 2, label, size, color="#666666")
        scene.rect(x, body_top, CELL_W, body_height, "#f3f3f3", "#b5b5b5", 0.6)

    def lane_top(kind: str, name: str) -> float:
        return body_top + geometry.lane_tops[(kind, row.lanes[(kind, name)])]

    centers = []
    groups: dict[tuple[str, int], list[float]] = {}  # (component, TP group) -> left, top, right, bottom
    for box in row.boxes:
        left, right = xs[(box.kind, box.first)] + BOX_PAD, xs[(box.kind, box.last)] + CELL_W - BOX_PAD
        top, bottom = lane_top(box.kind, box.component) + BOX_PAD, lane_top(box.kind, box.component) + LANE_H - BOX_PAD
        color = colors[box.component]
        scene.rect(left, top, right - left, bottom - top, color, _darker(color), 0.5, z=2)
        label, size = _fit(_ranks_text(box.ranks), right - left, bottom - top)
        scene.text((left + right) / 2, (top + bottom) / 2, label, size, color=_text_color(color))
        centers.append(((left + right) / 2, bottom))
        for group in {rank // tp[box.component] for rank in box.ranks} if box.component in tp else ():
            extent = groups.setdefault((box.component, group), [left, top, right, bottom])
            extent[:] = [min(extent[0], left), min(extent[1], top), max(extent[2], right), max(extent[3], bottom)]
    for left, top, right, _ in groups.values():
        y = top - BOX_PAD - TP_H + 0.035
        scene.line([(left + 0.02, top - 0.01), (left + 0.02, y), (right - 0.02, y), (right - 0.02, top - 0.01)], BRACKET_COLOR, 1.0)
    for index, (name, kind, spanned) in enumerate(row.joins):
        track_y = lane_top(kind, name) + LANE_H + 0.015 + (geometry.tracks[index] + 0.5) * TRACK_H
        xs_spanned = [centers[b][0] for b in spanned]
        dark = _darker(colors[name], 0.5)
        scene.line([(xs_spanned[0], track_y), (xs_spanned[-1], track_y)], dark, 1.1)
        for b in spanned:
            scene.line([(centers[b][0], centers[b][1]), (centers[b][0], track_y)], dark, 1.1)
            scene.dot(centers[b][0], track_y, dark)
    if row.steps:
        x = x0 + LABEL_W + _cells_width(row.cells) + 0.12
        scene.text(x, y0 + geometry.height / 2, _steps_text(row.steps), STEP_FONT, measure=True, ha="left", color="#555555")


def _steps_text(steps: Mapping[str, int]) -> str:
    return "per node: " + ", ".join(f"{name} +{step}" for name, step in steps.items())


def _band_tracks(groups: Sequence[tuple[str, frozenset[int]]]) -> dict[str, int]:
    """A band column per group, so groups sharing nodes sit side by side instead of on top of each other."""
    tracks: dict[str, int] = {}
    for label, members in groups:
        taken = {tracks[other] for other, others in groups if other in tracks and others & members}
        tracks[label] = next(t for t in range(len(groups) + 1) if t not in taken)
    return tracks


def _draw_bands(
    scene: _Scene, spans: Sequence[tuple[_Row, float, float]], labels: Sequence[str], tracks: Mapping[str, int], x0: float
) -> None:
    """A labelled band per node group over each run of consecutive rows in the group."""
    for color_index, label in enumerate(labels):
        start: float | None = None
        end = 0.0
        for row, top, bottom in [*spans, (None, 0.0, 0.0)]:
            member = row is not None and label in row.groups
            if member and start is None:
                start = top
            if member:
                end = bottom
            if not member and start is not None:
                x = x0 + tracks[label] * BAND_W
                scene.rect(x, start, BAND_W - 0.08, end - start, BAND_COLORS[color_index % len(BAND_COLORS)], "#9aa5b5", 0.6)
                text, size = _fit(label, BAND_W - 0.14, 0.3, 7.5)
                scene.text(x + (BAND_W - 0.08) / 2, (start + end) / 2, text, size, weight="bold", color="#33415c")
                start = None


# ====================================================================== drawing the weight sync
@dataclass
class _Panel:
    """One weight-sync panel: a node (or a run of like nodes) with its GPUs, actor ranks and links."""

    nodes: list[int]
    gpus: int
    actor_ranks: dict[int, tuple[int, ...]]  # GPU -> actor ranks on it
    links: list[WeightSyncLink]


def _actor_cells(job: _Job, actor: str, nodes: Sequence[int]) -> dict[int, dict[int, tuple[int, ...]]]:
    cells: dict[int, dict[int, list[int]]] = {node: defaultdict(list) for node in nodes}
    for p in job.placements[actor]:
        if p.cluster_node_rank in cells and p.hardware_type == ACCELERATOR:
            for gpu in p.local_hardware_ranks:
                cells[p.cluster_node_rank][gpu].append(p.rank)
    return {node: {gpu: tuple(sorted(ranks)) for gpu, ranks in per_gpu.items()} for node, per_gpu in cells.items()}


def _sync_panels(
    job: _Job,
    nodes: Sequence[int],
    by_node: Mapping[int, list[WeightSyncLink]],
    actor_cells: Mapping[int, dict[int, tuple[int, ...]]],
    aggregate: bool,
) -> list[_Panel]:
    def gpus(node: int) -> int:
        used = [link.gpu for link in by_node[node]] + list(actor_cells[node])
        return max(job.gpus_of(node), max(used) + 1)

    def bases(node: int) -> dict[str, int]:
        actor = [r for ranks in actor_cells[node].values() for r in ranks]
        base = {"rollout": min(link.rollout_rank for link in by_node[node])}
        return {**base, "actor": min(actor)} if actor else base

    def signature(node: int) -> Hashable:
        base = bases(node)
        shift = base.get("actor", 0)
        links = tuple((link.rollout_rank - base["rollout"], link.gpu, tuple(r - shift for r in link.actor_ranks)) for link in by_node[node])
        cells = tuple(sorted((gpu, tuple(r - shift for r in ranks)) for gpu, ranks in actor_cells[node].items()))
        return (gpus(node), links, cells)

    runs = _runs(nodes, signature, bases) if aggregate else [([node], {}) for node in nodes]
    return [_Panel(run, gpus(run[0]), actor_cells[run[0]], by_node[run[0]]) for run, _ in runs]


def _draw_sync_panels(
    scene: _Scene, panels: Sequence[_Panel], colors: Mapping[str, str], actor: str, rollout: str, actor_tp: int, top: float
) -> float:
    y = top
    for panel in panels:
        y = _draw_sync_panel(scene, panel, colors, actor, rollout, actor_tp, y) + 0.25
    return y


def _draw_sync_panel(
    scene: _Scene, panel: _Panel, colors: Mapping[str, str], actor: str, rollout: str, actor_tp: int, y0: float
) -> float:
    x0 = MARGIN + LABEL_W

    def column(gpu: int) -> float:
        return x0 + gpu * CELL_W

    bracket = SYNC_BRACKET_H if actor_tp > 1 or len(panel.nodes) > 1 else 0.0  # the strip also holds "xN alike"
    actor_y = y0 + HEADER_H + bracket
    rollout_y = actor_y + SYNC_ROW_H + SYNC_LINK_H
    bottom = rollout_y + SYNC_ROW_H
    scene.rect(MARGIN - 0.05, y0 - 0.05, LABEL_W + panel.gpus * CELL_W + 0.15, bottom - y0 + 0.1, "#fafafa", "#cccccc", 0.6, z=0)
    scene.text(MARGIN + 0.02, y0 + HEADER_H / 2, _nodes_text(panel.nodes), 7.5, ha="left", weight="bold")
    if len(panel.nodes) > 1:
        scene.text(MARGIN + 0.02, y0 + HEADER_H / 2 + 0.17, f"×{len(panel.nodes)} alike", 6.0, ha="left", color="#555555")
    for label, name, y in ((actor, actor, actor_y), (rollout, rollout, rollout_y)):
        text, size = _fit(label, LABEL_W - 0.1, SYNC_ROW_H, 7.0)
        scene.text(MARGIN + 0.02, y + SYNC_ROW_H / 2, text, size, ha="left", color=_darker(colors[name], 0.75), weight="bold")
    for gpu in range(panel.gpus):
        scene.text(column(gpu) + CELL_W / 2, y0 + HEADER_H / 2, f"GPU {gpu}", 6.0, color="#666666")
        ranks = panel.actor_ranks.get(gpu)
        if ranks:
            color = colors[actor]
            scene.rect(column(gpu) + BOX_PAD, actor_y, CELL_W - 2 * BOX_PAD, SYNC_ROW_H, color, _darker(color), 0.5, z=2)
            text, size = _fit(_ranks_text(ranks), CELL_W - 2 * BOX_PAD, SYNC_ROW_H)
            scene.text(column(gpu) + CELL_W / 2, actor_y + SYNC_ROW_H / 2, text, size, color=_text_color(color))
        else:
            scene.rect(column(gpu) + BOX_PAD, actor_y, CELL_W - 2 * BOX_PAD, SYNC_ROW_H, "white", "#aaaaaa", 0.6, z=2, style="dashed")
    if actor_tp > 1:
        _draw_tp_brackets(scene, panel, actor_tp, column, actor_y)
    processes: dict[int, list[WeightSyncLink]] = defaultdict(list)
    for link in panel.links:
        processes[link.rollout_rank].append(link)
    slot = panel.gpus * CELL_W / max(len(processes), 1)
    for position, (rank, links) in enumerate(sorted(processes.items())):
        left = x0 + position * slot + 0.06
        width = min(slot - 0.12, 1.4)
        left += (slot - 0.12 - width) / 2
        color = colors[rollout]
        link_color = LINK_COLORS[position % len(LINK_COLORS)]
        scene.rect(left, rollout_y, width, SYNC_ROW_H, color, link_color, 1.6, z=2)
        gpus_text = ",".join(str(link.gpu) for link in links)
        text, size = _fit(f"{rank} · GPU {gpus_text}", width, SYNC_ROW_H)
        scene.text(left + width / 2, rollout_y + SYNC_ROW_H / 2, text, size, color=_text_color(color))
        for i, link in enumerate(links):
            start = (left + width * (i + 1) / (len(links) + 1), rollout_y)
            end = (column(link.gpu) + CELL_W / 2, actor_y + SYNC_ROW_H)
            scene.line([start, end], link_color if link.actor_ranks else "#999999", 1.4, "solid" if link.actor_ranks else "dashed")
    return bottom


def _draw_tp_brackets(scene: _Scene, panel: _Panel, actor_tp: int, column: Callable[[int], float], actor_y: float) -> None:
    groups: dict[int, list[int]] = defaultdict(list)
    for gpu, ranks in panel.actor_ranks.items():
        for rank in ranks:
            groups[rank // actor_tp].append(gpu)
    for group, gpus in sorted(groups.items()):
        left, right = column(min(gpus)) + 0.06, column(max(gpus)) + CELL_W - 0.06
        y = actor_y - 0.06
        scene.line([(left, y + 0.04), (left, y), (right, y), (right, y + 0.04)], BRACKET_COLOR, 0.9)
        text, size = _fit(f"TP group {group}", right - left, 0.16, 6.0)
        scene.text((left + right) / 2, y - 0.08, text, size, color=BRACKET_COLOR)
