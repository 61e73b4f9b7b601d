"""The inputs and the summary of ``one_job_eight_frameworks.ipynb``, shared with its test.

The notebook lays one job out as eight frameworks would and as the solver would. Its inputs live in
``one_job_eight_frameworks.yaml`` and the numbers of its summary table are computed here, so the
notebook and ``tests/test_one_job_eight_frameworks.py`` read the same inputs and count the same way:
a number the notebook shows is one the test checks.

A layout is what the library returns for an input: a framework's predicted layout (``Prediction``,
from ``predict``) or a placed one (``Solution``, from ``solve`` or RLinf's placement class). Both
give placement records per component and the tensor-parallel group size of each, which is all the
summary reads.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml

from solver_placement import Cluster, Placement, Prediction, placement_for_config, predict, solve

HERE = Path(__file__).resolve().parent
INPUTS = HERE / "one_job_eight_frameworks.yaml"
#: Frameworks whose config states the placement: the library places it (the rest are predicted).
PLACED = ("rlinf", "verl")


class Layout(Protocol):
    """What the summary reads of a ``Prediction`` or a ``Solution``."""

    @property
    def cluster(self) -> Cluster: ...

    def placements_by_component(self) -> dict[str, list[Placement]]: ...

    def tensor_parallel_size(self, component: str) -> int: ...


@dataclass(frozen=True)
class Entry:
    """One framework input of the data file: the summary row's name, the framework, its input."""

    name: str
    framework: str
    input: Any


def entries() -> list[Entry]:
    """The framework inputs, in the notebook's order."""
    return [Entry(**item) for item in _data()["layouts"]]


def solver_job() -> Path:
    """The solver's own statement of the job (a ``models/`` scenario); its cluster is everyone's."""
    return (INPUTS.parent / _data()["solver"]).resolve()


def shared_cluster() -> Cluster:
    """The cluster every input is placed or predicted on: the solver scenario's."""
    return solve(solver_job()).cluster


def _data() -> dict[str, Any]:
    with INPUTS.open() as stream:
        return yaml.safe_load(stream)


@dataclass(frozen=True)
class Row:
    """One line of the summary table: what one input's layout uses of the cluster, and what is wrong.

    ``refused`` is the framework's (or the library's) refusal when the input never starts; then the
    counts are None. ``findings`` are the errors and warnings of a prediction, one text per kind
    and role (a placed or solved layout is verified: none). ``ranks_per_node`` counts placed
    processes per cluster node, all roles together; ``used_per_node`` the GPUs they hold there.
    """

    name: str
    framework: str
    gpus: int
    used: int | None = None
    findings: tuple[str, ...] = ()
    errors: int = 0
    split_engines: int | None = None
    ranks_per_node: tuple[int, ...] | None = None
    used_per_node: tuple[int, ...] | None = None
    pending: int = 0
    refused: str | None = None

    @property
    def idle(self) -> int | None:
        return None if self.used is None else self.gpus - self.used

    @property
    def unused_nodes(self) -> tuple[int, ...]:
        return () if self.ranks_per_node is None else tuple(node for node, count in enumerate(self.ranks_per_node) if count == 0)

    def cells(self) -> list[str]:
        """The row as the notebook's table prints it."""
        if self.refused is not None:
            return [self.name, "-", "-", f"refused: {self.refused}", "-", "-"]
        said = "; ".join(self.findings) or "none"
        if self.pending:
            said += f" ({self.pending} ranks never start)"
        per_node = " / ".join(map(str, self.ranks_per_node or ()))
        return [self.name, str(self.used), str(self.idle), said, str(self.split_engines), per_node]


def headers(cluster: Cluster) -> list[str]:
    """The table's header, matching :meth:`Row.cells`."""
    nodes = " / ".join(map(str, range(cluster.num_nodes)))
    return ["layout", "GPUs used", "idle", "findings", "engines split", f"ranks on node {nodes}"]


def summarize(entry: Entry, layout: Layout) -> Row:
    """The summary row of a layout: GPUs held by any rank, engines on more than one node (groups of
    ``tensor_parallel_size`` consecutive ranks, the way the figures bracket them), ranks per node,
    and a prediction's findings."""
    records = layout.placements_by_component()
    held = {(p.cluster_node_rank, gpu) for placed in records.values() for p in placed for gpu in p.local_hardware_ranks}
    per_node = Counter(p.cluster_node_rank for placed in records.values() for p in placed)
    findings: tuple[str, ...] = ()
    errors = pending = 0
    if isinstance(layout, Prediction):
        findings = tuple(dict.fromkeys(f"{f.role}: {f.kind}{'' if f.is_error else ' (warning)'}" for f in layout.findings))
        errors = len(layout.errors)
        pending = sum(1 for rank in layout.ranks if rank.node is None)
    return Row(
        name=entry.name,
        framework=entry.framework,
        gpus=layout.cluster.num_accelerators,
        used=len(held),
        findings=findings,
        errors=errors,
        split_engines=sum(_split_groups(placed, layout.tensor_parallel_size(component)) for component, placed in records.items()),
        ranks_per_node=tuple(per_node.get(node, 0) for node in range(layout.cluster.num_nodes)),
        used_per_node=tuple(sum(1 for on, _ in held if on == node) for node in range(layout.cluster.num_nodes)),
        pending=pending,
    )


def refused(entry: Entry, gpus: int, error: Exception) -> Row:
    """The row of an input that never starts: why, up to the fix the message goes on to give."""
    return Row(name=entry.name, framework=entry.framework, gpus=gpus, refused=str(error).split(";")[0])


def _split_groups(placed: Sequence[Placement], size: int) -> int:
    nodes: dict[int, set[int]] = defaultdict(set)
    for p in placed:
        nodes[p.rank // max(size, 1)].add(p.cluster_node_rank)
    return sum(1 for on in nodes.values() if len(on) > 1)


def takeaway(rows: Sequence[Row], solver: Row, cluster: Cluster) -> str:
    """The notebook's closing paragraph, every number taken from the rows."""
    ran = [row for row in rows if row.refused is None and not row.errors]
    failing = [row for row in rows if row.refused is None and row.errors]
    refusals = [row for row in rows if row.refused is not None]
    small = min(range(cluster.num_nodes), key=lambda node: cluster.gpus_per_node[node])
    skipped = [row for row in ran if small in row.unused_nodes]
    used = sorted({row.used for row in ran if row.used is not None})
    frameworks = len({row.framework for row in rows})
    parts = [
        f"On {cluster.describe()} ({cluster.num_accelerators} GPUs), the solver places the whole job on {solver.used} GPUs, "
        f"{solver.idle} idle, with {solver.split_engines} engines split across nodes.",
        f"Of the {len(rows)} inputs of {frameworks} frameworks, {len(ran)} start as written ({_names(ran)}), on {_span(used)} GPUs;",
        f"{len(skipped)} of them leave the {cluster.gpus_per_node[small]}-GPU node {small} without a rank ({_names(skipped)}).",
    ]
    if failing:
        parts.append(
            f"{len(failing)} start{'s' if len(failing) == 1 else ''} with an error the framework does not check for: "
            + "; ".join(f"{row.name} ({', '.join(row.findings)}, on {row.used} GPUs)" for row in failing)
            + "."
        )
    if refusals:
        parts.append(f"{len(refusals)} never start{'s' if len(refusals) == 1 else ''}: " + "; ".join(f"{row.name}: {row.refused}" for row in refusals) + ".")
    matched = [row for row in ran if row.used_per_node == solver.used_per_node]
    parts.append(f"{len(matched)} ({_names(matched)}) hold as many GPUs on every node as the solver's layout.")
    return " ".join(parts)


def _names(rows: Sequence[Row]) -> str:
    return ", ".join(row.name for row in rows) or "none"


def _span(values: Sequence[int]) -> str:
    if not values:
        return "no"
    return str(values[0]) if len(values) == 1 else f"{values[0]} to {values[-1]}"


def lay_out(entry: Entry, cluster: Cluster) -> Layout:
    """The layout of one input on ``cluster``: RLinf's config placed by the placement class its
    ``runner.task_type`` asks for (as RLinf's entry script builds it), verl's trainer config placed
    as verl's driver and Ray would, every other framework's input predicted as its own code would
    place it. Raises the ``PlacementError`` the framework's own checks (or the library's) give."""
    if entry.framework == "rlinf":
        return placement_for_config(entry.input).solution
    if entry.framework == "verl":
        return solve(entry.input)
    return predict(entry.framework, entry.input, cluster=cluster)
