"""``explain FRAMEWORK``: why a framework's own code puts every rank where it does, and why its findings fail.

The same input and cluster options as ``predict`` (so a user moves from one to the other by
changing the command word). The group routes ``explain NAME ...`` here when NAME is a framework
the library predicts (``app.py``); any other ``explain`` argument is a config FILE. Errors in
the predicted layout exit 3, after the explanation, as ``predict`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import click

from solver_placement._cli.exit_codes import EXIT_CODES_HELP, ExitCode
from solver_placement._cli.options import format_option
from solver_placement._cli.output import echo_document
from solver_placement._cli.predict_command import prediction_cluster, prediction_inputs, prediction_source
from solver_placement._cli.progress import working
from solver_placement._prediction.predict import predict


@click.command("explain", context_settings={"ignore_unknown_options": True}, epilog=EXIT_CODES_HELP)
@prediction_inputs("Explain")
@format_option("text", "json", help="text: per role the rule behind its ranks and where they land, then each finding's cause, effect and fix; json: the same as records.")
def explain_prediction_command(
    framework: str, arguments: Sequence[str], input_file: Path | None, cluster_file: Path | None, ray_address: str | None, release: str | None, fmt: str
) -> None:
    """Explain why FRAMEWORK's own code puts every rank of a job where it does.

    The input and cluster are those of predict (the flags after --, or --input FILE; --cluster
    FILE or --ray ADDRESS). For every role: the framework rule that put its ranks there, in the
    framework's own flags and terms, cited by file and line at the release read, with the node
    and GPUs they land on. For every finding: its cause (the rule), its effect on a live
    cluster and its fix in the framework's own flags, checked by predicting the fixed input.
    Errors exit 3, after the explanation.

    \b
    Examples:
      solver-placement explain openrlhf -- --actor.num_nodes 1 --actor.num_gpus_per_node 8 --vllm.num_engines 2 --vllm.tensor_parallel_size 4
      solver-placement explain slime --input run-qwen3-4B.sh --cluster models/quickstart.yaml --format json
    """
    source = prediction_source(framework, arguments, input_file)
    cluster = prediction_cluster(cluster_file, ray_address)
    with working(f"predicting {framework}'s layout"):
        explanation = predict(framework, source, cluster=cluster, release=release).explain()
    if fmt == "json":
        echo_document({"schema_version": 1, "command": "explain", **explanation.as_dict()}, "json")
    else:
        click.echo(explanation.text())
    if explanation.errors:
        raise SystemExit(ExitCode.INFEASIBLE)
