"""``python -m solver_placement.cli ...``: the same command line as ``solver-placement``."""

from solver_placement.cli.app import main

if __name__ == "__main__":
    main(prog_name="solver-placement")
