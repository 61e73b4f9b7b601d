"""The exit status of every command, one per kind of answer, so scripts can branch without parsing text.

2 stays "bad input" because click already exits 2 on a usage error; 70 and 74 are sysexits'
EX_SOFTWARE and EX_IOERR, the codes other Unix tools use for a bug and for a failed read or write;
130 is 128 + SIGINT, what a shell reports for a command that Ctrl-C ended.
"""

from __future__ import annotations

from enum import IntEnum

from solver_placement._errors import InfeasiblePlacementError, LaunchError, PlacementError, SolverTimeoutError
from solver_placement._prediction.findings import FrameworkLayoutError


class ExitCode(IntEnum):
    """What the process exit status means."""

    #: The answer is there: a valid placement, a written figure, a plan, a search result. Also a
    #: reader that closed the pipe early (``| head -1``): it got what it asked for.
    OK = 0
    #: The input is wrong: a usage error, a missing FILE, a bad key, value, rank text or override.
    BAD_INPUT = 2
    #: The solver proved that no placement exists (``explain`` says why), or a framework's own
    #: layout would hang, split an engine or give two ranks one GPU (``predict``, ``explain FRAMEWORK``).
    INFEASIBLE = 3
    #: The time limit passed before a placement was found or proven impossible: unknown, not "no".
    TIMEOUT = 4
    #: Ray could not reserve or start the plan, or a launched process landed elsewhere.
    LAUNCH_FAILED = 5
    #: A bug in solver_placement, not in the input: please report it with the config.
    INTERNAL = 70
    #: A file could not be read or written (missing output directory, permissions, full disk).
    IO = 74
    #: Ctrl-C: the command stopped early, after removing what it had started on Ray.
    INTERRUPTED = 130


def exit_code_for(error: PlacementError) -> ExitCode:
    """The status for a refused input: the most specific kind of answer the error stands for."""
    if isinstance(error, (InfeasiblePlacementError, FrameworkLayoutError)):
        return ExitCode.INFEASIBLE
    if isinstance(error, SolverTimeoutError):
        return ExitCode.TIMEOUT
    if isinstance(error, LaunchError):
        return ExitCode.LAUNCH_FAILED
    return ExitCode.BAD_INPUT


#: The table shown at the end of every ``--help`` (``\b`` keeps click from rewrapping it).
EXIT_CODES_HELP = "\b\nExit status:\n" + "\n".join(
    f"  {code.value:<3} {line}"
    for code, line in (
        (ExitCode.OK, "done: valid placement, figure written, plan or search result printed"),
        (ExitCode.BAD_INPUT, "bad input: usage, missing FILE, bad key, value, rank text or override"),
        (ExitCode.INFEASIBLE, "infeasible: no placement exists (proven; explain FILE says why), or predict/explain FRAMEWORK found errors"),
        (ExitCode.TIMEOUT, "timeout: no answer within the time limit (unknown, not infeasible)"),
        (ExitCode.LAUNCH_FAILED, "launch failed: Ray could not reserve or start it, or a process landed elsewhere"),
        (ExitCode.INTERNAL, "internal error: a bug in solver_placement; please report it with the config"),
        (ExitCode.IO, "I/O error: a file could not be read or written"),
        (ExitCode.INTERRUPTED, "interrupted: Ctrl-C, after removing what the command started on Ray"),
    )
)
