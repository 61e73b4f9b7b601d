"""The frameworks whose own layouts the library predicts, as the core sees them.

A framework's front end (``_frontends/<framework>/``) reads the framework's input as its code
reads it, predicts where that code puts every rank, checks the result node by node, and offers
the solver's layout in its own flags. It registers a :class:`Framework` here when the package is
imported; ``predict.py`` calls it through this value and never imports it, as ``_job`` does for
the config front ends.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from solver_placement._cluster.cluster import Cluster
from solver_placement._config import did_you_mean
from solver_placement._errors import InternalError, PlacementConfigError, shown
from solver_placement._prediction.explanation import Rationale
from solver_placement._prediction.findings import Fix
from solver_placement._prediction.launch_input import LaunchInput
from solver_placement._prediction.layout import Prediction


class FrameworkJob(Protocol):
    """A framework's input once read: typed by its front end, with these two things the core asks."""

    @property
    def release(self) -> str:
        """The release whose rules read it (``0.11.0``, a commit for frameworks without releases);
        a property, so a frozen dataclass's field satisfies it."""
        ...

    def stated_cluster(self) -> Cluster:
        """The smallest cluster the input itself describes (its node and GPU counts), used when
        the caller gives none."""
        ...


@dataclass(frozen=True)
class Improvement:
    """The solver's layout for a framework's job, and how to ask the framework for it.

    ``solution`` is the verified answer, its components named as the framework's roles;
    ``arguments`` the framework input that makes the framework's own code produce exactly that
    layout (checked by predicting it), or None when no input does; ``cannot_express`` says, one
    sentence per point, what of the layout the framework cannot be asked for.
    """

    solution: Any
    arguments: tuple[str, ...] | None
    cannot_express: tuple[str, ...] = ()


@dataclass(frozen=True)
class Framework:
    """One framework's front end (see the module docstring)."""

    #: The name users type (``openrlhf``), lower case.
    name: str
    #: The framework's own spelling, for messages (``OpenRLHF``).
    title: str
    #: The releases (or commits) whose rules it reads, oldest first; the last is the default.
    releases: tuple[str, ...]
    #: The job a :class:`LaunchInput` states, read with the rules of the given release (None:
    #: the one the input shows, else the newest).
    read: Callable[[LaunchInput, str | None], FrameworkJob]
    #: Where the framework's code puts every rank of the job on the cluster, with its findings
    #: (fixes attached, not yet checked).
    predict: Callable[[Any, Cluster], Prediction]
    #: The input with a fix applied (flags for a command line, dotted keys for a config).
    fixed: Callable[[LaunchInput, Fix], LaunchInput]
    #: The solver's layout for the job and the input that asks the framework for it.
    improve: Callable[[Any, Cluster], Improvement]
    #: Whether the core reads a ``.yaml`` input (Hydra composition of its ``defaults:``) before
    #: ``read`` sees it; False hands the file over unread, for frameworks with their own loader.
    reads_yaml: bool = True
    #: The framework rules behind a prediction of the job (why each role's ranks land where they
    #: do, what causes each kind of finding), cited at the release read; None: ranks are
    #: explained only by where they landed.
    explain: Callable[[Any, Prediction], Rationale] | None = None


_FRAMEWORKS: dict[str, Framework] = {}


def register_framework(framework: Framework) -> None:
    """Add a framework (``_frontends/__init__.py`` registers every one)."""
    if framework.name in _FRAMEWORKS:
        raise InternalError(f"framework {framework.name!r} is registered twice")
    _FRAMEWORKS[framework.name] = framework


def framework_named(name: str) -> Framework:
    """The registered framework called ``name`` (any case), or an error listing them."""
    key = name.lower() if isinstance(name, str) else name
    if key not in _FRAMEWORKS:
        raise PlacementConfigError(f"unknown framework {shown(name)}{did_you_mean(key, sorted(_FRAMEWORKS), 'frameworks')}")
    return _FRAMEWORKS[key]


def framework_names() -> list[str]:
    return sorted(_FRAMEWORKS)
