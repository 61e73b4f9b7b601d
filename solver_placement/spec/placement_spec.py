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
from solver_placement.cluster.schema import cluster_section
from solver_placement.config import ConfigSource, load_config, require_mapping
from solver_placement.errors import PlacementConfigError
from solver_placement.spec.candidates import ComponentRequest, resolve_components
from solver_placement.spec.grammar import ComponentSpec, parse_component_placement


@dataclass(frozen=True)
class PlacementSpec:
    """All components of a job (config order) and the cluster they are placed on."""

    cluster: Cluster
    components: Mapping[str, ComponentSpec]
    solver_options: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_config(cls, config: ConfigSource, cluster: Cluster | None = None) -> PlacementSpec:
        """Parse ``cluster.component_placement`` (and build the cluster from the same config)."""
        plain = load_config(config)
        section = cluster_section(plain)
        cluster = cluster if cluster is not None else Cluster.from_config(section)
        if "component_placement" not in section:
            raise PlacementConfigError("cluster.component_placement is missing: nothing to place")
        return cls.build(cluster, section["component_placement"], section.get("solver"))

    @classmethod
    def build(
        cls, cluster: Cluster, component_placement: Mapping[str, Any], solver_options: Mapping[str, Any] | None = None
    ) -> PlacementSpec:
        """Parse a ``component_placement`` mapping for a given cluster (the programmatic entry)."""
        components = parse_component_placement(component_placement)
        solver = require_mapping(solver_options or {}, "cluster.solver")
        spec = cls(cluster, components, solver)
        _ = spec.requests  # eager: every check that needs the cluster runs now
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
