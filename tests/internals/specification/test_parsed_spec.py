"""Parsed and resolved specs: parsing never looks at a cluster; resolving checks what needs one,
and leaves whether the job fits to the counting bounds, so a spec too big for its cluster is
still a spec to solve, explain and vary. A component's form is one of three types."""

from dataclasses import replace

import pytest

from solver_placement import Cluster, InfeasiblePlacementError, PlacementConfigError, PlacementSpec, solve
from solver_placement._errors import InternalError
from solver_placement._specification import ParsedSpec
from solver_placement._specification.grammar import Declarative, ExplicitRanks, RankSegments

TOO_BIG = {"a": {"processes": 5, "hardware_per_process": 4}}
SHORT = "a: needs 5 processes x 4 GPUs = 20 GPUs, but node group 'cluster' (16 GPUs) offers 16"


def test_each_form_is_its_own_type_and_every_name_knows_its_rule_owner() -> None:
    parsed = ParsedSpec.parse({"a": "0-3", "b": {"placement": [[0, 1], [2]]}, "c": {"processes": 2}, "d, e": "4-5"})
    assert {name: type(c.form) for name, c in parsed.components.items()} == {
        "a": RankSegments, "b": ExplicitRanks, "c": Declarative, "d": RankSegments, "e": RankSegments}
    assert [c.rule_owner for c in parsed.components.values()] == ["a", "b", "c", "d", "d"]


def test_parsing_asks_nothing_of_a_cluster() -> None:
    parsed = ParsedSpec.parse({"actor": "0-99999", "rollout": {"processes": 100_000, "hardware_per_process": 8}})
    assert list(parsed.components) == ["actor", "rollout"]
    with pytest.raises(PlacementConfigError, match="out of range"):
        PlacementSpec.resolve(parsed, Cluster(num_nodes=1, num_gpus_per_node=8))


def test_a_spec_too_big_for_its_cluster_resolves_and_solving_names_its_shortfall() -> None:
    spec = PlacementSpec.build(Cluster(num_nodes=2, num_gpus_per_node=8), TOO_BIG)
    assert spec.requests["a"].num_processes == 5
    with pytest.raises(InfeasiblePlacementError) as caught:
        solve(spec)
    assert caught.value.conflicts == (SHORT,)


def test_variants_resolve_again() -> None:
    spec = PlacementSpec.build(Cluster(num_nodes=2, num_gpus_per_node=8), TOO_BIG)
    assert solve(spec.on(Cluster(num_nodes=3, num_gpus_per_node=8))).placements("a")
    a = spec.components["a"]
    assert isinstance(a.form, Declarative)
    fewer = spec.with_component(replace(a, form=replace(a.form, processes=4)))
    assert fewer.requests["a"].num_processes == 4 and len(solve(fewer).placements("a")) == 4


def test_a_view_changes_rules_on_the_same_candidates_and_nothing_else() -> None:
    spec = PlacementSpec.build(Cluster(num_nodes=1, num_gpus_per_node=8), {"a": {"processes": 2, "exclusive_with": ["b"]}, "b": "0-1"})
    a = spec.components["a"]
    view = spec.with_rules({"a": replace(a, constraints=replace(a.constraints, exclusive_with=()))})
    assert list(view.components) == ["a"] and view.requests["a"].cand_hw is spec.requests["a"].cand_hw
    assert view.requests["a"].spec.constraints.exclusive_with == ()
    with pytest.raises(InternalError):
        spec.with_rules({"a": replace(a, node_groups=("node",))})
