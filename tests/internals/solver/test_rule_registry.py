"""The rule registry is complete and well ordered: every canonical component key has exactly one
rule that enforces it, every rule comes after the rules whose output it reads, and every rule has
its five forms (CP-SAT builder, node-level form, counting bound, first-fit form, verifier checks)
or says why it needs none, and each form does its job: the builder keeps the exact model's answer
within the rule's checks, the node-level form is the count path's reason to decline, the bound
refuses what only it rules out, and the first-fit form keeps first fit's placement within them."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from ortools.sat.python import cp_model

from solver_placement import Cluster, PlacementSpec
from solver_placement._errors import InternalError
from solver_placement._solver import build, first_fit
from solver_placement._solver.answer import Declined, PathName
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.build import build_model
from solver_placement._solver.context import PreviousHardware
from solver_placement._solver.counting import COUNTED, counting_conflicts
from solver_placement._solver.counts import count_path
from solver_placement._solver.exact import run_exact
from solver_placement._solver.options import SolverOptions
from solver_placement._solver.rules import RULES, Rule, RuleOutput
from solver_placement._solver.solution import Solution
from solver_placement._solver_settings import DEFAULT_WEIGHTS
from solver_placement._specification.candidates import expand_all
from solver_placement._specification.grammar import ALIASES, COMPONENT_KEYS
from solver_placement._verify import CHECKS
from solver_placement._verify.placed import read_placements

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


# ------------------------------------------------------------------ the five forms of every rule


def test_every_rule_names_verifier_checks_that_cover_its_keys() -> None:
    checks = {check.name: check for check in CHECKS}
    named = Counter(name for rule in RULES for name in rule.checks)
    assert set(named) == set(checks), f"checks no rule names: {set(checks) - set(named)}; unknown: {set(named) - set(checks)}"
    for rule in RULES:
        covered = {key for name in rule.checks for key in checks[name].keys}
        assert set(rule.keys) <= covered, f"{rule.name}: keys {set(rule.keys) - covered} have no independent check"
        assert rule.checks or not rule.keys, f"{rule.name} owns keys but names no check"


def test_every_rule_has_a_builder_a_node_level_form_a_counting_bound_and_a_first_fit_form() -> None:
    for rule in RULES:
        assert callable(rule.build), f"{rule.name}: no builder"
        for form in (rule.counts, rule.bound, rule.fits):
            assert callable(form) or (isinstance(form, str) and form), f"{rule.name}: a form is neither a function nor a reason"
    assert set(COUNTED) == {rule.name for rule in RULES if callable(rule.bound)}


#: Per rule whose node-level form can decline: a spec using the rule in a way the counts do not
#: state, and the reason the count path gives.
DECLINED = {
    "domains": ({"a": {"processes": 16, "tensor_parallel_size": 8, "pipeline_parallel_size": 2,
                       "topology": {"pipeline_parallel": {"rack": "prefer", "zone": "prefer"}}}},
                "a: topology (pipeline_parallel.rack: prefer)"),
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


def _broken_checks(spec: PlacementSpec, by_request: Mapping[str, Assignment]) -> set[str]:
    """The verifier checks that find a violation in an answer given per rule-owning request."""
    solution = Solution(spec, spec.requests, {c.name: by_request[c.rule_owner] for c in spec.components.values()}, "FEASIBLE", None)
    placed = read_placements(spec, solution.placements_by_component())
    return {check.name for check in CHECKS if any(True for _ in check.check(placed))}


def _without(name: str, **form: Any) -> tuple[Rule, ...]:
    """The registry with rule ``name``'s form replaced (``build=...`` or ``fits=...``)."""
    return tuple(replace(rule, **form) if rule.name == name else rule for rule in RULES)


#: Per rule with a first-fit form: a spec first fit places within every check, but not once that
#: form is left out (the item it refuses is the lowest one, which first fit would take).
FITTED = {
    "exclusivity": {"a": "0-3", "b": {"processes": 4, "exclusive_with": ["a"]}},
    "capacity": {"a": "0-3", "b": {"processes": 4, "max_processes_per_hardware": 1}},
    "memory": {"a": {"placement": "0-3", "memory_gb": 50}, "b": {"processes": 4, "memory_gb": 50}},
}  # fmt: skip


@pytest.mark.unverified_solutions  # each rule is left out on purpose: the verifier must refuse the layout
def test_first_fit_keeps_each_rule_through_its_first_fit_form_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """First fit holds no copy of a rule: leaving one family's first-fit form out of the registry
    is enough for its placement to break exactly that family's checks."""
    assert set(FITTED) == {rule.name for rule in RULES if callable(rule.fits)}
    cluster = Cluster(1, 8, gpu_memory_gb=80)
    checks = {rule.name: set(rule.checks) for rule in RULES}
    for name, placement in FITTED.items():
        spec = PlacementSpec.build(cluster, placement)
        monkeypatch.setattr(first_fit, "RULES", RULES)
        built = first_fit.first_fit(spec, spec.requests, SolverOptions().start())
        assert built is not None and not _broken_checks(spec, built), name
        monkeypatch.setattr(first_fit, "RULES", _without(name, fits="left out"))
        built = first_fit.first_fit(spec, spec.requests, SolverOptions().start())
        assert built is not None, name
        broken = _broken_checks(spec, built)
        assert broken and broken <= checks[name], (name, broken)


def _nothing(ctx: Any, earlier: RuleOutput) -> RuleOutput:
    """A builder that states nothing: what a rule's builder is replaced by to see its job."""
    return RuleOutput()


def _exact_answer(spec: PlacementSpec) -> dict[str, Assignment]:
    """The exact model's optimal answer per rule-owning request, built from ``build.RULES``."""
    ctx = build.build_model(spec, expand_all(spec.requests))
    solver, status = run_exact(ctx, SolverOptions(), SolverOptions().start())
    assert status == cp_model.OPTIMAL
    return ctx.assignments(solver.response_proto.solution)


_RACKS = [{"rack": "r0"}, {"rack": "r1"}, {"rack": "r1"}]
#: Per rule promising something of a placement: a spec the exact model places within every check,
#: and whose optimum breaks that rule's checks once its builder states nothing. The per-process
#: rule is the exception below: without it a process may hold nothing, which is not even a record.
BUILT = {
    "domains": (Cluster(3, 2, node_labels=_RACKS), {"pp": {"processes": 4, "tensor_parallel_size": 2, "pipeline_parallel_size": 2,
                                                           "topology": {"pipeline_parallel": {"rack": "require"}}}}),
    "stride": (Cluster(1, 4), {"a": {"processes": 2, "hardware_per_process": 2, "stride": 2}}),
    "sharing": (Cluster(1, 2), {"a": {"processes": 4, "resources": "0-1"}}),
    "collocation": (Cluster(1, 8), {"a": "4-7", "b": {"processes": 4, "collocate_with": "a"}}),
    "exclusivity": (Cluster(1, 8), {"a": "0-3", "b": {"processes": 4, "exclusive_with": ["a"]}}),
    "capacity": (Cluster(1, 8), {"a": "0-3", "b": {"processes": 4, "max_processes_per_hardware": 1}}),
    "memory": (Cluster(1, 8, gpu_memory_gb=80), {"a": {"placement": "0-3", "memory_gb": 50}, "b": {"processes": 4, "memory_gb": 50}}),
}  # fmt: skip


@pytest.mark.unverified_solutions  # each builder is left out on purpose: the verifier must refuse the answer
def test_each_builder_keeps_the_exact_answer_within_its_rule_s_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every rule that promises something of a placement keeps it in the exact model through its
    own builder. The symmetry and objective rules promise nothing (no checks): what they steer is
    pinned by the objective tests above and the model digests."""
    promises = {rule.name for rule in RULES if rule.checks} - {"per_process", "environment"}
    assert set(BUILT) == promises
    for rule in RULES:
        if rule.name not in BUILT:
            continue
        cluster, placement = BUILT[rule.name]
        spec = PlacementSpec.build(cluster, placement)
        monkeypatch.setattr(build, "RULES", RULES)
        assert not _broken_checks(spec, _exact_answer(spec)), rule.name
        monkeypatch.setattr(build, "RULES", _without(rule.name, build=_nothing))
        broken = _broken_checks(spec, _exact_answer(spec))
        assert broken & set(rule.checks), (rule.name, broken)


def test_the_per_process_builder_gives_each_process_its_amount(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without it, the optimum leaves a rank string's processes without hardware (they cost no
    node): no record could even be written for them."""
    spec = PlacementSpec.build(Cluster(1, 6), {"a": {"processes": 2, "hardware_per_process": 2}, "b": "4-5"})
    answer = _exact_answer(spec)
    assert _held(answer) == {"a": [2, 2], "b": [1, 1]} and not _broken_checks(spec, answer)
    monkeypatch.setattr(build, "RULES", _without("per_process", build=_nothing))
    assert _held(_exact_answer(spec))["b"] == [0, 0]


def _held(answer: Mapping[str, Assignment]) -> dict[str, list[int]]:
    """Per request, how many items each of its processes holds."""
    return {name: np.diff(assignment.indptr).tolist() for name, assignment in answer.items()}


def test_the_environment_builder_states_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its keys say what a process sees, never where it goes: the model is the same without it."""
    spec = PlacementSpec.build(Cluster(1, 4), {"a": {"processes": 2, "egl_device": True, "numa_bind": False}})
    with_it = str(build.build_model(spec, expand_all(spec.requests)).model.proto)
    monkeypatch.setattr(build, "RULES", _without("environment", build=_nothing))
    assert str(build.build_model(spec, expand_all(spec.requests)).model.proto) == with_it
