"""A solved placement as text for terminals and logs: how much of each node every component holds.

A figure (``_plot/``) does not go into a log or an ssh session, and the per-process table
(``solve --format table``) runs to a line per process. This report sits between them, like
NeMo-RL's placement report: one row per run of like nodes, one column per component (the numbered
replicas of one component, ``reward_0`` to ``reward_31``, in one column: ``_replica_groups``), the
GPUs no process holds, and a totals line. It reads the solution's assignment arrays and the cluster tables
with numpy (no records are built, so 65,536 nodes take well under a second) and needs no optional
extra. That is why it is a module beside ``_plot/`` and not inside it: importing ``plot`` needs
matplotlib, and ``solve --format layout`` must work on a core install.

What a cell counts, per node of its row:

* a component's GPUs: distinct GPUs, so processes that share a GPU count it once, and collocated
  components each count the GPUs they share (their columns may add up to more than the node has);
  a column of replicas counts the distinct GPUs of all of them, as one component's;
* ``N proc``: a component's processes that hold robots (custom hardware) or the node itself,
  counted on every node they hold items on;
* ``unused GPUs``: GPUs no process of any component holds, each counted once however many
  components share it, so it never goes negative (a node-level process sees the node's GPUs but
  holds none). ``-``: nothing held, or a node without GPUs.

Consecutive nodes share a row exactly when every cell of their rows reads the same, hardware
included. At most ``max_rows`` rows (:data:`MAX_REPORT_ROWS` unless given) are listed; one
``... N more node ranges`` line stands for the rest, and the totals always count every node.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from solver_placement._arrays import distinct
from solver_placement._cluster.cluster import Cluster
from solver_placement._constants import ACCELERATOR
from solver_placement._errors import PlacementConfigError, agreeing, counted, shown
from solver_placement._replica_groups import ReplicaGroup, replica_groups
from solver_placement._solver.assignment import Assignment

#: Node ranges a report lists unless told otherwise: a screenful, whatever the cluster's size.
MAX_REPORT_ROWS = 64
#: A cell with nothing to count.
_EMPTY = "-"
#: Leading columns that hold words (node range, hardware) and are left-aligned; counts align right.
_WORD_COLUMNS = 2


class _Counts(NamedTuple):
    """A count per node, kept sparse (``values[i]`` on ``nodes[i]``, ascending; 0 elsewhere) so a
    report's memory follows what is placed, not nodes times components."""

    nodes: np.ndarray
    values: np.ndarray

    @classmethod
    def of(cls, node_of_each: np.ndarray, num_nodes: int) -> _Counts:
        """How many of the units lie on each node, given each unit's node."""
        dense = np.bincount(node_of_each, minlength=num_nodes)
        nodes = np.flatnonzero(dense)
        return cls(nodes, dense[nodes])

    def dense(self, num_nodes: int) -> np.ndarray:
        """The count of every node, 0 included."""
        counts = np.zeros(num_nodes, dtype=np.int64)
        counts[self.nodes] = self.values
        return counts

    def at(self, nodes: np.ndarray) -> np.ndarray:
        """The counts on ``nodes``."""
        where = np.searchsorted(self.nodes, nodes)
        found = np.append(self.nodes, -1)[where] == nodes
        return np.where(found, np.append(self.values, 0)[where], 0)


class _Use(NamedTuple):
    """What one component holds: its GPUs and its processes off GPUs per node, and in all."""

    gpus: _Counts
    processes: _Counts
    total_processes: int

    @classmethod
    def of(cls, assignments: Sequence[Assignment], cluster: Cluster) -> _Use:
        """Counted from the physical ids every process holds, each item on its own node; the
        assignments of a component's replicas count together (their processes numbered on)."""
        items = np.concatenate([assignment.hardware for assignment in assignments])
        on_gpu = cluster.hw_kind[items] == cluster.kinds.index(ACCELERATOR)
        gpus = distinct(items[on_gpu])
        first = np.cumsum([0, *(assignment.num_processes for assignment in assignments)])
        process = np.concatenate([
            start + np.repeat(np.arange(assignment.num_processes), np.diff(assignment.indptr)) for start, assignment in zip(first, assignments)
        ])[~on_gpu]  # fmt: skip
        node_pairs = distinct(process * cluster.num_nodes + cluster.hw_node[items[~on_gpu]])  # a process once per node
        return cls(
            _Counts.of(cluster.hw_node[gpus], cluster.num_nodes),
            _Counts.of(node_pairs % cluster.num_nodes, cluster.num_nodes),
            int(distinct(process).size),
        )


@runtime_checkable
class LaidOut(Protocol):
    """What the table reads of a layout: a :class:`~solver_placement.Solution`, or a framework's
    own layout as ``predict`` foresees it (:class:`~solver_placement.Prediction`)."""

    @property
    def components(self) -> list[str]: ...

    @property
    def cluster(self) -> Cluster: ...

    def assignment(self, component: str) -> Assignment: ...


def layout_report(solution: LaidOut, components: Sequence[str] | None = None, max_rows: int = MAX_REPORT_ROWS) -> str:
    """The layout of ``solution`` as a text table: a row per run of like nodes, a column per component.

    For terminals and logs, where the figures of ``solver_placement._plot`` cannot go: a cell is the
    GPUs a component holds on each node of the row (``N proc`` for processes on robots or whole
    nodes), ``unused GPUs`` counts the GPUs no process holds (collocated GPUs once), and the totals
    line counts every node. The module docstring says exactly what each cell counts.

    ``solution`` is what :func:`~solver_placement.solve` returns (for an RLinf placement, its
    ``.solution``), or what :func:`~solver_placement.predict` returns. ``components`` picks and orders the columns (default: every component, in
    config order); the unused GPUs are counted over all components either way. At most
    ``max_rows`` node ranges are listed (:data:`MAX_REPORT_ROWS` by default), so the report stays a
    screenful at 65,536 nodes of all-different layouts; one line counts the ranges left out.
    Wrong arguments raise :class:`~solver_placement.PlacementConfigError`.
    """
    if not isinstance(solution, LaidOut):
        raise PlacementConfigError(
            f"layout_report takes the Solution solve() returns (an RLinf placement's .solution) or a Prediction, not a {type(solution).__name__}"
        )
    if isinstance(max_rows, bool) or not isinstance(max_rows, int) or max_rows < 1:
        raise PlacementConfigError(f"layout_report max_rows must be a positive integer, not {shown(max_rows)}")
    groups = replica_groups(_columns(solution, components))
    layout = _Layout.of(solution, groups)
    starts = layout.run_starts()
    ends = np.r_[starts[1:], layout.cluster.num_nodes] - 1
    rows = layout.rows(starts[:max_rows], ends[:max_rows])
    if starts.size > max_rows:
        left = int(starts.size - max_rows)
        first, last = int(starts[max_rows]), int(ends[-1])
        more = f"... {counted(left, 'more node range')} ({agreeing(last - first + 1, 'node')} {_node_range(first, last)}), counted in the totals"
    else:
        more = None
    header = ["nodes", "hardware", *(group.label for group in groups), "unused GPUs"]
    return "\n".join([*_table(header, rows, more, layout.totals()), *layout.footer(), *map(_replicas_line, (g for g in groups if g.replicas > 1))])


def _columns(solution: LaidOut, components: Sequence[str] | None) -> list[str]:
    """The components to show, each once, checked against the solution (unknown names raise)."""
    if components is None:
        return solution.components
    if isinstance(components, str) or not all(isinstance(name, str) for name in components):
        raise PlacementConfigError(f"layout_report components must be a list of component names, not {shown(components)}")
    if not components:
        raise PlacementConfigError("layout_report components is empty; give None to show every component")
    names = list(dict.fromkeys(components))
    for name in names:
        solution.assignment(name)  # raises PlacementConfigError naming the known components
    return names


class _Layout(NamedTuple):
    """What the report counts, per node: the shown components' use, custom items per type, unused GPUs."""

    cluster: Cluster
    uses: list[_Use]
    custom: list[_Counts]
    unused: np.ndarray

    @classmethod
    def of(cls, solution: LaidOut, groups: Sequence[ReplicaGroup]) -> _Layout:
        cluster = solution.cluster
        held = np.zeros(cluster.num_hardware, dtype=bool)
        for name in solution.components:  # every component, shown or not, holds what it holds
            held[solution.assignment(name).hardware] = True
        held &= cluster.hw_kind == cluster.kinds.index(ACCELERATOR)
        return cls(
            cluster,
            [_Use.of([solution.assignment(name) for name in group.members], cluster) for group in groups],
            [_Counts.of(cluster.hw_node[cluster.hw_kind == kind], cluster.num_nodes) for kind in range(1, len(cluster.kinds) - 1)],
            cluster.gpus_per_node - np.bincount(cluster.hw_node[held], minlength=cluster.num_nodes),
        )

    @property
    def custom_kinds(self) -> tuple[str, ...]:
        """The custom hardware types (robots, ...): the kinds between GPUs and whole nodes."""
        return self.cluster.kinds[1:-1]

    def run_starts(self) -> np.ndarray:
        """The first node of every run of consecutive nodes whose rows read the same: GPU count
        and model, custom items, component cells and unused GPUs."""
        cluster = self.cluster
        models = {model: code for code, model in enumerate(dict.fromkeys(cluster.accelerator_models))}
        columns = [cluster.gpus_per_node, np.array([models[m] for m in cluster.accelerator_models]), self.unused]
        counts = [*self.custom, *(c for use in self.uses for c in (use.gpus, use.processes))]
        differs = np.zeros(cluster.num_nodes - 1, dtype=bool)
        for column in [*columns, *(c.dense(cluster.num_nodes) for c in counts)]:
            differs |= column[1:] != column[:-1]
        return np.flatnonzero(np.r_[True, differs])

    def rows(self, firsts: np.ndarray, lasts: np.ndarray) -> list[list[str]]:
        """One row per run ``firsts[i]..lasts[i]``, read from its first node."""
        custom = [counts.at(firsts).tolist() for counts in self.custom]
        cells = [list(map(_cell, use.gpus.at(firsts).tolist(), use.processes.at(firsts).tolist())) for use in self.uses]
        rows = []
        for row, (first, last) in enumerate(zip(firsts.tolist(), lasts.tolist())):
            gpus = int(self.cluster.gpus_per_node[first])
            hardware = _hardware(gpus, self.cluster.accelerator_models[first], [(kind, at[row]) for kind, at in zip(self.custom_kinds, custom)])
            unused = str(self.unused[first]) if gpus else _EMPTY
            rows.append([_node_range(first, last), hardware, *(column[row] for column in cells), unused])
        return rows

    def totals(self) -> list[str]:
        """The totals row: every node, every GPU and item, each component's GPUs or processes."""
        items = [(kind, int(counts.values.sum())) for kind, counts in zip(self.custom_kinds, self.custom)]
        hardware = f"{counted(self.cluster.num_nodes, 'node')}, {_hardware(self.cluster.num_accelerators, None, items)}"
        uses = [_cell(int(use.gpus.values.sum()), use.total_processes) for use in self.uses]
        return ["total", hardware, *uses, str(int(self.unused.sum()))]

    def footer(self) -> list[str]:
        """GPUs in use over the whole cluster, and how to read a cell."""
        unused, gpus = int(self.unused.sum()), self.cluster.num_accelerators
        return [
            f"{gpus - unused} of {counted(gpus, 'GPU')} in use, {unused} unused.",
            "Cells are per node of their row: a component's GPUs, or 'proc', its processes on robots or whole nodes.",
            "Components that share a GPU each count it; 'unused GPUs' and 'in use' count it once.",
        ]


def _table(header: list[str], rows: list[list[str]], more: str | None, totals: list[str]) -> list[str]:
    """Aligned columns (words left, counts right), a rule under the header and above the totals,
    and ``more`` as a line of its own after the rows."""
    widths = [max(len(row[i]) for row in (header, *rows, totals)) for i in range(len(header))]
    rule = "  ".join("-" * width for width in widths)

    def line(cells: Sequence[str]) -> str:
        aligned = (cell.ljust(width) if i < _WORD_COLUMNS else cell.rjust(width) for i, (cell, width) in enumerate(zip(cells, widths)))
        return "  ".join(aligned).rstrip()

    return [line(header), rule, *map(line, rows), *([more] if more else []), rule, line(totals)]


def _replicas_line(group: ReplicaGroup) -> str:
    """What a column of replicas stands for: how many, and the components it counts together."""
    return f"Column {group.label} counts {group.replicas} replicas together: components {group.members[0]} to {group.members[-1]}."


def _node_range(first: int, last: int) -> str:
    return str(first) if first == last else f"{first}-{last}"


def _hardware(gpus: int, model: str | None, custom: Sequence[tuple[str, int]]) -> str:
    """``8x A800``, ``4 GPUs``, ``2 robots`` or ``no GPUs``: what a node (or the cluster) offers."""
    parts = [f"{gpus}x {model}" if model else counted(gpus, "GPU")] if gpus else []
    parts += [counted(count, kind) for kind, count in custom if count]
    return ", ".join(parts) or "no GPUs"


def _cell(gpus: int, processes: int) -> str:
    """``8`` (GPUs), ``4 proc`` (processes off GPUs), both joined by ``+``, or ``-``."""
    parts = ([str(gpus)] if gpus else []) + ([f"{processes} proc"] if processes else [])
    return " + ".join(parts) or _EMPTY

