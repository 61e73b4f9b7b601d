"""One loaded job: a config read once, with what every stage asks of it decided once.

Every entry point (``solve``, ``diagnose``, ``export_verl``, the RLinf classes, the command line)
turns what the user gave (a YAML path, :class:`~solver_placement._config.YamlText`, a mapping, a
``DictConfig``, Hydra overrides applied by the command line) into a :class:`Job` with
:func:`load_job`, once, and hands that value on. The config is copied and its limits checked
once, so no stage re-reads or re-copies it, and the questions each stage used to answer again
from the raw dict have one answer here:

* where the ``cluster:`` section is (a whole job config holds it under ``cluster:``; a bare
  section is the config itself; verl's trainer config is a whole job config even without one);
* which front end reads it (:class:`Frontend`, registered by ``_frontends/``): verl's trainer
  config, a ``resource_pools:`` section, or ``cluster.component_placement`` (RLinf's grammar and
  the declarative components), asked in that order; the core knows none of them by name;
* RLinf's ``runner.task_type``, which picks RLinf's placement class;
* the solver options: the config's ``cluster.solver`` with the caller's overrides on top, so a
  command line's ``--time-limit`` never has to be written into the user's config;
* the cluster, built from the section when first asked for (a config for the auto placer states
  no placeable cluster, so building it eagerly would refuse it), or the one the caller gave.

The value is frozen: stages read it and derive new jobs (:meth:`Job.with_cluster`,
:meth:`Job.with_solver_options`); none writes into its config.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.schema import cluster_part, section_kwargs
from solver_placement._config import ConfigSource, load_config, require_mapping
from solver_placement._errors import InternalError, PlacementConfigError, shown
from solver_placement._solver_settings import SOLVER_SECTION, SolverSettings


@dataclass(frozen=True)
class Frontend:
    """A framework's front end as the core sees it: how to recognise its config, where that
    config's ``cluster:`` section is, and how to translate a loaded job into a placement spec.

    Front ends live in ``_frontends/`` (one folder per framework) and register here with
    :func:`register_frontend` when the package is imported; the core calls them through this
    value and never imports them, so a new framework is a new folder plus its registration.
    """

    #: The name jobs of this front end carry (``job.frontend.name``), e.g. ``verl_trainer``.
    name: str
    #: Whether a plain config is this front end's input (asked in registration order).
    recognises: Callable[[Mapping[str, Any]], bool]
    #: The job's placement spec (``PlacementSpec``), translated from the loaded job.
    translate: Callable[[Job], Any]
    #: The config always holds a whole job config, so its ``cluster:`` section sits under
    #: ``cluster:`` and may be absent (verl's trainer config: its nodes come from its own keys).
    whole_config: bool = False
    #: Placed as resource pools (worker groups verl's way), not by RLinf's placement classes.
    places_pools: bool = False


#: Registered front ends, in the order their ``recognises`` is asked; the last recognises any config.
_FRONTENDS: list[Frontend] = []


def register_frontend(frontend: Frontend) -> None:
    """Add a front end (``_frontends/__init__.py`` registers every one, in order)."""
    if any(known.name == frontend.name for known in _FRONTENDS):
        raise InternalError(f"front end {frontend.name!r} is registered twice")
    _FRONTENDS.append(frontend)


def frontend_of(config: Mapping[str, Any]) -> Frontend:
    """The first registered front end that recognises ``config``."""
    for frontend in _FRONTENDS:
        if frontend.recognises(config):
            return frontend
    raise InternalError("no front end recognises the config (solver_placement._frontends registers them on import)")


@dataclass(frozen=True)
class Job:
    """A job config loaded once (see the module docstring); made by :func:`load_job`.

    ``config`` is the plain, resolved config and ``section`` its ``cluster:`` mapping (the config
    itself when it is a bare section). ``given_cluster`` is the cluster the caller placed the job
    on (None: the one ``section`` states); ``solver_overrides`` go over ``cluster.solver``.
    """

    config: dict[str, Any]
    section: dict[str, Any]
    frontend: Frontend
    task_type: str | None
    given_cluster: Cluster | None = None
    solver_overrides: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_bare_section(self) -> bool:
        """The config is a ``cluster:`` section alone, not a whole job config."""
        return self.section is self.config

    def key(self, name: str) -> str:
        """The dotted key of the section's ``name`` as the user writes it (``cluster.num_nodes``,
        or ``num_nodes`` in a bare section), for messages."""
        return name if self.is_bare_section else f"cluster.{name}"

    @cached_property
    def cluster(self) -> Cluster | None:
        """The cluster the job is placed on: the given one, else the one its section states. None
        only for verl's trainer config without a ``cluster:`` section, whose nodes verl's trainer
        keys give (``_frontends/verl``)."""
        if self.given_cluster is not None:
            return self.given_cluster
        if self.frontend.whole_config and not self.section:
            return None
        return Cluster(**section_kwargs(self.section))

    @property
    def stated_cluster(self) -> Cluster:
        """:attr:`cluster`, for the forms that always state one."""
        if self.cluster is None:
            raise PlacementConfigError("the config states no cluster: section, and no cluster was given")
        return self.cluster

    @property
    def component_placement(self) -> Any:
        """The ``cluster.component_placement`` entries (plain values), or an error: nothing to place."""
        if "component_placement" not in self.section:
            raise PlacementConfigError("cluster.component_placement is missing: nothing to place")
        return self.section["component_placement"]

    @cached_property
    def solver_options(self) -> SolverSettings:
        """``cluster.solver`` with the caller's overrides on top, read once."""
        return SolverSettings.parse(self.section.get("solver"), SOLVER_SECTION).with_overrides(self.solver_overrides)

    def with_cluster(self, cluster: Cluster) -> Job:
        """The same job placed on ``cluster`` (a live Ray cluster's, RLinf's, a derived one)."""
        return replace(self, given_cluster=cluster)

    def with_solver_options(self, overrides: Mapping[str, Any]) -> Job:
        """The same job with ``overrides`` over its solver options (``{"time_limit_s": 30}``);
        the config is left as the user wrote it."""
        if not overrides:
            return self
        return replace(self, solver_overrides={**self.solver_overrides, **overrides})


def load_job(source: ConfigSource | Job, cluster: Cluster | None = None) -> Job:
    """The job ``source`` states (a YAML path, ``YamlText``, a mapping or a ``DictConfig``; a
    :class:`Job` is taken as it is), placed on ``cluster`` when one is given.

    The only place a job config is loaded: the config is copied here and nowhere after.
    """
    if isinstance(source, Job):
        return source if cluster is None else source.with_cluster(cluster)
    plain = load_config(source)
    frontend = frontend_of(plain)
    section = require_mapping(plain.get("cluster", {}), "cluster") if frontend.whole_config else cluster_part(plain)
    return Job(plain, section, frontend, _task_type(plain), cluster)


def _task_type(config: Mapping[str, Any]) -> str | None:
    """RLinf's ``runner.task_type`` (None when not stated)."""
    runner = config.get("runner")
    task = runner.get("task_type") if isinstance(runner, Mapping) else None
    if task is not None and not isinstance(task, str):
        raise PlacementConfigError(f"runner.task_type must be a string, not {shown(task)}")
    return task
