#!/usr/bin/env bash
# The Python binding's tests (bindings/python), against a real server.
#
#   scripts/test-python.sh [PYTEST ARGS...]
#
# 1. builds the release library when needed (scripts/build-tests.sh, as `make test`: a no-op after it);
# 2. makes a virtualenv under target/python-venv (python3 -m venv) and installs into it, from
#    PyPI, pytest, PyMySQL, aiomysql (a driver of asyncio, for the fence), SQLAlchemy with its
#    asyncio extra (the fence on its connections and sessions; not a dependency of the package),
#    mypy and the build backend (hatchling), then the package itself from bindings/python — as a
#    wheel that carries libmysqlleader.so, as a user gets it;
# 3. runs `mypy --strict -p mysqlleader` on the package's sources (0 errors, or it fails), then
#    examples/python/elect.py with the installed package (it must exit 0), then pytest on
#    bindings/python/tests against MYSQLLEADER_TEST_URL. When that is not set, it
#    runs itself again under scripts/testdb.sh, which starts a throwaway mariadbd and stops it.
#
# Exits non-zero when anything fails, including pytest collecting no test (its exit code 5).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

if [ -z "${MYSQLLEADER_TEST_URL:-}" ]; then
  exec scripts/testdb.sh run "$0" "$@"
fi

say() { echo "test-python: $*" >&2; }

# 1. The library the wheel will carry.
# The same build as `make build` (every target: a no-op after it). A narrower one (--lib) would
# resolve other features, rebuild the library in place, and pull it from under the test parts
# running beside this one (scripts/test-all.sh).
say "scripts/build-tests.sh"
scripts/build-tests.sh

# 2. The virtualenv, with the package installed from its wheel.
venv=$root/target/python-venv
python=${PYTHON:-python3}
if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
  say "creating $venv"
  rm -rf "$venv"
  "$python" -m venv "$venv"
fi
export PIP_DISABLE_PIP_VERSION_CHECK=1
# The test tools and the build backend come from PyPI once; later runs reuse them (offline too).
# (hatchling 1.27 or later: pyproject.toml's license-files, PEP 639.)
if ! "$venv/bin/python" -c 'import pytest, pymysql, aiomysql, sqlalchemy, greenlet, mypy
from importlib.metadata import version as v
assert tuple(int(x) for x in v("hatchling").split(".")[:2]) >= (1, 27)' >/dev/null 2>&1; then
  say "installing pytest, PyMySQL, aiomysql, SQLAlchemy, mypy and hatchling into $venv"
  "$venv/bin/python" -m pip install --quiet "pytest>=7" "PyMySQL>=1.0" "aiomysql>=0.2" "SQLAlchemy[asyncio]>=2.0" "mypy>=1.0" "hatchling>=1.27"
fi
# The package, built into a wheel by its own build hook (which bundles target/release's library).
# --force-reinstall: the version number stays the same while the library changes.
say "installing bindings/python into $venv"
"$venv/bin/python" -m pip install --quiet --no-build-isolation --force-reinstall --no-deps "$root/bindings/python"

# The tests must use what was installed: not the source tree, not another library.
unset MYSQLLEADER_LIB PYTHONPATH
export MYSQLLEADER_TEST_INSTALLED=1
"$venv/bin/python" -I - <<'PY'
import os, mysqlleader
lib = mysqlleader.library_path()
here = os.path.dirname(mysqlleader.__file__)
assert os.path.dirname(lib) == here, f"the installed package loaded {lib}, not its own copy in {here}"
print(f"test-python: mysqlleader {mysqlleader.__version__} with {lib} (library {mysqlleader.version()})")
PY

# The type hints: `mypy --strict` on the sources must report nothing (the package ships py.typed).
say "mypy --strict -p mysqlleader (bindings/python)"
(cd "$root/bindings/python" && "$venv/bin/python" -m mypy --strict --no-incremental --cache-dir /dev/null -p mysqlleader) \
  || { say "mypy --strict -p mysqlleader reported errors"; exit 1; }

# The user example, with the installed package: elects, makes one fenced write, resigns, exit 0.
say "running examples/python/elect.py against the test server"
MYSQLLEADER_URL=$MYSQLLEADER_TEST_URL "$venv/bin/python" -I "$root/examples/python/elect.py" --migrate \
  || { say "examples/python/elect.py failed"; exit 1; }

# 3. The tests, run by the venv's own interpreter: not by its `pytest` script, whose #! line
# names the interpreter of wherever the venv was made (a copied target/ ran another checkout's
# venv). `-I` keeps the working directory (bindings/python, the source tree) off sys.path, so
# `import mysqlleader` finds the installed package; it also ignores PYTHON* variables.
status=0
(cd "$root/bindings/python" && "$venv/bin/python" -I -m pytest -p no:cacheprovider -ra "$@") || status=$?
case $status in
  0) say "passed" ;;
  5) say "pytest collected no tests: that is a failure"; exit 1 ;;
  *) say "failed (pytest exit status $status)"; exit "$status" ;;
esac
