"""What auto placement answers: candidates, the search's statistics, and their text forms.

The answer is a ready ``cluster.component_placement`` block (:meth:`AutoPlacement.to_yaml`)
plus the predicted time of each candidate, so it can be pasted into the job and compared.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tabulate import tabulate

from solver_placement._auto.problem import AutoProblem
from solver_placement._auto.section import REASONING
from solver_placement._errors import PlacementConfigError

COLLOCATED = "collocated"
DISAGGREGATED = "disaggregated"


@dataclass(frozen=True)
class AutoCandidate:
    """One placement: its mode, GPUs and contiguous ranges per component, and predicted time.

    ``batch_times_s`` holds each pipelined component's per-batch seconds on its GPUs (the
    largest is the pipeline's bottleneck when disaggregated).
    """

    problem: AutoProblem = field(repr=False)
    mode: str
    gpus: Mapping[str, int]
    ranges: Mapping[str, tuple[int, int]]
    time_s: float
    batch_times_s: Mapping[str, float]

    @classmethod
    def of(cls, problem: AutoProblem, mode: str, gpus: Sequence[int] = ()) -> AutoCandidate:
        """The candidate for ``mode`` (and, disaggregated, the GPU counts in pipeline order),
        its time evaluated by the problem's own formulas, not taken from the search."""
        if mode == COLLOCATED:
            return cls._collocated(problem)
        total = problem.disaggregated_time(gpus)
        if total is None:
            raise PlacementConfigError(f"{dict(zip(problem.pipeline, gpus, strict=False))} is not an allowed disaggregated split")
        counts = {name: problem.num_gpus for name in problem.resident}
        ranges = {name: (0, problem.num_gpus - 1) for name in problem.resident}
        offset = 0
        for name, count in zip(problem.pipeline, gpus, strict=True):
            counts[name] = count
            ranges[name] = (offset, offset + count - 1)
            offset += count
        batch = {name: problem.tables[name].batch_time(count) or 0.0 for name, count in zip(problem.pipeline, gpus, strict=True)}
        return cls(problem, DISAGGREGATED, counts, ranges, total, batch)

    @classmethod
    def _collocated(cls, problem: AutoProblem) -> AutoCandidate:
        total = problem.collocated_time()
        if total is None:
            raise PlacementConfigError("collocation is not allowed: a component's table does not cover all GPUs")
        everyone = (*problem.resident, *problem.pipeline)
        counts = {name: problem.num_gpus for name in everyone}
        ranges = {name: (0, problem.num_gpus - 1) for name in everyone}
        batch = {name: problem.tables[name].batch_time(problem.num_gpus) or 0.0 for name in problem.pipeline}
        return cls(problem, COLLOCATED, counts, ranges, total, batch)

    def to_component_placement(self, reward_with: str | None = None) -> dict[str, str]:
        """The ``cluster.component_placement`` mapping for this candidate.

        Collocated: one key for every placed component (``actor,rollout: all``); a reasoning job's
        inference is then the actor's own recomputation and is not placed (RLinf refuses an
        inference component in collocated mode). Disaggregated: ``name: first-last`` in pipeline
        order. ``reward_with`` names a component whose GPUs the reward shares (RLinf's
        ModelParallelComponentPlacement requires a reward component).
        """
        problem = self.problem
        if self.mode == COLLOCATED:
            names = [n for n in (*problem.resident, *problem.pipeline) if not (n == "inference" and problem.task == REASONING)]
            names.sort(key=lambda n: n != "actor")
            if reward_with is not None:
                _check_reward(reward_with, names)
                names.append("reward")
            return {",".join(names): "all"}
        mapping = {name: f"{first}-{last}" for name, (first, last) in self.ranges.items()}
        if reward_with is not None:
            _check_reward(reward_with, list(mapping))
            mapping["reward"] = mapping[reward_with]
        return mapping


def _check_reward(reward_with: str, names: Sequence[str]) -> None:
    """The reward may only join a component that is placed, and only if it is not a stage itself."""
    if "reward" in names:
        raise PlacementConfigError("reward_with: the reward is a pipeline stage here and already placed")
    if reward_with not in names:
        raise PlacementConfigError(f"reward_with: {reward_with!r} is not placed here; choose one of {', '.join(names)}")


@dataclass(frozen=True)
class SearchStats:
    """How the first (best) solve went: status, objective and bound in seconds, wall time."""

    proven_optimal: bool
    objective_s: float
    bound_s: float
    solves: int
    wall_time_s: float

    @property
    def gap(self) -> float:
        """Relative optimality gap of the best candidate, (objective - bound) / objective."""
        return 0.0 if self.objective_s == 0 else (self.objective_s - self.bound_s) / self.objective_s


@dataclass(frozen=True)
class AutoPlacement:
    """The result of :func:`~solver_placement._auto.auto_place`: the best candidate first, then
    the next best ones. The shortcut properties answer for the best, the one to use."""

    problem: AutoProblem = field(repr=False)
    candidates: tuple[AutoCandidate, ...]
    stats: SearchStats

    @property
    def best(self) -> AutoCandidate:
        return self.candidates[0]

    @property
    def mode(self) -> str:
        return self.best.mode

    @property
    def gpus(self) -> Mapping[str, int]:
        return self.best.gpus

    @property
    def ranges(self) -> Mapping[str, tuple[int, int]]:
        return self.best.ranges

    @property
    def time_s(self) -> float:
        return self.best.time_s

    def to_component_placement(self, reward_with: str | None = None) -> dict[str, str]:
        """The best candidate's ``component_placement`` mapping (see :class:`AutoCandidate`)."""
        return self.best.to_component_placement(reward_with)

    def table(self) -> str:
        """The candidates as a text table: rank, mode, GPUs per component, predicted seconds."""
        names = self.problem.components()
        rows = [
            [rank, c.mode, *(c.gpus[name] for name in names), f"{c.time_s:.3f}"] for rank, c in enumerate(self.candidates, 1)
        ]
        return tabulate(rows, headers=["#", "mode", *names, "time (s)"], disable_numparse=True)

    def to_yaml(self, reward_with: str | None = None) -> str:
        """A ready ``cluster:`` block for the best candidate, the candidates table as comments."""
        problem = self.problem
        lines = [f"# auto placement ({problem.task}, {problem.num_gpus} GPUs): {self.mode}, predicted {self.time_s:.3f} s per iteration"]
        lines += [f"# {line}" for line in self.table().splitlines()]
        lines.append("cluster:")
        if problem.gpus_per_node is not None:
            lines += [f"  num_nodes: {problem.num_gpus // problem.gpus_per_node}", f"  num_gpus_per_node: {problem.gpus_per_node}"]
        lines.append("  component_placement:")
        lines += [f"    {key}: {value}" for key, value in self.to_component_placement(reward_with).items()]
        return "\n".join(lines) + "\n"
