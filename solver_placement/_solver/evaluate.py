"""The objective's value of any assignment, computed in plain numpy, term by term as
``rules/objective.py`` defines it for CP-SAT.

Why: an answer that did not come out of CP-SAT (the first-fit construction) must be compared with
one that did, on the same scale, so the library can keep the better one and say how far the
answer it returns may be from the best bound. ``tests/internals/solver/test_count_model.py`` checks that
this value equals CP-SAT's own objective value on the flat model's optimal solutions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from solver_placement._arrays import distinct, distinct_pairs
from solver_placement._solver.assignment import Assignment
from solver_placement._solver.labels import label_values
from solver_placement._solver.previous import HeldSets
from solver_placement._solver.rules.stride import enforced_stride
from solver_placement._solver_settings import DEFAULT_WEIGHTS
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec


def objective_value(
    spec: PlacementSpec,
    requests: Mapping[str, ComponentRequest],
    assignments: Mapping[str, Assignment],
    weights: Mapping[str, int],
    previous: Mapping[str, Sequence[Sequence[int]]],
) -> int:
    """The weighted sum the CP-SAT model minimises, for ``assignments`` (by request name);
    ``weights`` override ``DEFAULT_WEIGHTS`` as in ``build_model``."""
    weights = {**DEFAULT_WEIGHTS, **weights}
    free = [request for request in requests.values() if not request.determined]
    if not free:
        return 0
    taken = {request.name: assignments[request.name] for request in free}
    terms = {
        "changes": lambda: _changes(free, taken, previous),
        "topology": lambda: _topology(spec, free, taken),
        "nodes": lambda: sum(distinct(spec.cluster.hw_node[taken[r.name].hardware]).size for r in free),
        "balance": lambda: _peak_load(spec, free, taken),
        "contiguity": lambda: sum(int(taken[r.name].ranks.sum()) for r in free),
    }
    return sum(int(weights.get(name, 0)) * int(term()) for name, term in terms.items() if weights.get(name, 0))


def _peak_load(spec: PlacementSpec, free: Sequence[ComponentRequest], taken: Mapping[str, Assignment]) -> int:
    """The most items taken on one node, over every free component."""
    nodes = np.concatenate([spec.cluster.hw_node[taken[r.name].hardware] for r in free])
    return int(np.bincount(nodes).max(initial=0)) if nodes.size else 0


def _changes(free: Sequence[ComponentRequest], taken: Mapping[str, Assignment], previous: Mapping[str, Sequence[Sequence[int]]]) -> int:
    """Previous hardware sets no process holds any more. As in the model, a set of several items
    counts as kept only for a strided component (where a pattern takes exactly a set). One-item
    sets, the common case at scale, are looked up by one mark per item (a Python set per process
    took 1.5-1.8 s a call on 65,536 nodes)."""
    lost = 0
    for request in free:
        held = previous.get(request.name, ())
        if not held:
            continue
        assignment = taken[request.name]
        if isinstance(held, HeldSets):
            lost += _lost_held(held, assignment, enforced_stride(request) is not None)
            continue
        singles, several = _split_sets(held)
        used = np.zeros(assignment.num_hardware, dtype=bool)
        used[assignment.hardware] = True
        lost += int(singles.size - used[singles].sum())
        if several and enforced_stride(request) is not None:
            listed, bounds = assignment.hardware.tolist(), assignment.indptr.tolist()
            sets = {tuple(sorted(listed[lo:hi])) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)}
            lost += sum(1 for key in several if key not in sets)
        else:
            lost += len(several)
    return lost


def _lost_held(held: HeldSets, assignment: Assignment, strided: bool) -> int:
    """:func:`_changes` of one component from the arrays of a :class:`HeldSets` (what
    ``previous_hardware`` gives): its one-item sets by a mark per item, its others (kept only by a
    ``strided`` component's process holding exactly that set) by matching sorted rows, one
    ``lexsort`` per set size. Why: a set or a tuple per process took 0.2-0.5 s on 65,536 nodes."""
    sizes = np.diff(held.indptr)
    used = np.zeros(assignment.num_hardware, dtype=bool)
    used[assignment.hardware] = True
    lost = int((~used[held.ids[held.indptr[:-1][sizes == 1]]]).sum())
    several = sizes != 1
    if not strided:
        return lost + int(several.sum())
    taken_sizes = np.diff(assignment.indptr)
    for size in distinct(sizes[several]).tolist():
        if not size:  # an empty set (records without items) no process holds
            lost += int((sizes == 0).sum())
            continue
        before = np.sort(held.ids[held.indptr[:-1][sizes == size][:, None] + np.arange(size)], axis=1)
        after = np.sort(assignment.hardware[assignment.indptr[:-1][taken_sizes == size][:, None] + np.arange(size)], axis=1)
        lost += _unmatched_rows(before, after)
    return lost


def _unmatched_rows(before: np.ndarray, after: np.ndarray) -> int:
    """How many rows of ``before`` equal no row of ``after`` (each counted, repeats too)."""
    rows = np.concatenate([before, after])
    kept = np.r_[np.zeros(before.shape[0], dtype=np.int64), np.ones(after.shape[0], dtype=np.int64)]
    order = np.lexsort(rows.T[::-1])
    ordered = rows[order]
    starts = np.flatnonzero(np.r_[True, (ordered[1:] != ordered[:-1]).any(axis=1)])
    matched = np.maximum.reduceat(kept[order], starts)  # a group of equal rows holding a row of ``after``
    held_there = np.add.reduceat(1 - kept[order], starts)
    return int(held_there[matched == 0].sum())


def _split_sets(held: Sequence[Sequence[int]]) -> tuple[np.ndarray, list[tuple[int, ...]]]:
    """The previous sets of one item (their ids) and the others (sorted), one set at a time."""
    return np.array([old[0] for old in held if len(old) == 1], dtype=np.int64), [tuple(sorted(old)) for old in held if len(old) != 1]


def _topology(spec: PlacementSpec, free: Sequence[ComponentRequest], taken: Mapping[str, Assignment]) -> int:
    """Per ``prefer`` topology rule, the label values each group or pipeline spans beyond its
    first, counted where its candidates span several values (as ``add_one_of`` counts them)."""
    extra = 0
    for request in free:
        rules = spec.components[request.name].constraints
        assignment = taken[request.name]
        for rule in rules.topology:
            size = rules.tensor_parallel_size * (rules.pipeline_parallel_size if rule.group == "pipeline_parallel" else 1)
            if rule.required or size <= 1:
                continue
            values = label_values(spec.cluster, rule.label)
            candidate_values = values[spec.cluster.hw_node[request.window_items]]
            if distinct(candidate_values).size <= 1:
                continue
            held = values[spec.cluster.hw_node[assignment.hardware]]
            unit_of = np.repeat(np.arange(assignment.num_processes), np.diff(assignment.indptr)) // size
            extra += distinct_pairs(unit_of, held) - int(distinct(unit_of).size)  # (unit, label value) pairs less the units
    return extra
