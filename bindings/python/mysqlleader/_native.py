"""The C ABI of libmysqlleader, declared for ctypes, and the loader that finds the library.

The declarations of ``include/mysqlleader.h`` (the constants, the enums, the structs, the
callback types and the prototype of every function) are in ``_capi.py``, generated from the
header by ``tests/ffi_header.rs`` in the repository (which fails when it drifts); this module
re-exports them.

The library is loaded on first use (so ``import mysqlleader`` never fails), from, in order:

1. next to this package: ``mysqlleader/libmysqlleader.so`` (what the wheel carries);
2. the file named by the environment variable ``MYSQLLEADER_LIB`` (or that name inside it,
   when it names a directory);
3. the system's library path: ``ctypes.util.find_library("mysqlleader")``, then plain
   ``libmysqlleader.so``, then ``libmysqlleader.so.<abi>`` (the C SDK's SONAME, ``0.<minor>``
   before 1.0) (``LD_LIBRARY_PATH``, ``ld.so.cache``, ...).

A library whose major.minor version differs from the header this module mirrors is skipped
(the struct layouts could differ). When nothing loads, :class:`LibraryNotFoundError` lists every
place that was tried and why it failed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import sys
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

# ---------------------------------------------------------------------------------------------
# The declarations of the header: constants, enums, structs, callback types, PROTOTYPES.

from ._capi import *  # noqa: F401,F403  (generated; re-exported: the package imports them from here)
from ._capi import LOG_CALLBACK, PROTOTYPES, VERSION_MAJOR, VERSION_MINOR

U64_MAX = 2**64 - 1


# ---------------------------------------------------------------------------------------------
# The loader.

if sys.platform == "darwin":
    LIBRARY_FILE = "libmysqlleader.dylib"
elif sys.platform == "win32":
    LIBRARY_FILE = "mysqlleader.dll"
else:
    LIBRARY_FILE = "libmysqlleader.so"

#: The environment variable that names the library (a file, or a directory holding it).
LIBRARY_ENV = "MYSQLLEADER_LIB"


_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_lib_path: Optional[str] = None


def _candidates() -> List[Tuple[str, Optional[str], Optional[str]]]:
    """Every place to try, in order: (where, what to dlopen or None, why it was not tried)."""
    out: List[Tuple[str, Optional[str], Optional[str]]] = []
    beside = Path(__file__).resolve().parent / LIBRARY_FILE
    out.append(("next to the package", str(beside), None))
    env = os.environ.get(LIBRARY_ENV)
    if env:
        path = Path(env)
        if path.is_dir():
            path = path / LIBRARY_FILE
        out.append((f"${LIBRARY_ENV}={env}", str(path), None))
    else:
        out.append((f"${LIBRARY_ENV}", None, "not set"))
    found = ctypes.util.find_library("mysqlleader")
    if found:
        out.append(("the system library path (ctypes.util.find_library)", found, None))
    else:
        out.append(("the system library path (ctypes.util.find_library)", None, "found nothing"))
    out.append(("the system library path (dlopen)", LIBRARY_FILE, None))
    if sys.platform.startswith("linux"):
        # The C SDK installed without its development link (libmysqlleader.so): the name the
        # library's SONAME gives, libmysqlleader.so.<abi> (0.<minor> before 1.0).
        abi = f"{VERSION_MAJOR}" if VERSION_MAJOR else f"0.{VERSION_MINOR}"
        runtime_name = f"{LIBRARY_FILE}.{abi}"
        out.append(("the system library path (dlopen)", runtime_name, None))
    return out


def _try_load(target: str) -> ctypes.CDLL:
    """Loads one candidate and declares every prototype; raises with the reason it is unusable."""
    lib = ctypes.CDLL(target)
    missing = [name for name in PROTOTYPES if not hasattr(lib, name)]
    if missing:
        raise OSError(f"lacks {', '.join(missing[:3])}{' ...' if len(missing) > 3 else ''}: too old")
    for name, (restype, argtypes) in PROTOTYPES.items():
        function = getattr(lib, name)
        function.restype = restype
        function.argtypes = argtypes
    version = (lib.mysqlleader_version() or b"").decode("utf-8", "replace")
    parts = version.split(".")
    try:
        major, minor = int(parts[0]), int(parts[1])
    except (IndexError, ValueError):
        raise OSError(f"reports an unreadable version {version!r}") from None
    if (major, minor) != (VERSION_MAJOR, VERSION_MINOR):
        raise OSError(
            f"is version {version}, but this package speaks the C ABI "
            f"{VERSION_MAJOR}.{VERSION_MINOR}.x"
        )
    return lib


def library() -> ctypes.CDLL:
    """The loaded libmysqlleader (loaded on the first call).

    Raises:
        mysqlleader.LibraryNotFoundError: nothing loaded; the message lists every attempt.
    """
    global _lib, _lib_path
    lib = _lib
    if lib is not None:
        return lib
    with _lock:
        if _lib is not None:
            return _lib
        attempts: List[str] = []
        for where, target, skipped in _candidates():
            if target is None:
                attempts.append(f"  - {where}: {skipped}")
                continue
            if os.sep in target and not os.path.exists(target):
                attempts.append(f"  - {where}: {target}: no such file")
                continue
            try:
                loaded = _try_load(target)
            except OSError as e:
                attempts.append(f"  - {where}: {target}: {e}")
                continue
            _lib, _lib_path = loaded, _resolved_path(target)
            _route_logs(loaded)
            return loaded
        from ._errors import LibraryNotFoundError  # here: _errors imports this module

        raise LibraryNotFoundError(
            "mysqlleader: could not load the native library "
            f"{LIBRARY_FILE}. Looked in, in this order:\n"
            + "\n".join(attempts)
            + "\nBuild it with `cargo build --release --lib` in the mysqlleader repository and "
            "reinstall the package (pip install ./bindings/python, which bundles it), or set "
            f"{LIBRARY_ENV} to the path of {LIBRARY_FILE}."
        )


# The library's log records go to the standard ``logging`` module, logger ``mysqlleader`` (a
# failed login, an unreachable server, a missing schema: once per change of condition;
# leadership started and stopped). Installed once per process, when the library is loaded; the
# ctypes callback is kept here for the life of the process. Records arrive on the library's
# threads; ``logging`` is thread-safe.
#
# The library gives each record as text, "MESSAGE key=value key=value ..." (src/ffi/log.rs). The
# record's message stays that text; its fields are also attributes of the LogRecord (``extra``):
# ``service``, ``node`` (str) and ``term`` (int), each ``None`` when the record has none, and
# ``mysqlleader_fields``, a dict of every field as text (``error``, ``reason``, ...). So a
# formatter can show ``%(service)s`` and a filter can pick one service's records.
_LEVELS = {1: 40, 2: 30, 3: 20, 4: 10, 5: 5}  # error, warning, info, debug, trace (below debug)
_log_callback: Any = None
_LOG_FIELD = re.compile(r" ([A-Za-z_][A-Za-z0-9_]*)=")


def log_fields(text: str) -> Dict[str, str]:
    """The ``key=value`` fields the library appends to a record's message; a value runs up to the
    next `` key=``."""
    found = list(_LOG_FIELD.finditer(text))
    fields: Dict[str, str] = {}
    for i, match in enumerate(found):
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        fields.setdefault(match.group(1), text[match.end():end])
    return fields


def log_extra(target: str, text: str) -> Dict[str, Any]:
    """The ``extra`` attributes of one of the library's records."""
    fields = log_fields(text)
    term: Optional[int] = None
    raw = fields.get("term")
    if raw is not None and raw.isdigit():
        term = int(raw)
    return {
        "mysqlleader_target": target,
        "mysqlleader_fields": fields,
        "service": fields.get("service"),
        "node": fields.get("node"),
        "term": term,
    }


def _route_logs(lib: ctypes.CDLL) -> None:
    import logging

    global _log_callback
    log = logging.getLogger("mysqlleader")

    def forward(_userdata: Any, level: int, target: bytes, message: bytes) -> None:
        try:
            levelno = _LEVELS.get(level, 20)
            if not log.isEnabledFor(levelno):
                return
            text = message.decode("utf-8", "replace")
            log.log(levelno, "%s", text, extra=log_extra(target.decode("utf-8", "replace"), text))
        except Exception:  # nothing may raise into C
            pass

    _log_callback = LOG_CALLBACK(forward)
    # Debug and more severe; `logging` filters further by the logger's level.
    if lib.mysqlleader_set_log_callback(None, _log_callback, 4) != 0:
        # Another tracing subscriber owns the process (a Rust host): its records go there.
        log.warning("the library's log records go to the process's own tracing subscriber, not to logging")


def stop_logs() -> None:
    """Stops the library's log records for good (the process is exiting). When it returns, no
    record is being delivered and none will be: the library holds its callback's lock while it
    delivers one, and ctypes releases the GIL while this call waits for it."""
    global _log_callback
    lib = _lib
    if lib is not None and _log_callback is not None:
        lib.mysqlleader_set_log_callback(None, LOG_CALLBACK(), 0)  # LOG_CALLBACK(): NULL
        # The ctypes thunk stays referenced: a library thread may still be returning from it.


def _resolved_path(target: str) -> str:
    """The file a loaded candidate came from (a bare name is looked up in /proc/self/maps)."""
    if os.sep in target:
        return str(Path(target).resolve())
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                path = line.rstrip("\n").split(" ", 5)[-1].strip()
                if path.endswith("/" + target) or os.path.basename(path).startswith(target):
                    return path
    except OSError:
        pass
    return target


def library_path() -> str:
    """The path of the library in use (loading it first when needed)."""
    library()
    assert _lib_path is not None
    return _lib_path
