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

#: verl's roles that get a pool of their own (reward_pool from 0.6.1, teacher_pool from 0.8.0), and the pool's name.
OWN_POOLS = {"rm": "reward_pool", "teacher": "teacher_pool"}
#: Releases whose trainer fuses the reward model into the trainer's workers (no replicas).
FUSED_RM = ("0.4.1", "0.5.0", "0.6.1")
#: Other frameworks' names (RLinf's components) for a verl role whose meaning is the same.
ALIASES = {"reward": "rm"}
#: verl's name of a standalone rollout replica (``rollout_standalone_<rank>``), before the rank.
STANDALONE = "rollout_standalone_"
#: What a refused rank may have broken beyond the form (each replica is a component).
RANK_BOUND = ", ASCII digits up to max_components"


def server_of(component: str) -> tuple[str, str, int] | None:
    """(role, teacher key, rank) of a component verl starts as a model server replica, else None."""
    component = ALIASES.get(component, component)
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
    (0.4.1 to 0.6.1 fuse ``rm`` into the trainer's workers, which they export so)."""
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
            fused_server = len(parts) > 1 and (is_server_name(part) or part.startswith(STANDALONE)) and not (version in FUSED_RM and part == "rm")
            if fused_server:
                why = (
                    f"fuses {shown(part)} into one worker with {', '.join(shown(other) for other in parts if other != part)}; verl {version} starts "
                    "a reward model, a teacher and a rollout replica as worker groups of their own (a component rm, teacher, "
                    "rollout_reward_colocate_<rank>, ...), never fused into another role's workers"
                )
                raise refused(component, "verl's pools", why + (f" ({', '.join(FUSED_RM)} fuse rm: export to one of them)" if part == "rm" else ""))


def is_server_name(part: str) -> bool:
    """Whether a role is a model server's (``rm``, ``teacher``, or one of their replicas' names)."""
    return part in OWN_POOLS or part.startswith((REWARD_REPLICA, TEACHER_REPLICA))



def refused(component: str, rule: str, why: str, joint: str = " ") -> VerlExportError:
    """The refusal of ``component`` under ``rule``: ``component 'x' <why>``."""
    return VerlExportError(component, rule, f"component {shown(component)}{joint}{why}")


#: The trainer's roles on global_pool each release's driver can map (the reward model and the
#: teacher, and standalone rollout replicas, are checked by the rules above): 0.4.1 to 0.6.1 map
#: ``rm`` there too; 0.7.1's legacy workers map ``ref`` beside ``actor_rollout``, its model-engine
#: workers and 0.8.0 on ``actor_rollout_ref``; 0.9.1 and main map ``actor`` and ``ref`` without
#: hybrid rollout replicas.
TRAINER_ROLES = {
    **dict.fromkeys(FUSED_RM, ("actor_rollout", "critic", "ref", "rm")),
    "0.7.1": ("actor_rollout", "actor_rollout_ref", "critic", "ref"),
    **dict.fromkeys(("0.8.0", "0.9.0"), ("actor_rollout", "actor_rollout_ref", "critic")),
    **dict.fromkeys(("0.9.1", "main"), ("actor_rollout", "actor_rollout_ref", "actor", "ref", "critic")),
}
#: The roles that are verl's actor (one of them on global_pool, always).
ACTOR_ROLES = ("actor_rollout", "actor_rollout_ref", "actor")


def trainer_roles(components: list[str], version: str, hybrid: bool) -> dict[str, str]:
    """verl's role -> component for the trainer's components on global_pool (the model servers'
    replicas left out). RLinf's ``actor`` and ``rollout`` on the same GPUs are verl's
    ``actor_rollout``; ``actor`` alone is it too while rollout runs in the actor's workers
    (``hybrid``); ``rollout`` alone has no verl role. Anything else verl's trainer does not map is
    refused naming the component."""
    by_role: dict[str, str] = {}
    for component in components:
        if server_of(component) is None:
            by_role.update(dict.fromkeys(roles_of(component), component))
    if "rollout" in by_role:
        if "actor" not in by_role:
            raise refused(
                by_role["rollout"], "verl's pools",
                "serves role 'rollout', which verl has not as a role of its own: its rollout runs inside the actor's workers (place the "
                "component on the actor's GPUs, or name it actor_rollout), or, from 0.9.0, as standalone replicas rollout_standalone_<rank>",
            )  # fmt: skip
        by_role.pop("rollout")
        by_role["actor_rollout"] = by_role.pop("actor")
    if "actor" in by_role and hybrid:
        by_role["actor_rollout"] = by_role.pop("actor")
    allowed = TRAINER_ROLES[version]
    for role, component in by_role.items():
        if role not in allowed:
            raise refused(component, "verl's pools", f"serves role {shown(role)}, which verl {version}'s trainer does not map to global_pool (it maps {', '.join(allowed)})")
    actors = [role for role in by_role if role in ACTOR_ROLES]
    if len(actors) != 1:
        component = by_role[actors[1]] if actors else components[0]
        held = f"serves {' and '.join(actors)}" if actors else "is on global_pool, where no component serves verl's actor"
        raise refused(component, "verl's pools", f"{held}; verl's trainer starts one actor role on global_pool ({', '.join(role for role in ACTOR_ROLES if role in allowed)})")
    if "ref" in by_role and actors[0] == "actor_rollout_ref":
        raise refused(by_role["ref"], "verl's pools", "serves role 'ref' beside 'actor_rollout_ref', which holds the reference policy itself; verl maps one of them")
    if "ref" in by_role and actors[0] == "actor_rollout" and "actor_rollout_ref" in allowed and version != "0.7.1":
        raise refused(by_role["ref"], "verl's pools", f"serves role 'ref' beside 'actor_rollout'; verl {version} holds the reference policy in the actor's workers (name the actor's component actor_rollout_ref)")
    return by_role
