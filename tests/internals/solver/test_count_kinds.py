"""The count model on hardware other than GPUs (issue 34): robots and whole nodes (``unit: node``,
``node_group: node``) beside GPUs are counted kind by kind (``counts/kinds.py``), every kind at
once when ``balance`` is weighed, and the answer's objective is the flat model's optimum."""

from __future__ import annotations

import itertools
import random
from typing import Any

import numpy as np
import pytest
from flat_model import counts_kept_out, flat_solution, solved_or_refused
from helpers import declined_first, example_tiers
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from solver_placement import Cluster, PlacementSpec, Solution, solve
from solver_placement._solver.counts.kinds import item_ids
from solver_placement._solver.counts.runs import runs_cover
from solver_placement._solver.counts.typed import independent_blocks
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver_settings import DEFAULT_WEIGHTS


def robot_cluster(gpus: list[int], robots: list[int], labels: list[dict[str, str]] | None = None, memory: float | None = None) -> Cluster:
    """Nodes with ``gpus[n]`` GPUs (of ``memory`` GB) and ``robots[n]`` robots (a node group
    ``robots`` of them all)."""
    configs = [{"node_rank": n, "robot_ip": f"10.0.{n}.{r}"} for n, count in enumerate(robots) for r in range(count)]
    groups = [{"label": "robots", "node_ranks": f"0-{len(gpus) - 1}", "hardware": {"type": "robot", "configs": configs}}] if configs else []
    return Cluster(len(gpus), gpus, node_groups=groups, node_labels=labels, gpu_memory_gb=memory)


def weighed(objective: dict[str, int]) -> dict[str, int]:
    """The terms both models prove: contiguity only when it is weighed (else the count model's
    tie-break, left out of both)."""
    return {**DEFAULT_WEIGHTS, "contiguity": 0, **objective}


def flat_optimum(spec: PlacementSpec, objective: dict[str, int]) -> int:
    """The flat model's proven optimum of the weighed terms (``flat_model.py``)."""
    flat = flat_solution(spec, weighed(objective))
    assert (flat.method, flat.status) == ("search", "OPTIMAL")
    return objective_value(spec, spec.requests, flat.assignments, weighed(objective), {})


def counted(solution: Solution, objective: dict[str, int]) -> int:
    """The count answer's value of the weighed terms, re-evaluated outside the model (the
    autouse fixture has verified the layout)."""
    assert (solution.method, solution.status, declined_first(solution)) == ("counts", "OPTIMAL", ())
    return objective_value(solution.spec, solution.spec.requests, solution.assignments, weighed(objective), {})


EXAMPLES: list[tuple[str, Cluster, dict[str, Any]]] = [
    ("robots beside GPUs", robot_cluster([4, 4, 4], [2, 1, 0]),
     {"actor": {"processes": 6, "tensor_parallel_size": 2}, "env": {"node_group": "robots", "processes": 3}}),
    ("robots two to a process, two processes a robot", robot_cluster([2, 2], [4, 2]),
     {"actor": {"processes": 2}, "env": {"node_group": "robots", "processes": 3, "hardware_per_process": 2},
      "camera": {"node_group": "robots", "processes": 6, "max_processes_per_hardware": 2}}),
    ("unit: node", robot_cluster([4, 4, 4], [0, 0, 0]),
     {"actor": {"processes": 8}, "agent": {"unit": "node", "processes": 2}, "judge": {"processes": 2, "exclusive_with": ["actor"]}}),
    ("node_group: node beside robots", robot_cluster([8, 0, 8], [0, 3, 1]),
     {"actor": {"processes": 8}, "env": {"node_group": "robots", "processes": 4}, "agent": {"node_group": "node", "processes": 3}}),
    ("a GPU class exclusive with a robot rank string", robot_cluster([4], [2]),
     {"actor": {"processes": 4, "exclusive_with": ["env"]}, "env": {"node_group": "robots", "placement": "0-1"}}),
    ("robots with a rank string of robots", robot_cluster([4, 4], [2, 2]),
     {"actor": {"processes": 4}, "sim": {"node_group": "robots", "placement": "0"}, "env": {"node_group": "robots", "processes": 2, "exclusive_with": ["sim"]}}),
    ("robots in pipelines inside one rack", robot_cluster([2, 2, 2, 2], [1, 1, 2, 0], [{"rack": "a"}, {"rack": "a"}, {"rack": "b"}, {"rack": "b"}]),
     {"actor": {"processes": 4}, "env": {"node_group": "robots", "processes": 2, "pipeline_parallel_size": 2, "topology": {"pipeline_parallel": {"rack": "require"}}}}),
    ("two components sharing whole nodes", robot_cluster([4, 4, 4], [1, 0, 2]),
     {"actor": {"processes": 6}, "agent": {"unit": "node", "processes": 3, "max_processes_per_hardware": 2}, "watch": {"unit": "node", "processes": 2}}),
    ("robots collocated", robot_cluster([4, 4], [2, 2]),
     {"actor": {"processes": 4}, "env": {"node_group": "robots", "processes": 4}, "camera": {"node_group": "robots", "processes": 4, "collocate_with": "env"}}),
    ("memory_gb on robots (checked on GPUs only)", robot_cluster([4, 4], [2, 2], memory=40),
     {"actor": {"processes": 4, "memory_gb": 30}, "env": {"node_group": "robots", "processes": 3, "memory_gb": 100}}),
]  # fmt: skip


@pytest.mark.parametrize("objective", [{}, {"balance": 10}, {"contiguity": 3}], ids=["default", "balance", "contiguity"])
@pytest.mark.parametrize(("case", "cluster", "placement"), EXAMPLES, ids=[case for case, _, _ in EXAMPLES])
def test_other_hardware_is_counted_at_the_flat_optimum(case: str, cluster: Cluster, placement: dict[str, Any], objective: dict[str, int]) -> None:
    """Each spec (before: declined as "hardware other than accelerators" or "node units", or a
    robot rank string's items counted as GPUs a class is kept off) is proven by the count model,
    at the flat model's optimum."""
    spec = PlacementSpec.build(cluster, placement)
    solution = solve(spec, time_limit_s=10, objective=objective)
    assert counted(solution, objective) == flat_optimum(spec, objective)


SPANNING: list[tuple[str, Cluster, dict[str, Any]]] = [
    ("a rank string over GPUs and robots beside a GPU class", robot_cluster([2, 2], [1, 2]),
     {"sim": {"node_group": ["cluster", "robots"], "placement": "2-5"}, "actor": {"processes": 2, "exclusive_with": ["sim"]}}),
    ("a rank string over robots and GPUs, exclusive with both kinds", robot_cluster([4, 2], [2, 2]),
     {"sim": {"node_group": "robots, cluster", "placement": "2-5", "max_processes_per_hardware": 2},
      "env": {"node_group": "robots", "processes": 2, "exclusive_with": ["sim"]}, "actor": {"processes": 4, "max_processes_per_hardware": 2}}),
    ("a rank string over both kinds with memory, a GPU class beside it", robot_cluster([2, 2], [1, 1], memory=40),
     {"sim": {"node_group": ["cluster", "robots"], "placement": "3-4", "memory_gb": 30}, "actor": {"processes": 3, "memory_gb": 20}}),
    ("a window over GPUs and robots", robot_cluster([2, 2], [1, 1]),
     {"actor": {"node_group": ["cluster", "robots"], "processes": 3}}),
    ("a window over robots and GPUs beside one class of each kind", robot_cluster([2, 4, 0], [1, 0, 3]),
     {"actor": {"processes": 2, "tensor_parallel_size": 2}, "env": {"node_group": "robots", "processes": 2},
      "agent": {"node_group": ["robots", "cluster"], "processes": 4, "exclusive_with": ["env"]}}),
    ("a window over both kinds collocated with one over GPUs", robot_cluster([2, 2], [1, 1]),
     {"actor": {"node_group": ["robots", "cluster"], "processes": 2}, "critic": {"processes": 2, "collocate_with": "actor"},
      "env": {"node_group": "robots", "processes": 1}}),
    ("a window over both kinds collocated with a rank string over both", robot_cluster([2, 2], [1, 1]),
     {"sim": {"node_group": ["cluster", "robots"], "placement": "3-4"},
      "camera": {"node_group": ["cluster", "robots"], "processes": 2, "collocate_with": "sim"}, "actor": {"processes": 2}}),
    # a process two items a stride of 2 apart may not jump one spacer between the kinds (the fuzz
    # found robot 2 and GPU 0 taken by one process): as many spacers as the widest stride
    ("a strided window over robots and one GPU", robot_cluster([1], [3]),
     {"env": {"node_group": "robots", "processes": 1}, "agent": {"node_group": ["robots", "cluster"], "processes": 1, "hardware_per_process": 2, "stride": 2}}),
    ("a strided window over one robot and GPUs", robot_cluster([1, 4], [1, 0]),
     {"agent": {"node_group": ["robots", "cluster"], "processes": 1, "hardware_per_process": 2, "stride": 2}, "env": {"node_group": "robots", "processes": 1}}),
]  # fmt: skip


#: Each example under each objective (a weighed ``contiguity`` over a window of several kinds
#: included: split by rank base, ``kind_ranks.py``).
SPANNING_CASES = [
    pytest.param(cluster, placement, objective, id=f"{case}-{name}")
    for case, cluster, placement in SPANNING
    for name, objective in (("default", {}), ("balance", {"balance": 10}), ("contiguity", {"contiguity": 3}))
]


@pytest.mark.parametrize(("cluster", "placement", "objective"), SPANNING_CASES)
def test_components_over_several_kinds_are_counted_at_the_flat_optimum(cluster: Cluster, placement: dict[str, Any], objective: dict[str, int]) -> None:
    """A rank string whose processes hold items of several kinds is counted in each kind's view
    by its processes there; a declarative component over node groups of several kinds in one
    view holding them all (before: both declined, "node groups of several hardware kinds")."""
    spec = PlacementSpec.build(cluster, placement)
    solution = solve(spec, time_limit_s=10, objective=objective)
    assert counted(solution, objective) == flat_optimum(spec, objective)


def test_item_ids_move_each_kind_to_its_own_items() -> None:
    """A GPU, a robot and a node item moved to another node keep their kind and local id."""
    cluster = robot_cluster([2, 2, 2], [1, 0, 2])
    gpu, robot, node = cluster.physical_id(0, "Accelerator", 1), cluster.physical_id(0, "robot", 0), cluster.physical_id(0, "node", 0)
    moved = item_ids(cluster, np.array([gpu, robot, node]), np.array([2, 2, 1]))
    assert moved.tolist() == [cluster.physical_id(2, "Accelerator", 1), cluster.physical_id(2, "robot", 0), cluster.physical_id(1, "node", 0)]


@st.composite
def mixed_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any], dict[str, int]]:
    """1-3 nodes of 0, 2 or 4 GPUs and 0-3 robots; one or two GPU components (TP 1 or 2), one or
    two robot components (1 or 2 robots a process, some sharing a robot where no rank string is,
    some exclusive with each other, a GPU component or a rank string on robot 0), maybe one of
    whole nodes; the default objective, ``balance`` or ``contiguity`` weighed; without
    ``balance``, maybe a ``camera`` filling a window of robots instead."""
    size = draw(st.integers(1, 3))
    gpus = draw(st.lists(st.sampled_from([0, 2, 4]), min_size=size, max_size=size))
    robots = draw(st.lists(st.integers(0, 3), min_size=size, max_size=size))
    if not sum(gpus):
        gpus[0] = 2
    if not sum(robots):
        robots[-1] = 1
    placement: dict[str, Any] = {}
    objective = draw(st.sampled_from([{}, {}, {"balance": 10}, {"contiguity": 3}]))
    if draw(st.integers(0, 3)) == 0:
        placement["sim"] = {"node_group": "robots", "placement": "0"}
    for name in ("actor", "ref")[: draw(st.integers(1, 2))]:
        tp = draw(st.sampled_from([1, 1, 2]))
        placement[name] = {"processes": tp * draw(st.integers(1, max(1, sum(gpus) // (2 * tp)))), "tensor_parallel_size": tp}
    for name in ("env", "camera")[: draw(st.integers(1, 2))]:
        body: dict[str, Any] = {"node_group": "robots", "processes": draw(st.integers(1, max(1, sum(robots))))}
        if draw(st.integers(0, 3)) == 0:
            body["hardware_per_process"] = 2
        if "sim" not in placement and draw(st.integers(0, 3)) == 0:  # beside a rank string: a decline of its own (capacity)
            body["max_processes_per_hardware"] = 2
        others = [other for other in placement if draw(st.integers(0, 2)) == 0]
        if others:
            body["exclusive_with"] = others
        placement[name] = body
    if draw(st.booleans()):
        placement["agent"] = {"unit": "node", "processes": draw(st.integers(1, size))}
    limited = any("max_processes_per_hardware" in body for body in placement.values() if isinstance(body, dict))
    # under balance, beside GPUs, a window is declined by name (above); placed first it is a
    # rank string, and a process limit beside one is a decline of its own (capacity)
    if not objective.get("balance") and not limited and draw(st.integers(0, 3)) == 0:
        first = draw(st.integers(0, sum(robots) - 1))
        placement["camera"] = {"node_group": "robots", "resources": f"{first}-{draw(st.integers(first, sum(robots) - 1))}"}
    return robot_cluster(gpus, robots), placement, objective


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mixed_specs())
def test_random_mixed_hardware_is_counted_at_the_flat_optimum(case: tuple[Cluster, dict[str, Any], dict[str, int]]) -> None:
    """The count model answers every feasible draw, and proves the flat model's optimum."""
    check_spanning(case)


def brute_runs_cover(stacks: tuple[tuple[int, ...], ...], keep_off: list[tuple[int, ...]], capacity: int, demand: tuple[int, ...], runs: tuple[int, ...]) -> bool:
    """Every assignment of an admitted stack (or none) to every GPU, checked by counting each
    class's whole runs of consecutive ids: the definition ``runs_cover`` searches smartly."""
    choices = [[(), *{tuple(k for k in stack if gpu not in keep_off[k]) for stack in stacks}] for gpu in range(capacity)]
    for layout in itertools.product(*choices):
        held = [[gpu for gpu, stack in enumerate(layout) if k in stack] for k in range(len(demand))]
        whole = []
        for k, ids in enumerate(held):
            total = length = 0
            for i, gpu in enumerate(ids):
                length = length + 1 if i and gpu == ids[i - 1] + 1 and length else 1
                if length == runs[k]:
                    total, length = total + runs[k], 0
            whole.append(total)
        if all(w >= d for w, d in zip(whole, demand)):
            return True
    return False


@pytest.mark.parametrize("seed", range(6))
def test_runs_cover_and_its_blocks_agree_with_every_layout(seed: int) -> None:
    """``runs_cover`` (which remembers the states that fail) and the split into blocks no GPU
    joins decide exactly what trying every stack on every GPU decides, on random small nodes
    (two kinds side by side in half of them)."""
    rng = random.Random(seed)
    for _ in range(40):
        classes, capacity = rng.randint(2, 3), rng.randint(3, 6)
        pairs = {(a, b) for a in range(classes) for b in range(a + 1, classes) if rng.random() < 0.5}
        stacks = tuple(stack for size in range(classes, 0, -1) for stack in itertools.combinations(range(classes), size)
                       if not any((a, b) in pairs for a, b in itertools.combinations(stack, 2)))  # fmt: skip
        split = rng.randint(1, capacity - 1) if rng.random() < 0.5 else None
        keep_off = [tuple(g for g in range(capacity) if (split is not None and (g < split) == (k % 2 == 1)) or rng.random() < 0.15) for k in range(classes)]
        runs = tuple(rng.choice((1, 1, 2)) for _ in range(classes))
        demand = tuple(runs[k] * rng.randint(0, 2) for k in range(classes))
        expected = brute_runs_cover(stacks, keep_off, capacity, demand, runs)
        assert (runs_cover(stacks, keep_off, capacity, demand, runs) is not None) == expected, (stacks, keep_off, capacity, demand, runs)
        blocks = independent_blocks(keep_off, capacity)
        by_block = all(runs_cover(stacks, off, size, tuple(d if k in block else 0 for k, d in enumerate(demand)), runs) is not None for block, off, _, size in blocks)
        assert by_block == expected


@pytest.mark.parametrize("objective", [{}, {"balance": 3}], ids=["default", "balance"])
def test_a_filled_window_of_whole_nodes_is_checked_on_its_view(objective: dict[str, int]) -> None:
    """A filled window placed first is checked by the verifier on the kind's view, which must
    know the spec's node groups (before: "node group 'a800' not found" escaped the solve, found
    by the fast tier's property test)."""
    cluster = Cluster(2, [0, 0], node_groups=[{"label": "a800", "node_ranks": "0", "ignore_hardware": True}])
    spec = PlacementSpec.build(cluster, {"actor,rollout": {"node_group": "a800", "resources": "0"}, "agent": {"unit": "node", "processes": 1}})
    assert counted(solve(spec, time_limit_s=10, objective=objective), objective) == flat_optimum(spec, objective)


WINDOWS_BESIDE: list[tuple[str, Cluster, dict[str, Any]]] = [
    ("a window of GPUs beside robots", robot_cluster([4, 4], [2, 2]),
     {"actor": {"resources": "0-3"}, "env": {"node_group": "robots", "processes": 2}}),
    ("a window of robots beside GPUs, two processes a robot", robot_cluster([2, 2, 2], [1, 2, 0]),
     {"camera": {"node_group": "robots", "resources": "0-1", "processes": 4}, "actor": {"processes": 3}}),
    ("a window beside a window over both kinds", robot_cluster([2, 2], [1, 1]),
     {"actor": {"resources": "1-2"}, "agent": {"node_group": ["robots", "cluster"], "processes": 3, "exclusive_with": ["actor"]}}),
    ("a window of both kinds and a follower", robot_cluster([2, 2], [2, 1]),
     {"watch": {"node_group": ["cluster", "robots"], "resources": "2-5"}, "env": {"node_group": "robots", "processes": 1},
      "actor": {"processes": 2}, "critic": {"processes": 2, "collocate_with": "actor"}}),
]  # fmt: skip


@pytest.mark.parametrize("objective", [{}, {"balance": 3}], ids=["default", "balance"])
@pytest.mark.parametrize(("case", "cluster", "placement"), WINDOWS_BESIDE, ids=[case for case, _, _ in WINDOWS_BESIDE])
def test_a_filled_window_beside_other_kinds_is_counted_at_the_flat_optimum(case: str, cluster: Cluster, placement: dict[str, Any], objective: dict[str, int]) -> None:
    """A filled window in a view of several kinds (under ``balance``, or beside a window over
    both) is placed first on the spec itself, whose node groups the verifier reads, and its
    items per node join every node's load (before: declined, "a filled resources window beside
    declarative components of other hardware kinds, with balance weighed")."""
    spec = PlacementSpec.build(cluster, placement)
    solution = solve(spec, time_limit_s=10, objective=objective)
    assert counted(solution, objective) == flat_optimum(spec, objective)


@st.composite
def spanning_specs(draw: st.DrawFn) -> tuple[Cluster, dict[str, Any], dict[str, int]]:
    """1-3 nodes of 0-4 GPUs and 0-3 robots; maybe a rank string ``sim`` over GPUs and robots
    (either order, one or two items a process), maybe a GPU class and a robot class (or a
    filled window of either kind), and a declarative ``agent`` (mostly over both kinds; one or
    two items a process, TP 1 or 2, maybe two processes an item, maybe a ``camera`` collocated
    with ``sim`` or a ``critic`` of one kind collocated with it), rules kept apart at random, maybe 40 GB GPUs with memory on GPU components and
    on one of those that may hold both kinds; the default objective or ``balance``, or weighed
    ``contiguity`` when no window holds two kinds."""
    size = draw(st.integers(1, 3))
    gpus = draw(st.lists(st.integers(0, 4), min_size=size, max_size=size))
    robots = draw(st.lists(st.integers(0, 3), min_size=size, max_size=size))
    gpus[0], robots[-1] = max(gpus[0], 1), max(robots[-1], 1)
    total = sum(gpus) + sum(robots)
    both = draw(st.sampled_from([["cluster", "robots"], ["robots", "cluster"], "robots, cluster"]))
    placement: dict[str, Any] = {}
    if draw(st.booleans()):
        first = draw(st.integers(0, total - 1))
        last = draw(st.integers(first, min(total - 1, first + 3)))
        text = f"{first}-{last}:0-{(last - first + 1) // 2 - 1}" if (last - first) % 2 and draw(st.booleans()) else f"{first}-{last}"
        placement["sim"] = {"node_group": both, "placement": text}
        if draw(st.integers(0, 2)) == 0:
            placement["sim"]["max_processes_per_hardware"] = 2
    if draw(st.booleans()):
        placement["actor"] = {"processes": draw(st.integers(1, max(1, sum(gpus) // 2)))}
    if draw(st.booleans()):
        placement["env"] = {"node_group": "robots", "processes": draw(st.integers(1, max(1, sum(robots) // 2)))}
    if draw(st.integers(0, 3)) == 0:
        group, items = draw(st.sampled_from([("cluster", sum(gpus)), ("robots", sum(robots))]))
        first = draw(st.integers(0, items - 1))
        placement["watch"] = {"node_group": group, "resources": f"{first}-{draw(st.integers(first, items - 1))}"}
    window = draw(st.sampled_from([both, both, "cluster", "robots"]))
    per_process, tp = draw(st.sampled_from([(1, 1), (1, 1), (2, 1), (1, 2)]))
    agent: dict[str, Any] = {"node_group": window, "processes": tp * draw(st.integers(1, max(1, total // (2 * tp * per_process)))), "hardware_per_process": per_process}
    if tp > 1:
        agent["tensor_parallel_size"] = tp
    if per_process > 1 and draw(st.integers(0, 2)) == 0:  # GPUs or robots a stride apart, never across kinds
        agent["stride"] = draw(st.sampled_from([2, 3]))
    if "sim" not in placement and draw(st.integers(0, 3)) == 0:
        agent["max_processes_per_hardware"] = 2
    others = [other for other in placement if draw(st.integers(0, 2)) == 0]
    if others:
        agent["exclusive_with"] = others
    placement["agent"] = agent
    if "sim" in placement and draw(st.integers(0, 2)) == 0:
        placement["camera"] = {"node_group": both, "processes": len(placement["sim"]["placement"]), "collocate_with": "sim"}
    elif window == both and draw(st.integers(0, 3)) == 0:  # a follower of one kind: the agent keeps to it
        placement["critic"] = {**{k: v for k, v in agent.items() if k in ("processes", "hardware_per_process", "tensor_parallel_size")},
                               "node_group": draw(st.sampled_from(["cluster", "robots"])), "collocate_with": "agent"}
    memory = draw(st.sampled_from([None, None, 40]))
    if memory is not None:  # GPU components, and one of those that may hold both kinds, with memory that fits a GPU alone
        for name in [n for n in ("actor", "watch") if n in placement and placement[n].get("node_group", "cluster") == "cluster"]:
            placement[name]["memory_gb"] = draw(st.sampled_from([10, 20, 30]))
        spanning = draw(st.sampled_from([None, *(n for n in ("sim", "agent") if n in placement)]))
        if spanning is not None:
            placement[spanning]["memory_gb"] = draw(st.sampled_from([10, 20, 30]))
    weighed_ranks = [{"contiguity": 3}] if window != both and "camera" not in placement and "critic" not in placement else []
    objective = draw(st.sampled_from([{}, {}, {"balance": 10}, *weighed_ranks]))
    return robot_cluster(gpus, robots, memory=memory), placement, objective


@example_tiers(40, 100)
def test_random_components_over_several_kinds_are_counted_at_the_flat_optimum(examples: int) -> None:
    """The count model answers every feasible draw with rank strings and windows over GPUs and
    robots, and proves the flat model's optimum."""
    settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])(given(spanning_specs())(check_spanning))()


def check_spanning(case: tuple[Cluster, dict[str, Any], dict[str, int]]) -> None:
    """One drawn (cluster, placement, objective), of :func:`spanning_specs`, :func:`mixed_specs`
    or another module's draws over several kinds: counted, at the flat optimum (or refused by
    both)."""
    cluster, placement, objective = case
    note(f"{cluster!r} {placement} {objective}")
    solved = solved_or_refused(cluster, placement, objective)
    if solved is None:
        return
    spec, solution = solved
    event(f"{solution.method} {solution.status} {objective}")
    assert counted(solution, objective) == flat_optimum(spec, objective)


MEMORY_SPANNING: list[tuple[str, Cluster, dict[str, Any], dict[str, int]]] = [
    ("a window over both kinds", robot_cluster([2, 2], [1, 1], memory=40),
     {"actor": {"node_group": ["cluster", "robots"], "processes": 4, "memory_gb": 30}, "ref": {"processes": 2, "memory_gb": 20}}, {}),
    ("a rank string over both kinds under balance", robot_cluster([2, 2], [1, 1], memory=40),
     {"sim": {"node_group": ["cluster", "robots"], "placement": "3-4", "memory_gb": 30}, "actor": {"processes": 2, "memory_gb": 20},
      "env": {"node_group": "robots", "processes": 1}}, {"balance": 10}),
    ("a window over both kinds beside a robot-only node", robot_cluster([2, 0], [1, 2], memory=[40, 20]),
     {"actor": {"node_group": ["robots", "cluster"], "processes": 4, "memory_gb": 20}, "ref": {"processes": 1, "memory_gb": 30}}, {"balance": 10}),
]  # fmt: skip


@pytest.mark.parametrize(("case", "cluster", "placement", "objective"), MEMORY_SPANNING, ids=[case for case, *_ in MEMORY_SPANNING])
def test_memory_over_several_kinds_in_one_view_is_counted_at_the_flat_optimum(case: str, cluster: Cluster, placement: dict[str, Any], objective: dict[str, int]) -> None:
    """``memory_gb`` is checked on GPUs only, and a view of several kinds gives every item of a
    node its GPUs' memory: the same rule when one component there holds GPUs and other kinds
    with memory that fits alone wherever it may hold the others (before: declined)."""
    spec = PlacementSpec.build(cluster, placement)
    solution = solve(spec, time_limit_s=10, objective=objective)
    assert counted(solution, objective) == flat_optimum(spec, objective)


MEMORY_PER_KIND: list[tuple[str, Cluster, dict[str, Any]]] = [
    ("two components with memory over both kinds", robot_cluster([2, 2], [1, 1], memory=40),
     {"actor": {"node_group": ["cluster", "robots"], "processes": 2, "memory_gb": 30}, "env": {"node_group": ["cluster", "robots"], "processes": 2, "memory_gb": 10}}),
    ("more memory than a node's GPUs: robots only", robot_cluster([2, 2], [1, 1], memory=40),
     {"actor": {"node_group": ["cluster", "robots"], "processes": 2, "memory_gb": 50}}),
    ("two that share a robot but not a GPU", robot_cluster([1, 1], [1, 1], memory=40),
     {"actor": {"node_group": ["cluster", "robots"], "processes": 2, "memory_gb": 30}, "env": {"node_group": ["robots", "cluster"], "processes": 2, "memory_gb": 20}}),
    ("nodes of different memory, one of robots alone", robot_cluster([2, 2, 0], [1, 2, 2], memory=[40, 80, 20]),
     {"actor": {"node_group": ["cluster", "robots"], "processes": 4, "memory_gb": 50}, "ref": {"processes": 2, "memory_gb": 30},
      "env": {"node_group": ["robots", "cluster"], "processes": 3, "memory_gb": 40}}),
]  # fmt: skip


@pytest.mark.parametrize("objective", [{}, {"balance": 10}], ids=["default", "balance"])
@pytest.mark.parametrize(("case", "cluster", "placement"), MEMORY_PER_KIND, ids=[case for case, _, _ in MEMORY_PER_KIND])
def test_memory_is_checked_on_a_views_gpus_alone(case: str, cluster: Cluster, placement: dict[str, Any], objective: dict[str, int]) -> None:
    """Two components holding GPUs and robots with memory, or memory that does not fit a node's
    GPUs where the component may hold robots: a view of several kinds checks memory on its GPUs
    alone, each a fixed load of its own (``item_memory.py``), so the robots of the node take any
    mix (before: declined, the view would have checked their memory on a robot too)."""
    spec = PlacementSpec.build(cluster, placement)
    solution = solve(spec, time_limit_s=10, objective=objective)
    assert counted(solution, objective) == flat_optimum(spec, objective)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(spanning_specs())
def test_first_fit_places_components_over_several_kinds_one_kind_a_process(monkeypatch: pytest.MonkeyPatch, case: tuple[Cluster, dict[str, Any], dict[str, int]]) -> None:
    """With the count model kept out, first fit places a component over GPUs and robots
    (before: it could not construct one), each process on one kind's consecutive items: the
    verifier refuses a process holding two kinds, and the autouse fixture checks the answer."""
    counts_kept_out(monkeypatch)
    cluster, placement, objective = case
    note(f"{cluster!r} {placement} {objective}")
    solved = solved_or_refused(cluster, placement, objective)
    if solved is None:
        return
    _, solution = solved
    event(f"{solution.method}")
    assert solution.method != "counts"
