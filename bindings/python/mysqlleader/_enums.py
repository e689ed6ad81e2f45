"""The base classes of the enums in ``_capi.py`` (generated from the C header): hand-written
behaviour the header cannot say."""

from __future__ import annotations

import enum
from typing import Any


class _OpenIntEnum(enum.IntEnum):
    """An IntEnum that also represents numbers a newer library may add (``UNKNOWN_<n>``)."""

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if not isinstance(value, int) or isinstance(value, bool):
            return None
        member = int.__new__(cls, value)
        member._name_ = f"UNKNOWN_{value}"
        member._value_ = value
        return member


class _TrueWhenLeading(_OpenIntEnum):
    """``WaitOutcome``: how a wait for leadership ended, as the core answers it.

    True in a boolean context only for ``LEADING``, so ``if elector.wait_for_leadership(30):``
    reads as before; compare with the members to tell the others apart.
    ``Elector.wait_for_leadership`` raises the error of ``FAILED`` instead of returning it.
    """

    def __bool__(self) -> bool:
        return self.name == "LEADING"
