"""Run slime's own argument and placement code on a command line, with Ray replaced by a recorder.

``python slime_driver.py`` reads ``{"arguments": [...], "gpus_per_node": [...]}`` cases (a JSON
list) on stdin, and prints, per case, what slime's code did: the train actors it created (role,
rank, bundle) and the SGLang engine actors (rank, worker type, bundle, the server arguments slime
computed for them: ``base_gpu_id``, ``nnodes``, ``node_rank``, ``tp_size``, ``pp_size`` and the
host it told them), each bundle's node and GPU as the recorder landed it, or ``pending`` when the
placement group does not fit. It must run with slime's checkout first on ``sys.path``
(``regenerate.py`` and the differential test start it so, in a subprocess of its own).

What is stubbed, and why it cannot change a placement:

* torch, SGLang, the SGLang router, Megatron, transformers and every other package slime imports
  and this machine lacks become inert modules (``tests/driver_shared/inert_modules.py``: any
  attribute is a callable stand-in);
* SGLang's ``ServerArgs`` is a small dataclass with the fields slime's server arguments set, and
  its command-line flags are the few parallel sizes slime reads (``--pp-size``, ...);
* Megatron's ``parse_args`` is an ``argparse`` parser (``allow_abbrev=False``,
  ``parse_known_args``, as Megatron's with ``ignore_unknown_args=True``) holding slime's own flags
  (added by slime's own ``extra_args_provider``) and the Megatron flags slime's checks read;
* Ray is a recorder: ``placement_group`` lands bundles as Ray's PACK policy does on free GPUs (the
  node with the most free GPUs takes all it can, then the next; ties by node number; a node's
  bundles get its GPUs from 0), actors are records, and the methods slime calls on them answer
  as the real ones would on that bundle (its node's IP, its GPU id, a free port).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[3] / "driver_shared"))

import inert_modules  # noqa: E402
from inert_modules import StubModule  # noqa: E402

#: Packages imported for real when present; everything else slime imports that is missing is stubbed.
REAL = ("slime", "yaml", "omegaconf", "numpy", "requests", "urllib3", "packaging", "pydantic")


# ---------------------------------------------------------------------------------------------
# The Ray recorder


class Landing:
    """Where the recorder puts the bundles of the one placement group slime creates."""

    def __init__(self, gpus_per_node: list[int]) -> None:
        self.gpus_per_node = gpus_per_node
        self.bundles: list[tuple[int, int]] = []

    def place(self, count: int) -> bool:
        free = list(self.gpus_per_node)
        if count > sum(free):
            return False
        nodes = [node for node, gpus in enumerate(free) if gpus > 0]
        while len(self.bundles) < count:
            best = max(nodes, key=lambda node: ((free[node] - 1) / free[node], -node))
            nodes.remove(best)
            self.bundles += [(best, gpu) for gpu in range(min(free[best], count - len(self.bundles)))]
        return True


def node_ip(node: int) -> str:
    return f"10.0.{node // 250}.{node % 250 + 1}"


class Pending(Exception):
    """The placement group never becomes ready (slime would wait in ``ray.wait`` forever)."""


class Ref:
    def __init__(self, value: Any) -> None:
        self.value = value


class PlacementGroup:
    def __init__(self, bundles: list[dict[str, float]], strategy: str) -> None:
        self.bundles = bundles
        self.strategy = strategy
        self.fits = RECORD.landing.place(len(bundles)) if strategy == "PACK" else False

    def ready(self) -> Ref:
        return Ref(self)


class SchedulingStrategy:
    def __init__(self, placement_group: PlacementGroup, placement_group_bundle_index: int = -1, placement_group_capture_child_tasks: bool | None = None) -> None:
        self.placement_group = placement_group
        self.bundle = placement_group_bundle_index


class Handle:
    """A created actor: its class, options and constructor arguments, and its bundle's node/GPU."""

    def __init__(self, cls: Any, options: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        self.cls, self.options, self.args, self.kwargs = cls, options, args, kwargs
        strategy = options.get("scheduling_strategy")
        self.bundle = strategy.bundle if isinstance(strategy, SchedulingStrategy) else None
        self.node, self.gpu = RECORD.landing.bundles[self.bundle] if self.bundle is not None else (None, None)
        RECORD.actors.append(self)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        handle = self

        class Method:
            @staticmethod
            def remote(*args: Any, **kwargs: Any) -> Ref:
                return Ref(handle.call(name, args, kwargs))

        return Method()

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if name == "get_ip_and_gpu_id":
            return node_ip(self.node), self.gpu
        if name == "get_master_addr_and_port":
            return node_ip(self.node), 29500
        if name == "_get_current_node_ip_and_free_port":
            return node_ip(self.node), kwargs.get("start_port", 15000)
        if name == "init":
            RECORD.calls.append((self, args, kwargs))
            return 0
        return None


class RemoteClass:
    def __init__(self, cls: Any, options: dict[str, Any]) -> None:
        self.cls, self._options = cls, options

    def options(self, **options: Any) -> RemoteClass:
        return RemoteClass(self.cls, {**self._options, **options})

    def remote(self, *args: Any, **kwargs: Any) -> Handle:
        return Handle(self.cls, self._options, args, kwargs)


def remote(*args: Any, **options: Any) -> Any:
    if len(args) == 1 and not options:
        return RemoteClass(args[0], {})
    return lambda cls: RemoteClass(cls, options)


def get(refs: Any, **_: Any) -> Any:
    return [ref.value for ref in refs] if isinstance(refs, list) else refs.value


def wait(refs: list[Ref], timeout: float | None = None, **_: Any) -> tuple[list[Ref], list[Ref]]:
    if not all(ref.value.fits for ref in refs if isinstance(ref.value, PlacementGroup)):
        raise Pending()
    return refs, []


def install_ray() -> None:
    ray = types.ModuleType("ray")
    util = types.ModuleType("ray.util")
    pg_module = types.ModuleType("ray.util.placement_group")
    strategies = types.ModuleType("ray.util.scheduling_strategies")
    ray.__path__ = []  # type: ignore[attr-defined]  # a package: submodules slime never uses for placement are stubbed
    ray.remote, ray.get, ray.wait = remote, get, wait  # type: ignore[attr-defined]
    ray.kill = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    ray.cluster_resources = ray.available_resources = lambda: {"GPU": float(sum(RECORD.landing.gpus_per_node))}  # type: ignore[attr-defined]
    ray.util = util  # type: ignore[attr-defined]
    pg_module.placement_group = PlacementGroup  # type: ignore[attr-defined]
    pg_module.PlacementGroup = PlacementGroup  # type: ignore[attr-defined]
    strategies.PlacementGroupSchedulingStrategy = SchedulingStrategy  # type: ignore[attr-defined]
    strategies.NodeAffinitySchedulingStrategy = SchedulingStrategy  # type: ignore[attr-defined]
    util.placement_group = pg_module  # type: ignore[attr-defined]
    util.scheduling_strategies = strategies  # type: ignore[attr-defined]
    util.get_node_ip_address = lambda: node_ip(0)  # type: ignore[attr-defined]
    for module in (ray, util, pg_module, strategies):
        sys.modules[module.__name__] = module


# ---------------------------------------------------------------------------------------------
# SGLang's server arguments and Megatron's parser, as far as slime's placement reads them


@dataclasses.dataclass
class ServerArgs:
    """The ``ServerArgs`` fields slime's ``_compute_server_args`` sets for placement."""

    model_path: str | None = None
    host: str | None = None
    port: int | None = None
    nccl_port: int | None = None
    nnodes: int = 1
    node_rank: int = 0
    dist_init_addr: str | None = None
    gpu_id_step: int = 1
    base_gpu_id: int = 0
    tp_size: int = 1
    dp_size: int = 1
    pp_size: int = 1
    ep_size: int = 1
    moe_dp_size: int = 1
    enable_dp_attention: bool = False

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--tensor-parallel-size", "--tp-size", type=int, default=1, dest="tp_size")
        parser.add_argument("--pipeline-parallel-size", "--pp-size", type=int, default=1, dest="pp_size")
        parser.add_argument("--data-parallel-size", "--dp-size", type=int, default=1, dest="dp_size")
        parser.add_argument("--expert-parallel-size", "--ep-size", type=int, default=1, dest="ep_size")
        parser.add_argument("--moe-data-parallel-size", "--moe-dp-size", type=int, default=1, dest="moe_dp_size")
        parser.add_argument("--enable-dp-attention", action="store_true")


def megatron_parse_args(extra_args_provider: Any = None, ignore_unknown_args: bool = False) -> argparse.Namespace:
    """Megatron's parser as slime calls it: its flags that slime's code reads, then slime's own."""
    parser = argparse.ArgumentParser(allow_abbrev=False)
    for flag, kind, default in MEGATRON_FLAGS:
        if kind == "switch":
            parser.add_argument(flag, action="store_true")
        else:
            parser.add_argument(flag, type=kind, default=default)
    if extra_args_provider is not None:
        parser = extra_args_provider(parser)
    args, _ = parser.parse_known_args()
    return args


#: Megatron flags slime's argument checks and placement read (and ``reset_arg`` resets).
MEGATRON_FLAGS: tuple[tuple[str, Any, Any], ...] = (
    ("--tensor-model-parallel-size", int, 1), ("--pipeline-model-parallel-size", int, 1),
    ("--context-parallel-size", int, 1), ("--expert-model-parallel-size", int, 1),
    ("--distributed-backend", str, "nccl"), ("--distributed-timeout-minutes", int, 10),
    ("--load", str, None), ("--save", str, None), ("--save-interval", int, None),
    ("--global-batch-size", int, None), ("--micro-batch-size", int, 1), ("--seed", int, 1234),
    ("--no-load-optim", "switch", False), ("--no-load-rng", "switch", False), ("--no-save-optim", "switch", False),
    ("--finetune", "switch", False), ("--fp16", "switch", False), ("--bf16", "switch", False),
    ("--untie-embeddings-and-output-weights", "switch", False),
    ("--decoder-first-pipeline-num-layers", int, None), ("--decoder-last-pipeline-num-layers", int, None),
)  # fmt: skip


# ---------------------------------------------------------------------------------------------
# Running slime


class Record:
    def __init__(self) -> None:
        self.landing = Landing([])
        self.actors: list[Handle] = []
        self.calls: list[tuple[Handle, tuple[Any, ...], dict[str, Any]]] = []


RECORD = Record()


#: Flags slime requires (or needs one of) that do not touch placement, put before the case's own
#: (which win, being later): ``--rollout-batch-size`` is ``required=True`` (``arguments.py:691``);
#: ``--num-rollout`` or ``--num-epoch`` must be given (``arguments.py:1991``).
REQUIRED = ("--rollout-batch-size", "1", "--num-rollout", "1")


class TrainActor:
    """The train actor class slime is given (``actor_cls``): never run, only recorded."""


def install() -> None:
    install_ray()
    inert_modules.install(inert_modules.Rules(real=REAL))
    server_args = types.ModuleType("sglang.srt.server_args")
    server_args.ServerArgs = ServerArgs  # type: ignore[attr-defined]
    sys.modules["sglang.srt.server_args"] = server_args
    megatron_arguments = StubModule("megatron.training.arguments")
    megatron_arguments.parse_args = megatron_parse_args  # type: ignore[attr-defined]
    megatron_arguments.validate_args = lambda args, defaults=None: args  # type: ignore[attr-defined]
    sys.modules["megatron.training.arguments"] = megatron_arguments
    saver = StubModule("torch_memory_saver")
    folder = tempfile.mkdtemp()
    os.makedirs(os.path.join(folder, "torch_memory_saver"))
    open(os.path.join(folder, "torch_memory_saver_hook_mode_preload.abi3.so"), "w").close()
    saver.__file__ = os.path.join(folder, "torch_memory_saver", "__init__.py")
    sys.modules["torch_memory_saver"] = saver


def run_case(arguments: list[str], gpus_per_node: list[int]) -> dict[str, Any]:
    from slime.backends.megatron_utils import arguments as megatron_arguments
    from slime.ray import placement_group, rollout
    from slime.utils import arguments as slime_arguments

    global RECORD
    RECORD = Record()
    RECORD.landing = Landing(gpus_per_node)
    megatron_arguments._hf_validate_args = lambda args, hf_config: None
    megatron_arguments._validate_allgather_cp_supported = lambda args, hf_config: None
    megatron_arguments._set_default_megatron_args = lambda args: args
    rollout._start_router = lambda args, **kwargs: ("10.0.0.1", 3000)
    _select_cuda()
    sys.argv = ["train.py", *REQUIRED, *arguments]
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            args = slime_arguments.parse_args()
    except SystemExit:  # argparse's own error: its last line says why
        return {"refused": said.getvalue().strip().splitlines()[-1]}
    except (AssertionError, ValueError, TypeError) as error:
        return {"refused": f"{type(error).__name__}: {error}"}
    try:
        pgs = placement_group.create_placement_groups(args)
        if not args.debug_train_only:
            rollout.start_rollout_servers(args, pgs["rollout"])
        placement_group.create_training_models(args, pgs, Handle(object, {}, (), {}), actor_cls=TrainActor)
    except Pending:
        return {"pending": True}
    except (AssertionError, ValueError, TypeError) as error:  # slime fails while placing
        return {"failed": f"{type(error).__name__}: {error}"}
    return {"pending": False, "bundles": [list(bundle) for bundle in RECORD.landing.bundles], **_recorded()}


def _select_cuda() -> None:
    """slime's CUDA backend, selected as on a GPU node (its probe finds no GPU here); with
    ``CUDA_VISIBLE_DEVICES`` unset, as in an engine actor under ``RAY_EXPERIMENTAL_NOSET_*``."""
    from slime.utils import accelerator
    from slime.utils.accelerator.cuda import CUDAAccelerator

    os.environ.pop("CUDA_VISIBLE_DEVICES", None)
    accelerator._ACCELERATOR = CUDAAccelerator()


def _recorded() -> dict[str, Any]:
    train, engines = [], []
    for handle, args, kwargs in RECORD.calls:
        if len(args) > 1 and args[1] in ("actor", "critic"):  # TrainRayActor.init(args, role, ...)
            train.append({"role": args[1], "rank": handle.args[1], "bundle": handle.bundle, "num_gpus": handle.options["num_gpus"]})
        elif getattr(handle.cls, "__name__", "") == "SGLangEngine":
            engines.append(_engine(handle, kwargs))
    return {"train": train, "engines": engines}


def _engine(handle: Handle, kwargs: dict[str, Any]) -> dict[str, Any]:
    from slime.backends.sglang_utils.sglang_engine import _compute_server_args

    engine_args = handle.args[0]
    server, _ = _compute_server_args(
        engine_args, handle.kwargs["rank"], kwargs["dist_init_addr"], kwargs["nccl_port"], kwargs.get("host"), kwargs["port"],
        handle.kwargs["worker_type"], kwargs.get("disaggregation_bootstrap_port"), base_gpu_id=handle.kwargs["base_gpu_id"],
        sglang_overrides=handle.kwargs["sglang_overrides"], num_gpus_per_engine=handle.kwargs["num_gpus_per_engine"],
    )  # fmt: skip
    ips = {node_ip(node): node for node in range(len(RECORD.landing.gpus_per_node))}
    return {
        "rank": handle.kwargs["rank"],
        "worker_type": handle.kwargs["worker_type"],
        "bundle": handle.bundle,
        "num_gpus": handle.options["num_gpus"],
        "host_node": ips.get(server["host"]),
        **{key: server[key] for key in ("base_gpu_id", "nnodes", "node_rank", "tp_size", "pp_size")},
    }


def main() -> None:
    install()
    cases = json.load(sys.stdin)
    print(json.dumps([run_case(case["arguments"], case["gpus_per_node"]) for case in cases]))


if __name__ == "__main__":
    main()
