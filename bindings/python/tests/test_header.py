"""The declarations of the C header (``mysqlleader/_capi.py``) are generated from
include/mysqlleader.h by the repository's tests/ffi_header.rs, which fails when they drift: no
parsing of the header here. What only the loaded library can tell is checked here: its names for
the codes, its version, and that it has every function declared."""

from __future__ import annotations

import pytest

import mysqlleader
from mysqlleader import _capi, _native


def test_the_package_takes_the_generated_declarations() -> None:
    assert _native.PROTOTYPES is _capi.PROTOTYPES
    assert mysqlleader.ResultCode is _capi.ResultCode
    assert len(_capi.PROTOTYPES) >= 40


def test_the_library_has_every_declared_function() -> None:
    lib = _native.library()
    missing = [name for name in _capi.PROTOTYPES if not hasattr(lib, name)]
    assert not missing, f"the library lacks {missing}"


def test_the_library_names_the_codes_as_the_header() -> None:
    lib = _native.library()
    for code in mysqlleader.ResultCode:
        assert lib.mysqlleader_result_name(int(code)).decode() == f"MYSQLLEADER_{code.name}"
    assert lib.mysqlleader_result_name(9999) == b"MYSQLLEADER_UNKNOWN_RESULT"
    for reason in mysqlleader.StopReason:
        assert lib.mysqlleader_stop_reason_name(int(reason)).decode() == reason.name.lower()


def test_the_library_version_matches_the_header() -> None:
    expected = f"{_capi.VERSION_MAJOR}.{_capi.VERSION_MINOR}.{_capi.VERSION_PATCH}"
    assert _capi.VERSION == expected
    assert mysqlleader.version() == expected
    assert mysqlleader.__version__.split(".")[:2] == expected.split(".")[:2], "the package speaks this ABI"


def test_wait_outcome_is_true_only_when_leading() -> None:
    assert bool(mysqlleader.WaitOutcome.LEADING)
    for outcome in mysqlleader.WaitOutcome:
        assert bool(outcome) == (outcome is mysqlleader.WaitOutcome.LEADING)
    assert not mysqlleader.WaitOutcome(9)


def test_unknown_numbers_from_a_newer_library_are_kept() -> None:
    assert mysqlleader.ResultCode(99).name == "UNKNOWN_99"
    assert int(mysqlleader.EventKind(42)) == 42
    assert mysqlleader.StopReason(7).name == "UNKNOWN_7"
    with pytest.raises(ValueError):
        mysqlleader.ResultCode("x")  # type: ignore[arg-type]
