"""Finding the library: next to the package first, then MYSQLLEADER_LIB, then the system's
library path, and an error that lists every place it looked. Each case runs in a fresh Python
process with a copy of the package's Python files."""

from __future__ import annotations

import ctypes.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict, Optional

import pytest

import mysqlleader

PACKAGE = Path(mysqlleader.__file__).resolve().parent
SOURCE_PACKAGE = Path(__file__).resolve().parents[1] / "mysqlleader"

PROBE = """
import mysqlleader
try:
    print("LOADED", mysqlleader.library_path(), mysqlleader.version())
except mysqlleader.LibraryNotFoundError as e:
    print("ERROR", e)
"""


def copy_package(where: Path, with_library: bool) -> Path:
    target = where / "mysqlleader"
    target.mkdir()
    for file in PACKAGE.glob("*.py"):
        shutil.copy(file, target / file.name)
    if with_library:
        shutil.copy(mysqlleader.library_path(), target / "libmysqlleader.so")
    return target


def probe(pythonpath: Path, lib_env: Optional[str]) -> str:
    env: Dict[str, str] = {k: v for k, v in os.environ.items() if k not in ("MYSQLLEADER_LIB", "LD_LIBRARY_PATH", "PYTHONPATH")}
    env["PYTHONPATH"] = str(pythonpath)
    if lib_env is not None:
        env["MYSQLLEADER_LIB"] = lib_env
    result = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120,
                            cwd=str(pythonpath))
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_next_to_the_package_comes_first(tmp_path: Path) -> None:
    package = copy_package(tmp_path, with_library=True)
    out = probe(tmp_path, "/nonexistent/libmysqlleader.so")
    assert out.startswith(f"LOADED {package / 'libmysqlleader.so'} ")


def test_then_mysqlleader_lib_as_a_file_or_a_directory(tmp_path: Path) -> None:
    copy_package(tmp_path, with_library=False)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(mysqlleader.library_path(), elsewhere / "libmysqlleader.so")
    assert probe(tmp_path, str(elsewhere / "libmysqlleader.so")).startswith(f"LOADED {elsewhere / 'libmysqlleader.so'} ")
    assert probe(tmp_path, str(elsewhere)).startswith(f"LOADED {elsewhere / 'libmysqlleader.so'} ")


def test_the_error_lists_every_place(tmp_path: Path) -> None:
    if ctypes.util.find_library("mysqlleader"):
        pytest.skip("a libmysqlleader is installed on the system library path of this machine")
    package = copy_package(tmp_path, with_library=False)
    out = probe(tmp_path, "/nonexistent/libmysqlleader.so")
    assert out.startswith("ERROR ")
    assert f"next to the package: {package / 'libmysqlleader.so'}: no such file" in out
    assert "$MYSQLLEADER_LIB=/nonexistent/libmysqlleader.so: /nonexistent/libmysqlleader.so: no such file" in out
    assert "ctypes.util.find_library" in out and "found nothing" in out
    assert "the system library path (dlopen): libmysqlleader.so:" in out
    assert "cargo build --release --lib" in out

    out = probe(tmp_path, None)
    assert "$MYSQLLEADER_LIB: not set" in out

    not_a_library = tmp_path / "libmysqlleader.so.txt"
    not_a_library.write_text("not a library")
    out = probe(tmp_path, str(not_a_library))
    assert out.startswith("ERROR ") and f"$MYSQLLEADER_LIB={not_a_library}: {not_a_library}:" in out


def test_the_installed_package_carries_the_library() -> None:
    """Run by scripts/test-python.sh against the wheel it installed (MYSQLLEADER_TEST_INSTALLED=1)."""
    if os.environ.get("MYSQLLEADER_TEST_INSTALLED") != "1":
        pytest.skip("not testing an installed wheel (scripts/test-python.sh sets MYSQLLEADER_TEST_INSTALLED=1)")
    assert PACKAGE != SOURCE_PACKAGE.resolve(), "the tests imported the source tree, not the installed package"
    assert Path(mysqlleader.library_path()) == PACKAGE / "libmysqlleader.so"
    assert (PACKAGE / "py.typed").is_file()
