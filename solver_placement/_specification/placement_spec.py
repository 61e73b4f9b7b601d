"""A job's placement spec resolved on one cluster: every component's candidates, checked.

A :class:`ParsedSpec` (``parsed_spec``) is what the config says; :meth:`PlacementSpec.resolve`,
the one way a spec is made, resolves it on a cluster at once (``candidates``), so every check
that needs the cluster (node groups exist, ranks in range, the spec's size, the environment)
runs when the spec is made, not when it is solved. Whether the cluster has room for the job is
not asked here: that is the counting bounds' arithmetic (``_solver/bounds``), so a spec too big
for its cluster is still a spec, which ``diagnose`` can vary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Union

from solver_placement._cluster.cluster import Cluster, ResourceSet
from solver_placement._config import ConfigSource
from solver_placement._config_copy import to_plain
from solver_placement._errors import InternalError
from solver_placement._job import Job, load_job
from solver_placement._limits import check
from solver_placement._limits.host_memory import check_host_memory, estimate
from solver_placement._solver_settings import SOLVER_SECTION, SolverSettings
from solver_placement._specification.candidates import MAX_CANDIDATE_PAIRS, ComponentRequest, resolve_components
from solver_placement._specification.environment import check_environment
from solver_placement._specification.grammar import ComponentSpec, Declarative, ExplicitRanks, RankSegments
from solver_placement._specification.parsed_spec import ParsedSpec


@dataclass(frozen=True)
class PlacementSpec:
    """A parsed spec on a cluster, with the candidates (``requests``) of every component that
    owns its rule. Made by :meth:`resolve` and the entries that call it, never field by field."""

    parsed: ParsedSpec
    cluster: Cluster
    requests: dict[str, ComponentRequest] = field(compare=False, repr=False)

    @classmethod
    def resolve(cls, parsed: ParsedSpec, cluster: Cluster) -> PlacementSpec:
        """The spec of ``parsed`` on ``cluster``. Its size is checked from counts
        (``max_processes``, the memory budget) before any candidate array is allocated."""
        check_spec_size(parsed.components, cluster)
        requests = resolve_components(parsed.components, cluster)
        for name, component in parsed.components.items():
            request = requests[component.rule_owner]
            check_environment(name, component.environment, request.resources, request.cand_hw, cluster)
        return cls(parsed, cluster, requests)

    @classmethod
    def from_config(cls, config: ConfigSource | Job, cluster: Cluster | None = None) -> PlacementSpec:
        """The spec of any job ``load_job`` reads (``cluster.component_placement``, ``resource_pools:``,
        verl's trainer config, ...), on the job's cluster or on ``cluster`` when given."""
        return spec_of_job(load_job(config, cluster))

    @classmethod
    def from_component_placement(cls, job: Job) -> PlacementSpec:
        """The spec of the job's ``cluster.component_placement`` on its cluster: the translation
        of the default front end, and what RLinf's classes place whatever else a config holds."""
        return cls.resolve(ParsedSpec.from_job(job), job.stated_cluster)

    @classmethod
    def build(
        cls, cluster: Cluster, component_placement: Mapping[str, Any], solver_options: SolverSettings | Mapping[str, Any] | None = None
    ) -> PlacementSpec:
        """Parse a ``component_placement`` mapping for a given cluster (the programmatic entry)."""
        settings = solver_options if isinstance(solver_options, SolverSettings) else to_plain(solver_options, SOLVER_SECTION)
        parsed = ParsedSpec.parse(to_plain(component_placement, "cluster.component_placement"), settings)
        return cls.resolve(parsed, cluster)

    @property
    def components(self) -> Mapping[str, ComponentSpec]:
        return self.parsed.components

    @property
    def solver_options(self) -> SolverSettings:
        return self.parsed.solver_options

    @property
    def names(self) -> list[str]:
        return list(self.components)

    def owner_of(self, name: str) -> str:
        """The component whose rule (and request) places ``name``: itself, or the first of its key."""
        return self.components[name].rule_owner

    def resources_of(self, name: str) -> ResourceSet:
        """The resources (ranked hardware of its node groups) a component's ranks count."""
        return self.requests[self.owner_of(name)].resources

    def with_component(self, component: ComponentSpec) -> PlacementSpec:
        """The spec with one component stated otherwise, resolved again on the same cluster."""
        return PlacementSpec.resolve(self.parsed.with_component(component), self.cluster)

    def on(self, cluster: Cluster) -> PlacementSpec:
        """The same components resolved on another cluster."""
        return PlacementSpec.resolve(self.parsed, cluster)

    def with_rules(self, components: Mapping[str, ComponentSpec]) -> PlacementSpec:
        """Some of the components, with rules (``constraints``) that do not shape candidates
        changed, on this spec's candidates: the solver's views of a spec (its rank strings alone,
        one node's processes, a preferred domain required) need no second resolution."""
        for name, component in components.items():
            if replace(component, constraints=self.components[name].constraints) != self.components[name] or component.rule_owner not in components:
                raise InternalError(f"{name}: a view of a spec changes rules only and keeps the component whose rule it shares")
        requests = {name: replace(self.requests[name], spec=component) for name, component in components.items() if name in self.requests}
        return PlacementSpec(ParsedSpec(components, self.solver_options), self.cluster, requests)


#: What every solving entry point takes (``solve``, ``explain``, ``diagnose``): a spec, or
#: anything :func:`~solver_placement._job.load_job` reads.
SpecSource = Union["PlacementSpec", ConfigSource, Job]


def spec_of(source: SpecSource, cluster: Cluster | None = None) -> PlacementSpec:
    """``source`` as a spec: a spec as it is, anything else loaded once and translated by its front
    end, on ``cluster`` when given."""
    return source if isinstance(source, PlacementSpec) else spec_of_job(load_job(source, cluster))


def spec_of_job(job: Job) -> PlacementSpec:
    """The spec a job states, translated by the front end that read it (``_frontends/``), so
    every entry point reads every framework's input and the core knows none of them."""
    spec = job.frontend.translate(job)
    if not isinstance(spec, PlacementSpec):
        raise InternalError(f"front end {job.frontend.name!r} translated the job into {type(spec).__name__}, not a PlacementSpec")
    return spec


def check_spec_size(components: Mapping[str, ComponentSpec], cluster: Cluster) -> None:
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
            else "give it fewer processes or leave the layout to a declarative component (the count model places those)"
        )
        why = f"{component_processes} processes with {model_pairs} (process, candidate) pairs"
        check_host_memory(estimate(component_processes, table_pairs, model_pairs), f"component {component.name!r}", why, shrink)


def _counts(component: ComponentSpec, cluster: Cluster) -> tuple[int, int, int] | None:
    """Processes, materialised candidate pairs and model candidate pairs of a component, as
    ``candidates`` will build them (upper bounds), or None when its node groups are unknown."""
    if any(label not in cluster.node_groups for label in component.node_groups):
        return None
    total = len(cluster.resources(component.node_groups, component.count_nodes))
    match component.form:
        case ExplicitRanks() as listed:
            pairs = int(listed.ranks.size)
            return listed.num_processes, pairs, pairs
        case RankSegments(segments):
            processes = pairs = 0
            for segment in segments:
                resources = len(segment.resources) if segment.resources is not None else total
                segment_processes = len(segment.processes) if segment.processes is not None else resources
                processes, pairs = processes + segment_processes, pairs + max(resources, segment_processes)
            return processes, pairs, pairs
        case Declarative() as decl:
            return _declarative_counts(decl, total)


def _declarative_counts(decl: Declarative, total: int) -> tuple[int, int, int]:
    """:func:`_counts` of a declarative component whose node groups rank ``total`` items."""
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
