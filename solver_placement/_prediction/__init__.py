"""Frameworks' own layouts: predicted rank by rank, checked node by node, improved by the solver.

The core of the framework front ends that take a launch command line or config rather than a
placement (OpenRLHF, slime, ROLL, ...): the records of a predicted layout (``layout.py``), the
checks every layout gets (``checks.py``), what a failed check says and how its fix is written
(``findings.py``), why the ranks land where they do and what each finding does
(``explanation.py``: the front ends' rules joined with the layout), the user's input before a framework reads it (``launch_input.py``), fixes
applied to a command line (``flags.py``), the registry of frameworks (``frameworks.py``) and the
calls that tie them together (``predict.py``).
"""
