"""Specs: what each component asks for (``grammar``), a job's components as its config states
them (:class:`ParsedSpec`), resolved on a cluster into per-process candidates (``candidates``)
as a job's :class:`PlacementSpec` (``placement_spec``)."""

from solver_placement._specification.grammar import ComponentSpec
from solver_placement._specification.parsed_spec import ParsedSpec
from solver_placement._specification.placement_spec import PlacementSpec

__all__ = ["ComponentSpec", "ParsedSpec", "PlacementSpec"]
