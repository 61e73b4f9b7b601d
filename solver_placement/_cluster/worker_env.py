"""Which environment variables a node group's ``env_configs`` may give its workers, decided per name.

A worker's environment holds what the plan decided (its devices, ranks, rendezvous, CPU binding)
and its node group's per-node settings (NCCL interfaces, caches, library paths). A setting that
would change the first, or choose code the worker runs, is refused while the config is read,
naming the group, the variable and why, instead of reaching every worker (SECURITY.md states each
decision):

* **Set by the plan** (:data:`PLANNED`): the launch sets them for every process from the solved
  records, so a config's value would be silently replaced, or, where the plan sets one only for
  some components (``NUMA_CPUS``, the EGL variables), would bind or steer every other worker of
  the group (``NUMA_CPUS: 0`` bound every thread of every worker to CPU 0). The component keys
  ``numa_bind`` and ``egl_device`` are how a config asks for them.
* **Other devices** (:data:`DEVICE_SELECTION`): every vendor's device variable and Ray's flag for
  it, plus the runtimes' other filters (``ROCR_VISIBLE_DEVICES``, ``GPU_DEVICE_ORDINAL``): beside
  the planned variable they would hide or renumber the planned GPUs. ``CUDA_DEVICE_ORDER`` is
  allowed as ``PCI_BUS_ID`` only, the order the plan's GPU ids are in (``nvidia-smi``'s and Ray's).
* **Code** (:data:`CODE`): variables that make every worker load code before it runs its own
  (``PYTHONPATH`` imports a ``sitecustomize.py``, ``LD_PRELOAD`` a library); the one field of a
  config that chooses code is ``python_interpreter_path``.

``OMP_NUM_THREADS`` is the plan's default, not its decision (:data:`GROUP_MAY_SET`): the launch
sets it to the process's CPUs, and a group's value replaces that, as in RLinf, whose scheduler
gives workers their node group's variables and never sets this one (``rlinf/scheduler/cluster/cluster.py``
``allocate``, release v0.3 at 05054318, lines 698-711; its example
``isaaclab_franka_stack_cube_ppo_gr00t.yaml`` raises it to 32 for numpy-heavy rollout workers).

Every other name passes as configured, ``PATH`` and ``LD_LIBRARY_PATH`` included: they say where
programs and libraries the worker asks for by name are found, which is what per-node settings of
machines with different CUDA or driver installs are for (SECURITY.md says what that trusts).
"""

from __future__ import annotations

from solver_placement._errors import PlacementConfigError, shown

#: Variables the launch sets for every process (the table of docs/ray.md), for every accelerator type.
PLANNED = frozenset({
    "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_LOCAL_RANK", "NODE_LOCAL_WORLD_SIZE", "NODE_RANK",
    "CLUSTER_NODE_RANK", "MASTER_ADDR", "MASTER_PORT", "NODE_GROUP_LABEL", "LOCAL_HARDWARE_RANKS",
    "HARDWARE_TYPE", "HARDWARE_CONFIGS", "MUJOCO_EGL_DEVICE_ID", "EGL_DEVICE_ID", "NUMA_NODES", "NUMA_CPUS",
})  # fmt: skip
#: Variables the launch sets by default, which a node group's ``env_configs`` may set instead.
GROUP_MAY_SET = frozenset({"OMP_NUM_THREADS"})
#: The device variable of each accelerator type the launch knows, which it sets from the record.
DEVICE_VARIABLES = ("CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ASCEND_RT_VISIBLE_DEVICES", "ZE_AFFINITY_MASK")
#: Variables that choose devices beside the planned one, with what each does.
DEVICE_SELECTION = {
    **{name: "the launch sets it to the planned GPUs (or leaves a device variable of another vendor unset)" for name in DEVICE_VARIABLES},
    **{f"RAY_EXPERIMENTAL_NOSET_{name}": "Ray's flag for the device variable, which the launch sets" for name in DEVICE_VARIABLES},
    "ROCR_VISIBLE_DEVICES": "ROCm filters the GPUs below HIP_VISIBLE_DEVICES with it, hiding or renumbering the planned ones",
    "GPU_DEVICE_ORDINAL": "ROCm's older device filter, hiding or renumbering the planned GPUs",
}
#: The one value of ``CUDA_DEVICE_ORDER`` a config may set: the order of the plan's GPU ids.
DEVICE_ORDER, PLANNED_ORDER = "CUDA_DEVICE_ORDER", "PCI_BUS_ID"
#: Variables that make every worker load code the config names, with how.
CODE = {
    "PYTHONPATH": "every worker imports a sitecustomize.py, and any module, found there first",
    "PYTHONHOME": "every worker takes its standard library from there",
    "PYTHONUSERBASE": "every worker runs the usercustomize.py and .pth files of that user site",
    "PYTHONSTARTUP": "names a file Python runs at start",
    "PYTHONBREAKPOINT": "names a callable Python imports at breakpoint()",
    "PYTHONEXECUTABLE": "names the executable Python reports and re-launches",
    "LD_PRELOAD": "every process of the worker loads that library first",
    "LD_AUDIT": "every process of the worker loads that library as a dynamic-linker audit module",
}


def check_env_var(name: str, value: str, where: str) -> None:
    """Refuse ``name`` in a node group's ``env_vars`` (``where`` names the group and entry) when it
    is set by the plan, selects devices or chooses code (the module docstring)."""
    if name in PLANNED:
        why = "the plan sets it for every worker from the solved placement (numa_bind and egl_device are the component keys that ask for the NUMA and EGL ones)"
    elif name in DEVICE_SELECTION:
        why = f"it would choose devices beside the plan's: {DEVICE_SELECTION[name]}"
    elif name == DEVICE_ORDER and value != PLANNED_ORDER:
        why = f"the plan's GPU ids are in PCI bus order (nvidia-smi's and Ray's); only {DEVICE_ORDER}={PLANNED_ORDER} keeps them, not {shown(value)}"
    elif name in CODE:
        why = f"it chooses code every worker runs ({CODE[name]}); a config chooses code only through python_interpreter_path (SECURITY.md)"
    else:
        return
    raise PlacementConfigError(f"{where}: env var {name!r} cannot be set in env_configs: {why}")
