"""OpenRLHF as the prediction core sees it: the :class:`Framework` value ``_frontends`` registers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from solver_placement._cluster.cluster import Cluster
from solver_placement._frontends.openrlhf.fixes import with_fixes
from solver_placement._frontends.openrlhf.improve import improve_job
from solver_placement._frontends.openrlhf.layout import predict_layout
from solver_placement._frontends.openrlhf.read import read_job
from solver_placement._frontends.openrlhf.reasons import explain_openrlhf
from solver_placement._frontends.openrlhf.releases import RELEASES
from solver_placement._prediction.findings import Fix
from solver_placement._prediction.flags import with_flags
from solver_placement._prediction.frameworks import Framework, FrameworkJob
from solver_placement._prediction.launch_input import LaunchInput
from solver_placement._prediction.layout import Prediction


def predict_job(job: Any, cluster: Cluster) -> Prediction:
    """Every rank of an OpenRLHF job on ``cluster``, with its findings and a fix for each error."""
    ranks, findings, notes = predict_layout(job, cluster)
    fixed = with_fixes(job, cluster, findings, predict_layout)
    return Prediction("OpenRLHF", job.release, cluster, tuple(ranks), tuple(fixed), tuple(notes))


def fixed_input(given: LaunchInput, fix: Fix) -> LaunchInput:
    """The input with the fix's flags set at the end of the command line (argparse keeps the last)."""
    return given.with_arguments(with_flags(given.arguments, fix))


OPENRLHF = Framework(
    name="openrlhf",
    title="OpenRLHF",
    releases=tuple(release.version for release in RELEASES),
    # a frozen job's ``release`` is read-only, which the protocol's plain attribute does not say
    read=cast(Callable[[LaunchInput, str | None], FrameworkJob], read_job),
    predict=predict_job,
    fixed=fixed_input,
    improve=improve_job,
    explain=explain_openrlhf,
)
