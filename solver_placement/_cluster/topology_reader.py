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

What sysfs and ``nvidia-smi`` print is read as untrusted text (a container may bind-mount its own
``/sys``, ``PATH`` may hold another ``nvidia-smi``): each file at most :data:`MAX_FILE_BYTES`, the
command's output at most :data:`MAX_OUTPUT_BYTES`, ASCII only, numbers as ASCII decimals
(``_limits/numbers.py``), bus ids and CPU lists by their grammar; anything else is a
:class:`PlacementConfigError` naming the file or command and what it held (quoted bounded), never
Python's ``ValueError`` or ``UnicodeDecodeError``, and never a path built from unchecked text.

Nothing here is needed to place or launch: it writes the config a person then checks in.
"""

from __future__ import annotations

import ctypes
import os
import re
import selectors
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from solver_placement._cluster.topology import MAX_EGL_DEVICES, MAX_NUMA_NODES
from solver_placement._errors import InternalError, PlacementConfigError, shown
from solver_placement._limits.numbers import decimal

NVIDIA_VENDOR = "0x10de"
#: PCI classes of a GPU: VGA-compatible (0x0300) and 3D (0x0302) controllers.
GPU_CLASSES = ("0x0300", "0x0302")
#: ``eglQueryDeviceAttribEXT`` attribute: the CUDA device an EGL device renders on (EGL_NV_device_cuda).
EGL_CUDA_DEVICE_NV = 0x323A
#: Seconds ``nvidia-smi`` may take before the reader falls back to sysfs.
NVIDIA_SMI_TIMEOUT_S = 30.0
#: Bytes read of one sysfs file (a CPU list of 4,096 CPUs written one by one is about 20 kB).
MAX_FILE_BYTES = 64 << 10
#: Bytes read of ``nvidia-smi``'s output (a bus id line is 17 bytes; 4,096 GPUs take 70 kB).
MAX_OUTPUT_BYTES = 256 << 10
#: ``nvidia-smi``'s PCI bus id: domain (4 or 8 hex digits), bus, device, function.
BUS_ID = re.compile(r"([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\.([0-7])")
#: A Linux CPU list as sysfs writes it (``0-31,64-95``).
CPU_LIST = re.compile(r"[0-9]+(?:-[0-9]+)?(?:,[0-9]+(?:-[0-9]+)?)*")


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
        entry["numa_cpus"] = {node: _cpu_list(sys_root / "devices/system/node" / f"node{node}" / "cpulist") for node in sorted(set(numa))}
    egl = _egl_devices(len(gpus)) if read_egl else None
    if egl is not None:
        entry["egl_devices"] = egl
    return entry


def _nvidia_smi_gpus() -> list[str] | None:
    """PCI addresses of the GPUs ``nvidia-smi`` lists, by index (None when it cannot say)."""
    command = shutil.which("nvidia-smi")
    if command is None:
        return None
    where = f"{command} --query-gpu=pci.bus_id"
    output = _bounded_output([command, "--query-gpu=pci.bus_id", "--format=csv,noheader"], where)
    if output is None:
        return None
    text = _ascii(output, where)
    return [_sysfs_address(line.strip(), where) for line in text.splitlines() if line.strip()]


def _bounded_output(argv: list[str], where: str) -> bytes | None:
    """What ``argv`` prints on stdout when it exits 0 within :data:`NVIDIA_SMI_TIMEOUT_S` (None when it
    cannot start, fails or hangs: the reader then asks sysfs), read at most :data:`MAX_OUTPUT_BYTES`
    (``subprocess.run`` would keep whatever a broken or foreign command prints)."""
    try:
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        return None
    chunks: list[bytes] = []
    size, deadline = 0, time.monotonic() + NVIDIA_SMI_TIMEOUT_S
    with process, selectors.DefaultSelector() as selector:
        stream = process.stdout
        if stream is None:  # Popen was asked for a pipe: only a broken interpreter gives none
            raise InternalError(f"{where}: Popen gave no stdout pipe")
        selector.register(stream, selectors.EVENT_READ)
        while size <= MAX_OUTPUT_BYTES and (left := deadline - time.monotonic()) > 0:
            if not selector.select(left):
                continue
            chunk = os.read(stream.fileno(), 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if process.poll() is None:
            process.kill()
        finished_in_time = process.wait() == 0 and time.monotonic() < deadline
    if size > MAX_OUTPUT_BYTES:
        raise PlacementConfigError(f"{where}: printed more than {MAX_OUTPUT_BYTES} bytes, not a list of GPU bus ids")
    return b"".join(chunks) if finished_in_time else None


def _sysfs_address(bus_id: str, where: str) -> str:
    """``nvidia-smi``'s ``00000000:18:00.0`` as sysfs names it, ``0000:18:00.0`` (a path component:
    only text of the bus id grammar becomes one)."""
    match = BUS_ID.fullmatch(bus_id)
    if match is None:
        raise PlacementConfigError(f"{where}: printed {shown(bus_id)}, which is not a PCI bus id like 00000000:18:00.0")
    domain, bus, device, function = match.groups()
    return f"{int(domain, 16):04x}:{bus.lower()}:{device.lower()}.{function}"


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
    nodes = [_numa_node(sys_root / "bus/pci/devices" / address / "numa_node") for address in gpus]
    if all(node >= 0 for node in nodes):
        return nodes
    online = _read(sys_root / "devices/system/node/online")
    return [0] * len(gpus) if online == "0" else None


def _numa_node(path: Path) -> int:
    """A device's ``numa_node``: an ASCII decimal below :data:`MAX_NUMA_NODES`, or ``-1`` (the kernel
    does not know; so is a missing file)."""
    raw = _read(path)
    if raw in ("", "-1"):
        return -1
    node = decimal(raw, MAX_NUMA_NODES - 1)
    if node is None:
        raise PlacementConfigError(f"{path}: holds {shown(raw)}, not a NUMA node id (ASCII digits 0-{MAX_NUMA_NODES - 1}, or -1)")
    return node


def _cpu_list(path: Path) -> str:
    """A NUMA node's ``cpulist`` (``0-31,64-95``), as the config will read it."""
    raw = _read(path)
    if CPU_LIST.fullmatch(raw) is None:
        raise PlacementConfigError(f"{path}: holds {shown(raw)}, not a Linux CPU list like 0-31,64-95")
    return raw


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
    """A sysfs file's ASCII text, stripped; '' when it cannot be opened or read (a device without
    the attribute, a file the container hides: the caller's "unknown"). At most :data:`MAX_FILE_BYTES`
    are read: a larger file is refused, not read to its end."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return ""
    if len(data) > MAX_FILE_BYTES:
        raise PlacementConfigError(f"{path}: holds more than {MAX_FILE_BYTES} bytes, more than any sysfs attribute the reader asks for")
    return _ascii(data, str(path)).strip()


def _ascii(data: bytes, where: str) -> str:
    """``data`` as text when it is ASCII (what the kernel and ``nvidia-smi`` write here), else refused
    naming the first byte that is not."""
    try:
        return data.decode("ascii")
    except UnicodeDecodeError as error:
        raise PlacementConfigError(
            f"{where}: holds byte 0x{data[error.start]:02x} at offset {error.start}, not ASCII text (of {len(data)} bytes)"
        ) from None


def main(sys_root: Path = Path("/sys")) -> None:
    """Print this node's entry (or say there is none) for ``cluster.gpu_topology``, reading sysfs
    at ``sys_root`` (another node's copy, a container's mount)."""
    entry = read_node_topology(sys_root)
    if entry is None:
        print("# no NVIDIA GPU found on this node: its gpu_topology entry is null", file=sys.stderr)
        print("null")
        return
    print(yaml.safe_dump(entry, default_flow_style=None, sort_keys=False), end="")


if __name__ == "__main__":
    main()
