"""The CP-SAT model: boolean ``x[process, candidate]`` plus one builder per rule family.

Every builder has the same signature, ``add_<rule>(ctx)``, and is listed once in ``BUILDERS``:
adding a rule touches this file only. Builders phrase each group of constraints as a
*statement* in the user's words; when explaining an infeasible spec, each statement gets an
assumption literal and CP-SAT returns the statements that cannot hold together. A violation that
is certain without search (all candidates of a process are forced) is recorded directly as a
conflict, so a bad rank string is reported at once, even at 100,000 GPUs.

Rank-based components have exactly the candidates the grammar gives them, so their hardware
use is known while building ("determined"); constraints between two determined components
reduce to set arithmetic and cost no variables.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from solver_placement.constants import ACCELERATOR, NODE
from solver_placement.cluster.cluster import Cluster
from solver_placement.solver.assignment import Assignment
from solver_placement.spec.candidates import ComponentRequest
from solver_placement.spec.placement_spec import PlacementSpec

Literal = cp_model.IntVar
#: Objective weights (see ``add_objective``); a term with weight 0 is left out.
DEFAULT_WEIGHTS = {"changes": 1_000_000, "topology": 100_000, "nodes": 10_000, "balance": 0, "contiguity": 1}


@dataclass
class ModelContext:
    """The model under construction and what builders share."""

    spec: PlacementSpec
    requests: dict[str, ComponentRequest]
    explain: bool
    model: cp_model.CpModel = field(default_factory=cp_model.CpModel)
    first_var: dict[str, int] = field(default_factory=dict)
    x: dict[str, list[Literal]] = field(default_factory=dict)
    statements: dict[str, Literal] = field(default_factory=dict)
    conflicts: list[str] = field(default_factory=list)
    weights: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_WEIGHTS))
    previous: Mapping[str, Sequence[Sequence[int]]] = field(default_factory=dict)
    starts: dict[str, dict[tuple[int, tuple[int, ...]], Literal]] = field(default_factory=dict)
    soft: dict[str, list[tuple[Any, int]]] = field(default_factory=dict)
    _used: dict[tuple[str, int], Literal] = field(default_factory=dict)
    _takers: dict[str, dict[int, list[Literal]]] = field(default_factory=dict)

    @property
    def cluster(self) -> Cluster:
        return self.spec.cluster

    def guard(self, statement: str) -> list[Literal]:
        """Enforcement literals for a statement's constraints (none unless explaining)."""
        if not self.explain:
            return []
        if statement not in self.statements:
            self.statements[statement] = self.model.new_bool_var(f"holds: {statement}")
        return [self.statements[statement]]

    def conflict(self, statement: str) -> None:
        """Record a statement that is violated whatever the solver does."""
        self.conflicts.append(statement)

    def owner(self, name: str) -> ComponentRequest:
        """The request that places ``name`` (components on one key share the first one's)."""
        spec = self.spec.components[name]
        return self.requests[spec.shares_rule_with or name]

    def copies(self, request: ComponentRequest) -> int:
        """How many components place processes by this request (itself plus shared-rule names)."""
        return 1 + sum(1 for c in self.spec.components.values() if c.shares_rule_with == request.name)

    def used_set(self, request: ComponentRequest) -> frozenset[int]:
        """Physical ids a determined request certainly uses."""
        return frozenset(self.takers(request))

    def assignments(self, solution_values: Sequence[int]) -> dict[str, Assignment]:
        """Per component (shared-rule names included), the items taken in a solver solution."""
        values = np.asarray(solution_values, dtype=bool)
        taken_by: dict[str, Assignment] = {}
        for name, request in self.requests.items():
            first = self.first_var[name]
            taken = values[first:first + request.cand_hw.size]
            counts = np.add.reduceat(taken, request.indptr[:-1]) if taken.size else np.zeros(0, dtype=np.int64)
            taken_by[name] = Assignment(
                indptr=np.concatenate(([0], np.cumsum(counts))),
                hardware=request.cand_hw[taken],
                ranks=request.cand_rank[taken],
                num_hardware=self.cluster.num_hardware,
            )
        return {
            spec.name: taken_by[owner]
            for spec in self.spec.components.values()
            if (owner := spec.shares_rule_with or spec.name) in taken_by
        }

    def takers(self, request: ComponentRequest) -> dict[int, list[Literal]]:
        """Per physical id, the literals of the (process, candidate) pairs that would take it."""
        if request.name not in self._takers:
            order = np.argsort(request.cand_hw, kind="stable")
            hw_sorted = request.cand_hw[order]
            bounds = np.flatnonzero(np.r_[True, hw_sorted[1:] != hw_sorted[:-1], True])
            x = self.x[request.name]
            self._takers[request.name] = {
                int(hw_sorted[lo]): [x[i] for i in order[lo:hi]] for lo, hi in zip(bounds[:-1], bounds[1:])
            }
        return self._takers[request.name]

    def used(self, request: ComponentRequest, hw: int) -> Literal | int:
        """1/0 for determined requests, else a literal true iff some process takes ``hw``."""
        if request.determined:
            return int(hw in self.used_set(request))
        key = (request.name, hw)
        if key not in self._used:
            takers = self.takers(request).get(hw, [])
            literal = self.model.new_bool_var(f"{request.name} uses hw{hw}")
            if takers:
                self.model.add_max_equality(literal, takers)
            else:
                self.model.add(literal == 0)
            self._used[key] = literal
        return self._used[key]


Builder = Callable[[ModelContext], None]


# ----------------------------------------------------------------------------- variables
def add_variables(ctx: ModelContext) -> None:
    """One boolean per (process, candidate) pair, created in one batch per request."""
    for request in ctx.requests.values():
        ctx.first_var[request.name] = len(ctx.model.proto.variables)
        ctx.x[request.name] = [ctx.model.new_bool_var("") for _ in range(request.cand_hw.size)]


# ----------------------------------------------------------------------------- per process
def add_amount(ctx: ModelContext) -> None:
    """Each process takes exactly its requested number of hardware items."""
    for request in ctx.requests.values():
        if request.stride is not None and int(request.amount[0]) > 1:
            continue  # the stride builder defines the whole pattern, amount included
        x = ctx.x[request.name]
        for p in range(request.num_processes):
            lo, hi = request.indptr[p], request.indptr[p + 1]
            need = int(request.amount[p])
            ctx.model.add(sum(x[lo:hi]) == need).only_enforce_if(ctx.guard(_amount_statement(request, p)))


def add_distinct_hardware(ctx: ModelContext) -> None:
    """A process never holds one physical item twice (possible when listed groups overlap)."""
    for request in ctx.requests.values():
        order = np.lexsort((request.cand_hw, request.cand_process))
        hw, proc = request.cand_hw[order], request.cand_process[order]
        dup = np.flatnonzero((hw[1:] == hw[:-1]) & (proc[1:] == proc[:-1]))
        for i in dup:
            p = int(proc[i])
            statement = (
                f"{request.process_where(p)} would hold physical item {_hw_name(ctx.cluster, int(hw[i]))} twice "
                f"(the listed node groups overlap); a process's hardware must be distinct"
            )
            if request.determined:
                ctx.conflict(statement)
            else:
                ctx.model.add(ctx.x[request.name][order[i]] + ctx.x[request.name][order[i + 1]] <= 1)


def add_same_node(ctx: ModelContext) -> None:
    """All hardware of a process lies on one node."""
    for request in ctx.requests.values():
        _add_one_of(ctx, request, ctx.cluster.hw_node[request.cand_hw], 1, "process", "node")


def add_same_type(ctx: ModelContext) -> None:
    """All hardware of a process is of one type."""
    for request in ctx.requests.values():
        _add_one_of(ctx, request, ctx.cluster.hw_kind[request.cand_hw], 1, "process", "hardware type")


def add_domain_groups(ctx: ModelContext) -> None:
    """Tensor-parallel groups (``tp`` consecutive processes) lie on one node, or inside one value
    of a node label when ``topology.tensor_parallel`` requires it; pipelines (``tp * pp``
    consecutive processes) inside one value when ``topology.pipeline_parallel`` asks. A
    ``prefer`` rule becomes the ``topology`` objective term instead of a hard rule."""
    for request in ctx.requests.values():
        rules = ctx.spec.components[request.name].constraints
        tp, pp = rules.tensor_parallel_size, rules.pipeline_parallel_size
        required_tp = [rule for rule in rules.topology if rule.group == "tensor_parallel" and rule.required]
        if tp > 1 and not required_tp:
            _add_one_of(ctx, request, ctx.cluster.hw_node[request.cand_hw], tp, "tensor-parallel group", "node")
        for rule in rules.topology:
            size = tp if rule.group == "tensor_parallel" else tp * pp
            if size > 1:
                values = _label_values(ctx.cluster, rule.label)[ctx.cluster.hw_node[request.cand_hw]]
                unit_name = "tensor-parallel group" if rule.group == "tensor_parallel" else "pipeline"
                _add_one_of(ctx, request, values, size, unit_name, f"{rule.label!r} domain", required=rule.required)


def _label_values(cluster: Cluster, label: str) -> np.ndarray:
    """Per node, an index of its value of ``label``; unlabelled nodes are each their own value."""
    names = [cluster.node_labels[n].get(label, f"\0node {n}") for n in range(cluster.num_nodes)]
    index = {name: i for i, name in enumerate(dict.fromkeys(names))}
    return np.array([index[name] for name in names], dtype=np.int64)


def _add_one_of(
    ctx: ModelContext,
    request: ComponentRequest,
    values: np.ndarray,
    unit_size: int,
    unit_name: str,
    attribute_name: str,
    required: bool = True,
) -> None:
    """Shared encoding of "all items of a unit share one attribute value" (node, type, domain).

    A unit is ``unit_size`` consecutive processes. Units whose candidates already agree need
    nothing. Determined units that disagree are conflicts (or nothing, for a preference).
    Otherwise one boolean per (unit, value) with ``x <= chosen[value]``, and exactly one value
    chosen when required, or each extra value counted in the ``topology`` term when preferred.
    """
    units = request.cand_process // unit_size
    starts = np.flatnonzero(np.r_[True, units[1:] != units[:-1]])
    spread = np.maximum.reduceat(values, starts) != np.minimum.reduceat(values, starts)
    noun = _noun(request)
    rule = "must run on one node" if noun == "nodes" and attribute_name == "node" else f"must have all its {noun} on one {attribute_name}"
    for s in np.flatnonzero(spread):
        lo = starts[s]
        hi = starts[s + 1] if s + 1 < starts.size else units.size
        first_process = int(request.cand_process[lo])
        label = request.process_where(first_process) if unit_size == 1 else (
            f"{request.name}: {unit_name} {int(units[lo])} (processes {first_process}-{first_process + unit_size - 1})"
        )
        if request.determined:
            if required:
                spans = sorted(set(values[lo:hi].tolist()))
                ctx.conflict(f"{label} {rule}, but its ranks lie on {attribute_name}s {_values(ctx, attribute_name, spans)}")
            continue
        chosen = {int(v): ctx.model.new_bool_var("") for v in np.unique(values[lo:hi])}
        for i in range(lo, hi):
            ctx.model.add_implication(ctx.x[request.name][i], chosen[int(values[i])])
        if required:
            ctx.model.add(sum(chosen.values()) == 1).only_enforce_if(ctx.guard(f"{request.name}: every {unit_name} {rule}"))
        else:
            ctx.soft.setdefault("topology", []).extend((literal, 1) for literal in chosen.values())
            ctx.soft["topology"].append((ctx.model.new_constant(1), -1))


def add_memory(ctx: ModelContext) -> None:
    """Collocated components time-share a GPU: while one runs (``active`` memory per process),
    the others keep their ``idle`` memory. Every such mix must fit the GPU's memory.

    Components without ``memory_gb`` count as zero; GPUs of unknown memory are not checked.
    """
    holders = [
        (spec.name, ctx.owner(spec.name), spec.constraints.memory)
        for spec in ctx.spec.components.values()
        if spec.constraints.memory is not None
    ]
    if not holders:
        return
    touched = sorted({hw for _, request, _ in holders for hw in ctx.takers(request)})
    for hw in touched:
        limit = ctx.cluster.gpu_memory_gb[int(ctx.cluster.hw_node[hw])]
        if limit is None or ctx.cluster.kind_of(hw) != ACCELERATOR:
            continue
        loads = [(name, request, memory, _load(ctx, request, hw)) for name, request, memory in holders]
        for running, _, _, _ in loads:
            terms = [(load, _mb(memory.active if name == running else memory.idle)) for name, _, memory, load in loads]
            fixed = sum(mb * load for load, mb in terms if isinstance(load, int))
            idle = ", ".join(f"{name} {memory.idle:g}" for name, _, memory, _ in loads if name != running)
            active = next(memory.active for name, _, memory, _ in loads if name == running)
            statement = (
                f"GPU memory: {running} running ({active:g} GB per process) with the others idle "
                f"({idle or 'none'} GB) must fit {limit:g} GB per GPU"
            )
            if all(isinstance(load, int) for load, _ in terms):
                if fixed > _mb(limit):
                    ctx.conflict(f"{statement}, but {_hw_name(ctx.cluster, hw)} would need {fixed / 1024:g} GB")
                continue
            variable = sum(mb * load for load, mb in terms if not isinstance(load, int))
            ctx.model.add(fixed + variable <= _mb(limit)).only_enforce_if(ctx.guard(statement))


def _load(ctx: ModelContext, request: ComponentRequest, hw: int) -> Any:
    """Processes of ``request`` on ``hw``: a constant for determined requests, else a sum."""
    takers = ctx.takers(request).get(hw, [])
    return len(takers) if request.determined else sum(takers)


def _mb(gigabytes: float) -> int:
    return int(np.ceil(gigabytes * 1024))


def add_stride(ctx: ModelContext) -> None:
    """Declarative processes take ranks ``h, h+s, ..., h+(g-1)s`` (s = 1: a contiguous block).

    One start literal per feasible start inside the process's candidates; each candidate is
    taken iff a chosen start covers it. Processes with the same candidates share the patterns.
    """
    for request in ctx.requests.values():
        if request.stride is None or int(request.amount[0]) == 1:
            continue
        need, step = int(request.amount[0]), request.stride
        patterns_of: dict[tuple[int, ...], list[list[int]]] = {}
        for p in range(request.num_processes):
            lo, hi = int(request.indptr[p]), int(request.indptr[p + 1])
            window = tuple(request.cand_rank[lo:hi].tolist())
            if window not in patterns_of:
                position = {rank: i for i, rank in enumerate(window)}
                patterns_of[window] = [
                    [position[rank + k * step] for k in range(need)]
                    for rank in window
                    if all(rank + k * step in position for k in range(need))
                ]
            guard = ctx.guard(f"{request.name}: each process takes {_count(need, _noun(request))} with stride {step}")
            starts = [ctx.model.new_bool_var("") for _ in patterns_of[window]]
            ctx.model.add(sum(starts) == 1).only_enforce_if(guard)
            held = ctx.starts.setdefault(request.name, {})
            for start, pattern in zip(starts, patterns_of[window]):
                held[(p, tuple(int(request.cand_hw[lo + i]) for i in pattern))] = start
            covering: list[list[Literal]] = [[] for _ in window]
            for start, pattern in zip(starts, patterns_of[window]):
                for i in pattern:
                    covering[i].append(start)
            for i in range(len(window)):
                ctx.model.add(ctx.x[request.name][lo + i] == sum(covering[i])).only_enforce_if(guard)


# ----------------------------------------------------------------------------- per hardware
def add_sharing(ctx: ModelContext) -> None:
    """Declarative sharing: a ``resources`` window is used evenly; otherwise at most ``max_share``."""
    for request in ctx.requests.values():
        if request.determined:
            continue  # the grammar's even split is already in the candidates
        for hw, takers in ctx.takers(request).items():
            if request.fill_share is not None:
                statement = f"{request.name}: every item of resources \"{request.spec.declarative.resources or 'all'}\" is shared by {request.fill_share} process(es)"
                ctx.model.add(sum(takers) == request.fill_share).only_enforce_if(ctx.guard(statement))
            else:
                ctx.model.add(sum(takers) <= request.max_share)


def add_collocation(ctx: ModelContext) -> None:
    """``collocate_with``: the component uses exactly its target's hardware set, and each of
    its processes sits inside one tensor-parallel group of the target when it fits in one."""
    for spec in ctx.spec.components.values():
        target_name = spec.constraints.collocate_with
        if target_name is None:
            continue
        mine, target = ctx.owner(spec.name), ctx.owner(target_name)
        statement = f"{spec.name} collocates with {target_name} (same hardware set)"
        if mine.determined and target.determined:
            extra, missing = ctx.used_set(mine) - ctx.used_set(target), ctx.used_set(target) - ctx.used_set(mine)
            if extra or missing:
                ctx.conflict(f"{statement}, but {spec.name} uses {len(extra)} item(s) outside {target_name} and leaves {len(missing)} of {target_name}'s unused")
        else:
            guard = ctx.guard(statement)
            for hw in sorted(set(mine.cand_hw.tolist()) | set(target.cand_hw.tolist())):
                ctx.model.add(ctx.used(mine, hw) == ctx.used(target, hw)).only_enforce_if(guard)
        _add_nesting(ctx, spec.name, mine, target)


def _add_nesting(ctx: ModelContext, name: str, mine: ComponentRequest, target: ComponentRequest) -> None:
    """Each process of ``mine`` inside one TP group of ``target``, when a process fits in one
    and every item of the target belongs to one of its processes."""
    tp = ctx.spec.components[target.name].constraints.tensor_parallel_size
    if np.unique(target.amount).size != 1 or int(mine.amount.max()) > int(target.amount[0]) * tp:
        return
    if not target.determined:
        if target.max_share == 1:
            _add_nesting_in_free_target(ctx, name, mine, target, tp)
        return
    group_items = int(target.amount[0]) * tp
    if np.unique(target.cand_hw).size != target.cand_hw.size:
        return
    group_of_hw = dict(zip(target.cand_hw.tolist(), (target.cand_process // tp).tolist()))
    statement = f"each {name} process sits inside one tensor-parallel group of {target.name} ({_count(group_items, _noun(target))})"
    if mine.determined:
        for p in range(mine.num_processes):
            groups = {group_of_hw.get(int(h), -1) for h in mine.cand_hw[mine.indptr[p]:mine.indptr[p + 1]]}
            if len(groups) != 1 or -1 in groups:
                ctx.conflict(f"{mine.process_where(p)}: {statement}")
        return
    guard = ctx.guard(statement)
    x = ctx.x[mine.name]
    for p in range(mine.num_processes):
        lo, hi = mine.indptr[p], mine.indptr[p + 1]
        groups = [group_of_hw.get(int(h)) for h in mine.cand_hw[lo:hi]]
        host = {g: ctx.model.new_bool_var("") for g in sorted({g for g in groups if g is not None})}
        ctx.model.add(sum(host.values()) == 1).only_enforce_if(guard)
        for i, g in zip(range(lo, hi), groups):
            if g is None:
                ctx.model.add(x[i] == 0).only_enforce_if(guard)
            else:
                ctx.model.add_implication(x[i], host[g])


def _add_nesting_in_free_target(ctx: ModelContext, name: str, mine: ComponentRequest, target: ComponentRequest, tp: int) -> None:
    """Nesting when the target's layout is itself being chosen: each item gets the index of the
    target TP group holding it (an int variable), and all items of a process of ``mine`` must
    carry the same index."""
    groups = -(-target.num_processes // tp)
    group_terms: dict[int, list[tuple[Literal, int]]] = {}
    for literal, hw, process in zip(ctx.x[target.name], target.cand_hw.tolist(), target.cand_process.tolist()):
        group_terms.setdefault(hw, []).append((literal, process // tp))
    group_of: dict[int, Any] = {}
    guard = ctx.guard(f"each {name} process sits inside one tensor-parallel group of {target.name}")
    x = ctx.x[mine.name]
    for p in range(mine.num_processes):
        host = ctx.model.new_int_var(0, groups - 1, "")
        for i in range(int(mine.indptr[p]), int(mine.indptr[p + 1])):
            hw = int(mine.cand_hw[i])
            if hw not in group_terms:
                ctx.model.add(x[i] == 0).only_enforce_if(guard)
                continue
            if hw not in group_of:
                group_of[hw] = ctx.model.new_int_var(0, groups - 1, "")
                ctx.model.add(group_of[hw] == sum(g * literal for literal, g in group_terms[hw]))
            ctx.model.add(group_of[hw] == host).only_enforce_if(x[i], *guard)


def add_exclusivity(ctx: ModelContext) -> None:
    """``exclusive_with``: the two components share no hardware item."""
    for spec in ctx.spec.components.values():
        for other in spec.constraints.exclusive_with:
            mine, theirs = ctx.owner(spec.name), ctx.owner(other)
            statement = f"{spec.name} is exclusive with {other} (no shared hardware)"
            common = sorted(set(mine.cand_hw.tolist()) & set(theirs.cand_hw.tolist()))
            if mine.determined and theirs.determined:
                if common:
                    ctx.conflict(f"{statement}, but both use {_hw_list(ctx.cluster, common)}")
                continue
            guard = ctx.guard(statement)
            for hw in common:
                ctx.model.add(ctx.used(mine, hw) + ctx.used(theirs, hw) <= 1).only_enforce_if(guard)


def add_capacity(ctx: ModelContext) -> None:
    """``max_processes_per_hardware``: no item this component uses holds more processes
    (of all components, shared-rule copies included) than the limit."""
    limited = [spec for spec in ctx.spec.components.values() if spec.constraints.max_processes_per_hardware]
    if not limited:
        return
    fixed_load = np.zeros(ctx.cluster.num_hardware, dtype=np.int64)
    for request in ctx.requests.values():
        if request.determined:
            fixed_load += np.bincount(request.cand_hw, minlength=ctx.cluster.num_hardware) * ctx.copies(request)
    free = [request for request in ctx.requests.values() if not request.determined]
    for spec in limited:
        limit = spec.constraints.max_processes_per_hardware
        mine = ctx.owner(spec.name)
        statement = f"{spec.name}: at most {limit} process(es) per item (max_processes_per_hardware)"
        for hw in sorted(ctx.takers(mine)):
            variable = [(literal, ctx.copies(r)) for r in free for literal in ctx.takers(r).get(hw, [])]
            if not variable:
                if fixed_load[hw] > limit:
                    ctx.conflict(f"{statement}, but {_hw_name(ctx.cluster, hw)} holds {int(fixed_load[hw])}")
                continue
            total = int(fixed_load[hw]) + sum(weight * literal for literal, weight in variable)
            ctx.model.add(total <= limit).only_enforce_if(*ctx.guard(statement), *_as_literal(ctx.used(mine, hw)))


# ----------------------------------------------------------------------------- search guidance
def add_symmetry_breaking(ctx: ModelContext) -> None:
    """Declarative processes are interchangeable: order them by the ranks they take."""
    for request in ctx.requests.values():
        if request.determined or request.num_processes < 2:
            continue
        ranks = request.cand_rank.tolist()
        x = ctx.x[request.name]
        bounds = request.indptr.tolist()
        position = [
            sum(ranks[i] * x[i] for i in range(bounds[p], bounds[p + 1])) for p in range(request.num_processes)
        ]
        for p in range(request.num_processes - 1):
            ctx.model.add(position[p] <= position[p + 1])


def add_objective(ctx: ModelContext) -> None:
    """Weighted sum of four terms over declarative components (rank strings are fixed):

    - ``changes``: previous hardware sets (``previous``) no process holds any more;
    - ``topology``: extra label values spanned by groups whose ``topology`` rule is ``prefer``;
    - ``nodes``: nodes used, summed over components;
    - ``balance``: the largest number of items taken on one node;
    - ``contiguity``: the sum of the ranks taken (small = packed from rank 0, contiguous).

    Weights come from ``cluster.solver.objective`` (defaults in ``DEFAULT_WEIGHTS``). A spec of
    rank strings only is a pure feasibility model.
    """
    free = [request for request in ctx.requests.values() if not request.determined]
    terms = {
        "changes": lambda: _changes_term(ctx, free),
        "nodes": lambda: _nodes_term(ctx, free),
        "balance": lambda: _balance_term(ctx, free),
        "topology": lambda: ctx.soft.get("topology", []),
        "contiguity": lambda: [(x, int(rank)) for r in free for x, rank in zip(ctx.x[r.name], r.cand_rank.tolist()) if rank],
    }
    objective = []
    for name, build in terms.items():
        weight = int(ctx.weights.get(name, 0))
        if weight and free:
            objective.extend((literal, weight * coefficient) for literal, coefficient in build())
    if objective:
        ctx.model.minimize(sum(coefficient * literal for literal, coefficient in objective))


def _nodes_term(ctx: ModelContext, free: Sequence[ComponentRequest]) -> list[tuple[Literal, int]]:
    terms = []
    for request in free:
        x = ctx.x[request.name]
        nodes = ctx.cluster.hw_node[request.cand_hw]
        for node in np.unique(nodes):
            on_node = np.flatnonzero(nodes == node)
            node_used = ctx.model.new_bool_var("")
            ctx.model.add(sum(x[i] for i in on_node) <= int(on_node.size) * node_used)
            terms.append((node_used, 1))
    return terms


def _balance_term(ctx: ModelContext, free: Sequence[ComponentRequest]) -> list[tuple[Literal, int]]:
    load: dict[int, list[Literal]] = {}
    for request in free:
        for literal, node in zip(ctx.x[request.name], ctx.cluster.hw_node[request.cand_hw].tolist()):
            load.setdefault(node, []).append(literal)
    peak = ctx.model.new_int_var(0, max(len(items) for items in load.values()), "peak items on a node")
    for items in load.values():
        ctx.model.add(sum(items) <= peak)
    return [(peak, 1)]


def _changes_term(ctx: ModelContext, free: Sequence[ComponentRequest]) -> list[tuple[Literal, int]]:
    """One literal per previous hardware set that is given up (weight 1 each)."""
    terms = []
    for request in free:
        for old in ctx.previous.get(request.name, ()):
            old = tuple(sorted(old))
            if len(old) == 1:
                takers = ctx.takers(request).get(old[0], [])
            else:
                takers = [start for (_, hw), start in ctx.starts.get(request.name, {}).items() if tuple(sorted(hw)) == old]
            kept = ctx.model.new_bool_var("")
            ctx.model.add(kept <= sum(takers)) if takers else ctx.model.add(kept == 0)
            terms.append((kept, -1))
        if ctx.previous.get(request.name):
            terms.append((ctx.model.new_constant(1), len(ctx.previous[request.name])))
    return terms


BUILDERS: tuple[Builder, ...] = (
    add_variables,
    add_amount,
    add_distinct_hardware,
    add_same_node,
    add_same_type,
    add_domain_groups,
    add_stride,
    add_sharing,
    add_collocation,
    add_exclusivity,
    add_capacity,
    add_memory,
    add_symmetry_breaking,
    add_objective,
)


def build_model(
    spec: PlacementSpec,
    requests: dict[str, ComponentRequest],
    explain: bool = False,
    weights: Mapping[str, int] | None = None,
    previous: Mapping[str, Sequence[Sequence[int]]] | None = None,
) -> ModelContext:
    """Run every builder in order and return the finished context.

    ``previous`` gives, per component, the physical hardware ids each process held before
    (for the ``changes`` objective term).
    """
    ctx = ModelContext(spec, requests, explain, weights={**DEFAULT_WEIGHTS, **(weights or {})}, previous=previous or {})
    for builder in BUILDERS:
        builder(ctx)
    return ctx


# ----------------------------------------------------------------------------- helpers
def _amount_statement(request: ComponentRequest, process: int) -> str:
    """Component-level for declarative requests, segment-level for rank strings."""
    noun = _noun(request)
    if not request.determined:
        return f"{request.name} needs {request.num_processes} process(es) x {_count(int(request.amount[0]), noun)}"
    if request.spec.explicit is not None:
        return f"{request.name}: placement {request.spec.text} fixes its {noun}"
    return f'{request.name}: segment "{request.origin_text[request.origin[process]]}" fixes its {noun}'


def _count(number: int, noun: str) -> str:
    """``1 GPU``, ``2 GPUs``: plural nouns made singular for one."""
    return f"{number} {noun[:-1] if number == 1 and noun.endswith('s') else noun}"


def _as_literal(term: Literal | int) -> Sequence[Literal]:
    return [] if isinstance(term, int) else [term]


def _noun(request: ComponentRequest) -> str:
    from solver_placement.spec.candidates import component_noun

    return component_noun(request.resources)


def _hw_name(cluster: Cluster, hw: int) -> str:
    kind = cluster.kind_of(hw)
    node = int(cluster.hw_node[hw])
    if kind == NODE:
        return f"node {node}"
    label = "GPU" if kind == ACCELERATOR else kind
    return f"{label} {int(cluster.hw_local[hw])} of node {node}"


def _hw_list(cluster: Cluster, hws: Iterable[int], limit: int = 4) -> str:
    hws = list(hws)
    names = ", ".join(_hw_name(cluster, hw) for hw in hws[:limit])
    return names + (f" and {len(hws) - limit} more" if len(hws) > limit else "")


def _values(ctx: ModelContext, attribute_name: str, values: Sequence[int]) -> str:
    if attribute_name == "hardware type":
        return ", ".join(ctx.cluster.kinds[v] for v in values)
    return ", ".join(str(v) for v in values)
