"""A job's placement as its config states it: components parsed, no cluster looked at yet.

Parsing checks everything the text alone tells (``grammar``) and nothing that needs a cluster,
so it never asks whether the job fits: a parsed spec is what the user wrote, ready to be resolved
on any cluster (``placement_spec``), and the value a variant of a job (another node group, fewer
processes) is made from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from solver_placement._job import Job
from solver_placement._solver_settings import SolverSettings
from solver_placement._specification.grammar import ComponentSpec, parse_component_placement


@dataclass(frozen=True)
class ParsedSpec:
    """All components of a job (config order) and its ``cluster.solver`` options."""

    components: Mapping[str, ComponentSpec]
    solver_options: SolverSettings = field(default_factory=SolverSettings)

    @classmethod
    def from_job(cls, job: Job) -> ParsedSpec:
        """The spec a loaded job states: its ``component_placement`` and solver options."""
        return cls.parse(job.component_placement, job.solver_options)

    @classmethod
    def parse(cls, component_placement: Any, solver_options: SolverSettings | Any = None) -> ParsedSpec:
        """The spec of plain (already copied) ``component_placement`` and ``solver`` values (the
        section as a config states it, or settings read already)."""
        settings = solver_options if isinstance(solver_options, SolverSettings) else SolverSettings.parse(solver_options)
        return cls(parse_component_placement(component_placement), settings)

    def with_component(self, component: ComponentSpec) -> ParsedSpec:
        """The same spec with one component (by its name) stated otherwise."""
        return replace(self, components={**self.components, component.name: component})
