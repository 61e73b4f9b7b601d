"""``python -m solver_placement ...``: the same command line as ``solver-placement``."""

from solver_placement._cli import main

if __name__ == "__main__":
    main(prog_name="solver-placement")
