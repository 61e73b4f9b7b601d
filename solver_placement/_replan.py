"""Re-plan a solved job after losing nodes, moving as few processes as possible.

The cluster model keeps its node numbering, so node ranks in placements, logs and Ray labels keep
naming the same machines. A lost node stays in the model but holds nothing: its GPUs and custom
hardware are removed and it leaves every labelled node group (components that count nodes must
not land on it either). Rank strings are meaningless after that (group ranks shift when a node's
GPUs disappear), so every component is restated as a declarative component of the same shape:
node groups, process count, items per process, stride, tensor/pipeline-parallel sizes,
collocation, exclusivity, capacity, memory and topology rules.

Two ways to place that spec, the cheap one first:

* keep in place: every surviving process is pinned to its items and only the displaced processes
  (those of lost nodes) are placed, as a declarative "moved" part of their component. It moves
  exactly the displaced processes, the least any re-plan can move, and its model holds only their
  candidates. Used when it can state the job (every tensor-parallel group lost whole or not at
  all, no topology rule on a component that lost processes, collocated partners lost together),
  has a placement and passes :func:`verify` (checked once, merged: the split spec's own answer is
  part of it, so its solve does not check it first); the moved processes then take the highest ranks,
  ``timings["keep_in_place"]`` holds the time it took, and the answer is measured on the
  re-planned spec (:func:`_measured`: ``OPTIMAL`` when it meets the bound; else held against
  the exact model in what is left of the time, :func:`_proven_otherwise`, and its gap kept only
  where that proves nothing);
* the exact model: ``solve(spec, previous=solution)``, whose ``changes`` objective term (dominant
  by default) is charged for every process that gives up its hardware, so it may move a
  surviving process when nothing else fits. It holds every process's candidates: seconds up to
  about a hundred GPUs per component, quickly more beyond (``time_limit_s`` bounds it).

What a declarative component cannot state, and what ``replan`` does about it:

* processes of one component sharing an item (``0-3:0-7``, several env workers on one node, a
  ``resources`` window filled by several processes per item) and processes of different sizes
  (``0-1:0-1,2-5:2-3``) or with different rank gaps (explicit lists): such a component is pinned
  to its old hardware (an explicit rank list in the new numbering) if none of its processes was
  on a lost node, and is a :class:`PlacementConfigError` naming it otherwise;
* a ``resources`` window: its ranks no longer name the same items; the process count and sizes
  are kept and the window is dropped;
* components on the reserved ``node`` label (or on ``cluster`` when it counts nodes) move to a
  node group of the surviving nodes, labelled :data:`SURVIVORS_LABEL`, because reserved groups
  always hold every node; their records carry that label.

With the ``changes`` weight set to 0 moves do not matter: the exact model places the job afresh.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from solver_placement._arrays import distinct
from solver_placement._cluster.cluster import Cluster
from solver_placement._constants import CLUSTER_LABEL, NODE_LABEL
from solver_placement._errors import (
    InfeasiblePlacementError,
    InternalError,
    PlacementConfigError,
    PlacementError,
    SolverTimeoutError,
    VerificationError,
    agreeing,
    counted,
    shown,
    with_context,
)
from solver_placement._replan_pins import on_lost, process_nodes, ranks_of
from solver_placement._solver.bounds.objective import objective_lower_bound
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.options import Budget, SolveStatus
from solver_placement._solver.previous import previous_hardware
from solver_placement._solver.solution import Assignment, Solution
from solver_placement._solver.solve import solve, solve_part
from solver_placement._solver_settings import DEFAULT_WEIGHTS
from solver_placement._specification.grammar import ComponentSpec, Constraints, Declarative
from solver_placement._specification.placement_spec import PlacementSpec
from solver_placement._verify import verify

#: Label of the node group that replaces the reserved ``node`` label (nodes that survived).
SURVIVORS_LABEL = "surviving_nodes"
#: Suffix of the part of a component that holds its displaced processes while keeping in place.
MOVED_SUFFIX = "/moved"
#: Kept back from keep-in-place's solve (seconds, and per process of the job) for merging,
#: verifying and measuring its answer, so the re-plan ends within ``time_limit_s``. Measured on
#: the benchmark's ``replan:65536:2`` (a 2-core machine loaded 3x): those steps take about 3.5 s
#: CPU, 10 s wall, for its ~400,000 processes (9 us CPU a process); 20 us a process is twice that.
FINISH_S, FINISH_S_PER_PROCESS = 0.05, 2e-5


def replan(
    solution: Solution,
    lost_nodes: Sequence[int],
    *,
    time_limit_s: float | None = None,
    num_workers: int | None = None,
    objective: Mapping[str, int] | None = None,
) -> Solution:
    """Place ``solution``'s job again without ``lost_nodes``, keeping every process that can stay.

    The keyword arguments override the job's ``cluster.solver`` options as in :func:`solve`;
    ``time_limit_s`` bounds the whole re-plan (keep in place, then the exact model with what is
    left). The result is checked by :func:`verify` (a recovery that relaunches a wrong layout
    costs more than the check). Raises a :class:`PlacementError` naming the lost nodes when the
    job no longer fits, or naming the component that cannot be restated.
    """
    budget = solution.spec.solver_options.options(time_limit_s=time_limit_s, num_workers=num_workers).start()
    old = solution.cluster
    lost = _lost_nodes(lost_nodes, old.num_nodes)
    context = f"replan without {agreeing(len(lost), 'node')} {', '.join(map(str, sorted(lost))) or 'none'}"
    owners = [c for c in solution.spec.components.values() if c.shares_rule_with is None]
    survivors = _survivors_label(old) if any(_counts_reserved_nodes(solution, c) for c in owners) else None
    cluster = old.without_nodes(lost, survivors)
    renamed = {c.name: _renamed_labels(solution, c, cluster, survivors, context) for c in owners}
    placement = {c.key: _restated(solution, c, cluster, lost, renamed[c.name], context) for c in owners}
    options: dict[str, Any] = {"time_limit_s": time_limit_s, "num_workers": num_workers, "objective": objective}
    weights = {**DEFAULT_WEIGHTS, **solution.spec.solver_options.weights(objective)}
    try:
        spec = PlacementSpec.build(cluster, placement, solution.spec.solver_options)
        kept = _kept_in_place(solution, spec, lost, renamed, options, budget) if weights["changes"] else None
        if kept is not None:
            weighs_contiguity = "contiguity" in solution.spec.solver_options.weights(objective)
            measured = _measured(kept, solution, weights, weighs_contiguity)
            if measured.status == SolveStatus.OPTIMAL or weighs_contiguity or budget.remaining() <= 0:
                return measured
            return _proven_otherwise(measured, solution, options, budget, weights)
        if (left := budget.remaining()) <= 0:
            budget.check("keeping the surviving processes in place")  # raises: the time ran out
        return solve(spec, previous=solution, **{**options, "time_limit_s": left})  # verified by solve's answer loop
    except (InfeasiblePlacementError, PlacementConfigError, SolverTimeoutError) as error:
        whole = f" (time_limit_s={budget.limit_s} s bounds the whole re-plan)" if isinstance(error, SolverTimeoutError) else ""
        raise with_context(error, context + whole) from None


def displaced(solution: Solution, lost_nodes: Sequence[int]) -> dict[str, int]:
    """Per component, how many of its processes ran on ``lost_nodes`` (they must move)."""
    lost = set(lost_nodes)
    return {
        name: sum(1 for p in records if p.cluster_node_rank in lost)
        for name, records in solution.placements_by_component().items()
    }


def moved(before: Solution, after: Solution) -> dict[str, int]:
    """Per component, how many hardware sets of ``before`` no process of ``after`` holds.

    Processes of a component are interchangeable (the solver orders them by rank), so a process
    "moves" when its set of items (node, type, local ids) is given up, whatever its new rank;
    this is what the ``changes`` objective term counts.
    """
    def sets(solution: Solution, name: str) -> Counter:
        return Counter((p.cluster_node_rank, p.hardware_type, tuple(p.local_hardware_ranks)) for p in solution.placements(name))

    kept = [name for name in before.components if name in after.components]
    return {name: sum((sets(before, name) - sets(after, name)).values()) for name in kept}


def _lost_nodes(lost_nodes: Sequence[int], num_nodes: int) -> set[int]:
    """The lost node ranks, checked: a typo must not re-plan around the wrong machine."""
    if isinstance(lost_nodes, (str, bytes)) or not isinstance(lost_nodes, Sequence):
        raise PlacementConfigError(f"replan: lost_nodes must be a list of node ranks, not {shown(lost_nodes)}")
    for node in lost_nodes:
        if isinstance(node, bool) or not isinstance(node, (int, np.integer)) or not 0 <= node < num_nodes:
            raise PlacementConfigError(f"replan: lost node {shown(node)} is not a node rank of the cluster (0-{num_nodes - 1})")
    if len(set(lost_nodes)) != len(lost_nodes):
        raise PlacementConfigError(f"replan: lost_nodes {list(lost_nodes)} lists a node twice")
    return {int(node) for node in lost_nodes}


def _counts_reserved_nodes(solution: Solution, component: ComponentSpec) -> bool:
    """True if the component's ranks count nodes of a reserved group (which holds lost nodes too)."""
    counts_nodes = solution.spec.resources_of(component.name).counts_nodes
    return counts_nodes and any(label in (CLUSTER_LABEL, NODE_LABEL) for label in component.node_groups)


def _survivors_label(cluster: Cluster) -> str:
    """:data:`SURVIVORS_LABEL`, numbered if the cluster already has a group of that name."""
    label, number = SURVIVORS_LABEL, 1
    while label in cluster.node_groups:
        label, number = f"{SURVIVORS_LABEL}_{number}", number + 1
    return label


def _restated(
    solution: Solution, component: ComponentSpec, cluster: Cluster, lost: set[int], renamed: Mapping[str, str], context: str
) -> dict[str, Any]:
    """The component as a declarative body, or pinned to its old items when it cannot be."""
    name = component.name
    labels = list(dict.fromkeys(renamed.values()))
    if cluster.resources(labels, component.count_nodes).counts_nodes and not solution.spec.resources_of(name).counts_nodes:
        # the reserved ``cluster`` group counts nodes once no node has a GPU: never place GPU work on nodes
        raise PlacementConfigError(f"{context}: {name}: node group {', '.join(map(repr, labels))} has no GPUs left")
    body: dict[str, Any] = {"node_group": labels}
    if component.count_nodes:
        body["unit"] = "node"
    assignment = solution.assignment(name)
    reason = _not_declarative(assignment.indptr, assignment.hardware, assignment.ranks)
    if reason is None:
        size = int(assignment.indptr[1] - assignment.indptr[0])
        body["processes"] = assignment.num_processes
        body["hardware_per_process"] = size
        body["stride"] = _stride(assignment.indptr, assignment.ranks)
    else:
        body["placement"] = _pinned(solution, component, renamed, cluster, lost, f"{context}: {name}: {reason}")
    body.update(_constraints(component.constraints))
    body.update(component.environment.as_config())  # what its processes see does not move with them
    return body


def _renamed_labels(
    solution: Solution, component: ComponentSpec, cluster: Cluster, survivors: str | None, context: str
) -> dict[str, str]:
    """Old node group label -> the label the restated component uses (reserved groups that
    count nodes become the survivors' group)."""
    moves = survivors is not None and _counts_reserved_nodes(solution, component)
    renamed = {}
    for label in component.node_groups:
        new = survivors if moves and label in (CLUSTER_LABEL, NODE_LABEL) else label
        if new not in cluster.node_groups:
            raise PlacementConfigError(f"{context}: {component.name}: node group {label!r} has no node left")
        renamed[label] = new
    return renamed


def _not_declarative(indptr: np.ndarray, hardware: np.ndarray, ranks: np.ndarray) -> str | None:
    """Why this layout has no declarative equivalent (None if it has one)."""
    sizes = distinct(np.diff(indptr))
    if sizes.size > 1:
        return f"its processes hold different numbers of items ({', '.join(map(str, sizes.tolist()))})"
    shared = int(np.bincount(hardware).max())
    if shared > 1:
        return f"its processes share items (up to {counted(shared, 'process', 'processes')} on one item)"
    gaps = distinct(_gaps(indptr, ranks))  # by one sort: a set of a re-plan's ~400,000 gaps took 0.05 s
    if gaps.size > 1:
        return f"its processes' ranks are spaced differently ({', '.join(map(str, gaps.tolist()))})"
    return None


def _gaps(indptr: np.ndarray, ranks: np.ndarray) -> np.ndarray:
    """Rank differences between consecutive items of each process (its ranks sorted), in one
    pass over all processes: a re-plan restates jobs of tens of thousands of processes."""
    owner = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    order = np.lexsort((ranks, owner))
    same_process = owner[order][1:] == owner[order][:-1]
    return np.diff(ranks[order])[same_process]


def _stride(indptr: np.ndarray, ranks: np.ndarray) -> int:
    """The one rank gap inside processes (1 when every process holds a single item)."""
    gaps = _gaps(indptr, ranks)
    return int(gaps[0]) if gaps.size else 1


def _pinned(
    solution: Solution, component: ComponentSpec, renamed: Mapping[str, str], cluster: Cluster, lost: set[int], why: str
) -> np.ndarray | list[list[int]]:
    """Explicit rank lists that give every process its old items, or an error if it lost some."""
    nodes = process_nodes(solution, component.name)
    ran_on = sorted(set(nodes.tolist()) & lost)
    if ran_on:
        raise PlacementConfigError(
            f"{why}, which a declarative component cannot state, and it ran on lost {agreeing(len(ran_on), 'node')} "
            f"{', '.join(map(str, ran_on))}; give it a placement on the surviving nodes by hand"
        )
    return ranks_of(solution, component, np.ones(nodes.size, dtype=bool), renamed, cluster)


def _kept_in_place(
    solution: Solution,
    spec: PlacementSpec,
    lost: set[int],
    renamed: Mapping[str, Mapping[str, str]],
    options: Mapping[str, Any],
    budget: Budget,
) -> Solution | None:
    """``spec`` placed with every surviving process pinned and only the displaced ones free
    (see the module docstring), verified; None when that cannot state the job or finds nothing.
    Its solve has what is left of ``budget`` but :func:`finish_reserve_s`, kept for merging the
    parts, verifying the merge and measuring it."""
    # One function on purpose: the split spec is built in one pass over the owners, and every
    # early ``return None`` (a case the fast path cannot state) must leave nothing half-built.
    owners = [c for c in spec.components.values() if c.shares_rule_with is None]
    names = {c.name: [n for n, other in spec.components.items() if other.rule_owner == c.name] for c in owners}
    displaced_ones = {c.name: on_lost(solution, c.name, lost) for c in owners}
    gone: dict[str, int] = {}
    for c in owners:
        ranks = np.flatnonzero(displaced_ones[c.name])
        tp = c.constraints.tensor_parallel_size
        if ranks.size and (c.constraints.topology or ranks.size != tp * distinct(ranks // tp).size):
            return None  # a domain or a tensor-parallel group lost only some of its processes
        if ranks.size:
            gone[c.name] = int(ranks.size)

    def parts(name: str) -> list[str]:
        """The parts of a component in the split spec: itself (survivors), ``+MOVED_SUFFIX`` (displaced)."""
        owner = spec.owner_of(name)
        survives = gone.get(owner, 0) < displaced_ones[owner].size
        return [name] * survives + [name + MOVED_SUFFIX] * (owner in gone)

    placement: dict[str, Any] = {}
    for c in owners:
        for part in parts(c.name):
            moved_part = part != c.name
            body = {"node_group": list(c.node_groups), **({"unit": "node"} if c.count_nodes else {}), **_constraints(c.constraints)}
            body.update(c.environment.as_config())
            body.pop("collocate_with", None)
            target = c.constraints.collocate_with
            if target is not None:
                mate = target + MOVED_SUFFIX if moved_part else target
                if mate not in parts(target):
                    return None  # collocated partners must lose their processes together
                body["collocate_with"] = mate
            exclusive = [p for other in c.constraints.exclusive_with for p in parts(other)]
            exclusive += [c.name] if moved_part and c.name in parts(c.name) else []  # never onto a survivor's items
            body.pop("exclusive_with", None)
            if exclusive:
                body["exclusive_with"] = exclusive
            if moved_part:
                decl = c.form
                if not isinstance(decl, Declarative):
                    return None  # the restated spec is declarative; without a shape nothing can move
                body.update(processes=gone[c.name], hardware_per_process=decl.hardware_per_process, stride=decl.stride)
            else:
                body["placement"] = ranks_of(solution, solution.spec.components[c.name], ~displaced_ones[c.name], renamed[c.name], spec.cluster)
            placement[",".join(name + (MOVED_SUFFIX if moved_part else "") for name in names[c.name])] = body
    started = time.perf_counter()
    try:
        split_spec = PlacementSpec.build(spec.cluster, placement, spec.solver_options)
        left = budget.remaining() - finish_reserve_s(spec)
        if left <= 0:
            return None  # nothing left to solve in: the exact model's call says so
        split = solve_part(split_spec, time_limit_s=left, num_workers=options["num_workers"], objective=options["objective"])
        assignments: dict[str, Assignment] = {}
        for c in owners:
            pieces = [split.assignment(part) for part in parts(c.name)]
            sizes = np.concatenate([np.diff(piece.indptr) for piece in pieces])
            merged = Assignment(
                indptr=np.concatenate(([0], np.cumsum(sizes))),
                hardware=np.concatenate([piece.hardware for piece in pieces]),
                ranks=np.concatenate([piece.ranks for piece in pieces]),
                num_hardware=spec.cluster.num_hardware,
            )
            assignments.update(dict.fromkeys(names[c.name], merged))
        timings = {**split.timings, "keep_in_place": 0.0}
        result = Solution(spec, spec.requests, {name: assignments[name] for name in spec.names}, SolveStatus.FEASIBLE, None, timings)
        _verified(result, split)
        timings["keep_in_place"] = time.perf_counter() - started  # marks the path taken; merge and check included
    except PlacementError:
        return None  # the exact model decides (it may move survivors to make room)
    return result


def _verified(merged: Solution, split: Solution) -> None:
    """Check the merged answer, the one check of keep-in-place's answer (``solve_part``). When it
    fails, a rule the split spec does not state may be broken (the exact model then decides), or
    the split spec's own answer breaks one of its rules: that is a bug of the path that answered,
    raised as the loop raises it (checked only then, so the usual answer is checked once)."""
    try:
        verify(merged.spec, merged.placement_records())
    except VerificationError:
        try:
            verify(split.spec, split.placement_records())
        except VerificationError as error:
            raise InternalError(f"keep in place: {split.method}'s answer breaks a rule of the split spec (a bug of solver_placement): {error}") from None
        raise


def finish_reserve_s(spec: PlacementSpec) -> float:
    """Seconds kept back from keep-in-place's solve for what follows it before ``replan``
    returns: merging the parts, verifying the merged answer and measuring it
    (:func:`_measured`), all linear in the processes."""
    processes = sum(request.num_processes for request in spec.requests.values())
    return FINISH_S + FINISH_S_PER_PROCESS * processes


def _measured(kept: Solution, before: Solution, weights: Mapping[str, int], weighs_contiguity: bool) -> Solution:
    """Keep-in-place's answer with its objective on the re-planned spec's own scale, and a bound.

    Why it can be proven at once: keeping every survivor in place gives up no previous hardware
    set a layout could keep (the ``changes`` term counts only sets on surviving hardware, and a
    set it counts while kept, several items without a stride, counts in every layout), so its
    ``changes`` value is that term's minimum; every other term is at least its counting bound
    (``objective_lower_bound``). When the answer meets their sum it is ``OPTIMAL``, else it says
    its gap. As against the counting bound elsewhere, ``contiguity`` is a tie-break left out of
    both, unless the call weighs it (then nothing is proven).
    """
    spec = kept.spec
    held = previous_hardware(spec, before)
    taken = {name: kept.assignment(name) for name in spec.requests}
    primary = {**weights, "contiguity": weights["contiguity"] if weighs_contiguity else 0}
    value = objective_value(spec, spec.requests, taken, primary, held)
    least_changes = value - objective_value(spec, spec.requests, taken, {**primary, "changes": 0}, {})  # the moves counted once
    bound = least_changes + objective_lower_bound(spec, {**primary, "changes": 0})
    status = SolveStatus.OPTIMAL if not weighs_contiguity and value <= bound else SolveStatus.FEASIBLE
    proven = "optimal" if status == SolveStatus.OPTIMAL else f"unproven: {value:,}, its bound {min(bound, value):,}"
    note = f"keep in place ({proven}): every surviving process pinned to its items, only the displaced ones placed (the fewest moves), against the counting bound"
    return replace(kept, status=status, objective=value, bound=min(bound, value), notes=(note,))


def _proven_otherwise(measured: Solution, before: Solution, options: Mapping[str, Any], budget: Budget, weights: Mapping[str, int]) -> Solution:
    """Keep-in-place's answer, unproven, held against ``solve(previous=...)`` in what is left of
    the time (each move charged, ``counts/kept.py``): that answer where better, keep-in-place's
    proven where it proves nothing is, keep-in-place's as it was when it runs out of time. Why:
    its split spec counts a node holding survivors and moved processes of one component as two
    (component, node) pairs, and the counting bound is loose: ``replan:182:611`` ended
    ``FEASIBLE`` one pair above it; the count model proves the same value in 0.01 s."""
    spec = measured.spec
    try:
        exact = solve(spec, previous=before, **{**options, "time_limit_s": budget.remaining()})
    except SolverTimeoutError:
        return measured
    primary = {**weights, "contiguity": 0}
    value = objective_value(spec, spec.requests, {name: exact.assignment(name) for name in spec.requests}, primary, previous_hardware(spec, before))
    if measured.objective is not None and value < measured.objective:
        return exact
    if exact.status == SolveStatus.OPTIMAL and value == measured.objective:
        note = f"keep in place (optimal): every surviving process pinned to its items, only the displaced ones placed; proven by {exact.notes[-1] if exact.notes else exact.method}"
        return replace(measured, status=SolveStatus.OPTIMAL, bound=value, notes=(note,))
    return measured


def _constraints(rules: Constraints) -> dict[str, Any]:
    """The rule keys of a component body, as the user would write them."""
    body: dict[str, Any] = {}
    if rules.tensor_parallel_size > 1:
        body["tensor_parallel_size"] = rules.tensor_parallel_size
    if rules.pipeline_parallel_size > 1:
        body["pipeline_parallel_size"] = rules.pipeline_parallel_size
    if rules.collocate_with is not None:
        body["collocate_with"] = rules.collocate_with
    if rules.exclusive_with:
        body["exclusive_with"] = list(rules.exclusive_with)
    if rules.max_processes_per_hardware is not None:
        body["max_processes_per_hardware"] = rules.max_processes_per_hardware
    if rules.memory is not None:
        # idle = what stays resident while a collocated component runs; the rest is activations
        memory = rules.memory
        parts = {"weights": memory.idle, "activations": memory.active - memory.idle}
        body["memory_gb"] = memory.active if memory.active == memory.idle else parts
    if rules.topology:
        topology: dict[str, dict[str, str]] = {}
        for rule in rules.topology:
            topology.setdefault(rule.group, {})[rule.label] = "require" if rule.required else "prefer"
        body["topology"] = topology
    return body

