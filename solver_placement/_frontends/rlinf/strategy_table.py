"""RLinf's ``_placements``: the strategy a component placement hands out for each component.

RLinf keeps a plain dict, component name -> strategy, and its scripts write into it: WideSeek-R1's
eval script splits the rollout's GPUs between two engines, assigns
``component_placement._placements["rollout"] = planner_strategy`` and from then on relies on
``get_strategy("rollout")`` (and the multi-agent engines shaped like the rollout) handing out the
planner's half. :class:`StrategyTable` is that dict for our placements: reading and writing work
as on RLinf's, while a component's solved strategy is still made only when first asked for.

What a write changes, and what it does not (as in RLinf, where ``get_world_size`` and
``get_hardware_ranks`` keep reporting the parsed config whatever ``_placements`` holds):

* changed: ``get_strategy(name)``, ``_placements[name]``, ``get_placements(name)`` (what the
  written strategy places on the placement's cluster), and a multi-agent engine shaped like
  ``_placements["rollout"]``;
* unchanged: the solved configuration (``spec``, ``solution``, ``get_world_size``,
  ``get_hardware_ranks``); ``weight_sync_map`` refuses to pair GPUs once actor or rollout was
  replaced, since it only knows the solved placement.

Written values must be this library's strategies: they are what ``get_placements`` solves and
what the engines are shaped from (RLinf's own ``PackedPlacementStrategy`` is refused with the
import to use instead).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, MutableMapping
from typing import Protocol

from solver_placement._errors import PlacementConfigError, shown
from solver_placement._frontends.rlinf.strategies import PlacementStrategy


class Owner(Protocol):
    """What the table reads of the component placement it belongs to."""

    @property
    def components(self) -> list[str]: ...

    def _solved_strategy(self, name: str) -> PlacementStrategy: ...


class StrategyTable(MutableMapping[str, PlacementStrategy]):
    """Component name -> strategy: the strategies written from outside over the solved ones.

    ``owner`` is the placement: its ``components`` (config order) are the keys, and its
    ``_solved_strategy`` builds a component's solved strategy, once, when it is first read. Keys
    written for names that are not components (RLinf's dict accepts any) are kept and iterate
    after the components. The table holds the placement itself (no closure), so a placement
    still pickles, as Ray does with the placement RLinf hands to its workers.
    """

    def __init__(self, owner: Owner) -> None:
        self._owner = owner
        self._solved: dict[str, PlacementStrategy] = {}
        self._written: dict[str, PlacementStrategy] = {}

    def adopt(self, strategies: Mapping[str, PlacementStrategy]) -> None:
        """Hand out ``strategies`` (a layout just solved) as the solved ones; strategies made from
        an earlier solution are dropped, since they no longer describe it."""
        self._solved = dict(strategies)

    def solved(self, name: str) -> PlacementStrategy:
        """The strategy of ``name``'s solved placement, whatever was written over it (components
        sharing a key share theirs)."""
        if name not in self._solved:
            self._solved[name] = self._owner._solved_strategy(name)
        return self._solved[name]

    def written(self, name: str) -> PlacementStrategy | None:
        """The strategy written for ``name`` from outside, if any."""
        return self._written.get(name)

    def __getitem__(self, name: str) -> PlacementStrategy:
        if name in self._written:
            return self._written[name]
        if name not in self._owner.components:
            raise KeyError(name)
        return self.solved(name)

    def __setitem__(self, name: str, strategy: PlacementStrategy) -> None:
        if not isinstance(name, str):
            raise PlacementConfigError(f"_placements: a component name must be a string, not {shown(name)}")
        if not isinstance(strategy, PlacementStrategy):
            raise PlacementConfigError(
                f"_placements[{name!r}]: {shown(strategy)} is not a solver_placement strategy; build it with "
                "solver_placement's FlexiblePlacementStrategy, PackedPlacementStrategy or NodePlacementStrategy "
                "(same constructors as RLinf's; their get_placement takes RLinf's Cluster)"
            )
        self._written[name] = strategy

    def __delitem__(self, name: str) -> None:
        raise PlacementConfigError(
            f"_placements[{name!r}] cannot be deleted: every component keeps a strategy; write another one instead"
        )

    def __contains__(self, name: object) -> bool:
        return name in self._written or name in self._owner.components

    def __iter__(self) -> Iterator[str]:
        components = self._owner.components
        yield from components
        yield from (name for name in self._written if name not in components)

    def __len__(self) -> int:
        return sum(1 for _ in self)
