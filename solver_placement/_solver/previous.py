"""Where each process was before a re-plan, as physical ids of the cluster it is re-planned on.

Why its own module: ``solve(..., previous=...)`` prices the ``changes`` term with it, and
``replan``'s keep-in-place answer is measured on the same scale (its objective and its bound),
so both read earlier placements the one way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from solver_placement._errors import PlacementConfigError
from solver_placement._records import Placement
from solver_placement._solver.solution import Solution
from solver_placement._specification.placement_spec import PlacementSpec

#: An earlier answer, or its placement records by component.
PreviousPlacements = Solution | Mapping[str, Sequence[Placement]]


def previous_hardware(spec: PlacementSpec, previous: PreviousPlacements | None) -> dict[str, list[list[int]]]:
    """Physical ids each process held before, per component, on this spec's cluster (records on
    hardware the cluster no longer has, e.g. a lost node, are left out)."""
    if previous is None:
        return {}
    records = previous.placements_by_component() if isinstance(previous, Solution) else previous
    held = {}
    for name, placements in records.items():
        if name in spec.components:
            held[name] = [
                [spec.cluster.physical_id(p.cluster_node_rank, p.hardware_type, local) for local in (p.local_hardware_ranks or [0])]
                for p in placements
                if _exists(spec, p)
            ]
    return held


def _exists(spec: PlacementSpec, p: Placement) -> bool:
    """False for records on hardware the cluster no longer has (e.g. a lost node)."""
    try:
        for local in p.local_hardware_ranks or [0]:
            spec.cluster.physical_id(p.cluster_node_rank, p.hardware_type, local)
    except PlacementConfigError:
        return False
    return True
