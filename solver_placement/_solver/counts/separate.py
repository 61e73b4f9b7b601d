"""Memory that fits two by two but not all together, counted one kept-apart pair at a time.

The count model says which classes may not share a GPU pair by pair (``stacks.py``). When three
classes with ``memory_gb`` fit a GPU in pairs but not all three, no set of pairs says exactly
that. Keeping one pair of them apart is stricter than the rule, so every such answer is a valid
placement; stating the memory by pairs only is looser, so its optimum bounds every placement
from below. The best of the stricter answers is proven optimal when it meets that bound, and
otherwise returned with its gap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from itertools import combinations

import numpy as np

from solver_placement._solver.assignment import Assignment
from solver_placement._solver.counts.followers import Loose
from solver_placement._solver.counts.problem import CountProblem
from solver_placement._solver.counts.stacks import Misfit
from solver_placement._solver.rules.memory import megabytes, memory_per_gpu
from solver_placement._specification.placement_spec import PlacementSpec

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


def fits_every_gpu(spec: PlacementSpec, assignments: Mapping[str, Assignment]) -> bool:
    """Whether every GPU of known memory holds what the assignments put on it whichever of its
    components runs: its processes' idle memory, plus the running component's active memory
    over idle for each of its processes there, in whole megabytes as the models count it (one
    pass of arrays over the GPUs, every component with ``memory_gb`` placed or not by a class)."""
    cluster = spec.cluster
    limit = memory_per_gpu(cluster.gpu_memory_gb)[cluster.hw_node]
    is_gpu = cluster.hw_kind == 0
    idle = np.zeros(cluster.num_hardware, dtype=np.int64)
    extra = np.zeros(cluster.num_hardware, dtype=np.int64)
    for name, assignment in assignments.items():
        memory = spec.components[name].constraints.memory
        if memory is None:
            continue
        rows = np.repeat(np.arange(assignment.num_processes, dtype=np.int64), np.diff(assignment.indptr))
        holds = np.bincount(np.unique(rows * cluster.num_hardware + assignment.hardware) % cluster.num_hardware, minlength=cluster.num_hardware)  # a process listing an item twice counted once
        idle += holds * megabytes(memory.idle)
        extra = np.maximum(extra, holds * (megabytes(memory.active) - megabytes(memory.idle)))
    checked = is_gpu & (limit >= 0)
    return bool(np.all(idle[checked] + extra[checked] <= limit[checked]))
