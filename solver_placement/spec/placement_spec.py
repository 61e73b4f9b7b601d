"""A job's placement spec: its components (parsed by ``grammar``) on one cluster.

Building a spec resolves every component's candidates at once (``candidates``), so every check
that needs the cluster (node groups exist, ranks in range, capacity arithmetic) runs when the
spec is made, not when it is solved.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from solver_placement.cluster.cluster import Cluster, ResourceSet
from solver_placement.config import ConfigSource, require_mapping, to_plain
from solver_placement.job import Job, load_job
from solver_placement.limits import check
from solver_placement.limits.memory import check_memory, estimate
from solver_placement.spec.candidates import MAX_CANDIDATE_PAIRS, ComponentRequest, resolve_components
from solver_placement.spec.environment import check_environment
from solver_placement.spec.grammar import ComponentSpec, parse_component_placement


@dataclass(frozen=True)
class PlacementSpec:
    """All components of a job (config order) and the cluster they are placed on."""

    cluster: Cluster
    components: Mapping[str, ComponentSpec]
    solver_options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: ConfigSource | Job, cluster: Cluster | None = None) -> PlacementSpec:
        """Parse ``cluster.component_placement`` of a job (loaded by ``load_job`` unless it is one)
        on its cluster, or on ``cluster`` when given."""
        job = load_job(config, cluster)
        placed_on = job.stated_cluster
        return cls._checked(placed_on, job.component_placement, job.solver_options)

    @classmethod
    def build(
        cls, cluster: Cluster, component_placement: Mapping[str, Any], solver_options: Mapping[str, Any] | None = None
    ) -> PlacementSpec:
        """Parse a ``component_placement`` mapping for a given cluster (the programmatic entry).

        The spec's size is checked from counts (``max_processes``, the memory budget) before any
        candidate array is allocated.
        """
        return cls._checked(cluster, to_plain(component_placement, "cluster.component_placement"), to_plain(solver_options, "cluster.solver"))

    @classmethod
    def _checked(cls, cluster: Cluster, component_placement: Any, solver_options: Any) -> PlacementSpec:
        """The spec of plain (already copied) config values."""
        components = parse_component_placement(component_placement)
        check_size(components, cluster)
        solver = require_mapping(solver_options or {}, "cluster.solver")
        spec = cls(cluster, components, solver)
        _ = spec.requests  # eager: every check that needs the cluster runs now
        for name, component in components.items():
            request = spec.requests[component.shares_rule_with or name]
            check_environment(name, component.environment, request.resources, request.cand_hw, cluster)
        return spec

    @cached_property
    def requests(self) -> dict[str, ComponentRequest]:
        """Per-process candidates of every component that owns its rule (see ``candidates.py``)."""
        return resolve_components(self.components, self.cluster)

    def resources_of(self, name: str) -> ResourceSet:
        """The resources (ranked hardware of its node groups) a component's ranks count."""
        component = self.components[name]
        return self.requests[component.shares_rule_with or name].resources

    @property
    def names(self) -> list[str]:
        return list(self.components)


def check_size(components: Mapping[str, ComponentSpec], cluster: Cluster) -> None:
    """Refuse a spec above ``max_processes`` or the memory budget, from counts alone, naming the
    component that makes it large and what shrinks it."""
    processes = 0
    for component in components.values():
        counts = None if component.shares_rule_with is not None else _counts(component, cluster)
        if counts is None:
            continue  # shares another key's rule, or names an unknown node group (reported by candidates)
        component_processes, table_pairs, model_pairs = counts
        processes += component_processes
        check("max_processes", processes, f"component {component.name!r}", "the number of processes (with the components before it)")
        shrink = (
            "narrow its 'resources' window or ask for fewer processes"
            if component.is_declarative
            else "give it fewer processes or leave the layout to a declarative component (node-level decomposition)"
        )
        why = f"{component_processes} processes with {model_pairs} (process, candidate) pairs"
        check_memory(estimate(component_processes, table_pairs, model_pairs), f"component {component.name!r}", why, shrink)


def _counts(component: ComponentSpec, cluster: Cluster) -> tuple[int, int, int] | None:
    """Processes, materialised candidate pairs and model candidate pairs of a component, as
    ``candidates`` will build them (upper bounds), or None when its node groups are unknown."""
    if any(label not in cluster.node_groups for label in component.node_groups):
        return None
    total = len(cluster.resources(component.node_groups, component.count_nodes))
    if component.explicit is not None:
        pairs = sum(len(ranks) for ranks in component.explicit)
        return len(component.explicit), pairs, pairs
    decl = component.declarative
    if decl is None:
        processes = pairs = 0
        for segment in component.segments:
            resources = len(segment.resources) if segment.resources is not None else total
            segment_processes = len(segment.processes) if segment.processes is not None else resources
            processes, pairs = processes + segment_processes, pairs + max(resources, segment_processes)
        return processes, pairs, pairs
    window = len(decl.resources) if decl.resources is not None else total
    processes = decl.processes if decl.processes is not None else window // (decl.hardware_per_process or 1)
    if not decl.fill:  # one shared window; copied per process only for the flat model, up to its limit
        flat = processes * window
        return processes, window, flat if flat <= MAX_CANDIDATE_PAIRS else processes + window
    per_process = max(1, window // max(1, processes))
    stride = decl.stride if isinstance(decl.stride, int) else 1
    block = per_process * stride
    pairs = processes * (block if processes <= window and window % block == 0 else window)
    return processes, pairs, pairs
