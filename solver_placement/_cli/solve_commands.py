"""``solve`` and ``explain``: the placement of every process, or why there is none."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import asdict

import click

from solver_placement._cli.config_input import JobInput, job_arguments, read_job_input
from solver_placement._cli.exit_codes import ExitCode
from solver_placement._cli.options import ModelCommand, format_option, model_parallel_option, time_limit_option
from solver_placement._cli.output import document, echo_document, fail
from solver_placement._cli.placing import SolvedJob, place, placed_as_written
from solver_placement._cli.progress import working
from solver_placement._cli.text import format_table, heading, summary, usage_counts
from solver_placement._diagnose import fixes as checked_fixes
from solver_placement._errors import InfeasiblePlacementError
from solver_placement._frontends.verl import VerlPools, verl_pools
from solver_placement._frontends.verl.versions import VERL_TRAINER
from solver_placement._job import Job
from solver_placement._layout_report import layout_report
from solver_placement._solver.conflicts import compact_statements, grouped_lines, statement_records
from solver_placement._solver.options import SolveStatus
from solver_placement._solver.solution import Solution


@click.command("solve", cls=ModelCommand)
@job_arguments
@click.option("--component", "-c", multiple=True, help="Only show this component (repeatable).")
@format_option(
    "table", "json", "yaml", "layout",
    help="table for people, one row per process; json and yaml print the document described above; "
    "layout prints GPUs per component per run of like nodes, unused GPUs and totals.",
)  # fmt: skip
@time_limit_option
@model_parallel_option
def solve_command(
    file: str, overrides: Sequence[str], component: Sequence[str], fmt: str, time_limit: float | None, model_parallel: bool
) -> None:
    """Solve FILE and print every process's placement.

    \b
    json and yaml print one document: schema_version (1), command, file,
    overrides, status (CP-SAT's, e.g. "optimal"), placement_class and
    placement_mode (RLinf's class and mode, null when placed as written),
    components: {name: [every Placement field, one object per process]} and
    notes (how the answer was reached: the path that answered last);
    for verl's trainer config also verl: {versions, mapping (role -> pool, as
    verl's driver builds it), never_started (the roles it maps and never starts)}.

    \b
    Examples:
      solver-placement solve models/quickstart.yaml
      solver-placement solve models/quickstart.yaml cluster.component_placement.reward.placement=0-7
      solver-placement solve models/api_node_groups.yaml -c env -c agent
      cat models/quickstart.yaml | solver-placement solve - --format json
      solver-placement solve models/modelparallel_collocated_tp4_tp2_1x8.yaml
      solver-placement solve models/synthetic_1024x8.yaml --format layout
    """
    given = read_job_input(file, overrides)
    with working(f"solving {given.name}"):
        placed = place(given.job, time_limit, model_parallel)
    solution = placed.solution
    if fmt == "layout":  # the heading without the solve time, so logs of the same job read the same
        report = layout_report(solution, list(component) or None)  # before any output: a bad -c is an error alone
        click.echo(f"{heading(given)}: {solution.cluster.describe()}; {_verdict(solution)}\n{report}")
        return
    records = {name: solution.placements(name) for name in list(component) or solution.components}
    if fmt != "table":
        components = {name: [asdict(p) for p in pls] for name, pls in records.items()}
        echo_document(document("solve", given, status=solution.status.lower(), placement_class=placed.class_name,
                               placement_mode=placed.mode, components=components, notes=list(solution.notes), **verl_answer(given.job)), fmt)  # fmt: skip
        return
    click.echo(f"{heading(given)}: {solution.cluster.describe()}; {_verdict(solution)} in {sum(solution.timings.values()):.3f} s{verl_line(given.job)}")
    click.echo(format_table([p for pls in records.values() for p in pls]))


@click.command("explain", cls=ModelCommand, short_help="Say why FILE cannot be placed, or summarise it in one line.")
@job_arguments
@format_option("text", "json", help="text for people; json prints the document described above.")
@time_limit_option
@click.option(
    "--explain-time-limit", type=click.FloatRange(min=0, min_open=True), default=None, metavar="SECONDS",
    help="Seconds for checking fixes of an infeasible FILE, on top of --time-limit (default: the config's time_limit_s).",
)
@model_parallel_option
def explain_command(
    file: str, overrides: Sequence[str], fmt: str, time_limit: float | None, explain_time_limit: float | None, model_parallel: bool
) -> None:
    """Say why FILE is invalid or infeasible, or summarise it in one line if it is fine.

    An infeasible FILE lists the fewest statements that cannot hold together, under the
    component and config keys they come from (with the counting that rules them out, when
    counting does), and the fixes that were checked to fit (exit 3).
    --time-limit bounds finding the conflict; --explain-time-limit bounds the fixes.
    explain FRAMEWORK -- FLAGS (or --input FILE) explains a framework's own layout instead,
    with predict's options: see solver-placement explain openrlhf --help.

    \b
    json prints one document: schema_version (1), command, file, overrides,
    feasible (true/false); when feasible: summary, status, placement_class,
    placement_mode, processes, nodes_used, nodes, gpus_used, gpus,
    components {name: process count} and notes; when not: conflicts and suggestions
    (lists of sentences) and statements (the conflicts as records: component,
    keys, rule, processes, others, text). Bad input and timeouts are errors on
    stderr.

    \b
    Examples:
      solver-placement explain models/quickstart.yaml
      solver-placement explain models/invalid/process_spans_nodes_gpu.yaml
      solver-placement explain models/quickstart.yaml cluster.component_placement.rollout.processes=9 --format json
      solver-placement explain openrlhf -- --actor.num_gpus_per_node 8 --vllm.num_engines 2 --vllm.tensor_parallel_size 4
    """
    given = read_job_input(file, overrides)
    try:
        with working(f"solving {given.name}"):
            placed = place(given.job, time_limit, model_parallel)
    except InfeasiblePlacementError as error:
        _explain_infeasible(given, error, fmt, explain_time_limit, placed_as_written=placed_as_written(given.job, model_parallel))
        raise
    if fmt == "json":
        echo_document(_feasible_document(given, placed), fmt)
        return
    click.echo(f"{heading(given)}: {summary(placed)}{verl_line(given.job)}")
    for sentence in given.misspelt:  # feasible is not fine when a component was meant to be another
        click.echo(f"warning: {sentence}")


def _explain_infeasible(given: JobInput, error: InfeasiblePlacementError, fmt: str, time_limit: float | None, placed_as_written: bool) -> None:
    """Print the conflicts and checked fixes and exit 3; return only when a one-line error says it all.

    Fixes are searched only for configs placed as written: they are edits of component_placement,
    which an RLinf placement class rewrites before solving and resource pools do not have.
    """
    statements = compact_statements(error.statements)
    fixes: Sequence[str] = ()
    if placed_as_written:
        with working(f"checking fixes for {given.name}"):
            fixes = checked_fixes(given.job, error.statements, time_limit)
    if fmt == "json":
        conflicts = [statement.text for statement in statements]
        echo_document(document("explain", given, feasible=False, conflicts=conflicts, statements=statement_records(statements),
                               suggestions=list(fixes)), fmt)  # fmt: skip
        sys.exit(ExitCode.INFEASIBLE)
    if len(statements) > 1 or fixes:
        listed = "".join(f"\n{line}" for line in grouped_lines(statements))
        tips = "".join(f"\nsuggestion: {fix}" for fix in fixes)
        fail(f"no placement exists; these statements cannot all hold:{listed}{tips}", ExitCode.INFEASIBLE)


def _feasible_document(given: JobInput, placed: SolvedJob) -> dict[str, object]:
    records = placed.solution.placements_by_component()
    return document(
        "explain", given, feasible=True, summary=summary(placed), status=placed.solution.status.lower(),
        placement_class=placed.class_name, placement_mode=placed.mode, **usage_counts(placed),
        components={name: len(pls) for name, pls in records.items()}, notes=list(placed.solution.notes), **verl_answer(given.job),
    )  # fmt: skip


def verl_answer(job: Job) -> dict[str, dict[str, object]]:
    """For verl's trainer config, verl's own answer beside the placement: the releases it was read
    as, the role -> pool mapping its driver builds and the roles of it verl never starts (0.4.1's
    critic without GAE, main's ``rm`` without a reward model); empty for any other config."""
    built = _verl_built(job)
    if built is None:
        return {}
    return {"verl": {"versions": list(built.versions), "mapping": dict(built.mapping), "never_started": sorted(built.idle)}}


def verl_line(job: Job) -> str:
    """``; verl 0.9.0, 0.9.1 or main maps actor_rollout -> global_pool, rm -> global_pool (never started)``
    (the end of the heading line, so a summary stays one line), or "" for a config not verl's."""
    built = _verl_built(job)
    if built is None:
        return ""
    roles = ", ".join(f"{role} -> {pool}{' (never started)' if role in built.idle else ''}" for role, pool in built.mapping.items())
    return f"; verl {built.label} maps {roles}"


def _verl_built(job: Job) -> VerlPools | None:
    return verl_pools(job.config) if job.frontend.name == VERL_TRAINER else None


def _verdict(solution: Solution) -> str:
    """The status word, and for an answer not proven best, how far it may be from the best and
    what produced it (``feasible (gap 4.8%, first fit)``)."""
    if solution.status == SolveStatus.OPTIMAL:
        return "optimal"
    gap = "gap unknown" if solution.gap is None else f"gap {solution.gap:.1%}"
    return f"{solution.status.lower()} ({gap}, {solution.method})"
