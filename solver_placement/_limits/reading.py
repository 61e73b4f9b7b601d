"""The time limit of the call reading a config, while it reads one: the parsers check it between
batches of the input that grows with the cluster (hardware configs, the table of items).

Why a context variable: the limit is the solver's (``time_limit_s``, a wall-clock
``Budget``), but the cluster is read far below the solver, by the same parsers every entry point
uses; reading 65,536 nodes of robots took seconds before the solver's first check. A call sets
its check for its own thread or task only (:func:`reading_within`); a cluster read outside such a
call (built on its own, by another thread) has nothing to check.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

#: The check of the call reading a config (``Budget.check``: raises ``SolverTimeoutError`` naming
#: the stage once the limit is spent), None outside :func:`reading_within`.
_check: ContextVar[Callable[[str], None] | None] = ContextVar("solver_placement_reading_check", default=None)


@contextmanager
def reading_within(check: Callable[[str], None]) -> Iterator[None]:
    """Read a config under ``check`` (a budget's): the parsers' :func:`check_reading` call it."""
    token = _check.set(check)
    try:
        yield
    finally:
        _check.reset(token)


#: Hardware configs read between two checks of the time limit (~10 us each one by one: ~40 ms a batch).
CONFIGS_PER_CHECK = 4096


def check_reading(stage: str) -> None:
    """Check the reading call's time limit, naming ``stage``; nothing outside a call's limit."""
    check = _check.get()
    if check is not None:
        check(stage)
