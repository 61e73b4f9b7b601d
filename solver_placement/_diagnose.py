"""Why a config cannot be placed, in the user's terms, and the smallest changes that would fix it.

``diagnose`` parses and solves a config; on infeasibility it reports the conflicting statements
(counting bounds, or CP-SAT assumption literals) and tries, for the components they name, the
changes users make, cheapest first: fewer processes (the most that still fit), a smaller
tensor-parallel size, another node group, one more node like the largest in the component's
groups, bigger nodes. Every suggestion was solved, so it is known to work; variants that are
impossible by counting are rejected by the bounds in milliseconds, so the search stays fast at
scale. One budget (``time_limit_s``) covers the first solve and every check.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial

from solver_placement._cluster.cluster import Cluster
from solver_placement._constants import RESERVED_LABELS
from solver_placement._errors import InfeasiblePlacementError, PlacementError, Statement, counted
from solver_placement._solver.bounds.needs import needs_of
from solver_placement._solver.conflicts import compact_statements, grouped_lines
from solver_placement._solver.exact import spec_options
from solver_placement._solver.options import MIN_RUN_S, Budget
from solver_placement._solver.solution import Solution
from solver_placement._solver.solve import solve
from solver_placement._solver_settings import DEFAULT_WEIGHTS
from solver_placement._specification.grammar import Declarative
from solver_placement._specification.placement_spec import PlacementSpec, SpecSource, spec_of

#: Most seconds one tried variant may take; suggestions are best effort within it.
TRY_TIME_LIMIT_S = 10.0
#: Suggestions listed at most.
MAX_SUGGESTIONS = 3
#: Objective weights that switch every term off (a check needs a placement, not the best one).
NO_OBJECTIVE = dict.fromkeys(DEFAULT_WEIGHTS, 0)


@dataclass(frozen=True)
class Diagnosis:
    """The verdict on a config: a solution, or the error, its conflicts and suggestions."""

    solution: Solution | None
    error: PlacementError | None = None
    statements: tuple[Statement, ...] = ()
    suggestions: tuple[str, ...] = field(default_factory=tuple)

    @property
    def conflicts(self) -> tuple[str, ...]:
        """The conflicting statements' sentences."""
        return tuple(statement.text for statement in self.statements)

    @property
    def feasible(self) -> bool:
        return self.solution is not None

    def summary(self) -> str:
        """One line for a valid config; the message, conflicts and suggestions otherwise."""
        if self.solution is not None:
            s = self.solution
            processes = sum(len(s.placements(name)) for name in s.components)
            nodes = len({p.cluster_node_rank for name in s.components for p in s.placements(name)})
            placed = f"{counted(len(s.components), 'component')}, {counted(processes, 'process', 'processes')}"
            return f"valid: {placed} on {nodes} of {counted(s.cluster.num_nodes, 'node')} ({s.status.lower()})"
        if self.statements:  # under each component and the keys they rest on, as ``explain`` prints them
            lines = ["no placement exists; these statements conflict:", *grouped_lines(compact_statements(self.statements))]
        else:
            lines = [str(self.error)]
        lines += [f"suggestion: {s}" for s in self.suggestions]
        return "\n".join(lines)


def diagnose(
    source: SpecSource,
    *,
    cluster: Cluster | None = None,
    time_limit_s: float | None = None,
    num_workers: int | None = None,
    seed: int | None = None,
) -> Diagnosis:
    """Solve ``source`` (what :func:`~solver_placement.solve` takes, on ``cluster`` when given);
    explain a failure and suggest fixes that were checked by solving, all within ``time_limit_s``
    (default: the config's ``cluster.solver.time_limit_s``). A bad config is a diagnosis, not a raise."""
    try:
        spec = spec_of(source, cluster)
    except InfeasiblePlacementError as error:  # resource pools Ray could not place in verl's order: no spec to vary
        return Diagnosis(None, error, error.statements)
    except PlacementError as error:
        return Diagnosis(None, error)
    try:
        budget = spec_options(spec, time_limit_s=time_limit_s, num_workers=num_workers, seed=seed).start()
        return Diagnosis(solve(spec, time_limit_s=time_limit_s, num_workers=num_workers, seed=seed))
    except InfeasiblePlacementError as error:
        return Diagnosis(None, error, error.statements, tuple(suggest(spec, error.statements, budget)))
    except PlacementError as error:
        return Diagnosis(None, error)


def fixes(source: SpecSource, conflicts: Sequence[Statement], time_limit_s: float | None = None) -> list[str]:
    """Checked fixes for a config already known to be infeasible with ``conflicts`` (what
    ``diagnose`` adds to the error), within their own budget of ``time_limit_s``."""
    spec = spec_of(source)
    return suggest(spec, conflicts, spec_options(spec, time_limit_s=time_limit_s).start())


Attempt = Callable[[PlacementSpec, str, Budget], "str | None"]


def suggest(spec: PlacementSpec, conflicts: Sequence[Statement], budget: Budget | None = None, limit: int = MAX_SUGGESTIONS) -> list[str]:
    """Checked fixes for the components named in ``conflicts``: the cheapest kind of change
    first (fewer processes, smaller TP, another group, one more node, bigger nodes)."""
    budget = budget or spec_options(spec).start()
    attempts: tuple[Attempt, ...] = (
        _covering_processes, _fewer_processes, _smaller_tensor_parallel, _other_group, _one_more_node, _bigger_nodes, _more_gpu_memory
    )
    found: list[str] = []
    for attempt in attempts:
        for name in _named(spec, conflicts):
            if budget.remaining() <= 0 or len(found) >= limit:
                return found
            fix = attempt(spec, name, budget)
            if fix and fix not in found:
                found.append(fix)
    return found


def _named(spec: PlacementSpec, conflicts: Sequence[Statement]) -> list[str]:
    """Components the conflicts are about, in config order, declarative ones first (they can
    change shape)."""
    about = {name for statement in conflicts for name in statement.named}
    named = [n for n in spec.components if n in about]
    return sorted(named, key=lambda n: not spec.components[n].is_declarative)


def _feasible(variant: Callable[[], PlacementSpec], budget: Budget) -> bool:
    """``variant`` resolved and solved within what is left of the budget (at most
    ``TRY_TIME_LIMIT_S``); one its cluster refuses (a node group without the ranks it names ...)
    does not fit. Any placement proves the fix works, so the objective is switched off: the
    first one found ends the run."""
    remaining = budget.remaining()
    if remaining <= MIN_RUN_S:
        return False
    try:
        solve(variant(), time_limit_s=min(TRY_TIME_LIMIT_S, remaining), objective=NO_OBJECTIVE)
    except PlacementError:
        return False
    return True


def _fewer_processes(spec: PlacementSpec, name: str, budget: Budget) -> str | None:
    """The largest process count below the requested one that fits (declarative components)."""
    component = spec.components[name]
    decl = component.form
    if not isinstance(decl, Declarative) or decl.processes is None or decl.processes <= 1:
        return None
    rules = component.constraints
    step = rules.tensor_parallel_size * (rules.pipeline_parallel_size if any(r.group == "pipeline_parallel" for r in rules.topology) else 1)
    counts = list(range(step, decl.processes, step))

    def fits(count: int) -> bool:
        return _feasible(partial(spec.with_component, replace(component, form=replace(decl, processes=count))), budget)

    lo, hi, best = 0, len(counts) - 1, None
    while lo <= hi:  # feasibility is monotone in the process count
        mid = (lo + hi) // 2
        if fits(counts[mid]):
            best, lo = counts[mid], mid + 1
        else:
            hi = mid - 1
    return None if best is None else f"{name}: processes {best} instead of {decl.processes} fits"


def _covering_processes(spec: PlacementSpec, name: str, budget: Budget) -> str | None:
    """For a collocated declarative component, the process count that covers exactly its
    target's GPUs (collocation asks for the same hardware set, so no other count fits)."""
    component = spec.components[name]
    decl, target = component.form, component.constraints.collocate_with
    if not isinstance(decl, Declarative) or decl.processes is None or target is None:
        return None
    owner = spec.requests[spec.owner_of(target)]
    items, per_process = int(owner.amount.sum()), decl.hardware_per_process or 1
    cover = items // per_process
    if items % per_process or cover == decl.processes or cover % component.constraints.tensor_parallel_size:
        return None
    if _feasible(partial(spec.with_component, replace(component, form=replace(decl, processes=cover))), budget):
        return f"{name}: processes {cover} instead of {decl.processes} fits (covers {target}'s {items} GPUs)"
    return None


def _more_gpu_memory(spec: PlacementSpec, name: str, budget: Budget) -> str | None:
    """GPUs with enough memory for the mix that does not fit: the largest need of any component
    running beside the others' idle memory, rounded up to whole GB."""
    cluster = spec.cluster
    memories = {c.name: c.constraints.memory for c in spec.components.values() if c.constraints.memory is not None}
    if name not in memories or all(m is None for m in cluster.gpu_memory_gb):
        return None
    need = max(m.active + sum(o.idle for other, o in memories.items() if other != running) for running, m in memories.items())
    have = max((m for m in cluster.gpu_memory_gb if m is not None), default=0.0)
    if need <= have:
        return None
    gigabytes = math.ceil(need)
    bigger = cluster.with_gpu_memory_gb([None if m is None else max(m, gigabytes) for m in cluster.gpu_memory_gb])
    if _feasible(partial(spec.on, bigger), budget):
        return f"GPUs of {gigabytes} GB (instead of {have:g} GB) fit the memory of {', '.join(memories)} on one GPU"
    return None


def _smaller_tensor_parallel(spec: PlacementSpec, name: str, budget: Budget) -> str | None:
    """The largest tensor-parallel size below the requested one that fits, same processes."""
    component = spec.components[name]
    rules = component.constraints
    tp = rules.tensor_parallel_size
    for smaller in (d for d in range(tp - 1, 0, -1) if tp % d == 0):
        if _feasible(partial(spec.with_component, replace(component, constraints=replace(rules, tensor_parallel_size=smaller))), budget):
            return f"{name}: tensor_parallel_size {smaller} instead of {tp} fits"
    return None


def _other_group(spec: PlacementSpec, name: str, budget: Budget) -> str | None:
    """Another node group (one label) on which the component fits as stated."""
    component = spec.components[name]
    for label in spec.cluster.node_groups:
        if (label,) == component.node_groups or (label in RESERVED_LABELS and label != "cluster"):
            continue
        if _feasible(partial(spec.with_component, replace(component, node_groups=(label,))), budget):
            return f"{name}: node_group {label!r} instead of {','.join(component.node_groups)!r} fits"
    return None


def _group_nodes(spec: PlacementSpec, name: str) -> list[int]:
    component = spec.components[name]
    return sorted({n for label in component.node_groups for n in spec.cluster.node_group(label).node_ranks})


def _one_more_node(spec: PlacementSpec, name: str, budget: Budget) -> str | None:
    """One more node shaped like the largest node of the component's groups."""
    component = spec.components[name]
    cluster = spec.cluster
    like = max(_group_nodes(spec, name), key=lambda n: (int(cluster.gpus_per_node[n]), -n))
    bigger = cluster.with_extra_node(like)
    if _feasible(partial(spec.on, bigger), budget):
        return f"one more node like node {like} ({int(cluster.gpus_per_node[like])} GPUs, in {', '.join(component.node_groups)}) fits"
    return None


def _bigger_nodes(spec: PlacementSpec, name: str, budget: Budget) -> str | None:
    """The component's nodes too small for one of its blocks (a TP group or a multi-GPU
    process) given the GPU count of the smallest node that holds one."""
    cluster = spec.cluster
    width = needs_of(spec)[spec.owner_of(name)].width
    small = [n for n in _group_nodes(spec, name) if 0 < int(cluster.gpus_per_node[n]) < width]
    if not small:
        return None
    size = min((int(g) for g in cluster.gpus_per_node if g >= width), default=width)
    gpus = [size if n in small else int(g) for n, g in enumerate(cluster.gpus_per_node)]
    try:
        bigger = cluster.with_gpus_per_node(gpus)
    except PlacementError:
        return None
    if _feasible(partial(spec.on, bigger), budget):
        old = sorted({int(cluster.gpus_per_node[n]) for n in small})
        return f"{size}-GPU nodes in place of the {len(small)} node(s) with {'/'.join(map(str, old))} GPUs that {name} may use fit"
    return None
