"""Hostile input to what the machine and the process hand the library (issue 35 items 3, 8, 9):
``env_configs`` variables that would change what the plan decided or choose the code a worker runs,
``limits.override`` from threads at once, and sysfs files and ``nvidia-smi`` output the topology
reader must treat as untrusted text. Cases and promises as in ``surfaces.py``.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

from internals.topology_files import reading
from surfaces import Case, Run, _case, placement

from solver_placement import limits, solve


def _env_group(env_vars: Any, label: str = "g") -> dict[str, Any]:
    return placement({"actor": "0-15"}, node_groups=[{"label": label, "node_ranks": "0-1", "env_configs": [{"node_ranks": "all", "env_vars": env_vars}]}])


def env_configs() -> Iterator[Case]:
    """Item 3: a node group's env_vars may not set what the plan sets, pick other devices, or choose code."""
    klass = "env_configs variables"
    planned = ("NUMA_CPUS", "NUMA_NODES", "RANK", "LOCAL_RANK", "MASTER_PORT", "EGL_DEVICE_ID", "HARDWARE_CONFIGS")
    for name in planned:
        yield _case(klass, f"plan's {name}", lambda n=name: _env_group({n: "0"}, label="trainers"), "PlacementConfigError", "'trainers'", repr(name), "the plan sets")
    for name in ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL", "RAY_EXPERIMENTAL_NOSET_HIP_VISIBLE_DEVICES"):
        yield _case(klass, f"devices {name}", lambda n=name: _env_group({n: "1"}), "PlacementConfigError", repr(name), "'g'", "devices beside the plan's")
    yield _case(klass, "CUDA_DEVICE_ORDER FASTEST_FIRST", lambda: _env_group({"CUDA_DEVICE_ORDER": "FASTEST_FIRST"}), "PlacementConfigError", "'CUDA_DEVICE_ORDER'", "PCI_BUS_ID")
    yield _case(klass, "OMP_NUM_THREADS, the plan's default a group may replace", lambda: _env_group({"OMP_NUM_THREADS": "32"}), "placed")
    yield _case(klass, "CUDA_DEVICE_ORDER PCI_BUS_ID", lambda: _env_group({"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}), "placed")
    for name in ("PYTHONPATH", "LD_PRELOAD", "PYTHONHOME", "PYTHONUSERBASE", "PYTHONBREAKPOINT", "LD_AUDIT", "PYTHONSTARTUP"):
        yield _case(klass, f"code {name}", lambda n=name: _env_group({n: "/tmp/x"}), "PlacementConfigError", repr(name), "python_interpreter_path")
    yield _case(klass, "RLinf list form PYTHONPATH", lambda: _env_group([{"NCCL_DEBUG": "INFO"}, {"PYTHONPATH": "/x"}]), "PlacementConfigError", "'PYTHONPATH'")
    yield _case(klass, "lower-case pythonpath", lambda: _env_group({"pythonpath": "/x", "NCCL_DEBUG": "INFO"}), "placed")
    yield _case(klass, "allowed NCCL, LD_LIBRARY_PATH, PATH", lambda: _env_group({"NCCL_DEBUG": "INFO", "LD_LIBRARY_PATH": "/opt/cuda/lib64", "PATH": "/opt/bin:/usr/bin"}), "placed")


def _overlapping_overrides() -> None:
    """Two threads overriding different limits with overlapping blocks, the first to enter leaving
    first; the process's limits must be what they were, each thread must have seen only its own
    (else a RuntimeError, which escapes the error family and fails the case)."""
    before = limits.current()
    both_in, first_left = threading.Barrier(2), threading.Event()
    seen: dict[str, tuple[int, int]] = {}

    def run(name: str, changes: dict[str, int]) -> None:
        with limits.override(**changes):
            both_in.wait(timeout=10)
            if name == "b":
                first_left.wait(timeout=10)
            seen[name] = (limits.current().max_nodes, limits.current().max_depth)
        if name == "a":
            first_left.set()

    threads = [threading.Thread(target=run, args=("a", {"max_nodes": 7})), threading.Thread(target=run, args=("b", {"max_depth": 9}))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    expected = {"a": (7, before.max_depth), "b": (before.max_nodes, 9)}
    if seen != expected or limits.current() != before:
        raise RuntimeError(f"threads saw {seen} (expected {expected}); the process is left on {limits.current()}")


def limit_threads() -> Iterator[Case]:
    """Item 8: ``limits.override`` from two threads at once never leaves the process changed."""
    klass = "limit overrides in threads"
    yield _case(klass, "two overlapping blocks", lambda: Run(_overlapping_overrides), "placed")
    yield _case(klass, "an override that raises, then a solve", lambda: Run(_raising_override), "placed")


def _raising_override() -> Any:
    before = limits.current()
    try:
        with limits.override(max_nodes=1):
            raise KeyError("inside the block")
    except KeyError:
        if limits.current() != before:
            raise RuntimeError("the override outlived its block") from None
    return solve(placement({"actor": "0-15"}))


def _device(numa: bytes, vendor: bytes = b"0x10de\n") -> dict[str, bytes]:
    device = "bus/pci/devices/0000:18:00.0"
    return {f"{device}/vendor": vendor, f"{device}/class": b"0x030200\n", f"{device}/numa_node": numa,
            "devices/system/node/node0/cpulist": b"0-7\n", "devices/system/node/online": b"0-1\n"}  # fmt: skip


def _reading(files: dict[str, bytes], nvidia_smi: str | None = None) -> Run:
    return Run(reading(files, nvidia_smi))


def topology_reader() -> Iterator[Case]:
    """Item 9: sysfs files and ``nvidia-smi`` output are untrusted text, refused naming the file or command."""
    klass = "topology reader"
    for label, numa in {"--5": b"--5\n", "superscript": "²\n".encode(), "5000 digits": b"9" * 5_000, "1e3": b"1e3\n"}.items():
        yield _case(klass, f"numa_node {label}", lambda n=numa: _reading(_device(n)), "PlacementConfigError", "numa_node")
    yield _case(klass, "vendor not UTF-8", lambda: _reading(_device(b"0\n", vendor=b"\xff\xfe\n")), "PlacementConfigError", "vendor", "not ASCII")
    yield _case(klass, "a valid tree, nvidia-smi failing", lambda: _reading(_device(b"0\n"), nvidia_smi="echo 'No devices were found'; exit 6"), "placed")
    yield _case(klass, "numa_node of 1 MiB", lambda: _reading(_device(b"0" * (1 << 20))), "PlacementConfigError", "numa_node", "more than")
    for label, printed in {"No devices were found": "echo 'No devices were found'", "[N/A]": "echo '[N/A]'", "a path": "echo '0000:18:00.0/../../../etc'",
                           "latin-1": "printf '\\351\\n'", "endless": "yes 00000000:18:00.0"}.items():  # fmt: skip
        yield _case(klass, f"nvidia-smi {label}", lambda p=printed: _reading({}, nvidia_smi=p), "PlacementConfigError", "nvidia-smi --query-gpu=pci.bus_id")


def machine_surfaces() -> list[Case]:
    """Every case of this module, in a fixed order."""
    makers = (env_configs, limit_threads, topology_reader)
    return [case for maker in makers for case in maker()]
