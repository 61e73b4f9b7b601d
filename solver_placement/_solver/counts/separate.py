"""Memory that fits two by two but not all together, counted one kept-apart pair at a time.

The count model says which classes may not share a GPU pair by pair (``stacks.py``). When three
classes with ``memory_gb`` fit a GPU in pairs but not all three, no set of pairs says exactly
that. Keeping one pair of them apart is stricter than the rule, so every such answer is a valid
placement; stating the memory by pairs only is looser, so its optimum bounds every placement
from below. The best of the stricter answers is proven optimal when it meets that bound, and
otherwise returned with its gap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import combinations

from solver_placement._solver.counts.followers import Loose
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.counts.stacks import Misfit

#: Most stricter problems built: each is one count model run, milliseconds to tens of them.
MAX_SEPARATIONS = 16

#: A count problem of the spec with the given pairs of classes kept apart.
ProblemWith = Callable[[frozenset[tuple[int, int]]], "CountProblem | Misfit | Loose | str"]


def separations(problem_with: ProblemWith, misfit: Misfit) -> Iterator[CountProblem]:
    """Count problems with pairs of the misfit sets kept apart, depth first over the pairs of
    each set still found (in order, so the same spec gives the same problems), at most
    ``MAX_SEPARATIONS`` built."""
    built = 0
    waiting: list[tuple[frozenset[tuple[int, int]], Misfit]] = [(frozenset(), misfit)]
    seen: set[frozenset[tuple[int, int]]] = set()
    while waiting and built < MAX_SEPARATIONS:
        kept, found = waiting.pop()
        for pair in reversed(list(combinations(found.classes, 2))):  # popped last-in, so in order
            separated = kept | {pair}
            if separated in seen or built >= MAX_SEPARATIONS:
                continue
            seen.add(separated)
            built += 1
            problem = problem_with(separated)
            if isinstance(problem, CountProblem):
                yield problem
            elif isinstance(problem, Misfit):
                waiting.append((separated, problem))
