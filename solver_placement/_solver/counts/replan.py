"""Re-planning on the count path: ``changes`` stated in the count model itself (``kept.py``), or,
for the specs it does not state that way, the count model's layout matched to where each process
was, proven when it moves no more processes than any layout must.

Robots and whole nodes are stated view by view (``kept_kinds.py``); a weighed ``contiguity``
with ``changes``, moves and ranks together (``kept_weighed.py``). The matching (a weighed
``contiguity`` that model leaves, a strided component placed first, a spec ``kept.py`` does not
read): nodes that
look alike to every rule (the same GPUs, windows, rank-string GPUs, labels and memory:
``signatures.py``) can swap what they hold without changing any term but ``changes`` (and
``contiguity``, which the answer's own value then says). So the count model's optimum of the
other terms is laid out, and each node whose previous content the layout holds somewhere in its
class gets that content back: every process there keeps its GPUs.

Its proof: ``changes`` counts the previous hardware sets no process holds any more (``evaluate.py``);
a set outside its component's window, or of several GPUs of a component without a stride (which
the objective never counts as kept), is lost by every layout. That many, weighed, plus the count
model's bound on the other terms, is a bound on every layout; an answer that meets it is optimal.
One that moves more is, with a weighed ``contiguity``, held against ``kept.py``'s layout and two
bounds (``kept_ranks.py``); else declined: the exact model decides.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from solver_placement._solver.answer import Answer, Declined, PathName, by_component, through
from solver_placement._solver.assignment import Assignment, window_ranks
from solver_placement._solver.counts import count_path
from solver_placement._solver.counts.kept import kept_answer
from solver_placement._solver.counts.kept_kinds import kept_by_kind
from solver_placement._solver.counts.kept_ranks import kept_with_ranks
from solver_placement._solver.counts.kept_weighed import kept_ranked
from solver_placement._solver.counts.kinds import item_ids, splits
from solver_placement._solver.counts.signatures import node_classes
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.options import Budget, SolverOptions, SolveStatus
from solver_placement._solver.rules.stride import enforced_stride
from solver_placement._specification.placement_spec import PlacementSpec

Held = Mapping[str, Sequence[Sequence[int]]]
#: Unmatched nodes per class scored pair by pair against each other (beyond, node order): the
#: scoring is quadratic, and a re-plan rarely leaves more than a few nodes unmatched.
MAX_SCORED = 256
#: What a node holds of each free rule owner: per owner, its processes' local ids, sorted.
Content = tuple[tuple[str, tuple[tuple[int, ...], ...]], ...]


def count_replan(spec: PlacementSpec, held: Held, weights: Mapping[str, int], options: SolverOptions, budget: Budget) -> Answer | Declined:
    """The count model's answer with ``held`` (per component, the physical ids each process held
    before, on this cluster) kept where its layout allows; declined when it is not proven."""
    if not weights.get("changes"):
        return count_path(spec, spec.requests, weights, options, budget)  # moves do not matter: the job is placed afresh
    if splits(spec, spec.requests):
        stated = kept_by_kind(spec, held, weights, options, budget)
    else:
        stated = kept_answer(spec, held, weights, options, budget)
        if stated is None and weights.get("contiguity"):  # moves and ranks in one model (``kept_weighed.py``)
            stated = kept_ranked(spec, held, weights, options, budget)
    if stated is not None:  # ``changes`` a term of the count model itself (``kept.py``)
        return stated
    answer = count_path(spec, spec.requests, weights, options, budget)
    if isinstance(answer, Declined) or answer.objective is None:
        return answer  # rank strings alone do not move
    owners = {c.rule_owner for c in spec.components.values() if not spec.requests[c.rule_owner].determined}
    placed = {name: answer.assignments[name] for name in spec.requests}
    moved = _matched(spec, placed, {name: held[name] for name in owners if held.get(name)})
    assignments = by_component(spec, moved)
    value = objective_value(spec, spec.requests, assignments, weights, held)
    least = must_lose(spec, held)
    bound = int(weights.get("changes", 0)) * least + answer.known("bound")
    lost = value - objective_value(spec, spec.requests, assignments, {**weights, "changes": 0}, held)
    if lost > int(weights.get("changes", 0)) * least:
        kept = kept_with_ranks(spec, held, weights, options, budget, bound) if weights.get("contiguity") else ""
        if isinstance(kept, Answer):
            return kept
        return Declined(PathName.COUNTS, f"its layout gives up {lost // max(int(weights.get('changes', 0)), 1)} previous placements, "
                                         f"more than the {least} no layout keeps" + (f"; {kept}" if kept else ""))  # fmt: skip
    status = SolveStatus.OPTIMAL if answer.status == SolveStatus.OPTIMAL and value <= bound else SolveStatus.FEASIBLE
    primary = objective_value(spec, spec.requests, assignments, {**weights, "contiguity": 0}, held)
    matched = replace(answer, assignments=assignments, status=status, objective=value, bound=min(bound, value), primary=primary)
    return through(matched, "re-planning: the count layout matched node by node to the previous placements, proven against the fewest moves every layout makes")


def must_lose(spec: PlacementSpec, held: Held) -> int:
    """Previous hardware sets every layout gives up: outside the component's window now, or of
    several GPUs of a component without a stride (never counted as kept, ``evaluate.py``)."""
    lost = 0
    for name, sets in held.items():
        request = spec.requests.get(name)
        if request is None or request.determined:
            continue
        window = set(request.window_items.tolist())
        strided = enforced_stride(request) is not None
        lost += sum(1 for items in sets if (len(items) > 1 and not strided) or not set(items) <= window)
    return lost


def _matched(spec: PlacementSpec, placed: Mapping[str, Assignment], held: Held) -> dict[str, Assignment]:
    """``placed`` with nodes of one signature swapped so that each surviving node whose previous
    content some node of its class holds gets it back (lowest node first); others keep the rest
    in node order."""
    cluster = spec.cluster
    if not held:
        return dict(placed)
    free = sorted(name for name, request in spec.requests.items() if not request.determined)
    now = _contents(cluster.hw_node, cluster.hw_local, {name: placed[name] for name in free}, cluster.num_nodes)
    before = _contents_of_sets(cluster.hw_node, cluster.hw_local, held, cluster.num_nodes)
    target = np.arange(cluster.num_nodes)
    for nodes in (found.tolist() for found in node_classes(spec)):
        sources = [n for n in nodes if now[n]]
        waiting: dict[Content, list[int]] = {}
        for n in sources:
            waiting.setdefault(now[n], []).append(n)
        taken: dict[int, int] = {}
        for m in nodes:
            match = waiting.get(before[m]) if before[m] else None
            if match:
                taken[match.pop(0)] = m
        taken |= _closest([n for n in sources if n not in taken], [m for m in nodes if m not in taken.values()], now, before)
        for n, m in taken.items():
            target[n] = m
    moved = {}
    for name, assignment in placed.items():
        request = spec.requests[name]
        if request.determined or not (target != np.arange(cluster.num_nodes)).any():
            moved[name] = assignment
            continue
        hardware = item_ids(cluster, assignment.hardware, target[cluster.hw_node[assignment.hardware]])
        ranks = window_ranks(request.cand_hw, request.cand_rank, assignment.indptr, hardware, int(request.stride or 1), cluster.num_hardware)
        moved[name] = Assignment(assignment.indptr, hardware, ranks, assignment.num_hardware)
    return moved


def _closest(sources: list[int], targets: list[int], now: list[Content], before: list[Content]) -> dict[int, int]:
    """The nodes left unmatched paired by how many previous sets the target would keep (most
    first, lowest nodes on ties), up to ``MAX_SCORED`` of each; the rest in node order."""
    pairs = []
    scored_targets = [m for m in targets if before[m]][:MAX_SCORED]
    for n in sources[:MAX_SCORED]:
        for m in scored_targets:
            kept = _kept(now[n], before[m])
            if kept:
                pairs.append((-kept, n, m))
    chosen: dict[int, int] = {}
    for _, n, m in sorted(pairs):
        if n not in chosen and m not in chosen.values():
            chosen[n] = m
    free = [m for m in targets if m not in chosen.values()]
    for n in sources:
        if n not in chosen:
            chosen[n] = free.pop(0)
    return chosen


def _kept(now: Content, before: Content) -> int:
    """Previous sets of a node that a node holding ``now`` keeps: a single GPU any process of
    its component takes, a set of several one process takes exactly (``evaluate.py``)."""
    holding = dict(now)
    kept = 0
    for name, sets in before:
        processes = holding.get(name, ())
        single = {gpu for items in processes for gpu in items}
        kept += sum(1 for items in sets if (items[0] in single if len(items) == 1 else items in processes))
    return kept


def _contents(hw_node: np.ndarray, hw_local: np.ndarray, placed: Mapping[str, Assignment], num_nodes: int) -> list[Content]:
    """Per node, what each request's processes hold there (local ids per process, sorted)."""
    sets = {name: [a.of(p).tolist() for p in range(a.num_processes)] for name, a in placed.items()}
    return _contents_of_sets(hw_node, hw_local, sets, num_nodes)


def _contents_of_sets(hw_node: np.ndarray, hw_local: np.ndarray, sets: Held, num_nodes: int) -> list[Content]:
    """Per node, what each name's item sets hold there (a set on the node of its first item)."""
    per_node: list[dict[str, list[tuple[int, ...]]]] = [{} for _ in range(num_nodes)]
    for name in sorted(sets):
        for items in sets[name]:
            if len(items):
                node = int(hw_node[items[0]])
                per_node[node].setdefault(name, []).append(tuple(sorted(int(hw_local[i]) for i in items)))
    return [tuple((name, tuple(sorted(held))) for name, held in sorted(content.items())) for content in per_node]
