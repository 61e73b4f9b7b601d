"""Predict a framework's own layout, check its fixes, and offer the solver's layout in its flags.

The front end proposes; this module checks. A finding's fix is kept only when the fixed input,
read and predicted again, no longer has that finding and has no error the original lacked. An
improvement's input is kept only when the framework's own code, predicted on it, puts every
role's ranks on exactly the nodes and GPUs of the solver's answer.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementError
from solver_placement._prediction.findings import Finding, Fix
from solver_placement._prediction.frameworks import Framework, Improvement, framework_named
from solver_placement._prediction.launch_input import LaunchInput, LaunchSource, launch_input
from solver_placement._prediction.layout import Prediction

#: Distinct (fix, finding kind and role) checks per prediction (each costs one more reading and
#: prediction); findings alike share one check, the rest past the limit keep no fix.
MAX_CHECKED_FIXES = 32


def predict(framework: str, source: LaunchSource, *, cluster: Cluster | None = None, release: str | None = None) -> Prediction:
    """Where ``framework``'s own code puts every rank of the job ``source`` states.

    ``source`` is what the framework takes: its command-line arguments as a list (OpenRLHF,
    slime), a launch script that runs it, or a YAML config or mapping (ROLL). ``cluster`` is the
    cluster to place on (``Cluster.from_ray()`` for a live one); None: the smallest the input
    describes, noted in the answer. ``release`` picks the framework release whose rules read
    it (None: the one the input shows, else the newest the library reads).

    The prediction's ``findings`` say what would fail node by node (a placement group Ray never
    satisfies, an engine split across nodes, two ranks on one GPU, reserved GPUs left idle),
    each with a fix in the framework's own flags that was checked by predicting it.
    ``prediction.check()`` raises :class:`FrameworkLayoutError` when any finding is an error.
    """
    chosen = framework_named(framework)
    given = launch_input(source, chosen.reads_yaml)
    job = chosen.read(given, release)
    on, notes = _cluster_for(job, cluster)
    prediction = chosen.predict(job, on)
    checked = _checked_fixes(chosen, given, job.release, on, prediction)
    rationale = chosen.explain(job, prediction) if chosen.explain is not None else None
    return Prediction(prediction.framework, prediction.release, on, prediction.ranks, checked, notes + prediction.notes, rationale, fixes_checked=True)


def improve(framework: str, source: LaunchSource, *, cluster: Cluster | None = None, release: str | None = None) -> Improvement:
    """The solver's layout for the job ``source`` states (see :func:`predict`), verified, and
    the framework input that makes the framework produce it, checked by predicting that input."""
    chosen = framework_named(framework)
    given = launch_input(source, chosen.reads_yaml)
    job = chosen.read(given, release)
    on, _ = _cluster_for(job, cluster)
    offered = chosen.improve(job, on)
    if offered.arguments is None:
        return offered
    try:
        realised = chosen.predict(chosen.read(given.with_arguments(offered.arguments), job.release), on)
    except PlacementError as error:
        return Improvement(offered.solution, None, (*offered.cannot_express, f"the flags offered do not read back: {error}"))
    differences = layout_differences(realised, offered.solution)
    if differences or realised.errors:
        reasons = differences + [finding.describe() for finding in realised.errors]
        return Improvement(offered.solution, None, (*offered.cannot_express, *(f"{chosen.title} would not place it so: {reason}" for reason in reasons)))
    return offered


def layout_differences(prediction: Prediction, solution: Any) -> list[str]:
    """Per role, how the predicted engines' GPUs differ from the solution's (empty when every
    role's engines hold the same (node, GPU) sets, whatever the rank order).

    A framework numbers one rank per GPU of an engine or one rank per engine; the solver one
    process per ``gpus_per_process`` GPUs, or one-GPU processes in tensor-parallel groups. Both
    sides are compared as engines: the GPU sets of their tensor-parallel groups.
    """
    differences = []
    for role in solution.components:
        wanted = _solution_engines(solution, role)
        got = _predicted_engines(prediction, role)
        if wanted != got:
            missing = sorted((sorted(engine) for engine in wanted - got), key=str)[:2]
            extra = sorted((sorted(engine) for engine in got - wanted), key=str)[:2]
            differences.append(f"{role}: the solver's engines on (node, GPU) {missing}, the framework's {extra}")
    return differences


def _solution_engines(solution: Any, role: str) -> Counter[frozenset[tuple[int, int]]]:
    held = [frozenset((p.cluster_node_rank, gpu) for gpu in p.local_hardware_ranks) for p in solution.placements(role)]
    size = solution.tensor_parallel_size(role)
    if size > 1 and all(len(gpus) == 1 for gpus in held):  # one GPU per process, ``size`` processes an engine
        held = [frozenset().union(*held[start : start + size]) for start in range(0, len(held), size)]
    return Counter(held)


def _predicted_engines(prediction: Prediction, role: str) -> Counter[frozenset[tuple[int, int]]]:
    engines: dict[tuple[str, int], set[tuple[int, int]]] = defaultdict(set)
    for rank in prediction.of_role(role):
        key = ("engine", rank.engine) if rank.engine is not None else ("rank", rank.rank)
        engines[key].update((-1 if rank.node is None else rank.node, gpu) for gpu in rank.gpus)
    return Counter(frozenset(gpus) for gpus in engines.values())


def _cluster_for(job: object, cluster: Cluster | None) -> tuple[Cluster, tuple[str, ...]]:
    if cluster is not None:
        return cluster, ()
    stated = job.stated_cluster()  # type: ignore[attr-defined]
    return stated, (f"no cluster given: placed on {stated.describe()}, the smallest the input describes",)


def _checked_fixes(framework: Framework, given: LaunchInput, release: str, cluster: Cluster, prediction: Prediction) -> tuple[Finding, ...]:
    """The findings, each keeping its fix only if predicting the fixed input clears it."""
    before = {_identity(finding) for finding in prediction.errors}
    cleared: dict[tuple[Fix, tuple[str, str]], bool] = {}  # findings alike with one fix are checked once
    checked = []
    for finding in prediction.findings:
        key = (finding.fix, _identity(finding))
        if finding.fix and key not in cleared and len(cleared) < MAX_CHECKED_FIXES:
            cleared[key] = _clears(framework, given, release, cluster, finding, before)
        if finding.fix and not cleared.get(key, False):
            finding = finding.with_fix(())
        checked.append(finding)
    return tuple(checked)


def _clears(framework: Framework, given: LaunchInput, release: str, cluster: Cluster, finding: Finding, before: set[tuple[str, str]]) -> bool:
    try:
        after = framework.predict(framework.read(framework.fixed(given, finding.fix), release), cluster)
    except PlacementError:
        return False
    remaining = {_identity(other) for other in after.findings}
    new_errors = {_identity(other) for other in after.errors} - before
    return _identity(finding) not in remaining and not new_errors


def _identity(finding: Finding) -> tuple[str, str]:
    return (str(finding.kind), finding.role)
