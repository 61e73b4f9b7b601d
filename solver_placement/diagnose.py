"""Why a config cannot be placed, in the user's terms, and the smallest change that would fix it.

``diagnose`` parses and solves a config; on infeasibility it reports the conflicting statements
(from CP-SAT assumption literals or capacity arithmetic) and tries, for the components they name,
the changes a user would make: fewer processes (the most that still fit), another node group,
one more node like the largest in the component's groups. Every suggestion was solved, so it is
known to work.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from solver_placement.cluster.cluster import Cluster
from solver_placement.cluster.schema import cluster_section
from solver_placement.config import ConfigSource, load_config, require_mapping
from solver_placement.constants import RESERVED_LABELS
from solver_placement.errors import InfeasiblePlacementError, PlacementConfigError, PlacementError
from solver_placement.solver.solution import Solution
from solver_placement.solver.solve import solve
from solver_placement.spec.grammar import ComponentSpec, parse_component_placement
from solver_placement.spec.placement_spec import PlacementSpec

#: Solver time for each tried variant; suggestions are best effort within it.
TRY_TIME_LIMIT_S = 10.0


@dataclass(frozen=True)
class Diagnosis:
    """The verdict on a config: a solution, or the error, its conflicts and suggestions."""

    solution: Solution | None
    error: PlacementError | None = None
    conflicts: tuple[str, ...] = ()
    suggestions: tuple[str, ...] = field(default_factory=tuple)

    @property
    def feasible(self) -> bool:
        return self.solution is not None

    def summary(self) -> str:
        """One line for a valid config; the message, conflicts and suggestions otherwise."""
        if self.solution is not None:
            s = self.solution
            processes = sum(len(s.placements(name)) for name in s.components)
            nodes = len({p.cluster_node_rank for name in s.components for p in s.placements(name)})
            return f"valid: {len(s.components)} components, {processes} processes on {nodes} of {s.cluster.num_nodes} nodes ({s.status.lower()})"
        lines = [str(self.error)] if not self.conflicts else ["no placement exists; these statements conflict:", *(f"  - {c}" for c in self.conflicts)]
        lines += [f"suggestion: {s}" for s in self.suggestions]
        return "\n".join(lines)


def diagnose(source: ConfigSource, cluster: Cluster | None = None) -> Diagnosis:
    """Solve ``source``; explain a failure and suggest fixes that were checked by solving."""
    try:
        spec = _unchecked_spec(source, cluster)
        return Diagnosis(solve(spec))
    except InfeasiblePlacementError as error:
        return Diagnosis(None, error, error.conflicts, tuple(suggest(spec, error.conflicts)))
    except PlacementError as error:
        return Diagnosis(None, error)


def suggest(spec: PlacementSpec, conflicts: tuple[str, ...], limit: int = 3) -> list[str]:
    """Checked fixes for the components named in ``conflicts``, smallest change first."""
    found: list[str] = []
    for name in _named(spec, conflicts):
        for attempt in (_fewer_processes, _other_group, _one_more_node):
            fix = attempt(spec, name)
            if fix and fix not in found:
                found.append(fix)
            if len(found) >= limit:
                return found
    return found


def _unchecked_spec(source: ConfigSource, cluster: Cluster | None) -> PlacementSpec:
    """Parse without resolving, so capacity failures surface in ``solve`` with a spec at hand."""
    section = cluster_section(load_config(source))
    if "component_placement" not in section:
        raise PlacementConfigError("cluster.component_placement is missing: nothing to place")
    cluster = cluster or Cluster.from_config(section)
    components = parse_component_placement(section["component_placement"])
    return PlacementSpec(cluster, components, require_mapping(section.get("solver") or {}, "cluster.solver"))


def _named(spec: PlacementSpec, conflicts: tuple[str, ...]) -> list[str]:
    """Components named in the conflicts, declarative ones first (they can change shape)."""
    named = [n for n in spec.components if any(re.search(rf"(^|\W){re.escape(n)}(\W|$)", c) for c in conflicts)]
    return sorted(named, key=lambda n: not spec.components[n].is_declarative)


def _feasible(spec: PlacementSpec) -> bool:
    try:
        solve(spec, time_limit_s=TRY_TIME_LIMIT_S)
    except PlacementError:
        return False
    return True


def _with(spec: PlacementSpec, component: ComponentSpec, cluster: Cluster | None = None) -> PlacementSpec:
    return PlacementSpec(cluster or spec.cluster, {**spec.components, component.name: component}, spec.solver_options)


def _fewer_processes(spec: PlacementSpec, name: str) -> str | None:
    """The largest process count below the requested one that fits (declarative components)."""
    component = spec.components[name]
    decl = component.declarative
    if decl is None or decl.processes is None or decl.processes <= 1:
        return None
    step = component.constraints.tensor_parallel_size
    counts = list(range(step, decl.processes, step))

    def fits(count: int) -> bool:
        return _feasible(_with(spec, replace(component, declarative=replace(decl, processes=count))))

    lo, hi, best = 0, len(counts) - 1, None
    while lo <= hi:  # feasibility is monotone in the process count
        mid = (lo + hi) // 2
        if fits(counts[mid]):
            best, lo = counts[mid], mid + 1
        else:
            hi = mid - 1
    return None if best is None else f"{name}: processes {best} instead of {decl.processes} fits"


def _other_group(spec: PlacementSpec, name: str) -> str | None:
    """Another node group (one label) on which the component fits as stated."""
    component = spec.components[name]
    for label in spec.cluster.node_groups:
        if (label,) == component.node_groups or (label in RESERVED_LABELS and label != "cluster"):
            continue
        if _feasible(_with(spec, replace(component, node_groups=(label,)))):
            return f"{name}: node_group {label!r} instead of {','.join(component.node_groups)!r} fits"
    return None


def _one_more_node(spec: PlacementSpec, name: str) -> str | None:
    """One more node shaped like the largest node of the component's groups."""
    component = spec.components[name]
    cluster = spec.cluster
    nodes = {n for label in component.node_groups for n in cluster.node_group(label).node_ranks}
    like = max(nodes, key=lambda n: (int(cluster.gpus_per_node[n]), -n))
    bigger = cluster.with_extra_node(like)
    if _feasible(PlacementSpec(bigger, spec.components, spec.solver_options)):
        return f"one more node like node {like} ({int(cluster.gpus_per_node[like])} GPUs, in {', '.join(component.node_groups)}) fits"
    return None
