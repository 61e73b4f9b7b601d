"""A framework's own layout: where its code puts every rank of every role, quirks included.

The records carry what a user compares with the framework's logs: the role and rank as the
framework names and numbers them, the cluster node, the node's GPUs the rank holds, what the
process sees in ``CUDA_VISIBLE_DEVICES`` (which a framework may compute apart from what Ray
gave it: that difference is a finding), the share of each GPU Ray accounts for it (colocated
roles ask fractions), its tensor-parallel engine and its placement-group bundle.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from solver_placement._cluster.cluster import Cluster
from solver_placement._config import did_you_mean
from solver_placement._errors import PlacementConfigError, shown
from solver_placement._prediction.explanation import PredictionExplanation, Rationale, explain_prediction
from solver_placement._prediction.findings import Finding, FrameworkLayoutError
from solver_placement._prediction.records import role_assignment, role_records
from solver_placement._records import Placement
from solver_placement._solver.assignment import Assignment

#: Ranks shown by :meth:`Prediction.report` before it summarises the rest (``--format json`` has all).
MAX_REPORT_RANKS = 200


@dataclass(frozen=True)
class PredictedRank:
    """One process of one role where the framework's code puts it.

    ``node`` is None when the framework never starts the rank (its placement group stays
    pending). ``gpus`` are the node-local GPU ids Ray gives the process; ``visible_devices`` what
    the framework sets or leaves in ``CUDA_VISIBLE_DEVICES`` for it; ``gpu_share`` the fraction
    of each GPU Ray accounts (1.0 unless the framework colocates roles at fractions); ``engine``
    the tensor-parallel group the rank belongs to (None: a rank of its own), numbered per role;
    ``bundle`` its placement-group bundle index, where it has one.
    """

    role: str
    rank: int
    node: int | None
    gpus: tuple[int, ...]
    visible_devices: tuple[str, ...]
    gpu_share: float = 1.0
    engine: int | None = None
    bundle: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "node": self.node,
            "gpus": list(self.gpus),
            "visible_devices": list(self.visible_devices),
            "gpu_share": self.gpu_share,
            "engine": self.engine,
            "bundle": self.bundle,
        }


@dataclass(frozen=True)
class Prediction:
    """Every rank a framework's code would start for a job, on one cluster, and what is wrong with it.

    ``release`` names the rule set used (the framework release whose code was read);
    ``findings`` the node-by-node checks that failed (errors and warnings, each with a checked
    fix where one exists); ``notes`` what the reading assumed (a default cluster, a flag's default);
    ``rationale`` the framework rules behind the ranks and findings, as its front end states them
    (:meth:`explain` joins them with the ranks; ``predict`` fills it in).
    """

    framework: str
    release: str
    cluster: Cluster
    ranks: tuple[PredictedRank, ...]
    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = ()
    rationale: Rationale | None = None
    #: Whether every fix of ``findings`` was checked by predicting the fixed input (``predict``
    #: checks them; a front end's own prediction only proposes them).
    fixes_checked: bool = False

    def explain(self) -> PredictionExplanation:
        """Why every rank lands where it does, in the framework's own terms and flags, each rule
        cited at the release read; and for every finding its cause, its effect on a live cluster
        and its fix (checked by predicting the fixed input). ``.text()`` for people,
        ``.as_dict()`` for JSON."""
        return explain_prediction(self, self.rationale)

    @property
    def roles(self) -> list[str]:
        """The roles, in the order the framework creates them."""
        return list(dict.fromkeys(rank.role for rank in self.ranks))

    def of_role(self, role: str) -> list[PredictedRank]:
        """The ranks of one role, ordered as the framework numbers them."""
        return list(self._by_role.get(role, ()))

    @cached_property
    def _by_role(self) -> dict[str, list[PredictedRank]]:
        """Every role's ranks, ordered as the framework numbers them, from one pass over the ranks:
        front ends ask for each role in turn, and a scan per role was quadratic (ROLL's 9,000
        reward workers: 7 s of CPU)."""
        by_role: dict[str, list[PredictedRank]] = {}
        for rank in self.ranks:
            by_role.setdefault(rank.role, []).append(rank)
        return {role: sorted(ranks, key=lambda rank: rank.rank) for role, ranks in by_role.items()}

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(finding for finding in self.findings if finding.is_error)

    @property
    def warnings(self) -> tuple[Finding, ...]:
        return tuple(finding for finding in self.findings if not finding.is_error)

    @property
    def components(self) -> list[str]:
        """The roles with a placed rank: the components of :meth:`placements_by_component`."""
        return [role for role in self.roles if any(rank.node is not None for rank in self.of_role(role))]

    def placements(self, role: str) -> list[Placement]:
        """The placement records of the role's placed ranks (RLinf's fields; see ``records.py``)."""
        return role_records(role, self.of_role(self._known(role)), self.cluster)

    def placements_by_component(self) -> dict[str, list[Placement]]:
        """Every role's records: what ``plot_layout(prediction)`` draws."""
        return {role: self.placements(role) for role in self.components}

    def tensor_parallel_size(self, role: str) -> int:
        """Ranks per engine of the role's placed ranks, when every engine has that many and they
        are ranks ``k*size .. k*size+size-1`` (how ``plot_layout`` brackets a group: ``rank // size``);
        else 1, as for a role whose rank is its engine (ROLL's and AReaL's inference workers).

        With it a prediction is drawn as a solution is, engines bracketed: a split engine shows
        as a bracket on two node rows.
        """
        placed = [rank for rank in self.of_role(self._known(role)) if rank.node is not None]
        engines = {rank.engine for rank in placed}
        if not placed or None in engines:
            return 1
        size = len(placed) // len(engines)
        groups = {(rank.rank // size, rank.engine) for rank in placed}
        same_size = all(sum(1 for rank in placed if rank.engine == engine) == size for engine in engines)
        return size if same_size and len(groups) == len(engines) == len({group for group, _ in groups}) else 1

    def assignment(self, role: str) -> Assignment:
        """The role's placed ranks as physical hardware ids (what ``layout_report`` tables)."""
        return role_assignment(self.of_role(self._known(role)), self.cluster)

    def _known(self, role: str) -> str:
        if role not in self.roles:
            raise PlacementConfigError(f"unknown role {shown(role)}{did_you_mean(role, self.roles, 'roles')}")
        return role

    def check(self) -> None:
        """Raise :class:`FrameworkLayoutError` when the layout cannot run as predicted."""
        if self.errors:
            raise FrameworkLayoutError(self.framework, self.errors)

    def as_dict(self) -> dict[str, Any]:
        """The prediction as plain values (``--format json``)."""
        return {
            "framework": self.framework,
            "release": self.release,
            "cluster": self.cluster.describe(),
            "roles": {role: [rank.as_dict() for rank in self.of_role(role)] for role in self.roles},
            "findings": [
                {"kind": str(f.kind), "error": f.is_error, "role": f.role, "node": f.node, "count": f.count, "message": f.message, "fix": [list(step) for step in f.fix]}
                for f in self.findings
            ],
            "notes": list(self.notes),
        }

    def report(self, max_ranks: int = MAX_REPORT_RANKS) -> str:
        """A table of every rank (the first ``max_ranks``), then the findings and notes."""
        header = ["role", "rank", "node", "GPUs", "CUDA_VISIBLE_DEVICES", "share", "engine"]
        rows = [_row(rank) for rank in self._ordered()]
        shown_rows = rows[:max_ranks]
        widths = [max(len(cell) for cell in column) for column in zip(header, *shown_rows, strict=False)]
        lines = [f"{self.framework} {self.release} on {self.cluster.describe()}"]
        lines += ["  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip() for cells in [header, *shown_rows]]
        if len(rows) > max_ranks:
            lines.append(f"... {len(rows) - max_ranks} more ranks (--format json lists every one)")
        return "\n".join([*lines, *self.said()])

    def said(self) -> list[str]:
        """The findings (``error:`` / ``warning:`` lines, fixes included) and the notes, one line each."""
        return [
            *(f"{'error' if finding.is_error else 'warning'}: {finding.describe()}" for finding in self.findings),
            *(f"note: {note}" for note in self.notes),
        ]

    def _ordered(self) -> Iterator[PredictedRank]:
        for role in self.roles:
            yield from self.of_role(role)


def _row(rank: PredictedRank) -> list[str]:
    return [
        rank.role,
        str(rank.rank),
        "pending" if rank.node is None else str(rank.node),
        ",".join(map(str, rank.gpus)) or "-",
        ",".join(rank.visible_devices) or "-",
        f"{rank.gpu_share:g}",
        "-" if rank.engine is None else str(rank.engine),
    ]
