"""Property tests over generated clusters and specs (see ``tests/strategies.py``).

* Every valid spec solves, passes ``verify`` and an independent re-check written here: rank
  strings give RLinf's even split recomputed from the written segments, declarative components get
  their counts, sizes, strides, windows, TP groups, collocation, exclusivity and caps.
* The same input gives the same placements: twice, with ``num_workers=2``, and as a DictConfig.
* Every broken input raises a ``PlacementError`` (nothing else), naming the component it belongs to.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, note, settings
from omegaconf import OmegaConf

from solver_placement import InfeasiblePlacementError, Placement, PlacementError, solve, verify
from tests.strategies import (
    NODE,
    BrokenCase,
    ComponentCase,
    Item,
    SpecCase,
    broken_configs,
    clusters,
    even_split,
    expected_ranks,
    infeasible_specs,
    valid_specs,
)

Records = Mapping[str, Sequence[Placement]]


def held(record: Placement) -> list[Item]:
    """The physical items of one record, in the strategies' terms."""
    locals_ = [0] if record.hardware_type == NODE else record.local_hardware_ranks
    return [Item(record.cluster_node_rank, record.hardware_type, local) for local in locals_]


def used(records: Sequence[Placement]) -> set[Item]:
    return {item for record in records for item in held(record)}


def where(record: Placement) -> tuple[int, str, list[int], list[int]]:
    return record.cluster_node_rank, record.hardware_type, record.local_hardware_ranks, record.hardware_ranks


def check_rank_layout(component: ComponentCase, records: Sequence[Placement]) -> None:
    """RLinf's even split (or the sorted explicit lists), mapped to nodes and local ids here."""
    expected = expected_ranks(component)
    assert len(records) == len(expected), component.key
    for record, ranks in zip(records, expected):
        items = [component.items[r] for r in ranks]
        locals_ = [] if items[0].kind == NODE else [item.local for item in items]
        assert where(record) == (items[0].node, items[0].kind, locals_, ranks), (component.key, record.rank)


def check_declarative(component: ComponentCase, records: Sequence[Placement]) -> None:
    decl = component.decl
    assert decl is not None
    assert len(records) == decl.processes, component.key
    for record in records:
        ranks = sorted(record.hardware_ranks)
        items = [component.items[r] for r in ranks]
        assert len(ranks) == decl.per_process, (component.key, record.rank)
        assert {(i.node, i.kind) for i in items} == {(record.cluster_node_rank, record.hardware_type)}, (component.key, record.rank)
        assert all(b - a == decl.stride for a, b in zip(ranks, ranks[1:])), (component.key, record.rank, ranks)
        assert set(items) == set(held(record)), (component.key, record.rank)
    load = Counter(item for record in records for item in held(record))
    if decl.window is not None:
        first, last = decl.window
        assert all(first <= r <= last for record in records for r in record.hardware_ranks), component.key
        assert load == Counter(dict.fromkeys(component.items[first:last + 1], decl.share)), component.key
    else:
        assert max(load.values()) == 1, f"{component.key}: two processes share an item"
    for start in range(0, len(records), component.tp):
        assert len({r.cluster_node_rank for r in records[start:start + component.tp]}) == 1, (component.key, start)


def check_relations(case: SpecCase, placements: Records) -> None:
    """Collocation (same set, each process inside one TP group), exclusivity and caps."""
    load = Counter(item for records in placements.values() for record in records for item in held(record))
    for component in case.components:
        mine = placements[component.name]
        if component.collocate_with is not None:
            target = case.component(component.collocate_with)
            theirs = placements[component.collocate_with]
            assert used(mine) == used(theirs), component.key
            groups = [used(theirs[i:i + target.tp]) for i in range(0, len(theirs), target.tp)]
            for record in mine:
                assert any(set(held(record)) <= group for group in groups), (component.key, record.rank)
        for other in component.exclusive_with:
            assert not used(mine) & used(placements[other]), (component.key, other)
        if component.cap is not None:
            assert max(load[item] for item in used(mine)) <= component.cap, component.key


def check_valid(case: SpecCase) -> None:
    config = case.config()
    note(repr(config))
    solution = solve(config)
    placements = solution.placements_by_component()
    verify(solution.spec, placements)
    assert list(placements) == [name for c in case.components for name in c.names]
    for component in case.components:
        records = placements[component.name]
        for other in component.names[1:]:  # one rule, one layout
            assert [where(r) for r in placements[other]] == [where(r) for r in records], component.key
        if component.decl is None:
            check_rank_layout(component, records)
        else:
            check_declarative(component, records)
    check_relations(case, placements)


def check_broken(broken: BrokenCase) -> None:
    note(f"{broken.what}: {broken.config!r}")
    with pytest.raises(PlacementError) as info:  # any other exception propagates and fails
        solve(broken.config)
    if broken.component is not None:
        assert broken.component in str(info.value), f"{broken.what}: message does not name {broken.component!r}"


# ------------------------------------------------------------------------------ valid specs
@settings(max_examples=150)
@given(valid_specs())
def test_valid_specs_solve_verify_and_match_the_rules(case: SpecCase) -> None:
    check_valid(case)


@settings(max_examples=80)
@given(valid_specs(declarative=False))
def test_rank_only_specs_are_pure_feasibility(case: SpecCase) -> None:
    """Rank strings fix everything: no objective, and the layout is RLinf's even split."""
    solution = solve(case.config())
    assert solution.objective is None
    for component in case.components:
        check_rank_layout(component, solution.placements(component.name))


@settings(max_examples=60)
@given(valid_specs())
def test_same_input_same_placement(case: SpecCase) -> None:
    config = case.config()
    note(repr(config))
    first = solve(config).placements_by_component()
    assert solve(case.config()).placements_by_component() == first
    assert solve(case.config(), num_workers=2).placements_by_component() == first
    assert solve(OmegaConf.create(case.config())).placements_by_component() == first


@settings(max_examples=40)
@given(clusters())
def test_even_split_of_all_segments(cluster) -> None:
    """``all:P`` and ``all`` on every selection of a generated cluster: even split, both ways."""
    for labels in cluster.selections():
        n = len(cluster.items(labels))
        for processes in {n, 2 * n, *(n // k for k in (2, 4, 8) if n % k == 0)}:
            placement = {"node_group": list(labels), "placement": f"all:0-{processes - 1}"}
            config = {**cluster.config, "component_placement": {"actor": placement}}
            try:
                records = solve(config).placements("actor")
            except InfeasiblePlacementError:  # a process would span nodes: the grammar allows it, the rules not
                continue
            expected = even_split([_segment(n, processes)])
            assert [r.hardware_ranks for r in records] == expected, (labels, processes)


def _segment(n: int, processes: int):
    from tests.strategies import SegmentCase

    return SegmentCase(0, n - 1, processes)


# ------------------------------------------------------------------------------ broken inputs
@settings(max_examples=300)
@given(broken_configs())
def test_broken_configs_raise_placement_error_naming_the_component(broken: BrokenCase) -> None:
    check_broken(broken)


@settings(max_examples=40)
@given(infeasible_specs())
def test_infeasible_declarative_specs_name_the_conflict(broken: BrokenCase) -> None:
    note(f"{broken.what}: {broken.config!r}")
    with pytest.raises(InfeasiblePlacementError) as info:
        solve(broken.config)
    assert info.value.conflicts, "an infeasible spec must list its conflicting statements"
    assert broken.component in str(info.value)


# ------------------------------------------------------------------------------ slow
@pytest.mark.slow
@settings(max_examples=3000)
@given(valid_specs(), broken_configs())
def test_many_examples(case: SpecCase, broken: BrokenCase) -> None:
    check_valid(case)
    check_broken(broken)
