"""``python -m solver_placement._cli ...``: the same command line as ``solver-placement``."""

from solver_placement._cli.app import main

if __name__ == "__main__":
    main(prog_name="solver-placement")
