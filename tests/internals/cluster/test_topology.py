"""``cluster.gpu_topology``: parsed, bounded, refused with the key at fault, carried through the
cluster's derived forms, and read from a node's sysfs."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import yaml

from solver_placement import Cluster, PlacementConfigError
from solver_placement._cluster.topology import MAX_CPUS, NodeTopology
from solver_placement._cluster.topology_reader import MAX_FILE_BYTES, read_node_topology

H100_NODE = {"numa_nodes": [0, 0, 0, 0, 1, 1, 1, 1], "numa_cpus": {0: "0-31,64-95", 1: "32-63,96-127"}, "egl_devices": [2, 3, 0, 1, 6, 7, 4, 5]}


def test_one_mapping_describes_every_node_with_gpus_and_is_shared() -> None:
    cluster = Cluster(3, [8, 8, 0], gpu_topology=H100_NODE)
    first, second, cpu_only = cluster.gpu_topology
    assert first is second and cpu_only is None
    assert first.numa_nodes == (0, 0, 0, 0, 1, 1, 1, 1) and first.egl_devices == (2, 3, 0, 1, 6, 7, 4, 5)
    assert first.numa_cpus[1] == (*range(32, 64), *range(96, 128))


def test_the_binding_of_gpus_is_their_numa_nodes_and_those_nodes_cpus() -> None:
    (topology,) = Cluster(1, 8, gpu_topology=H100_NODE).gpu_topology
    assert topology is not None
    assert topology.numa_binding([1]) == ("0", "0-31,64-95")
    assert topology.numa_binding([3, 4]) == ("0,1", "0-127")
    assert (topology.egl_device(0), topology.egl_device(5)) == (2, 7)
    assert NodeTopology().egl_device(3) == 3  # nothing stated: the CUDA id, RLinf's fallback


def test_a_list_gives_each_node_its_own_entry_or_none() -> None:
    cluster = Cluster(2, [2, 4], gpu_topology=[None, {"egl_devices": [1, 0, 3, 2]}])
    assert cluster.gpu_topology[0] is None
    assert cluster.gpu_topology[1] == NodeTopology(egl_devices=(1, 0, 3, 2))
    assert Cluster.from_config({"num_nodes": 1, "num_gpus_per_node": 2, "gpu_topology": {"egl_devices": [1, 0]}}).gpu_topology[0] is not None


@pytest.mark.parametrize(
    ("topology", "message"),
    [
        ({"numa_nodes": [0, 0]}, r"cluster.gpu_topology \(node 0, 2 GPUs\): numa_nodes needs numa_cpus"),
        ({"numa_cpus": {0: "0-3"}}, r"numa_cpus needs numa_nodes"),
        ({"numa_nodes": [0], "numa_cpus": {0: 1}}, r"numa_nodes lists 1 value but the node has 2 GPUs"),
        ({"numa_nodes": [0, 1], "numa_cpus": {0: "0-3"}}, r"numa_cpus does not list the CPUs of NUMA node 1"),
        ({"numa_nodes": [0, 1024], "numa_cpus": {0: 0}}, r"numa_nodes\[1\] is 1024, above the supported limit of 1023"),
        ({"numa_nodes": [0, 1], "numa_cpus": {0: "0-3", 1: "3-5"}}, r"CPU 3 is listed for NUMA nodes 0 and 1"),
        ({"numa_nodes": [0, 0], "numa_cpus": {0: f"0-{MAX_CPUS}"}}, r"out of range; valid ranks are 0-16383"),
        ({"numa_nodes": [0, 0], "numa_cpus": {0: 10**40}}, r"CPU 1{60}|CPU .* is out of range"),
        ({"numa_nodes": [0, 0], "numa_cpus": {"zero": 0}}, r"key 'zero' is not a NUMA node id"),
        ({"numa_nodes": [0, 0], "numa_cpus": {0: None}}, r"must be a CPU list"),
        ({"egl_devices": [1, 1]}, r"egl_devices names EGL device 1 for two GPUs"),
        ({"egl_devices": [0, 256]}, r"egl_devices\[1\] is 256, above the supported limit of 255"),
        ({"egl_devices": [0, True]}, r"egl_devices\[1\] must be an integer"),
        ({"egl_device": [0, 1]}, r"unknown key 'egl_device'; did you mean 'egl_devices'"),
        ([{"egl_devices": [0, 1]}], r"cluster.gpu_topology lists 1 entry but the cluster has 2 nodes"),
        ("0-1", r"must be a mapping or a list with one per node"),
    ],
)
def test_bad_entries_are_refused_naming_the_key(topology: object, message: str) -> None:
    with pytest.raises(PlacementConfigError, match=message):
        Cluster(2, 2, gpu_topology=topology)  # type: ignore[arg-type]  # bad input on purpose


def test_a_huge_cpu_list_is_bounded_by_the_rank_limits_and_never_expanded() -> None:
    repeated = {"numa_nodes": [0], "numa_cpus": {0: ",".join([f"0-{MAX_CPUS - 1}"] * 9_000)}}
    (topology,) = Cluster(1, 1, gpu_topology=repeated).gpu_topology  # 9,000 full ranges: one mask, not 147 M ids
    assert topology is not None and len(topology.numa_cpus[0]) == MAX_CPUS
    with pytest.raises(PlacementConfigError, match="max_rank_text"):
        Cluster(1, 1, gpu_topology={"numa_nodes": [0], "numa_cpus": {0: ",".join([f"0-{MAX_CPUS - 1}"] * 20_000)}})
    with pytest.raises(PlacementConfigError, match="max_rank_pieces"):
        Cluster(1, 1, gpu_topology={"numa_nodes": [0], "numa_cpus": {0: list(range(10_001))}})


def test_a_node_added_like_another_or_lost_keeps_the_topology_consistent() -> None:
    cluster = Cluster(2, [2, 2], gpu_topology=[{"egl_devices": [1, 0]}, None])
    grown = cluster.with_extra_node(like=0)
    assert grown.gpu_topology[2] == cluster.gpu_topology[0]
    survived = cluster.without_nodes({0})
    assert survived.gpu_topology == (None, None)  # node 0 lost its GPUs, so its entry went with them


def _fake_sys(root: Path, devices: dict[str, tuple[str, str, str]], nodes: dict[int, str]) -> Path:
    """A sysfs tree: PCI devices (vendor, class, numa_node) and NUMA nodes' cpulists."""
    for address, (vendor, pci_class, numa) in devices.items():
        device = root / "bus/pci/devices" / address
        device.mkdir(parents=True)
        (device / "vendor").write_text(vendor + "\n")
        (device / "class").write_text(pci_class + "\n")
        (device / "numa_node").write_text(numa + "\n")
    for node, cpus in nodes.items():
        (root / f"devices/system/node/node{node}").mkdir(parents=True)
        (root / f"devices/system/node/node{node}/cpulist").write_text(cpus + "\n")
    (root / "devices/system/node").mkdir(parents=True, exist_ok=True)
    (root / "devices/system/node/online").write_text(("0" if len(nodes) == 1 else f"0-{len(nodes) - 1}") + "\n")
    return root


def test_the_reader_takes_gpus_in_pci_order_with_their_numa_nodes_and_cpus(tmp_path: Path) -> None:
    sys_root = _fake_sys(tmp_path, {
        "0000:c1:00.0": ("0x10de", "0x030200", "1"),
        "0000:18:00.0": ("0x10de", "0x030200", "0"),
        "0000:19:00.0": ("0x8086", "0x020000", "0"),  # a NIC, not a GPU
        "0000:2a:00.0": ("0x10de", "0x030000", "0"),
    }, {0: "0-31,64-95", 1: "32-63,96-127"})  # fmt: skip
    entry = read_node_topology(sys_root, use_nvidia_smi=False, read_egl=False)
    assert entry == {"numa_nodes": [0, 0, 1], "numa_cpus": {0: "0-31,64-95", 1: "32-63,96-127"}}
    assert Cluster(1, 3, gpu_topology=entry).gpu_topology[0] is not None  # what it prints, the config reads


def test_the_reader_guesses_no_numa_node_the_kernel_does_not_know(tmp_path: Path) -> None:
    two_nodes = _fake_sys(tmp_path / "two", {"0000:18:00.0": ("0x10de", "0x030200", "-1")}, {0: "0-3", 1: "4-7"})
    assert read_node_topology(two_nodes, use_nvidia_smi=False, read_egl=False) == {}
    one_node = _fake_sys(tmp_path / "one", {"0000:18:00.0": ("0x10de", "0x030200", "-1")}, {0: "0-7"})
    assert read_node_topology(one_node, use_nvidia_smi=False, read_egl=False) == {"numa_nodes": [0], "numa_cpus": {0: "0-7"}}


def test_the_reader_on_this_machine_finds_what_its_sysfs_holds() -> None:
    has_nvidia = any((d / "vendor").read_text().strip() == "0x10de" for d in Path("/sys/bus/pci/devices").glob("*")) if Path("/sys/bus/pci/devices").is_dir() else False
    entry = read_node_topology(use_nvidia_smi=False)
    assert (entry is not None) == has_nvidia


def test_the_command_prints_this_nodes_entry_as_yaml() -> None:
    """``solver-placement gpu-topology`` prints what the reader finds here (no NVIDIA GPU on this
    machine or a real one: either way a YAML value the config can take)."""
    from click.testing import CliRunner

    from solver_placement._cli import main

    result = CliRunner().invoke(main, ["gpu-topology"])
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(result.stdout) == read_node_topology()


@pytest.mark.parametrize(
    ("numa", "words"),
    [("--5", "'--5', not a NUMA node id"), ("²", "holds byte 0xc2 at offset 0, not ASCII text"), ("1" * 5000, "not a NUMA node id"), ("1024", "'1024', not a NUMA node id"), ("0x1", "not a NUMA node id")],
)
def test_a_numa_node_that_is_not_an_ascii_decimal_is_refused_naming_the_file(tmp_path: Path, numa: str, words: str) -> None:
    sys_root = _fake_sys(tmp_path, {"0000:18:00.0": ("0x10de", "0x030200", numa)}, {0: "0-7", 1: "8-15"})
    with pytest.raises(PlacementConfigError, match=re.escape(words)) as caught:
        read_node_topology(sys_root, use_nvidia_smi=False, read_egl=False)
    assert "0000:18:00.0/numa_node" in str(caught.value) and len(str(caught.value)) < 500


@pytest.mark.parametrize("name", ["vendor", "numa_node"])
def test_a_sysfs_file_that_is_not_ascii_or_too_long_is_refused_naming_it(tmp_path: Path, name: str) -> None:
    sys_root = _fake_sys(tmp_path, {"0000:18:00.0": ("0x10de", "0x030200", "0")}, {0: "0-7"})
    target = sys_root / "bus/pci/devices/0000:18:00.0" / name
    target.write_bytes(b"\xff\xfe0\n")
    with pytest.raises(PlacementConfigError, match=rf"{name}: holds byte 0xff at offset 0, not ASCII text"):
        read_node_topology(sys_root, use_nvidia_smi=False, read_egl=False)
    target.write_bytes(b"0" * (MAX_FILE_BYTES + 1))
    with pytest.raises(PlacementConfigError, match=rf"{name}: holds more than {MAX_FILE_BYTES} bytes"):
        read_node_topology(sys_root, use_nvidia_smi=False, read_egl=False)


def test_a_cpu_list_that_is_not_one_is_refused_naming_the_file(tmp_path: Path) -> None:
    sys_root = _fake_sys(tmp_path, {"0000:18:00.0": ("0x10de", "0x030200", "0")}, {0: "0-7; rm -rf"})
    with pytest.raises(PlacementConfigError, match=r"node0/cpulist: holds '0-7; rm -rf', not a Linux CPU list"):
        read_node_topology(sys_root, use_nvidia_smi=False, read_egl=False)


def _fake_nvidia_smi(tmp_path: Path, script: str, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    command = bin_dir / "nvidia-smi"
    command.write_text(f"#!/bin/sh\n{script}\n")
    command.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")


@pytest.mark.parametrize(
    ("printed", "words"),
    [("echo 'No devices were found'", "printed 'No devices were found', which is not a PCI bus id"),
     ("echo '[N/A]'", "printed '[N/A]', which is not a PCI bus id"),
     ("echo '00000000:18:00.0/../../x'", "which is not a PCI bus id"),
     ("printf '\\377\\n'", "holds byte 0xff at offset 0, not ASCII text"),
     ("yes 00000000:18:00.0", "printed more than")],
)  # fmt: skip
def test_nvidia_smi_output_that_is_not_bus_ids_is_refused_naming_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, printed: str, words: str) -> None:
    _fake_nvidia_smi(tmp_path, printed, monkeypatch)
    with pytest.raises(PlacementConfigError, match=re.escape(words)) as caught:
        read_node_topology(tmp_path / "sys", read_egl=False)
    assert "nvidia-smi --query-gpu=pci.bus_id" in str(caught.value) and len(str(caught.value)) < 500


def test_nvidia_smi_bus_ids_are_read_as_sysfs_names_them_and_a_failing_one_falls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sys_root = _fake_sys(tmp_path / "sys", {"0000:18:00.0": ("0x10de", "0x030200", "1"), "0000:c1:00.0": ("0x10de", "0x030200", "0")}, {0: "0-3", 1: "4-7"})
    _fake_nvidia_smi(tmp_path, "echo 00000000:C1:00.0; echo 00000000:18:00.0", monkeypatch)
    assert read_node_topology(sys_root, read_egl=False) == {"numa_nodes": [0, 1], "numa_cpus": {0: "0-3", 1: "4-7"}}
    (tmp_path / "bin/nvidia-smi").write_text("#!/bin/sh\necho 'No devices were found'\nexit 6\n")
    assert read_node_topology(sys_root, read_egl=False) == {"numa_nodes": [1, 0], "numa_cpus": {0: "0-3", 1: "4-7"}}  # sysfs, in PCI order
