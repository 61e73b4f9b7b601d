"""Run AReaL's SPMD local launcher up to the GPUs every LLM server and trainer rank gets.

Usage: ``python launcher_driver.py AREAL_SOURCE < cases.json``, a JSON list of cases
``{"argv": ["train.py", "--config", "x.yaml", "allocation_mode=...", ...], "gpus": 8}``. Prints
one JSON line, a list with per case the ranks of ``rollout`` (one per server) and ``actor`` (one
per trainer process): GPUs and what the process sees in ``CUDA_VISIBLE_DEVICES``, or
``{"error": ...}`` when AReaL refuses.

What runs for real: AReaL's ``local_main`` (launcher/local.py at v1.0.4: the allocation string,
``LocalLauncher.submit_array``'s GPU counter, the LLM-server and ``torchrun`` jobs) and, in the
LLM-server job's environment, ``launch_sglang_server`` / ``launch_vllm_server`` up to each
server's ``base_gpu_id`` or device slice. Replaced: the processes (``subprocess.Popen`` records
the command line, whose ``CUDA_VISIBLE_DEVICES=...`` is what the job sees; a server records its
arguments), the waits for servers and jobs, and the missing packages (``stubs.py``). A trainer
rank ``r`` uses the ``r``-th GPU it sees (``LOCAL_RANK``, torch's device ``cuda:r``).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shlex
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import stubs


class _Stop(Exception):  # noqa: N818 - a signal, not an error
    """Raised where the vLLM wrapper starts watching its servers: their devices are decided by then."""


class _Started:
    def poll(self) -> None:
        raise _Stop


def main() -> None:
    logging.disable(logging.CRITICAL)
    stubs.install_missing(Path(sys.argv[1]))
    from areal.api.cli_args import parse_cli_args
    from areal.infra.launcher import local, sglang_server, vllm_server
    from areal.infra.platforms.cuda import CudaPlatform

    jobs: list[tuple[str, str]] = []
    servers: list[dict[str, Any]] = []

    class Popen:
        pid = 0

        def __init__(self, command: str, **kwargs: Any) -> None:
            jobs.append(("llm_server" if "_server " in command else "trainer", command))

        def poll(self) -> None:
            return None

    class Machine(CudaPlatform):
        """What AReaL detects on an NVIDIA machine, counting the case's GPUs (torch is inert here)."""

        @classmethod
        def device_count(cls) -> int:
            return len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))

    for module in (local, sglang_server, vllm_server):
        module.current_platform = Machine()
    local.subprocess = types.SimpleNamespace(Popen=Popen)
    local.wait_llm_server_addrs = lambda *args, **kwargs: []
    local.LocalLauncher.wait = lambda self, *args, **kwargs: None
    sglang_server.SGLangConfig.build_cmd = staticmethod(lambda config, **kwargs: kwargs)
    sglang_server.SGLangServerWrapper.launch_one_server = lambda self, cmd, host, port, node_rank: servers.append({"base_gpu_id": cmd["base_gpu_id"]})
    sglang_server.SGLangServerWrapper._monitor_server_processes = lambda self, addresses: None
    vllm_server.vLLMConfig.build_cmd = staticmethod(lambda config, **kwargs: kwargs)

    def vllm_launched(self: Any, cmd: Any, host: Any, port: Any, env: dict[str, str]) -> _Started:
        servers.append({"visible": env["CUDA_VISIBLE_DEVICES"]})
        return _Started()

    vllm_server.vLLMServerWrapper.launch_one_server = vllm_launched
    vllm_server.vLLMServerWrapper._cleanup_all_servers = lambda self: None

    answers = []
    for case in json.load(sys.stdin):
        jobs.clear()
        servers.clear()
        try:
            with tempfile.TemporaryDirectory() as scratch:
                argv = [*case["argv"], f"++cluster.fileroot={scratch}", f"++cluster.name_resolve.nfs_record_root={scratch}"]
                os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(map(str, range(case["gpus"])))
                config, _ = parse_cli_args(argv)
                local.local_main(config)
                answers.append(_ranks(config, jobs, servers, argv, sglang_server, vllm_server))
        except Exception as error:  # noqa: BLE001 - AReaL's refusal is the answer
            if os.environ.get("AREAL_DRIVER_TRACE"):
                import traceback

                traceback.print_exc()
            answers.append({"error": type(error).__name__, "message": str(error).splitlines()[0] if str(error) else ""})
    print(json.dumps(answers))


def _ranks(
    config: Any, jobs: list[tuple[str, str]], servers: list[dict[str, Any]], argv: list[str], sglang_server: Any, vllm_server: Any
) -> dict[str, Any]:
    roles: dict[str, list[dict[str, Any]]] = {}
    for name, command in jobs:
        visible = re.search(r"CUDA_VISIBLE_DEVICES=(\S*)", command)
        seen = visible.group(1).split(",") if visible else []
        if name == "llm_server":
            os.environ["CUDA_VISIBLE_DEVICES"] = ",".join(seen)
            backend = "sglang" if "sglang_server" in command else "vllm"
            try:
                (sglang_server.launch_sglang_server if backend == "sglang" else vllm_server.launch_vllm_server)(argv)
            except _Stop:
                pass
            size = config.allocation_mode and _instance_size(config.allocation_mode)
            roles["rollout"] = [
                {"gpus": [int(gpu) for gpu in seen[server["base_gpu_id"] : server["base_gpu_id"] + size]], "visible": ",".join(seen)}
                if backend == "sglang"
                else {"gpus": [int(gpu) for gpu in server["visible"].split(",")], "visible": server["visible"]}
                for server in servers
            ]
        else:
            processes = int(shlex.split(command.split("torchrun", 1)[1])[shlex.split(command.split("torchrun", 1)[1]).index("--nproc-per-node") + 1])
            roles["actor"] = [{"gpus": [int(seen[rank])], "visible": ",".join(seen)} for rank in range(processes)]
    return {"roles": roles}


def _instance_size(allocation_mode: str) -> int:
    from areal.api.alloc_mode import _AllocationMode

    return int(_AllocationMode.from_str(allocation_mode).gen_instance_size)


if __name__ == "__main__":
    main()
