"""The ``cluster.solver`` section read once into typed values: how long and how CP-SAT may search
(:class:`SolverOptions`, and the one wall-clock :class:`Budget` of a call) and how the objective
weighs its terms.

Why here, below the spec: a section is parsed where the config is read (``load_job``, the
grammar's ``ParsedSpec``, the auto placer's ``solver:``), so a wrong key or value is refused at
load with its key, and every stage after it takes :class:`SolverSettings` instead of re-reading a
mapping. The solver stage (``_solver/options.py``) turns the options into CP-SAT parameters; the
objective rule (``_solver/rules/objective.py``) builds the weighted terms.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from solver_placement._config import check_keys, positive_int, require_mapping
from solver_placement._constants import DEFAULT_TIME_LIMIT_S, MAX_TIME_LIMIT_S
from solver_placement._errors import PlacementConfigError, SolverTimeoutError, shown

#: Keys of ``cluster.solver`` that :class:`SolverOptions` reads.
OPTION_KEYS = ("time_limit_s", "num_workers", "seed")
#: The key of ``cluster.solver`` that holds the objective's weights.
OBJECTIVE_KEY = "objective"
#: Where a job config states the section, for messages.
SOLVER_SECTION = "cluster.solver"
#: Objective weight of each term (``_solver/rules/objective.py`` says what each counts); a config
#: gives any subset, the others keep these.
DEFAULT_WEIGHTS = {"changes": 1_000_000, "topology": 100_000, "nodes": 10_000, "balance": 0, "contiguity": 1}
#: Most CP-SAT workers accepted.
MAX_WORKERS = 64


@dataclass(frozen=True)
class SolverOptions:
    """How long and how CP-SAT may search; validated on construction.

    ``num_workers`` > 1 uses interleaved search, whose answer does not depend on the worker
    count, so the same input gives the same placement on any machine.
    """

    time_limit_s: float = DEFAULT_TIME_LIMIT_S
    num_workers: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        limit = self.time_limit_s
        if isinstance(limit, bool) or not isinstance(limit, (int, float)) or not 0 < limit <= MAX_TIME_LIMIT_S:
            raise PlacementConfigError(f"solver time_limit_s must be a number of seconds in (0, {MAX_TIME_LIMIT_S}], not {shown(limit)}")
        positive_int(self.num_workers, "solver num_workers", maximum=MAX_WORKERS)
        positive_int(self.seed, "solver seed", allow_zero=True, maximum=2**31 - 1)

    def with_workers(self, num_workers: int) -> SolverOptions:
        return replace(self, num_workers=num_workers)

    def start(self, at: float | None = None) -> Budget:
        """A budget of ``time_limit_s`` from ``at`` (``time.perf_counter`` seconds; default
        now). A call that did other work first passes its own start, so that work counts."""
        return Budget((time.perf_counter() if at is None else at) + float(self.time_limit_s), self.time_limit_s)


@dataclass(frozen=True)
class Budget:
    """One wall-clock deadline (``time.perf_counter`` seconds) shared by every run of a call;
    ``limit_s`` is the time limit it was made from, for messages. ``search_deadline``, when
    earlier, is where CP-SAT runs end (:meth:`search_remaining`), the rest kept for the Python
    work after them: the count path lays out what its last run found there, rather than
    dropping a found answer for its layout's lack of time."""

    deadline: float
    limit_s: float | None = None
    search_deadline: float | None = None

    def remaining(self) -> float:
        return self.deadline - time.perf_counter()

    def search_remaining(self) -> float:
        """What is left for a CP-SAT run: up to ``search_deadline`` when that is set."""
        end = self.deadline if self.search_deadline is None else min(self.deadline, self.search_deadline)
        return end - time.perf_counter()

    def check(self, stage: str) -> None:
        """Raise :class:`SolverTimeoutError` naming ``stage`` once the deadline has passed.

        Long Python loops (candidate expansion, model building, read-out) call this between
        steps, so ``time_limit_s`` bounds the whole call and not only CP-SAT's search.
        """
        if self.remaining() <= 0:
            limit = "the time limit" if self.limit_s is None else f"time_limit_s={self.limit_s} s"
            raise SolverTimeoutError(
                f"the solver found no placement within {limit} (the time ran out while {stage}); "
                "raise cluster.solver.time_limit_s (or --time-limit)"
            )


@dataclass(frozen=True)
class SolverSettings:
    """A ``solver:`` section as its config states it, checked: the options it sets (None: not
    stated, the default or the caller's value applies) and the objective weights it names."""

    time_limit_s: float | None = None
    num_workers: int | None = None
    seed: int | None = None
    #: The weights the section names (validated), as (term, weight) pairs in the section's order:
    #: frozen and picklable (a placement crosses to Ray workers); terms not named keep
    #: :data:`DEFAULT_WEIGHTS`. :meth:`weights` gives them as a mapping.
    objective: tuple[tuple[str, int], ...] = ()
    #: The section's key, for messages (``cluster.solver``, ``auto_placement.solver``).
    where: str = SOLVER_SECTION

    @classmethod
    def parse(cls, raw: Any, where: str = SOLVER_SECTION, objective: bool = True) -> SolverSettings:
        """The settings of a plain section (None: empty); ``objective`` says whether the section
        may weigh the objective (the auto placer's has no objective)."""
        section = require_mapping(raw or {}, where)
        check_keys(section, (*OPTION_KEYS, OBJECTIVE_KEY) if objective else OPTION_KEYS, where)
        stated = {key: section[key] for key in OPTION_KEYS if key in section}
        SolverOptions(**stated)  # the values are checked here, where the section is read
        weights = _weights(section.get(OBJECTIVE_KEY, {}), f"{where}.{OBJECTIVE_KEY}")
        return cls(**stated, objective=tuple(weights.items()), where=where)

    def options(self, **overrides: Any) -> SolverOptions:
        """The options the section states, with keyword overrides that are not None on top."""
        given = self.stated_options()
        given.update({key: value for key, value in overrides.items() if value is not None})
        return SolverOptions(**given)

    def weights(self, overrides: Mapping[str, Any] | None = None) -> dict[str, int]:
        """The weights the section names with ``overrides`` (a caller's ``objective=``) on top,
        checked; terms named by neither are left out (they keep their default)."""
        return {**dict(self.objective), **_weights(overrides or {}, f"{self.where}.{OBJECTIVE_KEY}")}

    def with_overrides(self, overrides: Mapping[str, Any]) -> SolverSettings:
        """The same section with a caller's values on top (``{"time_limit_s": 30}``, objective
        weights merged term by term), checked as the section is."""
        if not overrides:
            return self
        merged = {**self.as_section(), **overrides}
        if OBJECTIVE_KEY in overrides:
            merged[OBJECTIVE_KEY] = {**dict(self.objective), **_mapping(overrides[OBJECTIVE_KEY], f"{self.where}.{OBJECTIVE_KEY}")}
        return SolverSettings.parse(merged, self.where)

    def stated_options(self) -> dict[str, Any]:
        """The options the section states, by key (what a config would write)."""
        return {key: value for key in OPTION_KEYS if (value := getattr(self, key)) is not None}

    def as_section(self) -> dict[str, Any]:
        """The section as a config writes it (what the settings were parsed from, re-derived)."""
        return {**self.stated_options(), **({OBJECTIVE_KEY: dict(self.objective)} if self.objective else {})}


def _mapping(configured: Any, where: str) -> Mapping[str, Any]:
    """``configured`` when it is a mapping of weights, else the error naming ``where``."""
    if not isinstance(configured, Mapping):
        raise PlacementConfigError(f"{where} must map term names to integer weights")
    return configured


def _weights(configured: Any, where: str) -> dict[str, int]:
    """Validated weights of the terms ``configured`` names."""
    configured = _mapping(configured, where)
    check_keys(configured, DEFAULT_WEIGHTS, where)
    return {key: positive_int(value, f"{where}.{key}", allow_zero=True) for key, value in configured.items()}
