"""Laying out a model-parallel mode from the sizes the config states, failures said in its keys.

The training, eval and multi-agent placements all turn the job config's model-parallel sizes
(``actor.model.tensor_model_parallel_size``, ``rollout.tensor_parallel_size``,
``rollout.pipeline_parallel_size``) into packed strategies and solve them. Whatever refuses the
layout below (a strategy's checks, the solver) can only name what it was handed: a segment such
as ``"0-15:0-0"`` the user never wrote. :class:`KeyedLayout` is the one place that lays a mode
out and, when that fails, asks ``size_keys`` for the nearest sizes that place (each solved) and
reports the failure in the stated keys with them as the fix.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import InfeasiblePlacementError, PlacementConfigError, PlacementError
from solver_placement._frontends.rlinf.component_placement import ComponentPlacement
from solver_placement._frontends.rlinf.held_gpus import HeldGpus
from solver_placement._frontends.rlinf.model_parallel_layout import Layout
from solver_placement._frontends.rlinf.model_parallel_sizes import ConfigReader
from solver_placement._frontends.rlinf.size_keys import ACTOR_TP, ROLLOUT_PP, ROLLOUT_TP, Sizes, divisor_size, in_user_keys, nearest_fit
from solver_placement._solver.solve import solve

#: The component whose GPUs each size key splits (a fitting value divides that component's GPUs).
SPLITS = {ACTOR_TP: "actor", ROLLOUT_TP: "rollout", ROLLOUT_PP: "rollout"}


class KeyedLayout(ConfigReader, ComponentPlacement):
    """A placement whose mode is laid out from config sizes (:meth:`_layout`), refusals in the user's keys."""

    _held: dict[str, HeldGpus]

    @abstractmethod
    def _layout(self, sizes: Sizes) -> Layout:
        """The mode's layout with ``sizes`` (by config key); raises what refuses those sizes."""

    @abstractmethod
    def _size_keys(self) -> Sequence[str]:
        """The size keys :meth:`_layout` reads in this placement's mode."""

    def _lay_out_sizes(self, sizes: Sizes) -> Layout:
        """Lay the mode out with ``sizes``; a refusal is raised in the config's keys when sizes that
        place exist (the original error, unchanged, when none do)."""
        try:
            layout = self._layout(sizes)
            self._lay_out(layout.strategies, layout.relations)
        except (PlacementConfigError, InfeasiblePlacementError) as error:
            raise self._in_user_keys(error, sizes) from error
        return layout

    def _in_user_keys(self, error: PlacementError, sizes: Sizes) -> PlacementError:
        """``error`` in the keys the config states, with the nearest sizes that place; unchanged
        when the config states none of the sizes the mode's layout reads, or no change of them places."""
        stated = [
            divisor_size(key, sizes[key], self._held[SPLITS[key]].name, self._held[SPLITS[key]].count)
            for key in self._size_keys()
            if self._lookup(key) is not None
        ]
        fix = nearest_fit(stated, lambda changed: self._places({**sizes, **changed})) if stated else None
        return error if fix is None else in_user_keys(error, stated, fix, self._cluster_in_keys())

    def _places(self, sizes: Sizes) -> bool:
        """Whether the mode's layout with ``sizes`` has a placement (solved, this placement unchanged)."""
        try:
            layout = self._layout(sizes)
            solve(self._laid_out_spec(layout.strategies, layout.relations))
        except PlacementError:  # every refusal of a layout is a "no" here: the caller reports the stated sizes' own error
            return False
        return True

    def _cluster_in_keys(self) -> str:
        """The cluster as the config states it (``cluster.num_nodes=2, cluster.num_gpus_per_node=8``)
        when those keys describe the cluster placed on, else the cluster's own description (a
        cluster handed in, node groups of other shapes)."""
        return keyed_cluster(self._cluster, self._lookup("num_nodes", self._section), self._lookup("num_gpus_per_node", self._section))


def keyed_cluster(cluster: Cluster, num_nodes: object, gpus_per_node: object) -> str:
    """``cluster`` in the ``cluster:`` keys that state it, when they do exactly; its description otherwise."""
    stated = type(num_nodes) is int and type(gpus_per_node) is int  # a bool is no count
    if stated and cluster.num_nodes == num_nodes and bool((cluster.gpus_per_node == gpus_per_node).all()):
        return f"cluster.num_nodes={num_nodes}, cluster.num_gpus_per_node={gpus_per_node}"
    return cluster.describe()
