"""Cost-model auto placement: RLinf's auto-placement toolkit, searched exactly by CP-SAT.

From per-component costs measured in collocated mode (seconds per iteration), batch sizes and
model-parallel sizes, choose between collocation (every component on every GPU, time sharing)
and disaggregation (contiguous GPU blocks in pipeline order, pipelining) and the GPU split,
minimising the modelled iteration time (``docs/cost_model.md`` writes every formula out).

One module per step: ``section`` reads the ``auto_placement:`` keys, ``costs`` (with
``profile_fit``) builds RLinf's cost tables, ``problem`` composes them, ``domains`` sizes the
CP-SAT model, ``search`` solves it, ``result`` holds and prints the answer.
"""

from __future__ import annotations

from solver_placement._auto.costs import CostTable, megatron_gpu_counts, megatron_table, profile_table, rollout_saturation, rollout_table
from solver_placement._auto.problem import AutoProblem
from solver_placement._auto.profile_fit import ProfileFit
from solver_placement._auto.result import COLLOCATED, DISAGGREGATED, AutoCandidate, AutoPlacement, SearchStats
from solver_placement._auto.search import auto_place
from solver_placement._auto.value_domains import fillable_counts, time_unit

__all__ = [
    "COLLOCATED",
    "DISAGGREGATED",
    "AutoCandidate",
    "AutoPlacement",
    "AutoProblem",
    "CostTable",
    "ProfileFit",
    "SearchStats",
    "auto_place",
    "fillable_counts",
    "megatron_gpu_counts",
    "megatron_table",
    "profile_table",
    "rollout_saturation",
    "rollout_table",
    "time_unit",
]
