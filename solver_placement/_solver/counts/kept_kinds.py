"""Re-planning on hardware of several kinds (robots, whole nodes) stated in the count model.

Why it is exact kind by kind: ``changes`` is a sum over components of the previous sets none of
its processes holds again (``evaluate.py``), and a component's processes hold items of the kinds
of one view only (``kinds.py``: the spec splits into views no declarative component spans two of,
or one view of every kind under ``balance``). So each view is re-planned on its own by
``kept.py`` (with ``contiguity`` weighed, ``kept_weighed.py``), its components' previous sets read as the view's items; a set holding an item
outside its component's view is kept by no layout (the component holds nothing there), and
counts once, in the bound as in the value. A component ``count_by_kind`` places first (its items
known, ``preset.py``) keeps what those items keep, in every layout, unless it held a set of
several items a stride apart, which another order of its processes might keep (then the caller
matches the layout node by node instead). The sum of the views' bounds, plus those sets, bounds
every layout of the spec; the answer is returned only when its own value meets it.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from solver_placement._solver.answer import Answer, Declined, PathName
from solver_placement._solver.counts.kept import kept_answer
from solver_placement._solver.counts.kept_node import Held
from solver_placement._solver.counts.kept_weighed import kept_ranked
from solver_placement._solver.counts.kinds import KindView, count_by_kind
from solver_placement._solver.counts.preset import NO_TERMS
from solver_placement._solver.evaluate import objective_value
from solver_placement._solver.options import Budget, SolverOptions, SolveStatus
from solver_placement._solver.rules.stride import enforced_stride
from solver_placement._specification.placement_spec import PlacementSpec

#: The reason a view gives ``count_by_kind`` when ``kept.py`` does not state it: never shown, the
#: whole spec then goes to the caller's node matching.
_UNSTATED = "kept.py does not state this view"


def kept_by_kind(spec: PlacementSpec, held: Held, weights: Mapping[str, int], options: SolverOptions, budget: Budget) -> Answer | Declined | None:
    """The count model's answer with ``changes`` among its terms for a spec of several kinds,
    proven by the views' bounds; a view's reason to decline; None where ``kept.py`` does not
    state a view (or a ``balance`` load of components placed first, which it does not read), or
    the answer misses the bound."""
    unstated: list[str] = []
    free_in_views: set[str] = set()
    outside = 0  # previous sets holding an item outside their component's view

    def on_view(view: KindView, load: np.ndarray | None) -> Answer | Declined:
        """``kept.py`` on one view, the previous sets read as the view's items."""
        nonlocal outside
        if load is not None:
            unstated.append("load")
            return Declined(PathName.COUNTS, _UNSTATED)
        to_view = np.full(spec.cluster.num_hardware, -1, dtype=np.int64)
        inside = view.original >= 0
        to_view[view.original[inside]] = np.flatnonzero(inside)
        on_it: dict[str, list[list[int]]] = {}
        for name, request in view.spec.requests.items():
            if request.determined:
                continue
            free_in_views.add(name)
            sets = [to_view[np.asarray(items, dtype=np.int64)] for items in held.get(name, ())]
            on_it[name] = [ids.tolist() for ids in sets if (ids >= 0).all()]
            outside += len(sets) - len(on_it[name])
        stated = kept_ranked if weights.get("contiguity") else kept_answer  # ranks weighed: moves and ranks in one model
        answer = stated(view.spec, on_it, weights, options, budget)
        if answer is None:
            unstated.append("view")
            return Declined(PathName.COUNTS, _UNSTATED)
        return answer

    answer = count_by_kind(spec, spec.requests, weights, options, budget, on_view)
    if unstated:
        return None
    if isinstance(answer, Declined):
        return answer
    first = [name for name, request in spec.requests.items() if not request.determined and name not in free_in_views]
    if any(len(items) > 1 and enforced_stride(spec.requests[name]) is not None for name in first for items in held.get(name, ())):
        return None  # another order of its processes on the same items might keep more
    lost_first = objective_value(
        spec, {name: spec.requests[name] for name in first}, {name: answer.assignments[name] for name in first}, {**NO_TERMS, "changes": 1}, held
    )
    bound = answer.known("bound") + int(weights.get("changes", 0)) * (outside + lost_first)
    value = objective_value(spec, spec.requests, answer.assignments, weights, held)
    if answer.status != SolveStatus.OPTIMAL or value > bound:
        return None
    return Answer(answer.path, answer.method, answer.assignments, SolveStatus.OPTIMAL, value, value, primary=value, model=answer.model)
