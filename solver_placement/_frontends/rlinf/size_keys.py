"""The model-parallel sizes a job config states, and the error about them in the user's keys.

A model-parallel placement turns ``actor.model.tensor_model_parallel_size``,
``rollout.tensor_parallel_size`` and ``rollout.pipeline_parallel_size`` into packed strategies
and relations, and the stages below can only name what they were handed: a segment such as
``"0-15:0-0"`` or a rank range the user never wrote, with no way back to the key. So when a
layout fails, the placement asks for the nearest sizes that place (``_solver/nearest_sizes``:
each one tried by solving, never guessed) and, when some exist, says the failure in the keys the user wrote, with
those sizes as the fix. When no change of the stated sizes places the job, the sizes are not
the cause and the original error stands.
"""

from __future__ import annotations

from collections.abc import Sequence

from solver_placement._errors import InfeasiblePlacementError, PlacementError, Statement
from solver_placement._solver.nearest_sizes import Sizes, StatedSize, fix_text, nearest_fit

__all__ = ["ACTOR_TP", "ROLLOUT_PP", "ROLLOUT_TP", "Sizes", "StatedSize", "divisor_size", "in_user_keys", "nearest_fit"]

ACTOR_TP = "actor.model.tensor_model_parallel_size"
ROLLOUT_TP = "rollout.tensor_parallel_size"
ROLLOUT_PP = "rollout.pipeline_parallel_size"

def divisor_size(key: str, value: int, component: str, gpus: int) -> StatedSize:
    """A size that splits a component's ``gpus``: a value that fits divides them, so only divisors are tried."""
    return StatedSize(key, value, component, tuple(value for value in range(1, gpus + 1) if gpus % value == 0))


def in_user_keys(error: PlacementError, stated: Sequence[StatedSize], fix: Sizes, cluster: str) -> PlacementError:
    """``error`` said in the stated keys, with ``fix`` (sizes that were solved and place the job).

    An infeasible layout's statements name segments the layout wrote, so they are replaced by one
    statement resting on the keys the fix changes, which keeps what the rule says of each process
    (with RLinf's phrase for it, which code written against RLinf matches); a config error's message already names its
    sizes and keeps its words (code written against RLinf matches them), the fix appended.
    """
    changed, hint = fix_text(stated, fix)
    if not isinstance(error, InfeasiblePlacementError):
        if error.args and isinstance(error.args[0], str):
            error.args = (f"{error.args[0]}; {hint}", *error.args[1:])
        return error
    stated_text = " and ".join(f"{size.key}={size.value}" for size in changed)
    rules = tuple(dict.fromkeys(statement.rule for statement in error.statements if statement.rule))
    component = changed[0].component
    # what the rule says of each of the component's processes (and RLinf's phrase for it), without the segment
    said = next((statement.of_each for statement in error.statements if statement.of_each and statement.component == component), "")
    why = f": each {component} process {said}" if said else ""
    text = f"{component}: {stated_text} leaves the job no placement on this cluster ({cluster}){why}; {hint}"
    statement = Statement(text, component, tuple(size.key for size in changed), rules[0] if rules else "")
    return InfeasiblePlacementError(f"no placement exists: {text}", [statement])
