"""Options several commands share, worded once."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from solver_placement._cli.exit_codes import EXIT_CODES_HELP
from solver_placement._cluster.ray_nodes import DEFAULT_CONNECT_TIMEOUT_S

Command = TypeVar("Command", bound=Callable[..., Any])

#: How FILE and the overrides read, for every command that takes a model.
MODEL_HELP = (
    "FILE is a YAML config, or - to read it from stdin. Arguments after it are Hydra overrides, "
    "values in YAML: KEY=VALUE replaces a value FILE has (cluster.num_nodes=4), +KEY=VALUE adds a key "
    "it lacks (+cluster.num_gpus_per_node=[8,8,0]), ++KEY=VALUE adds or replaces, ~KEY deletes. A "
    "FILE with a Hydra defaults: list is composed from its folder by Hydra (pip install "
    "'solver_placement[hydra]'), as RLinf's @hydra.main composes it, and Hydra reads the overrides "
    "(group overrides such as env/train=maniskill too); --config-path DIR --config-name NAME (-cp, -cn) "
    "compose config NAME of DIR instead of FILE, every argument then an override. A cluster without "
    "num_gpus_per_node is assumed to have 8 GPUs per node, said on stderr and in the answer's header."
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


#: How the live-cluster options read, for every command that takes a model.
RAY_HELP = (
    "With --ray ADDRESS (or --local), the cluster is the live Ray cluster: a FILE without "
    "cluster.num_nodes gets the live nodes, GPUs, GPU models, custom resources (as hardware items) and "
    "labels, so it may give only component_placement; a FILE that states its cluster is checked against "
    "the live one, every difference listed, before anything else runs."
)


@dataclass(frozen=True)
class RayChoice:
    """The live-cluster options as given: which Ray (``address``, ``"local"`` for --local), how long
    to wait for it, which node-label keys become node groups, and whether only the free GPUs count."""

    address: str
    connect_timeout_s: float
    group_by_labels: tuple[str, ...]
    available: bool = False


#: Where the options' callbacks leave their values in the click context (``ctx.meta``), so the
#: commands' signatures stay as they are and the model loader reads them (``read_job_input``).
_RAY_META = "solver_placement.ray_options"


def ray_choice(ctx: click.Context | None) -> RayChoice | None:
    """The Ray the command was asked to use, or None (no --ray / --local: the model's own cluster)."""
    given = ctx.meta.get(_RAY_META, {}) if ctx is not None else {}
    address, local = given.get("ray"), given.get("local", False)
    if address and local:
        raise click.UsageError("give --ray ADDRESS or --local, not both")
    if not (address or local):
        extra = [f"--{name.replace('_', '-')}" for name in ("group_by_label", "connect_timeout", "available") if given.get(name)]
        if extra:
            raise click.UsageError(f"{' and '.join(extra)} only apply with --ray ADDRESS or --local")
        return None
    timeout = given.get("connect_timeout") or DEFAULT_CONNECT_TIMEOUT_S
    return RayChoice("local" if local else str(address), timeout, tuple(given.get("group_by_label") or ()), bool(given.get("available")))


def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    if param.name is not None:
        ctx.meta.setdefault(_RAY_META, {})[param.name] = value


def _ray_options() -> list[click.Parameter]:
    """--ray, --local, --connect-timeout, --group-by-label and --available, read by ``read_job_input`` (not passed to the command)."""
    common: dict[str, Any] = {"expose_value": False, "callback": _remember}
    return [
        click.Option(["--ray", "ray"], metavar="ADDRESS", help="Use the live Ray cluster at ADDRESS (HOST:PORT, or auto).", **common),
        click.Option(["--local"], is_flag=True, help="Use an embedded local Ray shaped like FILE's cluster (also for launch --run).", **common),
        click.Option(
            ["--connect-timeout"],
            type=click.FloatRange(min=0, min_open=True),
            help=f"Seconds to wait for the Ray head to answer (default {DEFAULT_CONNECT_TIMEOUT_S:g}).",
            **common,
        ),
        click.Option(
            ["--group-by-label"],
            metavar="KEY",
            multiple=True,
            help="With --ray: one node group per value of the Ray node label KEY, named after the value (repeatable).",
            **common,
        ),
        click.Option(
            ["--available"],
            is_flag=True,
            help="With --ray: count only the GPUs and robots free now, so FILE is placed beside the jobs already "
            "running (cluster.free_gpus_only: launch maps GPU ids to the devices Ray reserves).",
            **common,
        ),
    ]


#: Where ``--config-path``/``--config-name`` leave their values in the click context.
_HYDRA_META = "solver_placement.hydra_options"


def hydra_choice(ctx: click.Context | None) -> tuple[str, str] | None:
    """The folder and config name ``--config-path``/``--config-name`` give, or None (FILE is the config)."""
    given = ctx.meta.get(_HYDRA_META, {}) if ctx is not None else {}
    path, name = given.get("config_path"), given.get("config_name")
    if path is None and name is None:
        return None
    if path is None or name is None:
        raise click.UsageError("give --config-path DIR and --config-name NAME together (Hydra's flags: the folder and the config in it)")
    return str(path), str(name)


def _remember_hydra(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    if param.name is not None and value is not None:
        ctx.meta.setdefault(_HYDRA_META, {})[param.name] = value


def _hydra_options() -> list[click.Parameter]:
    """--config-path and --config-name, Hydra's own flags, read by ``read_job_input``."""
    common: dict[str, Any] = {"expose_value": False, "callback": _remember_hydra}
    return [
        click.Option(["--config-path", "-cp", "config_path"], metavar="DIR", help="Compose a Hydra config of folder DIR (with --config-name).", **common),
        click.Option(["--config-name", "-cn", "config_name"], metavar="NAME", help="The config of --config-path to compose, as Hydra names it.", **common),
    ]


class ModelCommand(click.Command):
    """A command that takes a model: its help explains FILE, the overrides and the live-cluster
    options after its first paragraph and ends with the exit status table, worded once for every
    such command. It adds the live-cluster options (``_ray_options``) itself, so every command
    that takes a model offers them without declaring them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        first, _, rest = inspect.cleandoc(self.help or "").partition("\n\n")
        self.help = "\n\n".join(part for part in (first, MODEL_HELP, RAY_HELP, rest) if part)
        self.epilog = EXIT_CODES_HELP
        self.params.extend([*_hydra_options(), *_ray_options()])
