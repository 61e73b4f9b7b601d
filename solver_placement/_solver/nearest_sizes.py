"""The nearest sizes that place a job, each tried by solving: how a front end turns a failure into
a fix stated in the keys the user wrote (RLinf's model-parallel sizes, verl's pool sizes).

A size key the config states has a value and the values it may take instead (``choices``:
divisors of the GPUs it splits, node counts up to the cluster's, ...). The tries go nearest
first, so the fix a message offers is the smallest change that was solved and placed, never a
guess; after :data:`MAX_TRIES` solves the search gives up (each try is a solve).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

#: How many other sizes a failed placement tries before it gives up looking for a fix: each try
#: is a solve, and the nearest sizes come first, so a fix further away is not worth the wait.
MAX_TRIES = 12
#: The values of one key a search considers at most (the nearest to the stated one): the
#: combinations of several keys are sorted, so their count is bounded before they are made.
MAX_CHOICES = 32

Sizes = dict[str, int]


@dataclass(frozen=True)
class StatedSize:
    """A size the config states: its key, its value, the component it sizes (for messages) and
    the other values it may take (all positive)."""

    key: str
    value: int
    component: str
    choices: tuple[int, ...]

    def candidates(self) -> list[int]:
        """The stated value and the :data:`MAX_CHOICES` choices nearest to it (by ratio)."""
        nearest = sorted(set(self.choices) - {self.value}, key=lambda value: (abs(math.log2(value / self.value)), value))[:MAX_CHOICES]
        return sorted({self.value, *nearest})


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


def fix_text(stated: Sequence[StatedSize], fix: Sizes) -> tuple[list[StatedSize], str]:
    """The sizes ``fix`` changes, and the sentence offering it (``with a=2 it places (checked ...)``)."""
    changed = [size for size in stated if fix[size.key] != size.value]
    advice = " and ".join(f"{size.key}={fix[size.key]}" for size in changed)
    return changed, f"with {advice} it places (checked by solving with {'it' if len(changed) == 1 else 'them'})"
