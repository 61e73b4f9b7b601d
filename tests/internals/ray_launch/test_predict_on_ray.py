"""``predict`` on a live Ray cluster: the framework's layout predicted for the nodes Ray reports
(``Cluster.from_ray()`` in Python, ``--ray ADDRESS`` on the command line), here a small node
beside a large one, where slime's default ``--num-gpus-per-node 8`` tells engines wrong hosts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from solver_placement import Cluster, FindingKind, predict
from solver_placement._cli.app import main
from solver_placement._ray_launch.session import LocalRayCluster

pytestmark = pytest.mark.ray

LIVE = Cluster(num_nodes=3, num_gpus_per_node=[4, 4, 4])
FLAGS = ["--actor-num-gpus-per-node", "4", "--rollout-num-gpus", "8", "--rollout-num-gpus-per-engine", "4"]


@pytest.fixture(scope="module")
def live() -> Iterator[LocalRayCluster]:
    with LocalRayCluster(LIVE, cpus_per_node=4) as local:
        local.connect()
        yield local


def test_a_prediction_on_the_live_cluster_reads_its_nodes(live: LocalRayCluster) -> None:
    prediction = predict("slime", FLAGS, cluster=Cluster.from_ray())
    assert list(prediction.cluster.gpus_per_node) == [4, 4, 4]
    assert {rank.node for rank in prediction.of_role("rollout")} == {1, 2}
    assert [finding.kind for finding in prediction.errors] == [FindingKind.WRONG_DEVICE]
    assert prediction.errors[0].fix == (("--num-gpus-per-node", "4"),)


def test_the_command_line_predicts_on_the_cluster_at_the_address(live: LocalRayCluster) -> None:
    result = CliRunner().invoke(main, ["predict", "slime", "--ray", live.address, "--", *FLAGS])
    assert result.exit_code == 3, result.output
    assert result.output.splitlines()[0].endswith("on 3 nodes, 4 GPUs each")
    assert "fix: --num-gpus-per-node 4" in result.output
