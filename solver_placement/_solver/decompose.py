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

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._cluster.cluster import Cluster
from solver_placement._constants import ACCELERATOR
from solver_placement._errors import Statement
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.bounds.core import Guarded, minimal_core
from solver_placement._solver.bounds.needs import is_free, needs_of, tensor_group_on_node
from solver_placement._solver.build import build_model
from solver_placement._solver.exact import solve_polished
from solver_placement._solver.options import Budget, SolverOptions, Status, solve_model
from solver_placement._solver.rules.collocation import collocation_statement
from solver_placement._solver.rules.exclusivity import exclusive_statement
from solver_placement._solver.statements import COUNTING
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.grammar import ComponentSpec
from solver_placement._specification.placement_spec import PlacementSpec

log = logging.getLogger(__name__)

#: Below this many (process, candidate) pairs the flat model is solved directly.
AGGREGATE_ABOVE_PAIRS = 5_000
#: Enforcement literals of a statement, by component name (its own need) or the statement.
Guard = Callable[[str | Statement], list[cp_model.IntVar]]


def _unguarded(key: str | Statement) -> list[cp_model.IntVar]:
    return []


def should_aggregate(spec: PlacementSpec, requests: Mapping[str, ComponentRequest]) -> bool:
    """Worth it when free (declarative, window-less) components make the flat model large."""
    free = [r for r in requests.values() if is_free(r)]
    return bool(free) and sum(r.candidate_pairs for r in free) > AGGREGATE_ABOVE_PAIRS


def narrow(
    spec: PlacementSpec, requests: Mapping[str, ComponentRequest], weights: Mapping[str, int], options: SolverOptions, budget: Budget
) -> dict[str, ComponentRequest] | Status:
    """Requests whose free components' processes are confined to the nodes stage 1 chose, or
    stage 1's status when it finds no node-level layout within what remains of ``budget``.

    Stage 1 always runs with one worker and seed 0: it only narrows the exact model's candidates,
    and a fixed search keeps that narrowing the same whatever the caller's seed and workers.
    """
    cluster = spec.cluster
    stage = NodeLevel.build(spec, requests)
    _objective(stage.model, stage.free, stage.count, stage.width, weights, cluster)
    solver, status = solve_model(stage.model, replace(options, num_workers=1, seed=0), budget)
    log.info("decomposition stage 1 (processes per node, %d free component(s)): %s", len(stage.free), solver.status_name(status))
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return status
    narrowed = dict(requests)
    for name, request in stage.free.items():
        per_node = {n: solver.value(var) * stage.unit[name] for (c, n), var in stage.count.items() if c == name}
        narrowed[name] = _confine(request, per_node, cluster)
    return narrowed


@dataclass
class NodeLevel:
    """Stage 1's model: per free component and node, how many of its TP groups go there.

    ``guard(statement)`` gives the enforcement literals of a statement's constraints: none for
    the search (the model is then exactly stage 1's), one literal per statement when the model
    names the statements behind an infeasibility (see :func:`node_level_conflicts`).
    """

    model: cp_model.CpModel
    free: dict[str, ComponentRequest]
    count: dict[tuple[str, int], cp_model.IntVar]
    unit: dict[str, int]
    width: dict[str, int]

    @classmethod
    def build(
        cls, spec: PlacementSpec, requests: Mapping[str, ComponentRequest], guard: Guard = _unguarded, model: cp_model.CpModel | None = None
    ) -> NodeLevel:
        cluster = spec.cluster
        free = {name: r for name, r in requests.items() if is_free(r)}
        model = cp_model.CpModel() if model is None else model
        gpus_on = {name: _gpus_per_node(cluster, r) for name, r in free.items()}
        unit = {name: spec.components[name].constraints.tensor_parallel_size for name in free}
        width = {name: unit[name] * int(r.amount[0]) for name, r in free.items()}  # GPUs per TP group
        count = {
            (name, n): model.new_int_var(0, int(gpus_on[name][n]) // width[name], f"{name} groups on node {n}")
            for name in free
            for n in np.flatnonzero(gpus_on[name] >= width[name]).tolist()
        }
        stage = cls(model, free, count, unit, width)
        for name, request in free.items():
            nodes = [n for (c, n) in count if c == name]
            model.add(sum(count[name, n] for n in nodes) * unit[name] == request.num_processes).only_enforce_if(guard(name))
        _fixed_relations(stage, spec, requests, guard)
        return stage


def node_level_conflicts(spec: PlacementSpec, requests: Mapping[str, ComponentRequest], budget: Budget) -> list[Statement]:
    """The statements stage 1 cannot satisfy together, when stage 1 is a relaxation of the spec
    (so its infeasibility is the spec's); [] otherwise or when it finds none in time.

    Stage 1 relaxes the spec when every item involved is a GPU (exclusivity is counted against
    a node's GPUs) and every free component's TP groups must each sit on one node.
    """
    if not _relaxes(spec, requests):
        return []
    needs = needs_of(spec)
    model = cp_model.CpModel()
    literal: dict[Statement, cp_model.IntVar] = {}

    def guard(key: str | Statement) -> list[cp_model.IntVar]:
        statement = key if isinstance(key, Statement) else needs[key].statement
        if statement not in literal:
            literal[statement] = model.new_bool_var(statement.text)
        return [literal[statement]]

    NodeLevel.build(spec, requests, guard, model)
    own = [need.statement for need in needs.values() if need.statement in literal]
    core = minimal_core(Guarded(model, literal, own, [[s] for s in own]), budget)
    if not core:
        return []
    line = f"counting node by node: no split of their groups over the {spec.cluster.num_nodes} nodes satisfies these"
    return [*core, Statement(line, rule=COUNTING, others=tuple(dict.fromkeys(n for s in core for n in s.named)))]


def _relaxes(spec: PlacementSpec, requests: Mapping[str, ComponentRequest]) -> bool:
    cluster = spec.cluster
    gpu = cluster.kinds.index(ACCELERATOR)
    for name, request in requests.items():
        if (cluster.hw_kind[np.unique(request.cand_hw)] != gpu).any():
            return False
        if is_free(request) and tensor_group_on_node(spec, request) != spec.components[name].constraints.tensor_parallel_size:
            return False
    return True


def _gpus_per_node(cluster: Cluster, request: ComponentRequest) -> np.ndarray:
    """Distinct candidate items of the request's first process, counted per node."""
    window = np.unique(request.cand_hw[request.indptr[0]:request.indptr[1]])
    return np.bincount(cluster.hw_node[window], minlength=cluster.num_nodes)


def _fixed_relations(stage: NodeLevel, spec: PlacementSpec, requests: Mapping[str, ComponentRequest], guard: Guard) -> None:
    """Collocation as equal GPU counts per node; exclusivity as shared node capacity. A
    relation with a rank-string component also holds only with that component's placement."""
    cluster, model, free, count, width = spec.cluster, stage.model, stage.free, stage.count, stage.width

    def fixed(name: str) -> list[cp_model.IntVar]:
        """A rank-string component's own statement (its placement), none for a free one."""
        owner = spec.owner_of(name)
        return [] if owner in free else guard(owner)

    def used(name: str, node: int) -> cp_model.LinearExpr | int:
        owner = spec.owner_of(name)
        if owner in free:
            return count[owner, node] * width[owner] if (owner, node) in count else 0
        held = requests[owner].cand_hw
        return int(np.count_nonzero(cluster.hw_node[np.unique(held)] == node))

    for component in spec.components.values():
        rules = component.constraints
        if component.name not in free:
            continue
        if rules.collocate_with is not None:
            together = [*guard(collocation_statement(component.name, rules.collocate_with)), *fixed(rules.collocate_with)]
        for node in range(cluster.num_nodes):
            if rules.collocate_with is not None:
                model.add(used(component.name, node) == used(rules.collocate_with, node)).only_enforce_if(together)
            for other in rules.exclusive_with:
                apart = [*guard(exclusive_statement(component.name, other)), *fixed(other)]
                model.add(used(component.name, node) + used(other, node) <= int(cluster.gpus_per_node[node])).only_enforce_if(apart)


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
    log.info("decomposition stage 2: %d distinct node model(s) solved", len(solved))
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
    return cluster.physical_id(node, cluster.kinds[kind], item)


def _assignment(request: ComponentRequest, per_process: list[np.ndarray], cluster: Cluster) -> Assignment:
    hardware = np.concatenate(per_process) if per_process else np.zeros(0, dtype=np.int64)
    rank_of = {int(h): int(r) for h, r in zip(request.cand_hw.tolist(), request.cand_rank.tolist())}
    return Assignment(
        indptr=np.concatenate(([0], np.cumsum([p.size for p in per_process]))).astype(np.int64),
        hardware=hardware,
        ranks=np.array([rank_of[int(h)] for h in hardware], dtype=np.int64),
        num_hardware=cluster.num_hardware,
    )
