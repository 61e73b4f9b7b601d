"""Component names that look like a typo of a name RLinf asks for, or of another component's name.

RLinf accepts any component name: ``ComponentPlacement.__init__`` splits every key of
``component_placement`` and keeps each name (``rlinf/scheduler/placement/placement.py`` L322-334,
RLinf a3816b5), and the model-parallel classes look their components up by name and leave every
other one as written (``rlinf/utils/placement.py`` L120-127, ``_get_component_hardware``). So
``+cluster.component_placement.rolout=0-15`` next to ``rollout`` is placed as one more component
that no worker ever asks for: the job runs, the rollout sits where ``rollout`` says, and the GPUs
``rolout`` was meant to change change nothing.

Since RLinf accepts the name, so does this library, but it says so: a placement warns with
:class:`MisspeltComponentWarning` and the command line says it on stderr and in ``explain``'s
answer. When the name the typo stands for is one a placement class requires and it is missing,
the class refuses already; :func:`stands_for` lets its error say which name was probably meant.
"""

from __future__ import annotations

import difflib
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

#: Names RLinf's entry scripts and workers ask a placement for (``get_strategy("actor")`` and the
#: like in ``examples/`` and ``rlinf/``, the model-parallel classes' ``_get_component_hardware``,
#: ``reward_server`` in ``examples/embodiment/train_embodied_agent.py`` L32). One set for every task
#: type: a name close to any of them is a typo in any job, and none of them is ever one.
RLINF_ROLES = ("actor", "rollout", "reward", "inference", "actor_inference", "critic", "critic_inference", "env", "reward_server")

#: How alike two names must be (``difflib``'s ratio) to read as one typed wrong: ``rolout`` and
#: ``rollout`` (0.92), ``inferance`` and ``inference`` (0.89), ``envs`` and ``env`` (0.86); while
#: ``critic`` and ``actor`` (0.55) or ``actor_inference`` and ``critic_inference`` (0.65) are not.
CLOSENESS = 0.8
#: Most components compared pairwise with each other (each is always compared with the RLinf
#: roles): a config with more is generated, not typed, and its 10,000 components (the limit)
#: would cost 50 million comparisons.
MAX_COMPARED = 200
#: Longest part that tells variants of one name apart (``env_a``, ``env_b``; ``gpu_x12``).
VARIANT_CHARS = 3
#: Longest name compared: longer ones are not typed by hand.
MAX_NAME_CHARS = 100
_REPLICA_NUMBER = re.compile(r"_?\d+$")
_DIGITS = re.compile(r"\d+")
_SEPARATOR = re.compile(r"[_.-]")


@dataclass(frozen=True)
class NearMiss:
    """``name`` is placed and looks like ``meant`` typed wrong (``meant`` is an RLinf role, or
    another component placed before it)."""

    name: str
    meant: str

    def sentence(self) -> str:
        return (
            f"component {self.name!r} is not a name RLinf asks for but is close to {self.meant!r}; did you mean {self.meant!r}? "
            f"RLinf accepts any name, so {self.name!r} is placed as one more component that no worker uses "
            f"(rename it, or merge it into {self.meant!r})"
        )


class MisspeltComponentWarning(UserWarning):
    """A placed component's name looks like a typo of a name RLinf asks for or of another
    component (``rolout`` beside ``rollout``); RLinf places it anyway, as one more component."""


def near_misses(names: Sequence[str]) -> list[NearMiss]:
    """The placed ``names`` (config order) that read as another name typed wrong: close to an RLinf
    role, or to a component placed before them; a role itself never is one."""
    found: list[NearMiss] = []
    pairwise = len(names) <= MAX_COMPARED
    for position, name in enumerate(names):
        if name in RLINF_ROLES or len(name) > MAX_NAME_CHARS:
            continue
        earlier = [other for other in names[:position] if other != name] if pairwise else []
        meant = _closest(name, RLINF_ROLES) or _closest(name, earlier)
        if meant is not None:
            found.append(NearMiss(name, meant))
    return found


def placed_names(component_placement: Any) -> list[str]:
    """The component names of a ``component_placement`` mapping as RLinf reads them (each key split
    at commas, stripped), in config order; none when it is not a mapping (verl's pools)."""
    if not isinstance(component_placement, Mapping):
        return []
    return [name.strip() for key in component_placement for name in str(key).split(",")]


def warn_near_misses(names: Sequence[str]) -> None:
    """Warn once per placed name that reads as another typed wrong (see the module docstring)."""
    for miss in near_misses(names):
        warnings.warn(MisspeltComponentWarning(miss.sentence()), stacklevel=3)


def stands_for(role: str, names: Sequence[str]) -> str:
    """For an error about a missing ``role``: ``" ('rolout' is placed; did you mean 'rollout'?)"``
    when a placed name is close to it, else nothing."""
    close = [name for name in names if name not in RLINF_ROLES and len(name) <= MAX_NAME_CHARS and _closest(name, [role])]
    return f" ({close[0]!r} is placed; did you mean {role!r}?)" if close else ""


def _closest(name: str, candidates: Sequence[str]) -> str | None:
    """The candidate ``name`` reads as typed wrong, the closest one when several (None: none)."""
    unrelated = [candidate for candidate in candidates if not _related(name, candidate)]
    close = difflib.get_close_matches(name, unrelated, n=1, cutoff=CLOSENESS) if unrelated else []  # cheap bounds first
    return close[0] if close else None


def _related(name: str, other: str) -> bool:
    """Names of related components, not typos of each other: an extension (``rollout_judge``
    beside ``rollout``, ``actor_inference`` beside ``actor``), a numbered replica (``reward_0`` or
    ``reward1`` beside ``reward``, ``reward_1``), names numbered alike (``c001x``, ``c002x``:
    generated, not typed) or a short variant (``env_a`` beside ``env_b``)."""
    if name.startswith(f"{other}_") or other.startswith(f"{name}_"):
        return True
    mine, theirs = _forms(name), _forms(other)
    if mine.unnumbered == theirs.unnumbered or mine.masked == theirs.masked:
        return True
    differing = [(a, b) for a, b in zip(mine.parts, theirs.parts, strict=True) if a != b] if len(mine.parts) == len(theirs.parts) > 1 else []
    return len(differing) == 1 and max(map(len, differing[0])) <= VARIANT_CHARS


class _Forms(NamedTuple):
    """What :func:`_related` compares of a name: without its replica number (``reward_3`` ->
    ``reward``), every number masked (``c001x`` -> ``c#x``), and its parts between separators."""

    unnumbered: str
    masked: str
    parts: tuple[str, ...]


@lru_cache(maxsize=4096)  # each name is compared with every role and up to MAX_COMPARED others: worked out once
def _forms(name: str) -> _Forms:
    return _Forms(_REPLICA_NUMBER.sub("", name), _DIGITS.sub("#", name), tuple(_SEPARATOR.split(name)))
