"""Read this node's ``cluster.gpu_topology`` entry where the machine tells it.

Run on each node, as the workers will run there (same container, same ``CUDA_VISIBLE_DEVICES``)::

    solver-placement gpu-topology        # prints the node's entry as YAML

* GPUs, in CUDA id order: ``nvidia-smi --query-gpu=pci.bus_id`` when it is installed (it lists
  the GPUs this container was given, by index), else the NVIDIA display and 3D controllers of
  ``/sys/bus/pci/devices``, by PCI address. Both are PCI bus order, which is CUDA's order under
  ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` and on nodes of one GPU model (CUDA's default order puts
  faster GPUs first: set the variable on mixed nodes).
* ``numa_nodes``: each GPU's ``/sys/bus/pci/devices/<address>/numa_node``; ``numa_cpus``: each such
  node's ``/sys/devices/system/node/node<N>/cpulist``. The kernel says ``-1`` when it does not
  know a device's node; on a machine with a single NUMA node that node is the answer, otherwise
  the NUMA keys are left out rather than guessed.
* ``egl_devices``: asked of the EGL driver (``libEGL.so.1``, ``EGL_EXT_device_query``): each EGL
  device's ``EGL_CUDA_DEVICE_NV`` attribute names the CUDA id it renders on. Left out when the
  driver cannot say it for every GPU (no NVIDIA EGL, e.g. Mesa only), the entry then meaning "EGL
  index = CUDA id", RLinf's fallback.

Nothing here is needed to place or launch: it writes the config a person then checks in.
"""

from __future__ import annotations

import ctypes
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from solver_placement._cluster.topology import MAX_EGL_DEVICES

NVIDIA_VENDOR = "0x10de"
#: PCI classes of a GPU: VGA-compatible (0x0300) and 3D (0x0302) controllers.
GPU_CLASSES = ("0x0300", "0x0302")
#: ``eglQueryDeviceAttribEXT`` attribute: the CUDA device an EGL device renders on (EGL_NV_device_cuda).
EGL_CUDA_DEVICE_NV = 0x323A
#: Seconds ``nvidia-smi`` may take before the reader falls back to sysfs.
NVIDIA_SMI_TIMEOUT_S = 30.0


def read_node_topology(sys_root: Path = Path("/sys"), *, use_nvidia_smi: bool = True, read_egl: bool = True) -> dict[str, Any] | None:
    """This node's ``gpu_topology`` entry (``numa_nodes``, ``numa_cpus``, ``egl_devices``, each only
    when the machine tells it), or None when no NVIDIA GPU is found."""
    gpus = (_nvidia_smi_gpus() if use_nvidia_smi else None) or _sysfs_gpus(sys_root)
    if not gpus:
        return None
    entry: dict[str, Any] = {}
    numa = _numa_nodes(sys_root, gpus)
    if numa is not None:
        entry["numa_nodes"] = numa
        entry["numa_cpus"] = {node: _read(sys_root / "devices/system/node" / f"node{node}" / "cpulist") for node in sorted(set(numa))}
    egl = _egl_devices(len(gpus)) if read_egl else None
    if egl is not None:
        entry["egl_devices"] = egl
    return entry


def _nvidia_smi_gpus() -> list[str] | None:
    """PCI addresses of the GPUs ``nvidia-smi`` lists, by index (None when it cannot say)."""
    command = shutil.which("nvidia-smi")
    if command is None:
        return None
    try:
        result = subprocess.run(
            [command, "--query-gpu=pci.bus_id", "--format=csv,noheader"], capture_output=True, text=True, timeout=NVIDIA_SMI_TIMEOUT_S
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if result.returncode != 0:
        return None
    return [_sysfs_address(line.strip()) for line in result.stdout.splitlines() if line.strip()]


def _sysfs_address(bus_id: str) -> str:
    """``nvidia-smi``'s ``00000000:18:00.0`` as sysfs names it, ``0000:18:00.0``."""
    domain, _, rest = bus_id.lower().partition(":")
    return f"{int(domain, 16):04x}:{rest}"


def _sysfs_gpus(sys_root: Path) -> list[str]:
    """PCI addresses of NVIDIA GPUs in ``/sys/bus/pci/devices``, in address order."""
    devices = sys_root / "bus/pci/devices"
    if not devices.is_dir():
        return []
    return sorted(
        device.name
        for device in devices.iterdir()
        if _read(device / "vendor") == NVIDIA_VENDOR and _read(device / "class").startswith(GPU_CLASSES)
    )


def _numa_nodes(sys_root: Path, gpus: list[str]) -> list[int] | None:
    """Each GPU's NUMA node, or None when the kernel does not know one on a multi-node machine."""
    nodes = []
    for address in gpus:
        raw = _read(sys_root / "bus/pci/devices" / address / "numa_node")
        nodes.append(int(raw) if raw.lstrip("-").isdigit() else -1)
    if all(node >= 0 for node in nodes):
        return nodes
    online = _read(sys_root / "devices/system/node/online")
    return [0] * len(gpus) if online == "0" else None


def _egl_devices(count: int) -> list[int] | None:
    """The EGL index of CUDA devices ``0..count-1``, or None unless the driver names all of them."""
    try:
        egl = ctypes.CDLL("libEGL.so.1")
    except OSError:
        return None
    lookup = egl.eglGetProcAddress
    lookup.argtypes, lookup.restype = [ctypes.c_char_p], ctypes.c_void_p
    list_address, attribute_address = lookup(b"eglQueryDevicesEXT"), lookup(b"eglQueryDeviceAttribEXT")
    if not list_address or not attribute_address:
        return None
    handles = ctypes.POINTER(ctypes.c_void_p)
    list_devices = ctypes.CFUNCTYPE(ctypes.c_uint, ctypes.c_int, handles, ctypes.POINTER(ctypes.c_int))(list_address)
    attribute = ctypes.CFUNCTYPE(ctypes.c_uint, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_ssize_t))(attribute_address)
    found = (ctypes.c_void_p * MAX_EGL_DEVICES)()
    listed = ctypes.c_int(0)
    if not list_devices(MAX_EGL_DEVICES, found, ctypes.byref(listed)):
        return None
    index_of: dict[int, int] = {}
    for index in range(min(listed.value, MAX_EGL_DEVICES)):
        cuda = ctypes.c_ssize_t(-1)
        if attribute(found[index], EGL_CUDA_DEVICE_NV, ctypes.byref(cuda)) and cuda.value >= 0:
            index_of.setdefault(cuda.value, index)
    if any(gpu not in index_of for gpu in range(count)):
        return None
    return [index_of[gpu] for gpu in range(count)]


def _read(path: Path) -> str:
    """A sysfs file's text, stripped ('' when it cannot be read)."""
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def main() -> None:
    """Print this node's entry (or say there is none) for ``cluster.gpu_topology``."""
    entry = read_node_topology()
    if entry is None:
        print("# no NVIDIA GPU found on this node: its gpu_topology entry is null", file=sys.stderr)
        print("null")
        return
    print(yaml.safe_dump(entry, default_flow_style=None, sort_keys=False), end="")


if __name__ == "__main__":
    main()
