"""What a component's name tells verl's export (``export``): the roles its workers serve, the model
server replica it is (``rm``, ``teacher``, ``rollout_reward_colocate_<rank>``, ...), and whether
verl can start those roles as the solution has them.

verl maps each role to one pool and starts it once, and from 0.9 starts the reward model, the
teacher and rollout replicas only as worker groups of their own; a name that says otherwise
(``rm+rm``, ``actor+rm``) is refused here, before any pool is built, so every later step may take a
model's replicas from the solution. A rank in a name is read as verl writes one (ASCII digits, no
leading zero) and bounded by ``max_components`` before it is converted.
"""

from __future__ import annotations

from solver_placement._errors import VerlExportError, shown
from solver_placement._frontends.verl.resource_pools import FUSED
from solver_placement._frontends.verl.servers import LONE_KEY, REWARD_REPLICA, TEACHER_REPLICA
from solver_placement._limits import current
from solver_placement._limits.numbers import decimal
from solver_placement._solver.solution import Solution

#: verl's roles that get a pool of their own (0.9 and later), and the pool's name.
OWN_POOLS = {"rm": "reward_pool", "teacher": "teacher_pool"}
#: verl's name of a standalone rollout replica (``rollout_standalone_<rank>``), before the rank.
STANDALONE = "rollout_standalone_"
#: What a refused rank may have broken beyond the form (each replica is a component).
RANK_BOUND = ", ASCII digits up to max_components"


def server_of(component: str) -> tuple[str, str, int] | None:
    """(role, teacher key, rank) of a component verl starts as a model server replica, else None."""
    if component in OWN_POOLS:
        return component, LONE_KEY if component == "teacher" else "", 0
    for prefix, role in ((REWARD_REPLICA, "rm"), (TEACHER_REPLICA, "teacher")):
        if component.startswith(prefix):
            text, _, key = component[len(prefix) :].partition("_")
            rank = rank_of(text)
            if rank is None or (role == "teacher") != bool(key):
                named = f"{prefix}<rank>{'_<key>' if role == 'teacher' else ''}"
                raise refused(component, "verl's pools", f"is not a replica verl names ({named}, rank 0, 1, ...){RANK_BOUND}")
            return role, key, rank
    return None


def rank_of(text: str) -> int | None:
    """The rank in a replica's name as verl writes it (``0``, ``1``, ... without leading zeros), at
    most ``max_components`` (each replica is a component); None for any other text (``²``, 5,000 digits)."""
    return decimal(text, current().max_components, canonical=True)


def roles_of(component: str) -> list[str]:
    server = server_of(component)
    return [server[0]] if server else component.split(FUSED)


def check_roles(solution: Solution, version: str) -> None:
    """Refuse components whose roles verl's mapping cannot hold as the solution has them: a role
    named twice (``rm+rm``, or by two components: verl maps a role to one pool and starts it once),
    and a model server's role or replica fused into another worker (``actor+rm``, ``teacher+teacher``):
    verl 0.9 and later start the reward model and the teacher only as replicas of their own
    (0.4.1 fuses ``rm`` into the trainer's workers, which it exports so)."""
    named_by: dict[str, str] = {}
    for component in solution.components:
        if server_of(component) is not None:
            continue  # a replica: its model's replicas are numbered and sized in _replicas
        parts = component.split(FUSED)
        for part in parts:
            if part in named_by or parts.count(part) > 1:
                where = "twice" if parts.count(part) > 1 else f"and so does {shown(named_by[part])}"
                raise refused(component, "verl's pools", f"serves role {shown(part)} {where}; verl maps each role to one pool and starts it once")
            named_by[part] = component
            fused_server = len(parts) > 1 and (is_server_name(part) or part.startswith(STANDALONE)) and not (version == "0.4.1" and part == "rm")
            if fused_server:
                why = (
                    f"fuses {shown(part)} into one worker with {', '.join(shown(other) for other in parts if other != part)}; verl {version} starts "
                    "a reward model, a teacher and a rollout replica as worker groups of their own (a component rm, teacher, "
                    "rollout_reward_colocate_<rank>, ...), never fused into another role's workers"
                )
                raise refused(component, "verl's pools", why + (" (0.4.1 fuses rm: export to 0.4.1)" if part == "rm" else ""))


def is_server_name(part: str) -> bool:
    """Whether a role is a model server's (``rm``, ``teacher``, or one of their replicas' names)."""
    return part in OWN_POOLS or part.startswith((REWARD_REPLICA, TEACHER_REPLICA))



def refused(component: str, rule: str, why: str, joint: str = " ") -> VerlExportError:
    """The refusal of ``component`` under ``rule``: ``component 'x' <why>``."""
    return VerlExportError(component, rule, f"component {shown(component)}{joint}{why}")
