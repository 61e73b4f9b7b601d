"""The rule registry is complete and well ordered: every canonical component key has exactly one
rule that enforces it, every rule comes after the rules whose output it reads, and every rule has
its four forms (CP-SAT builder, node-level form, counting bound, verifier checks) and each form
does its job."""

from __future__ import annotations

from collections import Counter

import pytest
from ortools.sat.python import cp_model

from solver_placement import Cluster, PlacementSpec
from solver_placement._errors import InternalError
from solver_placement._solver import build
from solver_placement._solver.answer import Declined, PathName
from solver_placement._solver.build import build_model
from solver_placement._solver.context import PreviousHardware
from solver_placement._solver.counting import COUNTED, counting_conflicts
from solver_placement._solver.counts import count_path
from solver_placement._solver.exact import run_exact
from solver_placement._solver.options import SolverOptions
from solver_placement._solver.rules import DEFAULT_WEIGHTS, RULES
from solver_placement._specification.candidates import expand_all
from solver_placement._specification.grammar import ALIASES, COMPONENT_KEYS
from solver_placement._verify import CHECKS

CANONICAL_KEYS = [key for key in COMPONENT_KEYS if key not in ALIASES]


def test_aliases_spell_canonical_keys() -> None:
    assert set(ALIASES.values()) <= set(CANONICAL_KEYS)


def test_every_canonical_key_is_owned_by_exactly_one_rule() -> None:
    owners = Counter(key for rule in RULES for key in rule.keys)
    unowned = [key for key in CANONICAL_KEYS if owners[key] == 0]
    shared = [key for key, n in owners.items() if n > 1]
    assert not unowned, f"no rule owns {unowned}"
    assert not shared, f"several rules own {shared}"


def test_no_rule_owns_an_unknown_key_or_an_alias() -> None:
    unknown = {rule.name: [key for key in rule.keys if key not in CANONICAL_KEYS] for rule in RULES}
    assert not {name: keys for name, keys in unknown.items() if keys}


def test_rule_names_are_unique() -> None:
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))


def test_registry_order_respects_declared_dependencies() -> None:
    position = {rule.name: i for i, rule in enumerate(RULES)}
    for rule in RULES:
        for dependency in rule.after:
            assert dependency in position, f"{rule.name} comes after unknown rule {dependency!r}"
            assert position[dependency] < position[rule.name], f"{rule.name} must come after {dependency}"


def _exact_hardware(spec: PlacementSpec, component: str, previous: PreviousHardware | None = None) -> list[list[int]]:
    """Per process, the physical ids the exact model built by ``build_model`` gives it."""
    ctx = build_model(spec, expand_all(spec.requests), previous=previous)
    solver, status = run_exact(ctx, SolverOptions(), SolverOptions().start())
    assert status == cp_model.OPTIMAL
    taken = ctx.assignments(solver.response_proto.solution)[component]
    return [taken.hardware[lo:hi].tolist() for lo, hi in zip(taken.indptr[:-1], taken.indptr[1:], strict=True)]


def test_the_objective_weighs_the_topology_terms_the_domains_rule_returns() -> None:
    """Packing from GPU 0 splits the pipeline over racks r0 and r1; only the ``topology`` term,
    which the objective reads from the domains rule's output, moves it into rack r1."""
    cluster = Cluster(3, 2, node_labels=[{"rack": "r0"}, {"rack": "r1"}, {"rack": "r1"}])
    rule = {"processes": 4, "tensor_parallel_size": 2, "pipeline_parallel_size": 2}
    assert _exact_hardware(PlacementSpec.build(cluster, {"pp": rule}), "pp") == [[0], [1], [2], [3]]
    preferring = PlacementSpec.build(cluster, {"pp": {**rule, "topology": {"pipeline_parallel": {"rack": "prefer"}}}})
    assert _exact_hardware(preferring, "pp") == [[2], [3], [4], [5]]


def test_the_objective_keeps_previous_stride_patterns_the_stride_rule_returns() -> None:
    """A strided process keeps its previous GPU pair only through the stride rule's pattern
    starts, which the ``changes`` term reads; without them it would move to GPUs 0-3."""
    spec = PlacementSpec.build(Cluster(1, 8), {"a": {"processes": 2, "hardware_per_process": 2, "stride": 2}})
    assert _exact_hardware(spec, "a") == [[0, 2], [1, 3]]
    assert _exact_hardware(spec, "a", previous={"a": [[4, 6], [5, 7]]}) == [[4, 6], [5, 7]]


def test_a_rule_reading_a_rule_built_after_it_is_an_internal_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """``build_model`` enforces ``after``: a registry that builds the objective before the rules
    it reads fails loudly instead of building an objective without their terms."""
    objective = next(rule for rule in RULES if rule.name == "objective")
    monkeypatch.setattr(build, "RULES", (objective, *(rule for rule in RULES if rule is not objective)))
    spec = PlacementSpec.build(Cluster(1, 4), {"a": {"processes": 2}})
    with pytest.raises(InternalError, match="the objective rule reads the domains rule's output, but domains is not built before it"):
        build.build_model(spec, expand_all(spec.requests))


# ------------------------------------------------------------------ the four forms of every rule


def test_every_rule_names_verifier_checks_that_cover_its_keys() -> None:
    checks = {check.name: check for check in CHECKS}
    named = Counter(name for rule in RULES for name in rule.checks)
    assert set(named) == set(checks), f"checks no rule names: {set(checks) - set(named)}; unknown: {set(named) - set(checks)}"
    for rule in RULES:
        covered = {key for name in rule.checks for key in checks[name].keys}
        assert set(rule.keys) <= covered, f"{rule.name}: keys {set(rule.keys) - covered} have no independent check"
        assert rule.checks or not rule.keys, f"{rule.name} owns keys but names no check"


def test_every_rule_has_a_node_level_form_and_a_counting_bound() -> None:
    for rule in RULES:
        for form in (rule.counts, rule.bound):
            assert callable(form) or (isinstance(form, str) and form), f"{rule.name}: a form is neither a function nor a reason"
    assert set(COUNTED) == {rule.name for rule in RULES if callable(rule.bound)}


#: Per rule whose node-level form can decline: a spec using the rule in a way the counts do not
#: state, and the reason the count path gives.
DECLINED = {
    "per_process": ({"a": {"processes": 4, "resources": "0-3"}}, "a: a filled resources window"),
    "domains": ({"a": {"processes": 4, "tensor_parallel_size": 2, "topology": {"tensor_parallel": {"rack": "require"}}}},
                "a: topology (tensor_parallel.rack: require)"),
    "stride": ({"a": {"processes": 2, "hardware_per_process": 2, "stride": 2}}, "a: a stride whose blocks do not tile its tensor-parallel groups"),
    "collocation": ({"a": "0-3", "b": {"processes": 4, "collocate_with": "a"}}, "b: collocation between a rank-string component and a declarative one"),
    "capacity": ({"a": {"processes": 4, "max_processes_per_hardware": 1}}, "a: max_processes_per_hardware"),
    "memory": ({"a": {"placement": "0-3", "memory_gb": 10}, "b": {"processes": 4}}, "a: memory_gb on a rank-string component"),
}  # fmt: skip


def test_the_node_level_forms_are_the_reasons_the_count_path_declines() -> None:
    assert set(DECLINED) == {rule.name for rule in RULES if callable(rule.counts)}
    cluster = Cluster(2, 8, gpu_memory_gb=80, node_labels=[{"rack": "0"}, {"rack": "1"}])
    for name, (placement, reason) in DECLINED.items():
        spec = PlacementSpec.build(cluster, placement)
        assert count_path(spec, spec.requests, DEFAULT_WEIGHTS, SolverOptions(), SolverOptions().start()) == Declined(PathName.COUNTS, reason), name


#: Per rule with relations: a spec that only its relation makes impossible by counting.
REFUSED = {
    "exclusivity": {"a": {"processes": 9}, "b": {"processes": 8, "exclusive_with": ["a"]}},
    "collocation": {"a": {"processes": 12}, "b": {"processes": 4, "hardware_per_process": 2, "collocate_with": "a"}},
    "memory": {"a": {"processes": 9, "memory_gb": 50}, "b": {"processes": 8, "memory_gb": 50}},
    "capacity": {"a": {"processes": 12, "max_processes_per_hardware": 1}, "b": "0-7"},
}  # fmt: skip


def test_each_counting_bound_refuses_what_only_it_rules_out() -> None:
    assert set(REFUSED) == set(COUNTED)
    cluster = Cluster(2, 8, gpu_memory_gb=80)
    for name, placement in REFUSED.items():
        spec = PlacementSpec.build(cluster, placement)
        conflicts = counting_conflicts(spec, SolverOptions().start())
        assert name in {statement.rule for statement in conflicts}, (name, conflicts)
