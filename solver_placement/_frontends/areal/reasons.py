"""Why AReaL's code gives each worker its GPUs, in its own keys, each rule cited (``explain``).

The rules ``layout.py`` follows, stated for the user per role: the local scheduler's or the
local launcher's one counter over the first machine's GPUs, colocation by forking on the
target's GPUs, and ``env_vars`` applied after AReaL's own ``CUDA_VISIBLE_DEVICES``. Lines are
those of AReaL at the release read (v1.0.4).
"""

from __future__ import annotations

from solver_placement._errors import agreeing
from solver_placement._frontends.areal.job import LOCAL_LAUNCHER, ArealJob, RoleRequest
from solver_placement._prediction.explanation import Cause, Rationale, Reason
from solver_placement._prediction.findings import FindingKind
from solver_placement._prediction.layout import Prediction

SCHEDULER = "areal/infra/scheduler/local.py:203-218 LocalScheduler._allocate_gpus"
FORK = "areal/infra/scheduler/local.py:437-446,697-710 colocation fork"
ENV_VARS = "areal/infra/scheduler/local.py:743-768"
LAUNCHER = "areal/infra/launcher/local.py:121-156 submit_array"
SERVERS = "areal/infra/launcher/sglang_server.py:126-183, vllm_server.py:147-190"


def explain_areal(job: ArealJob, prediction: Prediction) -> Rationale:
    """Per role the rule that gives its workers their GPUs, and the cause of each finding."""
    cite = f"AReaL {job.release}"
    machine = len(prediction.cluster.node_accelerator_ids[0])
    reasons = [Reason(request.role, *_role(job, request, machine, cite)) for request in job.roles]
    return Rationale(tuple(reasons), _causes(job, machine, cite))


def _role(job: ArealJob, request: RoleRequest, machine: int, cite: str) -> tuple[str, str]:
    counter = f"AReaL's one counter over the {machine} GPUs of the machine it runs on (node 0), which wraps round"
    if job.path == LOCAL_LAUNCHER:
        if request.role == "rollout":
            size = request.engine_size or 1
            return (
                f"the LLM-server process takes the next {size} x {request.replicas} GPUs of {counter}; server j drives its {size}-GPU slice "
                f"(allocation_mode={job.allocation_mode})",
                f"{cite} {LAUNCHER}, {SERVERS}",
            )
        return (f"the torchrun trainer takes the next {request.replicas} GPUs of {counter}; rank r uses the r-th it sees", f"{cite} {LAUNCHER}")
    if request.colocate_with is not None:
        return (
            f"scheduling_strategy colocation with {request.colocate_with}: each worker is forked on its target worker's GPUs and environment, "
            "sharing them", f"{cite} {FORK}",
        )  # fmt: skip
    asks = "no GPU (scheduling_spec gpu 0)" if not any(request.gpus) else f"the next {_asks(request)} of {counter}, worker after worker in the trainer's order of roles"
    told = "; its scheduling_spec env_vars set CUDA_VISIBLE_DEVICES after AReaL's own" if any(value is not None for value in request.told) else ""
    return (f"{request.replicas} workers; each takes {asks}{told}", f"{cite} {SCHEDULER}" + (f", {ENV_VARS}" if told else ""))


def _asks(request: RoleRequest) -> str:
    sizes = sorted(set(request.gpus))
    each = agreeing(sizes[0], "GPU") if len(sizes) == 1 else "GPUs"
    each = f"{'/'.join(map(str, sizes))} {each}"
    engine = f" (one engine of tensor x pipeline {request.engine_size})" if request.engine_size else ""
    return each + engine


def _causes(job: ArealJob, machine: int, cite: str) -> tuple[Cause, ...]:
    rule = f"{cite} {LAUNCHER if job.path == LOCAL_LAUNCHER else SCHEDULER}"
    return (
        Cause(
            FindingKind.SHARED_GPU, None,
            f"AReaL hands out GPUs from one counter modulo the {machine} GPUs of the machine it runs on and never checks the total, so a "
            "job asking more wraps round and gives GPUs twice; cluster.n_nodes is not read", rule,
        ),
        Cause(
            FindingKind.SPLIT_ENGINE, None,
            "a tensor-parallel group's GPUs come from the wrapping counter, so a group can take the machine's last GPUs and its first",
            rule,
        ),
        Cause(
            FindingKind.WRONG_DEVICE, None,
            "the scheduling_spec env_vars are applied after AReaL sets CUDA_VISIBLE_DEVICES, so a CUDA_VISIBLE_DEVICES there replaces the "
            "GPUs the scheduler gave", f"{cite} {ENV_VARS}",
        ),
    )  # fmt: skip
