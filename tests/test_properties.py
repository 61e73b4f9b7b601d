"""Property tests over generated clusters and specs (see ``tests/strategies.py``).

* Every valid spec solves, passes ``verify`` and an independent re-check written here: rank
  strings give RLinf's even split recomputed from the written segments, declarative components get
  their counts, sizes, strides, windows, TP groups, collocation, exclusivity and caps.
* The same input gives the same placements: twice, with ``num_workers=2``, and as a DictConfig.
* Every broken input raises a ``PlacementError`` (nothing else), naming the component it belongs to.
"""

from __future__ import annotations

import random
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from generators import (
    NODE,
    BrokenCase,
    ComponentCase,
    Item,
    SegmentCase,
    SpecCase,
    broken_configs,
    clusters,
    even_split,
    expected_ranks,
    infeasible_specs,
    one_place,
    valid_specs,
)
from helpers import example_tiers
from hypothesis import given, note, settings
from hypothesis import strategies as st
from omegaconf import OmegaConf

from solver_placement import InfeasiblePlacementError, Placement, PlacementError, PlacementSyntaxError, solve, verify

sys.path.insert(0, str(Path(__file__).resolve().parent / "hostile"))
from corpus import mutate  # noqa: E402 - the hostile suite's folder is not on the test path

Records = Mapping[str, Sequence[Placement]]


def held(record: Placement) -> list[Item]:
    """The physical items of one record, in the strategies' terms."""
    locals_ = [0] if record.hardware_type == NODE else record.local_hardware_ranks
    return [Item(record.cluster_node_rank, record.hardware_type, local) for local in locals_]


def used(records: Sequence[Placement]) -> set[Item]:
    """Every physical item a component's records hold."""
    return {item for record in records for item in held(record)}


def where(record: Placement) -> tuple[int, str, list[int], list[int]]:
    """The layout fields of a record (node, kind, local ids, ranks), without its bookkeeping."""
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
    """What the declarative fields promise, re-checked from the records alone (not via verify):
    counts, items per process on one node and kind, stride, even window use or no sharing, TP."""
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
    """Solve, run the library's verifier, then the independent checks above."""
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


def _sharing_its_key(config: object, component: str) -> list[str]:
    """The components of ``component``'s comma-joined key (one rule, one placement): a conflict
    over that rule may rightly be named by any of them (``reward,critic`` broken, ``critic`` named)."""
    section = config.get("cluster", config) if isinstance(config, dict) else None
    placement = section.get("component_placement") if isinstance(section, dict) else None
    for key in placement if isinstance(placement, dict) else ():
        names = [name.strip() for name in str(key).split(",")]
        if component in names:
            return names
    return [component]


def check_raises(broken: BrokenCase) -> None:
    """:func:`check_broken` as a Hypothesis test, which must return None."""
    check_broken(broken)


def check_broken(broken: BrokenCase) -> PlacementError:
    """The PlacementError ``broken`` raises (any other exception propagates and fails); its message
    names the broken component, or another of its key."""
    note(f"{broken.what}: {broken.config!r}")
    with pytest.raises(PlacementError) as info:
        solve(broken.config)
    if broken.component is not None:
        sharing = _sharing_its_key(broken.config, broken.component)
        assert any(name in str(info.value) for name in sharing), f"{broken.what}: message names none of {sharing}"
    return info.value


# ------------------------------------------------------------------------------ valid specs
@example_tiers(40, 100)
def test_valid_specs_solve_verify_and_match_the_rules(examples: int) -> None:
    settings(max_examples=examples)(given(valid_specs())(check_valid))()


def check_rank_only(case: SpecCase) -> None:
    """Rank strings fix everything: no objective, and the layout is RLinf's even split."""
    solution = solve(case.config())
    assert solution.objective is None
    for component in case.components:
        check_rank_layout(component, solution.placements(component.name))


@example_tiers(25, 50)
def test_rank_only_specs_are_pure_feasibility(examples: int) -> None:
    settings(max_examples=examples)(given(valid_specs(declarative=False))(check_rank_only))()


def check_same_placement(case: SpecCase) -> None:
    """Solved again, with two CP-SAT workers and from a DictConfig: the same placements."""
    config = case.config()
    note(repr(config))
    first = solve(config).placements_by_component()
    assert solve(case.config()).placements_by_component() == first
    assert solve(case.config(), num_workers=2).placements_by_component() == first
    assert solve(OmegaConf.create(case.config())).placements_by_component() == first


@example_tiers(12, 40)
def test_same_input_same_placement(examples: int) -> None:
    settings(max_examples=examples)(given(valid_specs())(check_same_placement))()


@settings(max_examples=100)
@given(st.data())
def test_all_with_process_ranks_splits_evenly_or_is_refused(data: st.DataObject) -> None:
    """``all:0-(P-1)`` on any selection: a syntax error when neither count divides the other, the
    even split when every process's share lies on one node and kind, otherwise infeasible."""
    cluster = data.draw(clusters())
    labels = data.draw(st.sampled_from(cluster.selections()))
    items = cluster.items(labels)
    processes = data.draw(st.integers(1, 2 * len(items)))
    config = {**cluster.config, "component_placement": {"actor": {"node_group": list(labels), "placement": f"all:0-{processes - 1}"}}}
    if len(items) % processes and processes % len(items):
        with pytest.raises(PlacementSyntaxError, match="multiple"):
            solve(config)
        return
    layout = even_split([SegmentCase(0, len(items) - 1, processes)])
    if all(one_place(items, ranks) for ranks in layout):
        assert [r.hardware_ranks for r in solve(config).placements("actor")] == layout
    else:
        with pytest.raises(InfeasiblePlacementError, match="actor"):
            solve(config)


# ------------------------------------------------------------------------------ broken inputs
@example_tiers(100, 230)
def test_broken_configs_raise_placement_error_naming_the_component(examples: int) -> None:
    settings(max_examples=examples)(given(broken_configs())(check_raises))()


@settings(max_examples=60)
@given(infeasible_specs())
def test_infeasible_declarative_specs_name_the_conflict(broken: BrokenCase) -> None:
    note(f"{broken.what}: {broken.config!r}")
    with pytest.raises(InfeasiblePlacementError) as info:
        solve(broken.config)
    assert info.value.conflicts, "an infeasible spec must list its conflicting statements"
    assert broken.component in str(info.value)


# ------------------------------------------------------------------------------ corrupted valid specs
@example_tiers(40, 80)
def test_corrupted_valid_specs_place_or_raise_placement_errors(examples: int) -> None:
    settings(max_examples=examples)(given(valid_specs(), st.integers(0, 2**32 - 1), st.integers(1, 4))(check_corrupted))()


def check_corrupted(case: SpecCase, seed: int, rounds: int) -> None:
    """A valid config with values dropped, duplicated, retyped or inflated (the mutator of the
    hostile-input suite, ``tests/hostile/corpus.py``) gives a verified placement or a
    ``PlacementError``; nothing else escapes."""
    config = mutate(case.config(), random.Random(seed), rounds)
    note(repr(config)[:2000])
    try:
        solution = solve(config, time_limit_s=5.0)
    except PlacementError:
        return
    verify(solution.spec, solution.placements_by_component())



# ------------------------------------------------------------------------------ regressions found by fuzzing
def _config(placement: dict, **cluster: object) -> dict:
    """A 2 x 4-GPU config with these components and extra cluster keys."""
    return {"cluster": {"num_nodes": 2, "num_gpus_per_node": 4, **cluster, "component_placement": placement}}


HUGE = 10**30


@pytest.mark.parametrize("config", [
    pytest.param(_config({"actor": {"processes": 2, "tensor_parallel_size": HUGE}}), id="declarative-tensor_parallel_size"),
    pytest.param(_config({"actor": {"placement": "0-1", "tensor_parallel_size": HUGE}}), id="rank-tensor_parallel_size"),
    pytest.param(_config({"actor": {"processes": 2, "max_processes_per_hardware": 2**63}}), id="max_processes_per_hardware"),
    pytest.param(_config({"actor": "0"}, num_nodes=HUGE), id="num_nodes"),
    pytest.param(_config({"actor": "0"}, num_gpus_per_node=[1, HUGE]), id="num_gpus_per_node"),
    pytest.param(_config({"actor": "0"}, solver={"seed": 2**31}), id="solver-seed"),
    pytest.param(_config({"actor": "0"}, solver={"time_limit_s": 10**400}), id="solver-time_limit_s"),
])
def test_huge_numbers_are_placement_errors(config: dict) -> None:
    """Found by the broken-input property: these overflowed numpy / CP-SAT (OverflowError, TypeError)."""
    with pytest.raises(PlacementError):
        solve(config)


def test_group_hardware_type_without_items_is_a_placement_error() -> None:
    """Found by the broken-input property: ``kinds.index()`` raised a bare ValueError."""
    group = {"label": "arms", "node_ranks": 0, "hardware_type": "robot"}
    with pytest.raises(PlacementError, match="actor"):
        solve(_config({"actor": {"node_group": "arms", "placement": "0"}}, node_groups=[group]))


@pytest.mark.parametrize("cluster", [
    pytest.param({"node_groups": [{"label": None, "node_ranks": 0}]}, id="label-None"),
    pytest.param({"node_groups": [{"label": True, "node_ranks": 0}]}, id="label-bool"),
    pytest.param({"node_groups": [{"label": ["a"], "node_ranks": 0}]}, id="label-list"),
    pytest.param({"node_groups": [{"label": {"a": 1}, "node_ranks": 0}]}, id="label-mapping"),
    pytest.param({"node_groups": [{"label": "r", "node_ranks": 0, "hardware_type": None}]}, id="hardware_type-None"),
    pytest.param({"accelerator_type": True}, id="accelerator_type-bool"),
    pytest.param({"accelerator_type": [["NV_GPU"], "NV_GPU"]}, id="accelerator_type-nested-list"),
    pytest.param({"node_groups": [{"label": "r", "node_ranks": 0, "hardware": {"type": None, "configs": [{"node_rank": 0}]}}]},
                 id="hardware-type-None"),
])
def test_wrong_types_in_string_fields_are_rejected(cluster: dict) -> None:
    """Found while writing the mutations: str() turned None, bools and containers into names."""
    with pytest.raises(PlacementError):
        solve(_config({"actor": "0"}, **cluster))


def test_resources_all_without_processes_fills_every_item() -> None:
    """Found while writing the window strategy: ``resources: all`` alone raised a TypeError."""
    solution = solve(_config({"actor": {"resources": "all"}}))
    assert [p.local_hardware_ranks for p in solution.placements("actor")] == [[g] for g in range(4)] * 2


def test_resources_all_is_the_whole_window() -> None:
    """docs/guide.md: a ``resources`` window is used evenly, and ``all`` means every resource; ``all``
    was read as "no window" (4 processes took 1 GPU each, leaving 4 idle)."""
    def layout(resources: str) -> list[list[int]]:
        solution = solve({"cluster": {"num_nodes": 1, "num_gpus_per_node": 8,
                                      "component_placement": {"actor": {"processes": 4, "resources": resources}}}})
        return [p.local_hardware_ranks for p in solution.placements("actor")]

    assert layout("all") == layout("0-7") == [[0, 1], [2, 3], [4, 5], [6, 7]]


def test_node_groups_not_a_list_is_a_placement_error() -> None:
    """Found by the broken-input property: ``node_groups: 5`` raised a TypeError."""
    with pytest.raises(PlacementError):
        solve(_config({"actor": "0"}, node_groups=5))


# ------------------------------------------------------------------------------ more regressions found by fuzzing
@pytest.mark.parametrize("cluster", [
    pytest.param({"accelerator_type": True}, id="accelerator_type-bool"),
    pytest.param({"accelerator_model": {"a": 1}}, id="accelerator_model-mapping"),
])
def test_wrong_types_on_cpu_only_nodes_are_rejected(cluster: dict) -> None:
    with pytest.raises(PlacementError):
        solve(_config({"actor": "0"}, num_gpus_per_node=0, **cluster))


def test_coupled_declarative_components_do_not_depend_on_num_workers() -> None:
    config = {"cluster": {"num_nodes": 4, "num_gpus_per_node": 0, "component_placement": {
        "agent": {"placement": [0, 1, 2, 3, 0, 1, 3]},  # 2, 2, 1, 2 processes on nodes 0-3
        "verifier": {"processes": 1},
        "judge": {"processes": 1, "max_processes_per_hardware": 3},
    }}}
    assert solve(config, num_workers=2).placements_by_component() == solve(config, num_workers=1).placements_by_component()
