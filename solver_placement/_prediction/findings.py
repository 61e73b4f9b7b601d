"""What a framework's own layout gets wrong, node by node, and the flags that put it right.

A framework places its roles with its own code (a placement group, bundle indices, a device
formula), and none of the frameworks checks the result against the nodes before asking Ray. A
:class:`Finding` is one such check that failed: which role, which node, how many ranks or GPUs,
what happens on a live cluster, and a fix in the framework's own flags or keys. A fix is only
shown after it was checked: the fixed input is read and predicted again (``predict.py``) and the
finding must be gone, with no new error in its place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from solver_placement._errors import PlacementError
from solver_placement._overrides import override_text

#: A fix: the framework flags (or dotted config keys) to set, in order, with their new values.
#: ``None`` removes a flag; ``""`` states a switch that takes no value (``--colocate_all_models``).
Fix = tuple[tuple[str, str | None], ...]


class FindingKind(StrEnum):
    """The ways a framework's own layout fails on a cluster (the text is what messages print)."""

    #: Ray cannot satisfy the placement group: ``pg.ready()`` waits forever, nothing starts.
    PENDING = "pending forever"
    #: A tensor-parallel engine's ranks are on two or more nodes (NCCL across nodes, or a hang).
    SPLIT_ENGINE = "engine split across nodes"
    #: Two ranks that do not share by design are told the same GPU.
    SHARED_GPU = "two ranks on one GPU"
    #: A rank is told a GPU (or host) other than the one Ray gave it.
    WRONG_DEVICE = "rank told the wrong GPU"
    #: GPUs reserved for a role that no rank of it uses (a warning: the job runs, the GPUs idle).
    IDLE_GPUS = "reserved GPUs idle"


#: Kinds that only waste hardware; every other kind stops or corrupts the job.
WARNING_KINDS = frozenset({FindingKind.IDLE_GPUS})


@dataclass(frozen=True)
class Finding:
    """One failed node-by-node check of a predicted layout (see the module docstring).

    ``node`` is the cluster node the finding is about (None: the whole job, e.g. a placement group
    no node arrangement satisfies); ``count`` the ranks or GPUs concerned; ``message`` the whole
    sentence, in the framework's role names; ``fix`` the checked flag changes (empty: none found).
    """

    kind: FindingKind
    role: str
    node: int | None
    count: int
    message: str
    fix: Fix = ()

    @property
    def is_error(self) -> bool:
        """Whether the layout cannot run as predicted (else it runs and wastes hardware)."""
        return self.kind not in WARNING_KINDS

    def with_fix(self, fix: Fix) -> Finding:
        return Finding(self.kind, self.role, self.node, self.count, self.message, fix)

    def describe(self) -> str:
        """The message with its fix, as one text (what the command line prints)."""
        where = "" if self.node is None else f" (node {self.node})"
        text = f"{self.role}{where}: {self.kind}: {self.message}"
        return f"{text}; fix: {fix_text(self.fix)}" if self.fix else text


def fix_text(fix: Fix) -> str:
    """A fix as the user would type it in a shell: flags as flags (``--vllm.num_engines 2
    --colocate_all_models``), config keys as Hydra overrides (``allocation_mode=sglang:d2t2+fsdp:d4``,
    ``~key``), a value Hydra's grammar reads only quoted in quotes the shell keeps
    (``"actor_train.device_mapping='list(range(0,4))'"``)."""
    parts = []
    for flag, value in fix:
        if not flag.startswith("-"):
            override = override_text(flag, value)
            parts.append(f'"{override}"' if "'" in override else override)
        else:
            parts.append(f"drop {flag}" if value is None else flag if value == "" else f"{flag} {value}")
    return " ".join(parts)


class FrameworkLayoutError(PlacementError):
    """A framework's own layout would hang, split an engine, or give two ranks one GPU.

    Raised by :meth:`Prediction.check <solver_placement._prediction.layout.Prediction.check>`;
    ``findings`` are the errors (warnings do not raise), each with its checked fix.
    """

    def __init__(self, framework: str, findings: Sequence[Finding]) -> None:
        self.framework = framework
        self.findings = tuple(findings)
        lines = "\n  - ".join(finding.describe() for finding in self.findings)
        super().__init__(f"{framework} would place this job wrongly:\n  - {lines}")
