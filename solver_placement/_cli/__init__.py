"""Command line: ``solver-placement solve|plot|explain|auto|launch|export FILE [KEY=VALUE]...``.

One module per command (``solve_commands``, ``plot_command``, ``auto_command``,
``launch_command``, ``export_command``, ``topology_command``); what they share: reading FILE and its overrides (``config_input``, ``live_cluster``), placing a
job with the RLinf class its task type asks for (``placing``), printing (``output``, ``text``),
the exit statuses (``exit_codes``) and the progress display (``progress``). ``app`` holds the
group, where every failure becomes its exit status.
"""

from solver_placement._cli.app import main

__all__ = ["main"]
