"""Node-level decomposition for declarative components at scale.

A declarative process may take any GPU of its node groups, so the flat model has processes x
GPUs candidates (4096 x 8192 at 1,024 nodes) and identical GPUs make the search symmetric.
GPUs of one node are interchangeable for everything but the exact ids, so a first CP-SAT model
decides only *how many tensor-parallel groups of each component go on each node* (integers),
under the node-level form of the rules (counts, per-node capacity, collocation as equal GPU
counts, exclusivity as shared capacity) and the same objective terms (nodes, balance, lowest
nodes first). The flat model then runs with each process's candidates narrowed to its node,
which keeps every rule exact and picks the GPU ids. If either stage fails, the caller falls back
to the flat model, so infeasibility is only ever claimed by the exact model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

import numpy as np
from ortools.sat.python import cp_model

from .cluster import Cluster
from .requests import ComponentRequest
from .spec import PlacementSpec

#: Below this many (process, candidate) pairs the flat model is solved directly.
AGGREGATE_ABOVE_PAIRS = 5_000


def should_aggregate(spec: PlacementSpec, requests: Mapping[str, ComponentRequest]) -> bool:
    """Worth it when free (declarative, window-less) components make the flat model large."""
    free = [r for r in requests.values() if _free(r)]
    return bool(free) and sum(r.cand_hw.size for r in free) > AGGREGATE_ABOVE_PAIRS


def narrow(
    spec: PlacementSpec, requests: Mapping[str, ComponentRequest], weights: Mapping[str, int], time_limit_s: float
) -> dict[str, ComponentRequest] | None:
    """Requests whose free components' processes are confined to the nodes stage 1 chose, or
    None when stage 1 finds no node-level layout in time."""
    cluster = spec.cluster
    free = {name: r for name, r in requests.items() if _free(r)}
    model = cp_model.CpModel()
    gpus_on = {name: _gpus_per_node(cluster, r) for name, r in free.items()}
    unit = {name: spec.components[name].constraints.tensor_parallel_size for name in free}
    width = {name: unit[name] * int(r.amount[0]) for name, r in free.items()}  # GPUs per TP group
    count = {
        (name, n): model.new_int_var(0, int(gpus_on[name][n]) // width[name], f"{name} groups on node {n}")
        for name in free
        for n in np.flatnonzero(gpus_on[name] >= width[name]).tolist()
    }
    for name, request in free.items():
        nodes = [n for (c, n) in count if c == name]
        model.add(sum(count[name, n] for n in nodes) * unit[name] == request.num_processes)
    _fixed_relations(model, spec, requests, free, count, width, cluster)
    _objective(model, free, count, width, weights, cluster)
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = time_limit_s
    solver.parameters.num_workers = 1
    solver.parameters.random_seed = 0
    if solver.solve(model) not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    narrowed = dict(requests)
    for name, request in free.items():
        per_node = {n: solver.value(var) * unit[name] for (c, n), var in count.items() if c == name}
        narrowed[name] = _confine(request, per_node, cluster)
    return narrowed


def _free(request: ComponentRequest) -> bool:
    return not request.determined and request.fill_share is None and np.unique(request.amount).size == 1


def _gpus_per_node(cluster: Cluster, request: ComponentRequest) -> np.ndarray:
    """Candidate items of the request's first process, counted per node."""
    window = request.cand_hw[request.indptr[0]:request.indptr[1]]
    return np.bincount(cluster.hw_node[window], minlength=cluster.num_nodes)


def _fixed_relations(
    model: cp_model.CpModel,
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    free: Mapping[str, ComponentRequest],
    count: Mapping[tuple[str, int], cp_model.IntVar],
    width: Mapping[str, int],
    cluster: Cluster,
) -> None:
    """Collocation as equal GPU counts per node; exclusivity as shared node capacity."""

    def used(name: str, node: int) -> cp_model.LinearExprT:
        owner = spec.components[name].shares_rule_with or name
        if owner in free:
            return count[owner, node] * width[owner] if (owner, node) in count else 0
        held = requests[owner].cand_hw
        return int(np.count_nonzero(cluster.hw_node[np.unique(held)] == node))

    for component in spec.components.values():
        rules = component.constraints
        if component.name not in free:
            continue
        for node in range(cluster.num_nodes):
            if rules.collocate_with is not None:
                model.add(used(component.name, node) == used(rules.collocate_with, node))
            for other in rules.exclusive_with:
                model.add(used(component.name, node) + used(other, node) <= int(cluster.gpus_per_node[node]))


def _objective(
    model: cp_model.CpModel,
    free: Mapping[str, ComponentRequest],
    count: Mapping[tuple[str, int], cp_model.IntVar],
    width: Mapping[str, int],
    weights: Mapping[str, int],
    cluster: Cluster,
) -> None:
    """The flat model's node and balance terms, and lowest nodes first for contiguity."""
    terms = []
    load: dict[int, list[cp_model.LinearExprT]] = {}
    for (name, node), var in count.items():
        on = model.new_bool_var("")
        model.add(var <= int(cluster.gpus_per_node[node]) * on)
        terms.append(weights.get("nodes", 0) * on)
        load.setdefault(node, []).append(var * width[name])
        terms.append(weights.get("contiguity", 0) * int(cluster.gpus_per_node[:node].sum()) * width[name] * var)
    if weights.get("balance", 0) and load:
        peak = model.new_int_var(0, int(cluster.gpus_per_node.max()) * len(free), "peak")
        for items in load.values():
            model.add(sum(items) <= peak)
        terms.append(weights["balance"] * peak)
    model.minimize(sum(terms))


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
