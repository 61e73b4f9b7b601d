"""Narrowing by the node-level model: each free process confined to one node, then one small
exact model per distinct node.

When the count model declines a large spec (a rule it does not state), the node-level model (``node_level.py``) decides how many groups of each free
component each node holds; the flat model's rules then run node by node on those processes,
which keeps every rule exact and picks the GPU ids. If either step fails, the caller falls back
to the flat model, so infeasibility is only ever claimed by the exact model (or by the
node-level model where it relaxes the spec, ``node_level_conflicts``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import counted
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.bounds.needs import is_free
from solver_placement._solver.build import build_model
from solver_placement._solver.counts.node_level import NodeLevel
from solver_placement._solver.exact import solve_polished
from solver_placement._solver.options import Budget, SolverOptions, Status, solve_model
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.grammar import ComponentSpec
from solver_placement._specification.placement_spec import PlacementSpec

log = logging.getLogger(__name__)

#: Below this many (process, candidate) pairs the flat model is solved directly.
AGGREGATE_ABOVE_PAIRS = 5_000


def should_aggregate(spec: PlacementSpec, requests: Mapping[str, ComponentRequest]) -> bool:
    """Worth it when free (declarative, window-less) components make the flat model large."""
    free = [r for r in requests.values() if is_free(r)]
    return bool(free) and sum(r.candidate_pairs for r in free) > AGGREGATE_ABOVE_PAIRS


def narrow(
    spec: PlacementSpec, requests: Mapping[str, ComponentRequest], weights: Mapping[str, int], options: SolverOptions, budget: Budget
) -> dict[str, ComponentRequest] | Status:
    """Requests whose free components' processes are confined to the nodes the node-level model
    chose (stage 1), or its status when it finds no node-level layout within what remains of
    ``budget``.

    Stage 1 always runs with one worker and seed 0: it only narrows the exact model's candidates,
    and a fixed search keeps that narrowing the same whatever the caller's seed and workers.
    """
    cluster = spec.cluster
    stage = NodeLevel.build(spec, requests)
    stage.minimize(weights, cluster)
    solver, status = solve_model(stage.model, replace(options, num_workers=1, seed=0), budget)
    log.info("decomposition stage 1 (processes per node, %s): %s", counted(len(stage.free), "free component"), solver.status_name(status))
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return status
    narrowed = dict(requests)
    for name, request in stage.free.items():
        per_node = {n: solver.value(var) * stage.unit[name] for (c, n), var in stage.count.items() if c == name}
        narrowed[name] = _confine(request, per_node, cluster)
    return narrowed


def _confine(request: ComponentRequest, per_node: Mapping[int, int], cluster: Cluster) -> ComponentRequest:
    """Processes in node order, each offered only its node's candidate items."""
    window_hw = request.cand_hw[request.indptr[0]:request.indptr[1]]
    window_rank = request.cand_rank[request.indptr[0]:request.indptr[1]]
    nodes_of_window = cluster.hw_node[window_hw]
    hw_parts, rank_parts, sizes = [], [], []
    for node in sorted(n for n, k in per_node.items() if k):
        mask = nodes_of_window == node
        for _ in range(per_node[node]):
            hw_parts.append(window_hw[mask])
            rank_parts.append(window_rank[mask])
            sizes.append(int(mask.sum()))
    return replace(
        request,
        indptr=np.concatenate(([0], np.cumsum(sizes))),
        cand_hw=np.concatenate(hw_parts),
        cand_rank=np.concatenate(rank_parts),
    )


def solve_per_node(
    spec: PlacementSpec, narrowed: Mapping[str, ComponentRequest], weights: Mapping[str, int], options: SolverOptions, budget: Budget
) -> dict[str, Assignment] | None:
    """Stage 2 node by node: once stage 1 confined every free process to one node, nodes are
    independent (every remaining rule is per item or per node), so each node gets its own small
    exact model, with the determined processes on it as fixed context. Nodes with the same
    content are solved once. None if a node has no solution (the caller falls back)."""
    cluster = spec.cluster
    free = [name for name, r in narrowed.items() if not r.determined]
    if any(spec.components[name].constraints.topology for name in free):
        log.info("decomposition stage 2 skipped: topology domains span nodes, which stage 1 does not model")
        return None  # domain rules span nodes: stage 1 does not model them
    node_of = {name: _process_nodes(cluster, r) for name, r in narrowed.items()}
    if any((nodes < 0).any() for nodes in node_of.values()):
        log.info("decomposition stage 2 skipped: a rank-string process spans nodes")
        return None  # a determined process spanning nodes: the flat model reports it
    taken: dict[str, list[np.ndarray]] = {name: [] for name in free}
    solved: dict[tuple, dict[str, list[list[tuple[int, int]]]]] = {}
    for node in sorted({int(n) for name in free for n in node_of[name]}):
        local = {name: r.subset(np.flatnonzero(node_of[name] == node)) for name, r in narrowed.items()}
        local = {name: r for name, r in local.items() if r.num_processes}
        key = _signature(cluster, node, local)
        if key not in solved:
            choice = _solve_node(spec, local, weights, options, budget)
            if choice is None:
                log.info("decomposition stage 2: node %d has no layout of what stage 1 gave it", node)
                return None
            solved[key] = {name: [[(int(cluster.hw_kind[h]), int(cluster.hw_local[h])) for h in a.of(p)] for p in range(a.num_processes)] for name, a in choice.items() if name in free}
        for name, processes in solved[key].items():
            taken[name].extend(np.array([_physical(cluster, node, kind, item) for kind, item in items]) for items in processes)
    log.info("decomposition stage 2: %s solved", counted(len(solved), "distinct node model"))
    result = {name: _assignment(narrowed[name], taken[name], cluster) for name in free}
    for name, request in narrowed.items():
        if request.determined:
            result[name] = Assignment(request.indptr, request.cand_hw, request.cand_rank, cluster.num_hardware)
    return result


def _process_nodes(cluster: Cluster, request: ComponentRequest) -> np.ndarray:
    """Per process, the node of all its candidates (-1 if they span several)."""
    nodes = cluster.hw_node[request.cand_hw]
    starts = request.indptr[:-1]
    if nodes.size == 0:
        return np.zeros(0, dtype=np.int64)
    low, high = np.minimum.reduceat(nodes, starts), np.maximum.reduceat(nodes, starts)
    return np.where(low == high, low, -1)


def _signature(cluster: Cluster, node: int, local: Mapping[str, ComponentRequest]) -> tuple:
    """What a node's subproblem depends on, in node-local terms."""
    parts: list[tuple] = [(int(cluster.gpus_per_node[node]), cluster.gpu_memory_gb[node])]
    for name in sorted(local):
        r = local[name]
        items = tuple(zip(cluster.hw_kind[r.cand_hw].tolist(), cluster.hw_local[r.cand_hw].tolist()))
        parts.append((name, r.determined, tuple(r.indptr.tolist()), tuple(r.amount.tolist()), items))
    return tuple(parts)


def _solve_node(
    spec: PlacementSpec, local: Mapping[str, ComponentRequest], weights: Mapping[str, int], options: SolverOptions, budget: Budget
) -> dict[str, Assignment] | None:
    """The exact model of one node's processes (rules naming absent components dropped)."""
    present = set(local)
    components: dict[str, ComponentSpec] = {}
    for component in spec.components.values():
        owner = component.rule_owner
        if owner not in present:
            continue
        rules = component.constraints
        if rules.collocate_with is not None and spec.owner_of(rules.collocate_with) not in present:
            return None
        exclusive = tuple(o for o in rules.exclusive_with if spec.owner_of(o) in present)
        components[component.name] = replace(component, constraints=replace(rules, exclusive_with=exclusive))
    ctx = build_model(spec.with_rules(components), dict(local), weights=weights, check=budget.check)
    if ctx.conflicts:
        return None
    solver, status = solve_polished(ctx, options, budget)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    return ctx.assignments(solver.response_proto.solution)


def _physical(cluster: Cluster, node: int, kind: int, item: int) -> int:
    """The physical id of a node's ``item``-th hardware of kind index ``kind``."""
    return cluster.physical_id(node, cluster.kinds[kind], item)


def _assignment(request: ComponentRequest, per_process: list[np.ndarray], cluster: Cluster) -> Assignment:
    """The assignment of ``request`` holding ``per_process`` items, each with its candidate rank."""
    hardware = np.concatenate(per_process) if per_process else np.zeros(0, dtype=np.int64)
    rank_of = {int(h): int(r) for h, r in zip(request.cand_hw.tolist(), request.cand_rank.tolist())}
    return Assignment(
        indptr=np.concatenate(([0], np.cumsum([p.size for p in per_process]))).astype(np.int64),
        hardware=hardware,
        ranks=np.array([rank_of[int(h)] for h in hardware], dtype=np.int64),
        num_hardware=cluster.num_hardware,
    )
