"""The auto-placement problem: cost tables and the arithmetic that composes them.

:class:`AutoProblem` is what the search optimises and what a reader can evaluate by hand: the
modelled time of collocation and of any disaggregated split, and where each block may start.
Reading the input is :mod:`solver_placement._auto.section`'s job.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from solver_placement._auto.costs import CostTable
from solver_placement._auto.section import DEFAULT_TOP_K, REASONING, cluster_size, read_section, read_tables, read_top_k, size_of
from solver_placement._cluster.cluster import Cluster
from solver_placement._config import ConfigSource
from solver_placement._errors import PlacementConfigError
from solver_placement._job import Job
from solver_placement._solver.options import SolverOptions
from solver_placement._solver_settings import SolverSettings

#: Largest integer the search's time and tie-break expressions may reach (inside CP-SAT's 64 bits).
MAX_UNITS = 1 << 61
#: Where the search's solver options are read from, as error messages name it.
SOLVER_SECTION = "auto_placement.solver"


@dataclass(frozen=True)
class AutoProblem:
    """A parsed auto-placement input: the cost tables and how they compose.

    ``pipeline`` lists the components that get contiguous GPU blocks when disaggregated (source
    first); ``resident`` ones run on every GPU in both modes (the embodied actor).
    ``pipeline_batches`` batches flow through the pipeline per iteration. ``solver`` is the
    (validated) ``solver:`` section, kept as written so that call-time overrides merge with it.
    """

    task: str
    num_gpus: int
    gpus_per_node: int | None
    pipeline: tuple[str, ...]
    resident: tuple[str, ...]
    tables: Mapping[str, CostTable]
    pipeline_batches: int
    top_k: int
    solver: SolverSettings

    @classmethod
    def from_config(cls, source: ConfigSource | Job, cluster: Cluster | None = None) -> AutoProblem:
        """Parse a YAML path, a DictConfig, a mapping or a loaded job (keys in ``docs/cost_model.md``).

        Either the auto-placement keys at the top level, or a job config with an
        ``auto_placement:`` section beside its ``cluster:`` (the collocated run the costs were
        measured on), whose node count and GPUs per node are used unless the section gives them.
        A given ``cluster`` (a live Ray cluster's, say) decides the size instead of any of them.
        """
        task, config = read_section(source)
        num_gpus, gpus_per_node = cluster_size(config) if cluster is None else size_of(cluster)
        top_k = read_top_k(config.get("top_k", DEFAULT_TOP_K))
        solver = SolverSettings.parse(config.get("solver"), SOLVER_SECTION, objective=False)  # before any table is built
        pipeline, tables, batches = read_tables(task, config, num_gpus)
        resident = () if task == REASONING else ("actor",)
        if (num_gpus + 1) ** (len(pipeline) - 1) > MAX_UNITS:
            raise PlacementConfigError(
                f"pipeline: {len(pipeline)} stages on {num_gpus} GPUs exceed the 64-bit range of the tie-break "
                "between equally fast splits; use fewer stages or GPUs"
            )
        problem = cls(task, num_gpus, gpus_per_node, pipeline, resident, tables, batches, top_k, solver)
        for name in pipeline:
            problem.alignment(name)  # raises on a model-parallel size that cannot tile the nodes
        return problem

    def solver_options(self, **overrides: Any) -> SolverOptions:
        """The ``solver:`` section's options; keyword overrides that are not None win."""
        return self.solver.options(**overrides)

    def alignment(self, name: str) -> int:
        """A disaggregated block of ``name`` must start at a multiple of this GPU rank.

        With the node size known, every model-parallel group stays inside one node (a group
        straddling two nodes is not placeable: a process never spans nodes). Unknown node size: 1.
        """
        mp, per_node = self.tables[name].model_parallel, self.gpus_per_node
        if per_node is None or mp == 1:
            return 1
        if mp <= per_node and per_node % mp == 0:
            return mp
        if mp > per_node and mp % per_node == 0:
            return per_node
        raise PlacementConfigError(
            f"model_parallel.{name}: groups of {mp} GPUs cannot tile nodes of num_gpus_per_node = {per_node} "
            "GPUs; one must be a multiple of the other"
        )

    def components(self) -> tuple[str, ...]:
        """Every placed component: the pipelined ones in order, then the resident ones."""
        return (*self.pipeline, *self.resident)

    def collocated_time(self) -> float | None:
        """Seconds per iteration with every component on all GPUs (time sharing: the sum)."""
        times = [self.tables[name].time(self.num_gpus) for name in self.components()]
        return None if any(t is None for t in times) else float(sum(times))  # type: ignore[arg-type]

    def resident_time(self) -> float | None:
        """Seconds per iteration the resident components add to a disaggregated split (None if
        one of them is not modelled on all GPUs)."""
        times = [self.tables[name].time(self.num_gpus) for name in self.resident]
        return None if any(t is None for t in times) else float(sum(times))  # type: ignore[arg-type]

    def disaggregated_time(self, gpus: Sequence[int]) -> float | None:
        """Seconds per iteration with ``gpus[k]`` GPUs for ``pipeline[k]`` (None if not allowed).

        Pipelining: the first batch passes every stage (warm-up, the sum of the per-batch times),
        then one batch leaves per bottleneck period: ``sum + max * (batches - 1)``; resident
        components add their all-GPU time.
        """
        if len(gpus) != len(self.pipeline) or sum(gpus) != self.num_gpus:
            return None
        batch: list[float] = []
        offset = 0
        for name, count in zip(self.pipeline, gpus, strict=True):
            value = self.tables[name].batch_time(count)
            if value is None or offset % self.alignment(name):
                return None
            batch.append(value)
            offset += count
        resident = self.resident_time()
        if resident is None:
            return None
        return float(sum(batch) + max(batch) * (self.pipeline_batches - 1) + resident)
