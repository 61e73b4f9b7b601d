"""verl-style method registration: how a worker method's arguments are dispatched to the
workers of a group and how their results are collected.

``@register(dispatch_mode=Dispatch.DP_COMPUTE)`` on a worker method makes ``group.method(batch)``
split ``batch`` across the data-parallel ranks, run, and concatenate the results in rank order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum
from typing import Any, TypeVar

import numpy as np

from solver_placement.errors import PlacementError

REGISTER_ATTR = "_solver_placement_dispatch"
F = TypeVar("F", bound=Callable[..., Any])


class Dispatch(Enum):
    """Argument dispatch, with verl's meaning.

    ONE_TO_ALL: every worker gets the same arguments; results are a list in rank order.
    ALL_TO_ALL: every argument is already a list with one entry per worker.
    DP_COMPUTE: like ALL_TO_ALL, but per data-parallel group (workers of one TP group get the
    same entry; the first of each group returns).
    DP_COMPUTE_SPLIT: every argument is one batch (list, tuple or numpy array) split evenly over
    the data-parallel groups; results are concatenated in rank order.
    RANK_ZERO: only rank 0 runs; its result is returned.
    """

    ONE_TO_ALL = "one_to_all"
    ALL_TO_ALL = "all_to_all"
    DP_COMPUTE = "dp_compute"
    DP_COMPUTE_SPLIT = "dp_compute_split"
    RANK_ZERO = "rank_zero"


class Execute(Enum):
    """Which workers run a call: all of them, or rank 0 only."""

    ALL = "all"
    RANK_ZERO = "rank_zero"


def register(
    dispatch_mode: Dispatch = Dispatch.ONE_TO_ALL, execute_mode: Execute = Execute.ALL, blocking: bool = True
) -> Callable[[F], F]:
    """Mark a worker method so a WorkerGroup binds it with this dispatch and collection."""

    def mark(method: F) -> F:
        setattr(method, REGISTER_ATTR, {"dispatch_mode": dispatch_mode, "execute_mode": execute_mode, "blocking": blocking})
        return method

    return mark


def dispatch_arguments(
    mode: Dispatch, args: Sequence[Any], kwargs: dict[str, Any], world_size: int, tp_size: int
) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    """Per worker (rank order): the positional and keyword arguments it receives."""
    if mode in (Dispatch.ONE_TO_ALL, Dispatch.RANK_ZERO):
        return [(tuple(args), dict(kwargs))] * world_size
    if mode == Dispatch.ALL_TO_ALL:
        return _per_entry(args, kwargs, world_size, list(range(world_size)), "workers")
    dp_size = world_size // tp_size
    group_of = [rank // tp_size for rank in range(world_size)]
    if mode == Dispatch.DP_COMPUTE:
        return _per_entry(args, kwargs, dp_size, group_of, "data-parallel groups")
    split_args = [_split(value, dp_size) for value in args]
    split_kwargs = {key: _split(value, dp_size) for key, value in kwargs.items()}
    return _per_entry(split_args, split_kwargs, dp_size, group_of, "data-parallel groups")


def collect_results(mode: Dispatch, results: list[Any], tp_size: int) -> Any:
    """Combine per-worker results as the dispatch mode promises."""
    if mode == Dispatch.RANK_ZERO:
        return results[0]
    if mode in (Dispatch.ONE_TO_ALL, Dispatch.ALL_TO_ALL):
        return results
    firsts = results[::tp_size]
    if mode == Dispatch.DP_COMPUTE:
        return firsts
    return _concat(firsts)


def _per_entry(
    args: Sequence[Any], kwargs: dict[str, Any], count: int, entry_of: list[int], what: str
) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    for value in [*args, *kwargs.values()]:
        if not isinstance(value, (list, tuple)) or len(value) != count:
            raise PlacementError(f"this dispatch mode needs every argument to be a list with one entry per {count} {what}")
    return [
        (tuple(value[entry] for value in args), {key: value[entry] for key, value in kwargs.items()}) for entry in entry_of
    ]


def _split(value: Any, parts: int) -> list[Any]:
    if isinstance(value, np.ndarray):
        return np.array_split(value, parts)
    if isinstance(value, (list, tuple)):
        bounds = np.linspace(0, len(value), parts + 1).round().astype(int)
        return [value[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]
    raise PlacementError(f"DP_COMPUTE_SPLIT splits lists, tuples and numpy arrays, not {type(value).__name__}")


def _concat(parts: list[Any]) -> Any:
    if parts and all(isinstance(part, np.ndarray) for part in parts):
        return np.concatenate(parts)
    if parts and all(isinstance(part, (list, tuple)) for part in parts):
        return [item for part in parts for item in part]
    return parts
