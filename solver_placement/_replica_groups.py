"""Components that are numbered replicas of one thing, shown as one column or legend entry.

verl starts every replica of its reward model and of each teacher as a worker group of its own,
named by rank (``rollout_reward_colocate_<rank>``, ``rollout_teacher_colocate_<rank>_<key>``,
``rollout_standalone_<rank>``; ``_frontends/verl/servers.py``), and the library places each as a
component; configs written by hand number replicas the same way (``reward_0``, ``reward_1``). A
table with a column per replica, or a figure with a legend entry per replica, runs to 32 columns
of one thing (a legend of 32 replicas made a 2,511-pixel-wide image). So the layout report and the
figures show the replicas of one component as one group: the name with its rank written as the
range of ranks (``reward_0-31``), and how many there are.

Names are replicas of one another when they differ only in one ``_<number>`` part (the last one,
between underscores or at the end); a number alone in its group is a plain name.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from solver_placement._cluster.ranks import format_ranks

#: A rank between underscores or at the end (``reward_3``, ``..._colocate_3_default``); no
#: leading zero, so ``gpu_01`` and ``gpu_1`` are not read as one rank.
_RANK = re.compile(r"(?<=_)(0|[1-9]\d*)(?=_|$)")


@dataclass(frozen=True)
class ReplicaGroup:
    """Components shown together: ``members`` in config order, ``label`` the name to show (the
    member's own name for a group of one)."""

    label: str
    members: tuple[str, ...]

    @property
    def replicas(self) -> int:
        return len(self.members)


def replica_groups(names: Sequence[str]) -> list[ReplicaGroup]:
    """``names`` (config order) grouped into replicas of one component, each group where its first
    member stands; names without a replica keep a group of their own."""
    by_pattern: dict[tuple[str, ...], list[tuple[str, int]]] = {}
    for name in names:
        pattern, rank = _pattern(name)
        by_pattern.setdefault(pattern, []).append((name, rank))
    groups: list[ReplicaGroup] = []
    for name in names:
        pattern, _ = _pattern(name)
        members = by_pattern[pattern]
        if len(members) < 2:
            groups.append(ReplicaGroup(name, (name,)))
        elif members[0][0] == name:  # the group stands where its first member does
            before, after = pattern
            groups.append(ReplicaGroup(f"{before}{format_ranks(rank for _, rank in members)}{after}", tuple(member for member, _ in members)))
    return groups


def group_of(names: Sequence[str]) -> dict[str, str]:
    """Each name's group label (its own name when it has no replicas)."""
    return {member: group.label for group in replica_groups(names) for member in group.members}


def _pattern(name: str) -> tuple[tuple[str, ...], int]:
    """``name`` split around its replica rank (``("reward_", "")``) and the rank; a name without
    one is a pattern of its own (``("reward",)``, rank -1)."""
    found = list(_RANK.finditer(name))
    if not found:
        return (name,), -1
    last = found[-1]
    return (name[: last.start()], name[last.end():]), int(last.group())
