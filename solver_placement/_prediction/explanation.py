"""Why a framework's own layout is what it is: the rule behind every role's ranks, and per finding
its cause, its effect on a live cluster and its checked fix.

A framework's code decides where ranks land, so the answer to "why is this rank here?" is a rule
of that code (a placement group's bundle order, a device formula), not a statement the user
wrote. Each front end states those rules in the framework's own terms and flags, citing the file
and line of the release it read (:class:`Rationale`, returned by its ``explain``); this module
joins them with where the ranks actually landed (from the prediction, never re-stated by the
front end, so the two cannot disagree) and with the findings, whose fixes ``predict.py`` has
already checked by predicting the fixed input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.ranks import format_ranks
from solver_placement._errors import counted
from solver_placement._prediction.findings import Finding, FindingKind, fix_text
from solver_placement._prediction.records import PlacedRank


class ExplainedLayout(Protocol):
    """What an explanation reads of a prediction: the fields of ``layout.Prediction`` (which
    imports this module, so it is named here by what it offers)."""

    @property
    def framework(self) -> str: ...

    @property
    def release(self) -> str: ...

    @property
    def cluster(self) -> Cluster: ...

    @property
    def findings(self) -> tuple[Finding, ...]: ...

    @property
    def notes(self) -> tuple[str, ...]: ...

    @property
    def fixes_checked(self) -> bool: ...

    @property
    def roles(self) -> list[str]: ...

    def of_role(self, role: str) -> Sequence[PlacedRank]: ...


@dataclass(frozen=True)
class Reason:
    """Why some ranks of a role land where they do: ``text`` the framework's rule in its own
    terms and flags, ``rule`` where the rule is written (release, file:line, function), ``ranks``
    the ranks it is about (None: every rank of the role)."""

    role: str
    text: str
    rule: str
    ranks: tuple[int, ...] | None = None


@dataclass(frozen=True)
class Cause:
    """The framework rule that produces findings of ``kind`` on ``role`` (None: on any role that
    has no cause of its own): ``text`` in its own terms and flags, ``rule`` where it is written."""

    kind: FindingKind
    role: str | None
    text: str
    rule: str


@dataclass(frozen=True)
class Rationale:
    """What a front end says about one prediction: a reason for every role (or ranks of it) and
    the cause of each kind of finding it can produce. Its ``explain`` returns one."""

    reasons: tuple[Reason, ...]
    causes: tuple[Cause, ...] = ()


#: What each kind of finding does on a live cluster (the effect in every chain).
EFFECTS = {
    FindingKind.PENDING: "Ray never satisfies the request, so the framework waits (pg.ready() or an actor that never starts) "
    "and nothing created after it starts; no error is raised",
    FindingKind.SPLIT_ENGINE: "the engine's tensor-parallel collectives cross nodes over the network instead of NVLink: "
    "much slower, or a hang where NCCL cannot reach the other node",
    FindingKind.SHARED_GPU: "both processes allocate memory and run kernels on one GPU: out-of-memory errors or a crash at "
    "start, while other GPUs of the job idle",
    FindingKind.WRONG_DEVICE: "the rank runs on a GPU (or talks to a host) Ray did not give it, so it meets another rank on "
    "that GPU and the GPU Ray reserved for it idles",
    FindingKind.IDLE_GPUS: "the job runs, and these GPUs stay reserved and unused for its whole life (a warning)",
}

#: Reasons shown by :meth:`PredictionExplanation.text` before it summarises the rest (JSON has all).
MAX_TEXT_REASONS = 200


@dataclass(frozen=True)
class ExplainedRanks:
    """One reason with where its ranks landed: ``where`` is read from the prediction."""

    role: str
    ranks: tuple[int, ...]
    where: str
    why: str
    rule: str

    def as_dict(self) -> dict[str, Any]:
        return {"role": self.role, "ranks": list(self.ranks), "where": self.where, "why": self.why, "rule": self.rule}


@dataclass(frozen=True)
class FindingChain:
    """A finding as a chain: what the framework's rule did (``cause``, cited by ``rule``), what
    that does on a live cluster (``effect``), and the fix (``fix``, empty when none passed the
    check; every fix shown was checked by predicting the fixed input)."""

    finding: Finding
    cause: str
    rule: str
    effect: str
    fix: str

    def as_dict(self) -> dict[str, Any]:
        f = self.finding
        return {
            "kind": str(f.kind), "error": f.is_error, "role": f.role, "node": f.node, "count": f.count, "message": f.message,
            "cause": self.cause, "rule": self.rule, "effect": self.effect, "fix": self.fix, "fix_flags": [list(step) for step in f.fix],
        }  # fmt: skip


@dataclass(frozen=True)
class PredictionExplanation:
    """Why a framework puts every rank where it does, and the chain behind every finding.

    Returned by :meth:`Prediction.explain <solver_placement.Prediction.explain>`. ``ranks`` has
    one entry per rule the front end gave (per role, per engine or per group of ranks), in the
    order the framework creates the roles; ``chains`` one per finding, errors and warnings as
    the prediction lists them; ``notes`` what the prediction assumed.
    """

    framework: str
    release: str
    cluster: str
    ranks: tuple[ExplainedRanks, ...]
    chains: tuple[FindingChain, ...]
    notes: tuple[str, ...]

    @property
    def errors(self) -> tuple[FindingChain, ...]:
        return tuple(chain for chain in self.chains if chain.finding.is_error)

    def as_dict(self) -> dict[str, Any]:
        """The explanation as plain values (``explain FRAMEWORK --format json``)."""
        return {
            "framework": self.framework,
            "release": self.release,
            "cluster": self.cluster,
            "ranks": [entry.as_dict() for entry in self.ranks],
            "findings": [chain.as_dict() for chain in self.chains],
            "notes": list(self.notes),
        }

    def text(self, max_reasons: int = MAX_TEXT_REASONS) -> str:
        """For people: per role, each rule with the ranks it places and where; then each finding's
        chain, ``error:``/``warning:`` first; then the notes."""
        lines = [f"{self.framework} {self.release} on {self.cluster}"]
        role = None
        for entry in self.ranks[:max_reasons]:
            if entry.role != role:
                role = entry.role
                lines.append(f"{role}:")
            cited = f" ({entry.rule})" if entry.rule else ""
            lines.append(f"  - {_rank_words(entry.ranks)} -> {entry.where}: {entry.why}{cited}")
        if len(self.ranks) > max_reasons:
            lines.append(f"... {len(self.ranks) - max_reasons} more (--format json lists every one)")
        for chain in self.chains:
            lines.append(f"{'error' if chain.finding.is_error else 'warning'}: {_finding_line(chain.finding)}")
            lines.append(f"  cause: {chain.cause}" + (f" ({chain.rule})" if chain.rule else ""))
            lines.append(f"  effect: {chain.effect}")
            lines.append(f"  fix: {chain.fix}" if chain.fix else "  fix: none found in the framework's own flags or keys that clears it when predicted again")
        lines += [f"note: {note}" for note in self.notes]
        return "\n".join(lines)


def explain_prediction(prediction: ExplainedLayout, rationale: Rationale | None) -> PredictionExplanation:
    """Join the front end's ``rationale`` with the prediction (see the module docstring). Ranks no
    reason covers (a front end without reasons, or a role it did not name) get a plain one, so
    every rank is explained."""
    reasons = rationale.reasons if rationale is not None else ()
    entries: list[ExplainedRanks] = []
    for role in prediction.roles:
        ranks = prediction.of_role(role)
        by_rank = {rank.rank: rank for rank in ranks}
        covered: set[int] = set()
        for reason in (reason for reason in reasons if reason.role == role):
            numbers = tuple(sorted(by_rank)) if reason.ranks is None else tuple(n for n in reason.ranks if n in by_rank)
            if numbers:
                covered.update(numbers)
                entries.append(ExplainedRanks(role, numbers, where_ranks_are([by_rank[n] for n in numbers]), reason.text, reason.rule))
        rest = tuple(sorted(set(by_rank) - covered))
        if rest:
            why = f"placed by {prediction.framework}'s own code (the front end states no rule for these ranks)"
            entries.append(ExplainedRanks(role, rest, where_ranks_are([by_rank[n] for n in rest]), why, ""))
    causes = {(cause.kind, cause.role): cause for cause in (rationale.causes if rationale is not None else ())}
    chains = tuple(_chain(finding, causes.get((finding.kind, finding.role), causes.get((finding.kind, None))), prediction) for finding in prediction.findings)
    return PredictionExplanation(prediction.framework, prediction.release, prediction.cluster.describe(), tuple(entries), chains, prediction.notes)


def _chain(finding: Finding, cause: Cause | None, prediction: ExplainedLayout) -> FindingChain:
    if prediction.fixes_checked:
        said = f"checked: {prediction.framework} {prediction.release} predicted again with it: this finding is gone and no new error appears"
    else:  # a front end's own prediction, before predict() checked its fixes
        said = "proposed, not checked: solver_placement.predict checks every fix before it keeps it"
    fix = f"{fix_text(finding.fix)} ({said})" if finding.fix else ""
    if cause is None:
        return FindingChain(finding, finding.message, "", EFFECTS[finding.kind], fix)
    return FindingChain(finding, cause.text, cause.rule, EFFECTS[finding.kind], fix)


def where_ranks_are(ranks: Sequence[PlacedRank]) -> str:
    """``node 1, GPUs 0-3`` / ``node 0 GPUs 0-3, node 1 GPUs 0-3`` / ``pending (never placed)``,
    with what the ranks are told when it differs from the GPUs they hold."""
    placed = [rank for rank in ranks if rank.node is not None]
    if not placed:
        return "pending (never placed)"
    by_node: dict[int, list[int]] = {}
    told: dict[int, set[str]] = {}
    for rank in placed:
        by_node.setdefault(int(rank.node), []).extend(rank.gpus)  # type: ignore[arg-type]  # placed
        told.setdefault(int(rank.node), set()).update(rank.visible_devices)  # type: ignore[arg-type]
    parts = []
    for node, gpus in sorted(by_node.items()):
        held = sorted(set(gpus))
        part = f"node {node}, {'GPU' if len(held) == 1 else 'GPUs'} {format_ranks(held)}" if held else f"node {node}, no GPU"
        seen = sorted(told[node], key=_device_order)
        if seen and seen != [str(gpu) for gpu in held]:
            part += f" (CUDA_VISIBLE_DEVICES {','.join(seen)})"
        parts.append(part)
    pending = len(ranks) - len(placed)
    return "; ".join(parts) + (f"; {counted(pending, 'rank')} pending" if pending else "")


def _rank_words(ranks: Sequence[int]) -> str:
    return f"{'rank' if len(ranks) == 1 else 'ranks'} {format_ranks(ranks)}"


def _finding_line(finding: Finding) -> str:
    where = "" if finding.node is None else f" (node {finding.node})"
    return f"{finding.role}{where}: {finding.kind}: {finding.message}"


def _device_order(device: str) -> tuple[int, str]:
    return (int(device), device) if device.isdigit() else (1 << 30, device)
