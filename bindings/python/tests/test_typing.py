"""Issue 26, item 9: the package's type hints, checked by mypy (``--strict``): the package
itself is clean, a misspelt or mistyped argument of ``mysqlleader.aio.Elector`` is an error (as
of the sync ``Elector``), and a fenced transaction's ``term`` is an ``int``, not Optional.

mypy is one of the test tools (scripts/test-python.sh installs it); this test needs no server."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path
from typing import Dict, List

import pytest

import mysqlleader

if os.environ.get("MYSQLLEADER_TEST_INSTALLED"):
    import mypy  # noqa: F401  (scripts/test-python.sh installs it: a missing mypy is a failure)
else:
    pytest.importorskip("mypy")


def mypy_env() -> Dict[str, str]:
    """mypy finds the package where Python found it: installed (site-packages, with py.typed),
    or in a source tree, through MYPYPATH."""
    env = dict(os.environ)
    env.pop("MYPYPATH", None)
    parent = Path(mysqlleader.__file__).resolve().parent.parent
    installed = {Path(p).resolve() for p in (sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"])}
    if parent not in installed:
        env["MYPYPATH"] = str(parent)
    return env


def run_mypy(args: List[str], cwd: Path) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--cache-dir", os.devnull, *args],
        cwd=cwd, env=mypy_env(), capture_output=True, text=True, timeout=600,
    )


def test_mypy_strict_on_the_package_is_clean(tmp_path: Path) -> None:
    result = run_mypy(["-p", "mysqlleader"], tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_rejects_wrong_elector_arguments_and_knows_the_fenced_term(tmp_path: Path) -> None:
    program = tmp_path / "use.py"
    program.write_text(textwrap.dedent('''
        import mysqlleader
        import mysqlleader.aio

        async def wrong(url: str) -> None:
            mysqlleader.aio.Elector(url, "s", leas=2)            # line 6: no such keyword
            mysqlleader.aio.Elector(url, "s", lease="2s")        # line 7: not a Duration
            mysqlleader.Elector(url, "s", lease="2s")            # line 8: not a Duration

        async def right(url: str, client: mysqlleader.Client) -> int:
            async with mysqlleader.aio.Elector(url, "s", node_id="a", lease=2, retry_jitter=0.1) as e:
                tx = await e.fenced()
                a: int = tx.term                                 # an int: no Optional
            with mysqlleader.Elector(client, "s", lease=2) as s:
                b: int = s.fenced().term
            c: int = client.fenced("s", "a", 1).term
            d = client.transaction().term
            reveal_type(d)                                        # line 18: still Optional
            return a + b + c
        '''), encoding="utf-8")
    result = run_mypy([str(program)], tmp_path)
    out = result.stdout
    errors = [line for line in out.splitlines() if ": error:" in line]
    lines = sorted({int(line.split(":")[1]) for line in errors})
    assert lines == [6, 7, 8], out
    assert 'Unexpected keyword argument "leas"' in out, out
    revealed = re.search(r'use\.py:18: note: Revealed type is "(.*)"', out)
    assert revealed and revealed.group(1).replace("builtins.", "") in ("int | None", "Union[int, None]"), out
