"""A reservation made from a Solution gives each WorkerGroup the spec's TP x PP layout (no Ray
runtime needed: the layout is chosen before any actor exists)."""

from solver_placement import Cluster, PlacementSpec, solve
from solver_placement._ray_launch.launch_plan import stated_ray_nodes, to_ray
from solver_placement._ray_launch.reserve import Reservation


def reservation(source_is_solution: bool) -> Reservation:
    cluster = Cluster(2, 8)
    solution = solve(PlacementSpec.build(cluster, {
        "actor": {"processes": 16, "tensor_parallel_size": 2, "pipeline_parallel_size": 4},
        "rollout": "0-15",
    }))  # fmt: skip
    placements = solution.placements_by_component()
    plan = to_ray(placements, cluster, stated_ray_nodes(cluster))
    return Reservation(plan, [], placements, None, solution if source_is_solution else None)


def test_a_solution_gives_the_groups_real_pipeline_coordinates() -> None:
    chosen = reservation(True)._layout("actor", None)
    layout = chosen["layout"]
    assert (chosen["tp_size"], layout.tp_size, layout.pp_size, layout.dp_size) == (2, 2, 4, 2)
    assert [layout.rank_info(rank).pp_rank for rank in range(8)] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert reservation(True)._layout("rollout", None)["layout"].pp_size == 1


def test_an_explicit_tp_size_or_records_alone_give_no_pipeline() -> None:
    assert reservation(True)._layout("actor", 4) == {"tp_size": 4}
    assert reservation(False)._layout("actor", None) == {"tp_size": 1}
