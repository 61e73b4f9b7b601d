"""The verifier's rules, one check per family of config keys, in the order they are reported.

Each :class:`Check` names the component config keys whose promise it tests (canonical names:
aliases such as ``gpus_per_process`` read as the key they spell). Every canonical key of
``spec.grammar.COMPONENT_KEYS`` is owned by exactly one check, so a new key without a check, or a
key checked twice, fails ``tests/internals/verify/test_verify_registry.py`` instead of going unnoticed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from solver_placement._specification.environment import ENVIRONMENT_KEYS
from solver_placement._verify.bookkeeping import check_bookkeeping
from solver_placement._verify.environment import check_environment
from solver_placement._verify.groups import check_groups
from solver_placement._verify.layout import check_layout, check_shared_rule
from solver_placement._verify.memory import check_memory
from solver_placement._verify.placed import Placed
from solver_placement._verify.relations import check_capacity, check_collocation, check_exclusion
from solver_placement._verify.shape import check_shape, check_stride


@dataclass(frozen=True)
class Check:
    """One independent rule check: its name, the config keys it owns, and the function that
    yields one violation text (naming the component and the rule) per broken promise."""

    name: str
    keys: tuple[str, ...]
    check: Callable[[Placed], Iterable[str]]


CHECKS: tuple[Check, ...] = (
    Check("bookkeeping", (), check_bookkeeping),
    Check("layout", ("placement", "node_group", "unit"), check_layout),
    Check("shared_rule", (), check_shared_rule),
    Check("shape", ("processes", "hardware_per_process", "resources"), check_shape),
    Check("stride", ("stride",), check_stride),
    Check("groups", ("tensor_parallel_size", "pipeline_parallel_size", "topology"), check_groups),
    Check("collocation", ("collocate_with",), check_collocation),
    Check("exclusion", ("exclusive_with",), check_exclusion),
    Check("capacity", ("max_processes_per_hardware",), check_capacity),
    Check("memory", ("memory_gb", "offload_weight", "offload_optimizer", "offload_grad"), check_memory),
    Check("environment", ENVIRONMENT_KEYS, check_environment),
)
