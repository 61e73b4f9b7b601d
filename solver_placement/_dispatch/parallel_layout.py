"""The model-parallel coordinates of every rank of a component: its TP, CP, PP and DP rank.

verl's Megatron dispatch modes ask each worker for ``get_megatron_rank_info(rank)`` (tp, dp, pp,
cp ranks) to route data. Here the coordinates follow from the placement itself: the spec says
``tensor_parallel_size`` and ``pipeline_parallel_size``, and the solver keeps ``tp`` consecutive
ranks on one node and ``tp * pp`` consecutive ranks (a pipeline) inside one domain, so by
default TP varies fastest, then CP, then PP, then DP (Megatron's ``order="tp-cp-ep-pp-dp"``).
A job that initialises Megatron with its default ``tp-cp-ep-dp-pp`` passes that order instead.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from solver_placement._errors import DispatchError
from solver_placement._solver.solution import Solution

#: Rank axes, fastest-varying first: the order the placement's TP groups and pipelines imply.
PLACEMENT_ORDER = ("tp", "cp", "pp", "dp")


class RankInfo(NamedTuple):
    """One rank's coordinates (verl's ``DistRankInfo`` fields)."""

    tp_rank: int
    dp_rank: int
    pp_rank: int
    cp_rank: int


@dataclass(frozen=True)
class ParallelLayout:
    """How a component's ``world_size`` ranks split into TP x CP x PP x DP.

    ``order`` lists the axes fastest-varying first (a permutation of ``tp``, ``cp``, ``pp``,
    ``dp``); ``dp_size`` is what remains of ``world_size``.
    """

    world_size: int
    tp_size: int = 1
    pp_size: int = 1
    cp_size: int = 1
    order: tuple[str, ...] = PLACEMENT_ORDER

    def __post_init__(self) -> None:
        if sorted(self.order) != sorted(PLACEMENT_ORDER):
            raise DispatchError(f"parallel layout order {self.order} must list each of {', '.join(PLACEMENT_ORDER)} once")
        model_parallel = self.tp_size * self.pp_size * self.cp_size
        if min(self.world_size, self.tp_size, self.pp_size, self.cp_size) < 1 or self.world_size % model_parallel:
            raise DispatchError(
                f"parallel layout: world size {self.world_size} is not a positive multiple of tp {self.tp_size} x "
                f"pp {self.pp_size} x cp {self.cp_size}"
            )

    @classmethod
    def of_component(cls, solution: Solution, component: str, cp_size: int = 1, order: tuple[str, ...] = PLACEMENT_ORDER) -> ParallelLayout:
        """The layout the spec states for ``component`` (its TP and PP sizes, its process count)."""
        rules = solution.spec.components[component].constraints
        world_size = len(solution.placements(component))
        return cls(world_size, rules.tensor_parallel_size, rules.pipeline_parallel_size, cp_size, order)

    @property
    def dp_size(self) -> int:
        return self.world_size // (self.tp_size * self.pp_size * self.cp_size)

    def rank_info(self, rank: int) -> RankInfo:
        """The coordinates of ``rank`` (0-based, in the component's rank order)."""
        sizes = {"tp": self.tp_size, "cp": self.cp_size, "pp": self.pp_size, "dp": self.dp_size}
        coordinates: dict[str, int] = {}
        rest = rank
        for axis in self.order:
            rest, coordinates[axis] = divmod(rest, sizes[axis])
        return RankInfo(coordinates["tp"], coordinates["dp"], coordinates["pp"], coordinates["cp"])

    def rank_infos(self) -> list[RankInfo]:
        """Every rank's coordinates, in rank order."""
        return [self.rank_info(rank) for rank in range(self.world_size)]
