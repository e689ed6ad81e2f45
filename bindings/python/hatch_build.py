"""Hatchling build hook: puts libmysqlleader into the wheel, next to the package.

Where the library comes from, in order:

1. ``MYSQLLEADER_BUILD_LIB``: the path of a built ``libmysqlleader.so`` to package (e.g. a CI
   artefact; ``make dist`` passes the C SDK's stripped library, with its SONAME);
2. the repository this directory belongs to (``../..``): ``target/release/libmysqlleader.so``
   (or under ``$CARGO_TARGET_DIR``); when it is missing, it is built there with
   ``cargo build --release --lib``.

The copy in the wheel has its debug information stripped (``strip --strip-debug``, when
``strip`` is installed): the release profile keeps line tables, which would make the wheel
several times larger. The wheel is tagged ``py3-none-<platform>``: it holds native code but no
CPython extension, so any Python 3 of that platform can use it. The platform is this machine's
(``linux_x86_64``), which PyPI and other machines do not accept as a promise; ``make dist``
(scripts/dist.sh) links the library against glibc 2.17 (``cargo zigbuild``) and retags the wheel
with ``auditwheel repair --plat manylinux_2_17_x86_64`` (the wheel's tags become
``manylinux2014_x86_64.manylinux_2_17_x86_64``). A library built here with ``cargo build`` needs
this machine's glibc (2.34 when built on 2.36).

An editable install (``pip install -e``) copies the library into the source package instead
(``mysqlleader/libmysqlleader.so``, ignored by git).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from typing import Any, Dict, Optional

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

if sys.platform == "darwin":
    LIBRARY_FILE = "libmysqlleader.dylib"
elif sys.platform == "win32":
    LIBRARY_FILE = "mysqlleader.dll"
else:
    LIBRARY_FILE = "libmysqlleader.so"


def _repository(root: Path) -> Optional[Path]:
    """The mysqlleader Rust repository that holds this package, if there is one."""
    candidate = root.resolve().parent.parent
    cargo_toml = candidate / "Cargo.toml"
    try:
        text = cargo_toml.read_text(encoding="utf-8")
    except OSError:
        return None
    return candidate if 'name = "mysqlleader"' in text else None


def _find_or_build_library(root: Path, log: Any) -> Path:
    explicit = os.environ.get("MYSQLLEADER_BUILD_LIB")
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise RuntimeError(f"MYSQLLEADER_BUILD_LIB={explicit} is not a file")
        return path
    repo = _repository(root)
    if repo is None:
        raise RuntimeError(
            f"cannot find {LIBRARY_FILE} to put into the wheel: this package is not inside the "
            "mysqlleader repository (../../Cargo.toml), and MYSQLLEADER_BUILD_LIB is not set. "
            "Build the library (cargo build --release --lib) and set MYSQLLEADER_BUILD_LIB to it."
        )
    target_dir = Path(os.environ.get("CARGO_TARGET_DIR") or repo / "target")
    if not target_dir.is_absolute():
        target_dir = repo / target_dir
    library = target_dir / "release" / LIBRARY_FILE
    if not library.is_file():
        cargo = os.environ.get("CARGO", "cargo")
        log(f"mysqlleader: {library} is missing; building it with `{cargo} build --release --lib`")
        try:
            subprocess.run([cargo, "build", "--release", "--lib"], cwd=repo, check=True)
        except FileNotFoundError:
            raise RuntimeError(
                f"{library} is missing and cargo is not installed: install Rust (https://rustup.rs) "
                "or build the library elsewhere and set MYSQLLEADER_BUILD_LIB"
            ) from None
        if not library.is_file():
            raise RuntimeError(f"cargo build finished but {library} is still missing")
    return library


def _copy_stripped(source: Path, destination: Path, log: Any) -> None:
    shutil.copyfile(source, destination)
    os.chmod(destination, 0o755)
    strip = shutil.which("strip")
    if strip and sys.platform.startswith("linux"):
        result = subprocess.run([strip, "--strip-debug", str(destination)], capture_output=True, text=True)
        if result.returncode != 0:  # keep the unstripped copy: larger, but correct
            shutil.copyfile(source, destination)
            log(f"mysqlleader: strip failed ({result.stderr.strip()}); packaging the library as built")


class CustomBuildHook(BuildHookInterface):  # type: ignore[misc]
    """Adds the native library to the wheel and marks the wheel platform-specific."""

    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: Dict[str, Any]) -> None:
        if self.target_name != "wheel":
            return
        log = self.app.display_info
        library = _find_or_build_library(Path(self.root), log)
        log(f"mysqlleader: packaging {library}")
        if version == "editable":
            _copy_stripped(library, Path(self.root) / "mysqlleader" / LIBRARY_FILE, log)
        else:
            self._tmp = tempfile.mkdtemp(prefix="mysqlleader-wheel-")
            staged = Path(self._tmp) / LIBRARY_FILE
            _copy_stripped(library, staged, log)
            build_data["force_include"][str(staged)] = f"mysqlleader/{LIBRARY_FILE}"
        build_data["pure_python"] = False
        platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
        build_data["tag"] = f"py3-none-{platform}"

    def finalize(self, version: str, build_data: Dict[str, Any], artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
