"""Specs: what each component asks for (``grammar``), resolved on a cluster into per-process
candidates (``candidates``), gathered into a job's :class:`PlacementSpec` (``placement_spec``)."""

from solver_placement.spec.grammar import ComponentSpec
from solver_placement.spec.placement_spec import PlacementSpec

__all__ = ["ComponentSpec", "PlacementSpec"]
