"""A framework's own sources for a differential test: a copy the user names in a variable, else
the pinned wheel (checked by its SHA-256) installed into pytest's cache.

The differential tests run verl's, OpenRLHF's, AReaL's and SkyRL's own code; pinning the wheel by
hash means the code compared is exactly the release the readers were written against. Installing
is the same for all four, only the wheels and pip's options differ, so it lives here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

#: Seconds pip may wait for the index before the download counts as out of reach.
INDEX_TIMEOUT = 30


@dataclass(frozen=True)
class Pinned:
    """One release to install: it lands in ``<package>-<release>`` (holding ``<package>/``), from
    the wheels given as (name, version, SHA-256), with pip's extra ``options``.

    ``ignore_requires_python`` installs a wheel whose metadata asks for a newer Python than the
    one running the tests (``skyrl-train`` 0.3.1 says 3.12) when the code the test runs does not
    need it: pip would refuse the wheel, and the test imports only its placement modules.
    """

    package: str
    release: str
    wheels: tuple[tuple[str, str, str], ...]
    options: tuple[str, ...] = ()
    ignore_requires_python: bool = False

    @property
    def pip_options(self) -> tuple[str, ...]:
        """The extra options as pip takes them."""
        return (*self.options, *(("--ignore-requires-python",) if self.ignore_requires_python else ()))


def install(cache: Path, pinned: Pinned) -> Path | str:
    """The release's sources under ``cache``, installed unless already there, or why pip could
    not install them. Each install goes to a directory of its own first and is renamed into
    place, so test workers running at once never see half an install; the one that renames
    second throws its copy away."""
    installed = cache / f"{pinned.package}-{pinned.release}"
    if (installed / pinned.package).is_dir():
        return installed
    staging = Path(tempfile.mkdtemp(prefix=f".{pinned.package}-{pinned.release}-", dir=cache))
    try:
        requirement = staging / "requirement.txt"
        requirement.write_text("".join(f"{name}=={version} --hash=sha256:{sha}\n" for name, version, sha in pinned.wheels))
        pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-compile", "--no-cache-dir", "--disable-pip-version-check",
               "--require-hashes", *pinned.pip_options, "--timeout", str(INDEX_TIMEOUT), "--retries", "1", "--target", str(staging / "site"),
               "-r", str(requirement)]  # fmt: skip
        result = subprocess.run(pip, capture_output=True, text=True, timeout=10 * INDEX_TIMEOUT)
        if result.returncode != 0:
            errors = [line for line in result.stderr.splitlines() if line.startswith("ERROR")] or result.stderr.splitlines()[-1:]
            return f"pip could not install {pinned.package} {pinned.release} ({' '.join(errors)[-500:]})"
        try:
            (staging / "site").rename(installed)
        except OSError:
            if not (installed / pinned.package).is_dir():
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return installed


class Sources:
    """A session's sources of one framework (``whose``: "verl's", ...): the variable's copy, else
    the pinned install in pytest's cache (a temporary directory when the cache is off). A failed
    install is tried once a session: in CI (``CI=true``) the test fails, as CI must run the
    framework's own code; elsewhere it is skipped, the index being out of reach."""

    def __init__(self, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, package: str, whose: str) -> None:
        cache_of_pytest = getattr(request.config, "cache", None)
        self.cache = cache_of_pytest.mkdir(package) if cache_of_pytest is not None else tmp_path_factory.mktemp(package)
        self.whose = whose
        self.installs: dict[Pinned, Path | str] = {}

    def get(self, variable: str, pinned: Pinned) -> Path:
        given = os.environ.get(variable)
        if given:
            return Path(given)
        if pinned not in self.installs:
            self.installs[pinned] = install(self.cache, pinned)
        got = self.installs[pinned]
        if isinstance(got, Path):
            return got
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{got}; CI must run {self.whose} own code, so it needs the package index")
        pytest.skip(f"{got}: is the package index out of reach? Set {variable} to {self.whose} sources to run without it")
