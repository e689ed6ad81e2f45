"""A native handle with its ``_free`` function, made safe for Python's threads and GC.

The C API requires that ``*_free`` never races with another call on the same handle. A
:class:`Handle` counts the calls in progress; :meth:`Handle.release` marks it closed (new calls
get :class:`~mysqlleader.InvalidStateError`), waits for the calls in progress to return, then
frees it — once, whoever calls it first: ``close()``, ``__exit__`` or the object's
``weakref.finalize`` when it is collected without ``close()``.

A Handle never refers to the Python object that owns it, so a finalizer holding it does not
keep that object alive.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Callable, Iterator, Optional

from ._errors import InvalidStateError

#: Handles freed so far, by kind ("Client", "Elector", "Session", "Transaction"): a diagnostic
#: counter (the tests use it to see that collected objects released their handle).
released_count = {"Client": 0, "Elector": 0, "Session": 0, "Transaction": 0}
_count_lock = threading.Lock()


class Handle:
    """An opaque C pointer, the function that frees it, and the calls in progress on it."""

    __slots__ = ("_ptr", "_free", "kind", "_cond", "_users", "_closed", "__weakref__")

    def __init__(self, ptr: int, free: Callable[[int], None], kind: str) -> None:
        self._ptr: Optional[int] = ptr
        self._free = free
        self.kind = kind
        self._cond = threading.Condition(threading.Lock())
        self._users = 0
        self._closed = False

    @property
    def closed(self) -> bool:
        """Whether :meth:`release` has begun."""
        return self._closed

    @contextmanager
    def use(self) -> Iterator[int]:
        """The pointer, for one call; raises InvalidStateError once the handle is closed."""
        with self._cond:
            if self._closed or self._ptr is None:
                raise InvalidStateError(f"mysqlleader: the {self.kind} is closed")
            self._users += 1
            ptr = self._ptr
        try:
            yield ptr
        finally:
            with self._cond:
                self._users -= 1
                if self._users == 0:
                    self._cond.notify_all()

    def release(self) -> None:
        """Closes the handle: waits for the calls in progress, then frees it (once)."""
        with self._cond:
            if self._closed:
                return
            self._closed = True
            while self._users:
                self._cond.wait()
            ptr, self._ptr = self._ptr, None
        if ptr is not None:
            self._free(ptr)
            with _count_lock:
                released_count[self.kind] = released_count.get(self.kind, 0) + 1
