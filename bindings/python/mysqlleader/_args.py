"""Checking Python arguments before they cross into C.

Wrong *types* (bytes for an id, a string for a lease, ``None`` where a value is required, a
bool where a number is meant) raise ``TypeError``; values that cannot be represented in C at
all (a NUL inside a string, a negative or fractional-millisecond duration, a term beyond 64
bits) raise :class:`~mysqlleader.InvalidArgumentError` (a ``ValueError``). Every other rule —
ids of 1 to 128 characters, a lease of 1 ms to one day for a call (100 ms to one day for an
elector), a consistent elector configuration —
is the library's to enforce, and its error is passed on unchanged.
"""

from __future__ import annotations

import datetime
import decimal
import math
from typing import Optional, Union

from ._errors import InvalidArgumentError
from ._native import U64_MAX

#: A duration: a ``datetime.timedelta``, or a number of seconds (``int`` or ``float``).
Duration = Union[datetime.timedelta, float, int]

_MS = datetime.timedelta(milliseconds=1)


def _type_name(value: object) -> str:
    return "None" if value is None else type(value).__name__


def text(value: object, name: str) -> bytes:
    """A ``str`` argument as NUL-terminated UTF-8 for C."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be str, not {_type_name(value)}")
    if "\0" in value:
        raise InvalidArgumentError(f"invalid argument `{name}`: {name} must not contain a NUL character", parameter=name)
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidArgumentError(
            f"invalid argument `{name}`: {name} is not encodable as UTF-8 ({e.reason} at index {e.start})",
            parameter=name,
        ) from None


def optional_text(value: object, name: str) -> Optional[bytes]:
    """Like :func:`text`, with ``None`` passed on as NULL."""
    return None if value is None else text(value, name)


def duration_ms(value: object, name: str) -> int:
    """A duration (timedelta or seconds) as whole milliseconds, 0 to 2**64 - 1.

    Fractions of a millisecond are rejected rather than rounded: no input is silently changed.
    """
    if isinstance(value, datetime.timedelta):
        if value < datetime.timedelta(0):
            raise InvalidArgumentError(f"invalid argument `{name}`: {name} must not be negative, got {value}", parameter=name)
        ms, rest = divmod(value, _MS)
        if rest:
            raise InvalidArgumentError(
                f"invalid argument `{name}`: {name} must be a whole number of milliseconds, got {value}", parameter=name
            )
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        if isinstance(value, float) and not math.isfinite(value):
            raise InvalidArgumentError(f"invalid argument `{name}`: {name} must be finite, got {value}", parameter=name)
        if value < 0:
            raise InvalidArgumentError(f"invalid argument `{name}`: {name} must not be negative, got {value} s", parameter=name)
        exact = decimal.Decimal(repr(value)) * 1000 if isinstance(value, float) else decimal.Decimal(value) * 1000
        ms = int(exact)
        if exact != ms:
            raise InvalidArgumentError(
                f"invalid argument `{name}`: {name} must be a whole number of milliseconds, got {value} s", parameter=name
            )
    else:
        raise TypeError(f"{name} must be a datetime.timedelta or a number of seconds, not {_type_name(value)}")
    if ms > U64_MAX:
        raise InvalidArgumentError(f"invalid argument `{name}`: {name} is too long ({value})", parameter=name)
    return int(ms)


def positive_duration_ms(value: object, name: str) -> int:
    """Like :func:`duration_ms`, at least 1 ms (for fields where C reads 0 as "the default")."""
    ms = duration_ms(value, name)
    if ms == 0:
        raise InvalidArgumentError(f"invalid argument `{name}`: {name} must be at least 1 ms", parameter=name)
    return ms


def term(value: object, name: str = "term") -> int:
    """A term: an ``int`` from 0 to 2**64 - 1."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be int, not {_type_name(value)}")
    if not 0 <= value <= U64_MAX:
        raise InvalidArgumentError(f"invalid argument `{name}`: {name} must be between 0 and 2**64 - 1, got {value}", parameter=name)
    return value


def flag(value: object, name: str) -> bool:
    """A ``bool`` (an ``int`` is refused: pass ``True`` or ``False``)."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be bool, not {_type_name(value)}")
    return value


def fraction(value: object, name: str) -> float:
    """A real number (not a bool)."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"{name} must be a float, not {_type_name(value)}")
    value = float(value)
    if not math.isfinite(value):
        raise InvalidArgumentError(f"invalid argument `{name}`: {name} must be finite, got {value}", parameter=name)
    return value


def sql_param(value: object, index: int) -> Optional[bytes]:
    """One statement parameter as the C API takes it (bytes with their length): text, or NULL.

    ``str`` (UTF-8), ``bytes``/``bytearray``/``memoryview`` (as they are, NUL bytes included),
    ``int``, ``float`` and ``decimal.Decimal`` (their decimal text), ``bool`` (``1``/``0``),
    ``datetime.datetime`` (``YYYY-MM-DD HH:MM:SS.ffffff``, its own wall-clock time: an offset
    is not sent), ``datetime.date`` (``YYYY-MM-DD``), ``datetime.time`` (``HH:MM:SS.ffffff``),
    ``datetime.timedelta`` (``[-]HH:MM:SS.ffffff``, for a TIME column) and ``None`` (SQL NULL).
    The server converts the text to the column's type.
    """
    name = f"params[{index}]"
    if value is None:
        return None
    if isinstance(value, bool):
        return b"1" if value else b"0"
    if isinstance(value, str):
        try:
            return value.encode("utf-8")
        except UnicodeEncodeError as e:
            raise InvalidArgumentError(
                f"invalid argument `{name}`: {name} is not encodable as UTF-8 ({e.reason} at index {e.start})",
                parameter=name,
            ) from None
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, int):
        return str(value).encode("ascii")
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidArgumentError(f"invalid argument `{name}`: {name} must be finite, got {value}", parameter=name)
        return repr(value).encode("ascii")
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise InvalidArgumentError(f"invalid argument `{name}`: {name} must be finite, got {value}", parameter=name)
        return str(value).encode("ascii")
    if isinstance(value, datetime.datetime):  # before date: a datetime is a date
        return value.replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds").encode("ascii")
    if isinstance(value, datetime.date):
        return value.isoformat().encode("ascii")
    if isinstance(value, datetime.time):
        return value.replace(tzinfo=None).isoformat(timespec="microseconds").encode("ascii")
    if isinstance(value, datetime.timedelta):
        micros = (value.days * 86_400 + value.seconds) * 1_000_000 + value.microseconds
        sign, micros = ("-", -micros) if micros < 0 else ("", micros)
        seconds, micros = divmod(micros, 1_000_000)
        return f"{sign}{seconds // 3600:02}:{seconds // 60 % 60:02}:{seconds % 60:02}.{micros:06}".encode("ascii")
    raise TypeError(
        f"{name} must be str, bytes, int, float, decimal.Decimal, bool, datetime.datetime, datetime.date, "
        f"datetime.time, datetime.timedelta or None, not {_type_name(value)}"
    )
