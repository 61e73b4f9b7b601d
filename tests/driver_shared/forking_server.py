"""Serve one framework driver to many cases: import the driver once (with it the framework, which
is most of a driver run's time: some 5 s of CPU for verl), then fork a child per case, so every
case starts from the same freshly imported state (drivers patch the framework's classes in place,
which a child's changes cannot leak into the next case) and pays only for its own work.

Protocol, one JSON object per line: the test writes ``{"argv": [...], "env": {...}, "out": path,
"err": path}``; the child runs the driver's ``main()`` with ``sys.argv`` set to the driver and
``argv``, the variables of ``env`` set (a ``null`` value unsets one), its stdout and stderr in
those files; the server answers ``{"status": N}``, the child's exit status as a process would
give it. Usage: ``python forking_server.py DRIVER.py`` with the driver's ``PYTHONPATH``; the server
ends when its stdin closes."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import traceback
from types import ModuleType
from typing import Any


def _load(path: str) -> ModuleType:
    """Import the driver as a module (its ``main()`` guarded by ``__name__``), so its imports run
    here, once."""
    spec = importlib.util.spec_from_file_location("served_driver", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _child(driver: ModuleType, request: dict[str, Any]) -> None:
    """Run one case in the forked child and leave with its exit status (never returns)."""
    code = 1
    try:
        for fd, path in ((1, request["out"]), (2, request["err"])):
            handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(handle, fd)
            os.close(handle)
        sys.argv = [str(driver.__file__), *request["argv"]]
        for name, value in request["env"].items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        driver.main()
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve(path: str) -> None:
    driver = _load(path)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(driver, request)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"status": os.waitstatus_to_exitcode(status)}), flush=True)


if __name__ == "__main__":
    serve(sys.argv[1])
