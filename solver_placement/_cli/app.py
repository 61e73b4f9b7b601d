"""The ``solver-placement`` command group and the one place its failures become exit statuses.

A refused input prints one line, ``error: <what, where, which rule>``, on stderr and exits with
the status of its kind (:mod:`solver_placement._cli.exit_codes`); never a traceback. The group
catches for every subcommand, so subcommands added later behave the same for free.
"""

from __future__ import annotations

import logging
import os
import sys
import warnings
from typing import Any

import click

from solver_placement._cli.auto_command import auto_command
from solver_placement._cli.exit_codes import EXIT_CODES_HELP, ExitCode, exit_code_for
from solver_placement._cli.explain_prediction_command import explain_prediction_command
from solver_placement._cli.export_command import export_command
from solver_placement._cli.launch_command import launch_command
from solver_placement._cli.output import fail
from solver_placement._cli.plot_command import plot_command
from solver_placement._cli.predict_command import predict_command
from solver_placement._cli.solve_commands import explain_command, solve_command
from solver_placement._cli.text import one_line
from solver_placement._cli.topology_command import topology_command
from solver_placement._cluster.schema import AssumedGpuCountWarning
from solver_placement._constants import VERSION
from solver_placement._errors import InternalError, PlacementError
from solver_placement._frontends.rlinf.component_names import MisspeltComponentWarning
from solver_placement._prediction.frameworks import framework_names


class _Commands(click.Group):
    """A click group that turns every failure into one line on stderr and its exit status."""

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        """``explain NAME ...`` with NAME a framework the library predicts (``explain openrlhf -- ...``)
        explains that framework's own layout; any other ``explain`` argument is a config FILE (a file
        named like a framework is given as ``./NAME``). One command word for both, as users ask "why"
        the same way whoever decided the layout."""
        if len(args) > 1 and args[0] == "explain" and args[1].lower() in framework_names():
            return "explain", explain_prediction_command, args[1:]
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with warnings.catch_warnings():
                # the command says it itself, in its own words and header (cli.model_input)
                warnings.simplefilter("ignore", AssumedGpuCountWarning)
                warnings.simplefilter("ignore", MisspeltComponentWarning)
                return super().invoke(ctx)
        except PlacementError as error:
            fail(one_line(error), exit_code_for(error))
        except BrokenPipeError:
            _quiet_stdout()
            sys.exit(ExitCode.OK)
        except OSError as error:
            fail(f"{error.filename}: {error.strerror or error}" if error.filename else str(error), ExitCode.IO)
        except InternalError as error:
            fail(f"internal error (a bug in solver_placement; please report it with the config): {error}", ExitCode.INTERNAL)
        except KeyboardInterrupt:  # click would print "Aborted!" and exit 1, a status scripts cannot tell from a failure
            fail("interrupted", ExitCode.INTERRUPTED)


def _quiet_stdout() -> None:
    """Point stdout at /dev/null once its reader has gone (``| head -1``), so the flush at exit
    cannot fail a second time and print Python's "Exception ignored ... Broken pipe"."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # no real descriptor (captured output): nothing will flush to the pipe
        pass


#: Log levels by the number of ``-v``: the library's stages, sizes and solver statistics, then
#: every CP-SAT run and step.
VERBOSITY = {1: logging.INFO, 2: logging.DEBUG}


class _CurrentStderr(logging.StreamHandler):
    """Log records on ``sys.stderr`` as it is when each is written, so a record printed while
    the spinner runs (which redirects stderr) goes above the spinner, not through it."""

    @property
    def stream(self) -> object:
        return sys.stderr

    @stream.setter
    def stream(self, value: object) -> None:
        """Kept on ``sys.stderr`` whatever the base class sets."""


def _log_to_stderr(ctx: click.Context, verbose: int) -> None:
    """Show the library's log records on stderr at the level ``-v`` asks for, for this command
    only (removed when it ends, so a process running several commands stacks no handlers)."""
    logger = logging.getLogger("solver_placement")
    handler = _CurrentStderr()
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(VERBOSITY[min(verbose, max(VERBOSITY))])

    def restore() -> None:
        logger.removeHandler(handler)
        logger.setLevel(level)

    ctx.call_on_close(restore)


@click.group(cls=_Commands, epilog=EXIT_CODES_HELP, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(VERSION, "-V", "--version", prog_name="solver-placement")
@click.option(
    "-v",
    "--verbose",
    count=True,
    help="Log on stderr what the library does: -v its stages, sizes, the path that answered and the solver's statistics; "
    "-vv every CP-SAT run and step. What the command prints on stdout does not change.",
)
@click.pass_context
def main(ctx: click.Context, verbose: int) -> None:
    """Decide where every process of a distributed RL job runs, draw it, or say why it cannot run.

    FILE is a YAML config with a cluster: section (num_nodes, num_gpus_per_node, node_groups,
    component_placement), or - to read it from stdin. Hydra overrides after FILE change its
    values: cluster.num_nodes=4 replaces, +KEY=VALUE adds, ++KEY=VALUE adds or replaces, ~KEY
    deletes. A config with runner.task_type is placed with the RLinf placement class RLinf's
    entry script for that task uses. Every command prints a document with --format json; errors
    go to stderr as one "error: ..." line, warnings (an assumed GPU count, a component name that looks misspelt) as "warning: ..." lines.

    \b
    Examples:
      solver-placement solve models/quickstart.yaml
      solver-placement solve models/quickstart.yaml cluster.component_placement.reward.placement=0-7 --format json
      solver-placement solve models/quickstart.yaml -c rollout --format json | jq '.components.rollout'
      solver-placement plot models/quickstart.yaml -o layout.png
      solver-placement plot models/quickstart.yaml -o sync.svg --figure weight-sync
      solver-placement explain models/invalid/not_multiple.yaml
      solver-placement -v solve models/quickstart.yaml    (what the solver did, on stderr)
      solver-placement launch models/quickstart.yaml --run
      solver-placement auto models/auto_reference_16x8.yaml
      solver-placement export --to verl models/verl_ppo_trainer_2x8.yaml
      solver-placement gpu-topology    (on a node: its cluster.gpu_topology entry)
      solver-placement predict openrlhf -- --actor.num_gpus_per_node 8 --vllm.num_engines 2   (OpenRLHF's own layout, checked)
      python -m solver_placement solve - < models/quickstart.yaml

    \b
    Shell completion (click's), e.g. for bash in ~/.bashrc:
      eval "$(_SOLVER_PLACEMENT_COMPLETE=bash_source solver-placement)"
    (zsh: zsh_source, fish: fish_source)
    """
    if verbose:
        _log_to_stderr(ctx, verbose)


for _command in (solve_command, plot_command, explain_command, auto_command, launch_command, export_command, topology_command, predict_command):
    main.add_command(_command)
