"""slime as the prediction core sees it: one :class:`Framework` value tying the front end together."""

from __future__ import annotations

from solver_placement._cluster.cluster import Cluster
from solver_placement._frontends.slime.checks import affinity_notes, layout_findings
from solver_placement._frontends.slime.fixes import with_fixes
from solver_placement._frontends.slime.improve import improve_job
from solver_placement._frontends.slime.job import ENTRY_SCRIPTS, RELEASE, SlimeJob, read_job
from solver_placement._frontends.slime.layout import slime_layout
from solver_placement._frontends.slime.reasons import explain_slime
from solver_placement._prediction.findings import Finding, Fix
from solver_placement._prediction.flags import with_flags
from solver_placement._prediction.frameworks import Framework
from solver_placement._prediction.launch_input import LaunchInput, script_arguments
from solver_placement._prediction.layout import Prediction

#: What every prediction assumes of Ray and the cluster (``bundles.py`` says why).
RAY_ASSUMPTION = (
    "Ray's PACK policy on free GPUs: the node with the most free GPUs fills first (CPUs assumed to follow GPUs; "
    "ties: the lowest node number); nodes are numbered by IP, as slime sorts them"
)


def findings_of(job: SlimeJob, cluster: Cluster) -> list[Finding]:
    """The node-by-node findings of slime's layout for ``job`` (without fixes)."""
    return layout_findings(slime_layout(job, cluster))


def predict_job(job: SlimeJob, cluster: Cluster) -> Prediction:
    """Every rank slime's code starts for ``job`` on ``cluster``, with its findings and their fixes."""
    layout = slime_layout(job, cluster)
    findings = with_fixes(job, cluster, layout_findings(layout), findings_of)
    return Prediction("slime", job.release, cluster, tuple(layout.ranks), tuple(findings), (*job.notes, *affinity_notes(layout), RAY_ASSUMPTION))


def fixed_input(given: LaunchInput, fix: Fix) -> LaunchInput:
    """train.py's arguments with the fix applied (a script becomes the command line it runs)."""
    return given.with_arguments(with_flags(script_arguments(given, ENTRY_SCRIPTS), fix))


SLIME = Framework(
    name="slime",
    title="slime",
    releases=(RELEASE,),
    read=read_job,
    predict=predict_job,
    fixed=fixed_input,
    improve=improve_job,
    explain=explain_slime,
)
