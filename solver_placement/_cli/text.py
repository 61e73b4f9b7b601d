"""The human-readable answers: the header naming the model, the placement table, the one-line summary and one-line errors."""

from __future__ import annotations

from collections.abc import Sequence

from tabulate import tabulate

from solver_placement._cli.config_input import JobInput
from solver_placement._cli.placing import SolvedJob
from solver_placement._constants import ACCELERATOR
from solver_placement._errors import InfeasiblePlacementError, PlacementError
from solver_placement._records import Placement
from solver_placement._solver.conflicts import compact_conflicts

TABLE_COLUMNS = (
    ("component", "component"),
    ("rank", "rank"),
    ("node", "cluster_node_rank"),
    ("group", "node_group_label"),
    ("type", "hardware_type"),
    ("hardware", "local_hardware_ranks"),
    ("visible", "visible_accelerators"),
    ("local rank", "local_rank"),
    ("local world", "local_world_size"),
)
#: Conflicts quoted in a one-line infeasibility error; ``explain`` lists them all.
QUOTED_CONFLICTS = 3


def heading(given: JobInput) -> str:
    """What an answer's first line calls the model: its name, and the GPUs per node assumed when
    its cluster states none (``m.yaml (8 GPUs per node assumed: no num_gpus_per_node)``)."""
    if given.assumed_gpus_per_node is None:
        return given.name
    return f"{given.name} ({given.assumed_gpus_per_node} GPUs per node assumed: no num_gpus_per_node)"


def usage_counts(placed: SolvedJob) -> dict[str, int]:
    """Processes, nodes and GPUs in use, and the cluster's nodes and GPUs: what a summary states."""
    flat = [p for pls in placed.solution.placements_by_component().values() for p in pls]
    cluster = placed.solution.cluster
    return {
        "processes": len(flat),
        "nodes_used": len({p.cluster_node_rank for p in flat}),
        "nodes": cluster.num_nodes,
        "gpus_used": len({(p.cluster_node_rank, g) for p in flat if p.hardware_type == ACCELERATOR for g in p.local_hardware_ranks}),
        "gpus": cluster.num_accelerators,
    }


def summary(placed: SolvedJob) -> str:
    """One line on a valid config: components, processes, nodes and GPUs in use, solver status."""
    records = placed.solution.placements_by_component()
    counts = ", ".join(f"{name} {len(pls)}" for name, pls in records.items())
    used = usage_counts(placed)
    mode = f" in {placed.mode} mode" if placed.mode is not None else ""
    return (
        f"valid{mode}; {len(records)} components, {used['processes']} processes ({counts}) on {used['nodes_used']} of "
        f"{used['nodes']} nodes, {used['gpus_used']} of {used['gpus']} GPUs in use; {placed.solution.status.lower()}"
    )


def one_line(error: PlacementError) -> str:
    """The error as one line: an infeasibility quotes its first conflicts and points to ``explain``."""
    conflicts = compact_conflicts(error.conflicts) if isinstance(error, InfeasiblePlacementError) else []
    if len(conflicts) <= 1:
        return " ".join(line.strip() for line in str(error).splitlines())
    quoted = "; ".join(conflicts[:QUOTED_CONFLICTS])
    more = (
        f"; and {len(conflicts) - QUOTED_CONFLICTS} more (solver-placement explain FILE lists them all)"
        if len(conflicts) > QUOTED_CONFLICTS
        else ""
    )
    return f"no placement exists; these statements conflict: {quoted}{more}"


def format_table(placements: Sequence[Placement]) -> str:
    """A plain-text table, one row per process."""
    rows = [[_cell(getattr(p, field)) for _, field in TABLE_COLUMNS] for p in placements]
    return tabulate(rows, headers=[header for header, _ in TABLE_COLUMNS], tablefmt="simple")


def _cell(value: object) -> object:
    return ",".join(map(str, value)) if isinstance(value, list) else value
