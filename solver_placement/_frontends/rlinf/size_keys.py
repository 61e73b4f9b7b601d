"""The model-parallel sizes a job config states, and the error about them in the user's keys.

A model-parallel placement turns ``actor.model.tensor_model_parallel_size``,
``rollout.tensor_parallel_size`` and ``rollout.pipeline_parallel_size`` into packed strategies
and relations, and the stages below can only name what they were handed: a segment such as
``"0-15:0-0"`` or a rank range the user never wrote, with no way back to the key. So when a
layout fails, the placement asks here for the nearest sizes that place (each one tried by
solving, never guessed) and, when some exist, says the failure in the keys the user wrote, with
those sizes as the fix. When no change of the stated sizes places the job, the sizes are not
the cause and the original error stands.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from solver_placement._errors import InfeasiblePlacementError, PlacementError, Statement

ACTOR_TP = "actor.model.tensor_model_parallel_size"
ROLLOUT_TP = "rollout.tensor_parallel_size"
ROLLOUT_PP = "rollout.pipeline_parallel_size"

#: How many other sizes a failed layout tries before it gives up looking for a fix: each try is
#: a solve, and the nearest sizes come first, so a fix further away is not worth the wait.
MAX_TRIES = 12

Sizes = dict[str, int]


@dataclass(frozen=True)
class StatedSize:
    """A size the config states: its key, its value, and the component whose ``gpus`` it splits
    (a value that fits divides them, so only divisors are tried)."""

    key: str
    value: int
    component: str
    gpus: int

    def candidates(self) -> list[int]:
        return sorted({value for value in range(1, self.gpus + 1) if self.gpus % value == 0} | {self.value})


def tries(stated: Sequence[StatedSize]) -> Iterator[Sizes]:
    """Other values of the stated sizes, nearest first: fewest keys changed, then the smallest
    change by ratio (3 -> 4 before 3 -> 2, as a TP size is a factor), then the smaller values."""

    def distance(values: tuple[int, ...]) -> tuple[int, float, tuple[int, ...]]:
        changed = [(value, size.value) for value, size in zip(values, stated, strict=True) if value != size.value]
        return len(changed), sum(abs(math.log2(value / old)) for value, old in changed), values

    combinations = sorted(itertools.product(*(size.candidates() for size in stated)), key=distance)
    for values in combinations:
        if any(value != size.value for value, size in zip(values, stated, strict=True)):
            yield {size.key: value for size, value in zip(stated, values, strict=True)}


def nearest_fit(stated: Sequence[StatedSize], fits: Callable[[Sizes], bool]) -> Sizes | None:
    """The nearest sizes (see :func:`tries`) with which ``fits`` places the job, None when none of
    the first :data:`MAX_TRIES` does."""
    return next((sizes for sizes in itertools.islice(tries(stated), MAX_TRIES) if fits(sizes)), None)


def in_user_keys(error: PlacementError, stated: Sequence[StatedSize], fix: Sizes, cluster: str) -> PlacementError:
    """``error`` said in the stated keys, with ``fix`` (sizes that were solved and place the job).

    An infeasible layout's statements name segments the layout wrote, so they are replaced by one
    statement resting on the keys the fix changes, which keeps what the rule says of each process
    (with RLinf's phrase for it, which code written against RLinf matches); a config error's message already names its
    sizes and keeps its words (code written against RLinf matches them), the fix appended.
    """
    changed = [size for size in stated if fix[size.key] != size.value]
    advice = " and ".join(f"{size.key}={fix[size.key]}" for size in changed)
    hint = f"with {advice} it places (checked by solving with {'it' if len(changed) == 1 else 'them'})"
    if not isinstance(error, InfeasiblePlacementError):
        if error.args and isinstance(error.args[0], str):
            error.args = (f"{error.args[0]}; {hint}", *error.args[1:])
        return error
    stated_text = " and ".join(f"{size.key}={size.value}" for size in changed)
    rules = tuple(dict.fromkeys(statement.rule for statement in error.statements if statement.rule))
    component = changed[0].component
    # what the rule says of each of the component's processes (and RLinf's phrase for it), without the segment
    said = next((statement.of_each for statement in error.statements if statement.of_each and statement.component == component), "")
    why = f": each {component} process {said}" if said else ""
    text = f"{component}: {stated_text} leaves the job no placement on this cluster ({cluster}){why}; {hint}"
    statement = Statement(text, component, tuple(size.key for size in changed), rules[0] if rules else "")
    return InfeasiblePlacementError(f"no placement exists: {text}", [statement])
