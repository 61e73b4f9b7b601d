"""One call of ``solve``: its inputs, its one budget, where the time went and what was noted.

The answer loop (``loop.py``) and its paths (``paths.py``) share this record, and report
through one logger, the one named after ``solve.py``: a user selects the solver's decisions by
that one name (``solver_placement._solver.solve``), however the steps are split into modules.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from solver_placement._solver.options import Budget, SolverOptions
from solver_placement._specification.placement_spec import PlacementSpec

#: The logger of every step of a solve: the entry module's, so the path that answered and why
#: the others declined are read under the name a user selects them by.
log = logging.getLogger(f"{__package__}.solve")


@dataclass
class SolveCall:
    """One call of ``solve``: the spec, the options, the objective's weights and one budget.

    ``clock`` sums the seconds spent per stage (every answer carries it with the parse time as
    its ``timings``); ``notes`` say why a path was not taken, carried by every later answer;
    ``held_before`` is what each process held in the previous placement (empty without one).
    """

    spec: PlacementSpec
    options: SolverOptions
    budget: Budget
    weights: dict[str, int]  # every term's weight, defaults included
    weighs_contiguity: bool  # the user weighed contiguity: it is a term, not only a tie-break
    held_before: Mapping[str, Sequence[Sequence[int]]]
    #: The caller verifies the answer as part of its own (``solve_part``): the count model's and
    #: the exact model's are not verified a second time here (first fit's still are: the loop
    #: reads the verifier's verdict to reject them).
    verified_by_caller: bool = False
    clock: dict[str, float] = field(default_factory=lambda: {"count": 0.0, "construct": 0.0, "build": 0.0, "solve": 0.0})
    notes: list[str] = field(default_factory=list)

    @contextmanager
    def timed(self, key: str) -> Iterator[None]:
        """Add the time the block takes to ``clock[key]``, also when it raises."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.clock[key] += time.perf_counter() - started
