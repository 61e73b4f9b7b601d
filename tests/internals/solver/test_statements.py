"""Conflicts are records: every statement names its component, the config keys it rests on, its
rule family and the processes it is about, consistently with the spec it came from."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ROOT, config

from solver_placement import InfeasiblePlacementError, PlacementSpec, Statement, diagnose, explain, solve
from solver_placement._solver.conflicts import compact_statements, grouped_lines
from solver_placement._solver.rules import RULES
from solver_placement._solver.statements import COUNTING
from solver_placement._specification.grammar import ALIASES, COMPONENT_KEYS

INFEASIBLE = sorted((ROOT / "models" / "infeasible").glob("*.yaml"))
RULE_NAMES = {rule.name for rule in RULES} | {COUNTING}
CANONICAL_KEYS = set(COMPONENT_KEYS) - set(ALIASES)


def _conflict(source: object) -> tuple[PlacementSpec, tuple[Statement, ...]]:
    spec = PlacementSpec.from_config(source)
    with pytest.raises(InfeasiblePlacementError) as caught:
        solve(spec)
    return spec, caught.value.statements


@pytest.mark.parametrize("path", INFEASIBLE, ids=[p.stem for p in INFEASIBLE])
def test_every_statement_of_an_impossible_model_is_a_consistent_record(path: Path) -> None:
    spec, statements = _conflict(path)
    assert statements
    for statement in statements:
        assert statement.rule in RULE_NAMES, statement
        assert set(statement.keys) <= CANONICAL_KEYS, statement
        assert set(statement.named) <= set(spec.components), statement
        if statement.component:
            assert statement.keys, f"a component's statement rests on some key: {statement}"
        else:
            assert statement.rule == COUNTING, f"only the arithmetic belongs to no component: {statement}"
        if statement.processes is not None:
            first, last = statement.processes
            assert 0 <= first <= last < spec.requests[spec.owner_of(statement.component)].num_processes
    explained = explain(spec)
    assert [s.text for s in explained] == [s.text for s in statements]  # the same records from explain as from solve


def test_a_rank_string_conflict_names_its_processes_and_merges_them() -> None:
    spec, statements = _conflict(config(1, 8, {"actor": "0-3", "rollout": {"placement": "2-5", "collocate_with": "actor"}}))
    nesting = [s for s in statements if s.rule == "collocation" and s.processes is not None]
    assert [(s.component, s.keys, s.processes, s.others) for s in nesting] == [
        ("rollout", ("collocate_with", "stride"), (2, 2), ("actor",)), ("rollout", ("collocate_with", "stride"), (3, 3), ("actor",))]
    (merged,) = compact_statements(nesting)
    assert merged.processes == (2, 3) and merged.text.endswith("(likewise process 3)")


def test_explain_groups_statements_by_component_and_keys() -> None:
    placement = {"actor": {"processes": 16, "tensor_parallel_size": 4},
                 "rollout": {"processes": 4, "hardware_per_process": 2, "collocate_with": "actor"}}  # fmt: skip
    _, statements = _conflict(config(2, 8, placement))
    assert grouped_lines(statements) == [
        "  actor (processes, tensor_parallel_size):",
        "    - actor needs 16 processes x 1 GPU in tensor-parallel groups of 4 (4 groups of 4 GPUs, each on one node)",
        "  rollout (processes, hardware_per_process, collocate_with):",
        "    - rollout needs 4 processes x 2 GPUs",
        "    - rollout collocates with actor (same hardware set)",
        "  - counting: the cluster has 2 nodes x 8 GPUs = 16 GPUs; room for 4 of actor's 4 groups of 4 GPUs; "
        "room for 8 of rollout's 4 processes of 2 GPUs",
    ]


def test_fixes_are_sought_for_the_components_the_records_name() -> None:
    """A component whose name appears in another's sentence but that the records do not name is
    not changed: the collocated rollout is named by the records, the unrelated 'act' is not."""
    placement = {"actor": {"processes": 16, "tensor_parallel_size": 4},
                 "rollout": {"processes": 4, "hardware_per_process": 2, "collocate_with": "actor"},
                 "act": {"processes": 1}}  # fmt: skip
    diagnosis = diagnose(config(3, 8, placement))
    assert not diagnosis.feasible
    assert {s.component for s in diagnosis.statements} - {""} == {"actor", "rollout"}
    assert diagnosis.suggestions and not any(fix.startswith("act:") for fix in diagnosis.suggestions)
    summary = diagnosis.summary().splitlines()  # grouped as explain prints them
    assert summary[:2] == ["no placement exists; these statements conflict:", "  actor (processes, tensor_parallel_size):"]
    assert "  rollout (processes, hardware_per_process, collocate_with):" in summary
