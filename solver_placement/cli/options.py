"""Options several commands share, worded once."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, TypeVar

import click

from solver_placement.cli.exit_codes import EXIT_CODES_HELP

Command = TypeVar("Command", bound=Callable[..., Any])

#: How FILE and the overrides read, for every command that takes a model.
MODEL_HELP = (
    "FILE is a YAML config, or - to read it from stdin. KEY=VALUE arguments after it override "
    "FILE's values the way OmegaConf's from_dotlist merge does (cluster.num_nodes=4, "
    "cluster.num_gpus_per_node=[8,8,0])."
)


def format_option(*choices: str, help: str) -> Callable[[Command], Command]:
    """``--format``, defaulting to the first choice (the human-readable one)."""
    return click.option("--format", "fmt", type=click.Choice(choices), default=choices[0], show_default=True, help=help)


def time_limit_option(command: Command) -> Command:
    return click.option(
        "--time-limit",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        help="Seconds the solver may take for the whole command (overrides the config's solver: time_limit_s).",
    )(command)


def model_parallel_option(command: Command) -> Command:
    return click.option(
        "--model-parallel",
        is_flag=True,
        help="Place FILE as RLinf's ModelParallelComponentPlacement (actor/rollout TP sizes, collocated or "
        "disaggregated mode) whatever its runner.task_type says. Without it, runner.task_type picks "
        "RLinf's class as RLinf's entry scripts do, and a config without one is placed as written.",
    )(command)


class ModelCommand(click.Command):
    """A command that takes a model: its help explains FILE and the overrides after its first
    paragraph and ends with the exit status table, worded once for every such command."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        first, _, rest = inspect.cleandoc(self.help or "").partition("\n\n")
        self.help = "\n\n".join(part for part in (first, MODEL_HELP, rest) if part)
        self.epilog = EXIT_CODES_HELP
