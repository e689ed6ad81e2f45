"""The Python declarations against include/mysqlleader.h, so they cannot drift: the result codes,
event kinds and stop reasons, the #define constants, every struct's fields, and every function's
prototype. Also against the loaded library itself (its names for the codes)."""

from __future__ import annotations

import ctypes
import re
from typing import Dict, List, Tuple

import pytest

import mysqlleader
from mysqlleader import _native

from conftest import HEADER

# C type spellings of the header -> the ctypes type the binding must use.
C_TYPES = {
    "bool": ctypes.c_bool,
    "uint32_t": ctypes.c_uint32,
    "uint64_t": ctypes.c_uint64,
    "size_t": ctypes.c_size_t,
    "double": ctypes.c_double,
    "mysqlleader_result": ctypes.c_uint32,
    "mysqlleader_event_kind": ctypes.c_uint32,
    "mysqlleader_stop_reason": ctypes.c_uint32,
    "mysqlleader_wait_outcome": ctypes.c_uint32,
    "mysqlleader_column_kind": ctypes.c_uint32,
}


@pytest.fixture(scope="module")
def header() -> str:
    assert HEADER.is_file(), f"the C header is missing: {HEADER} (set MYSQLLEADER_HEADER)"
    text = HEADER.read_text(encoding="utf-8")
    # Comments out (they quote names and numbers too).
    return re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)


def enum_members(header: str, enum: str) -> Dict[str, int]:
    match = re.search(r"enum\s+" + enum + r"\b[^{;]*\{(.*?)\};", header, re.S)
    assert match, f"enum {enum} not found in the header"
    members = dict(re.findall(r"(MYSQLLEADER_\w+)\s*=\s*(\d+)", match.group(1)))
    assert members, f"enum {enum} has no members"
    return {name: int(value) for name, value in members.items()}


def defines(header: str) -> Dict[str, str]:
    return dict(re.findall(r"^#define\s+(MYSQLLEADER_\w+)\s+(\S+)\s*$", header, re.M))


def structs(header: str) -> Dict[str, List[Tuple[str, str, str]]]:
    """typedef struct { type name[size]; ... } name;  ->  {name: [(type, field, size)]}"""
    out = {}
    for body, name in re.findall(r"typedef\s+struct\s*\{(.*?)\}\s*(\w+)\s*;", header, re.S):
        fields = []
        for decl in body.split(";"):
            decl = " ".join(decl.split())
            if not decl:
                continue
            m = re.fullmatch(r"(.*?)\s*\b(\w+)\s*(?:\[(\w+)\])?", decl)
            assert m, f"cannot read the field {decl!r} of {name}"
            fields.append((m.group(1).strip(), m.group(2), m.group(3) or ""))
        out[name] = fields
    return out


def functions(header: str) -> Dict[str, Tuple[str, List[str]]]:
    """Every prototype: {name: (return type, [parameter types])}."""
    out = {}
    for ret, name, params in re.findall(r"^([A-Za-z_][\w \*]*?)\s*\b(mysqlleader_\w+)\s*\(([^)]*)\)\s*;", header, re.M | re.S):
        params = " ".join(params.split())
        types = []
        if params and params != "void":
            for p in params.split(","):
                p = p.strip()
                m = re.fullmatch(r"(.*?)\s*\b\w+", p)
                assert m, f"cannot read the parameter {p!r} of {name}"
                types.append(" ".join(m.group(1).replace("*", " * ").split()))
        out[name] = (" ".join(ret.replace("*", " * ").split()), types)
    return out


def test_result_codes_equal_the_header(header: str) -> None:
    in_header = enum_members(header, "mysqlleader_result")
    in_python = {f"MYSQLLEADER_{m.name}": int(m) for m in mysqlleader.ResultCode}
    assert in_python == in_header


def test_event_kinds_equal_the_header(header: str) -> None:
    in_header = enum_members(header, "mysqlleader_event_kind")
    in_python = {f"MYSQLLEADER_EVENT_{m.name}": int(m) for m in mysqlleader.EventKind}
    assert in_python == in_header


def test_wait_outcomes_equal_the_header(header: str) -> None:
    in_header = enum_members(header, "mysqlleader_wait_outcome")
    in_python = {f"MYSQLLEADER_WAIT_{m.name}": int(m) for m in _native.WaitOutcome}
    assert in_python == in_header


def test_stop_reasons_equal_the_header(header: str) -> None:
    in_header = enum_members(header, "mysqlleader_stop_reason")
    in_python = {f"MYSQLLEADER_STOP_{m.name}": int(m) for m in mysqlleader.StopReason}
    assert in_python == in_header


def test_constants_equal_the_header(header: str) -> None:
    values = defines(header)
    expected = {
        "MYSQLLEADER_VERSION_MAJOR": _native.VERSION_MAJOR,
        "MYSQLLEADER_VERSION_MINOR": _native.VERSION_MINOR,
        "MYSQLLEADER_ID_MAX_CHARS": _native.ID_MAX_CHARS,
        "MYSQLLEADER_ID_BUFFER_SIZE": _native.ID_BUFFER_SIZE,
        "MYSQLLEADER_LEASE_MS_MIN": _native.LEASE_MS_MIN,
        "MYSQLLEADER_LEASE_MS_MAX": _native.LEASE_MS_MAX,
        "MYSQLLEADER_DEFAULT_REQUEST_TIMEOUT_MS": _native.DEFAULT_REQUEST_TIMEOUT_MS,
        "MYSQLLEADER_MIGRATE_TIMEOUT_MS": _native.MIGRATE_TIMEOUT_MS,
        "MYSQLLEADER_ELECTOR_NO_RESIGN_ON_FREE": _native.ELECTOR_NO_RESIGN_ON_FREE,
        "MYSQLLEADER_ELECTOR_NO_JITTER": _native.ELECTOR_NO_JITTER,
    }
    for name, value in expected.items():
        assert name in values, f"{name} is no longer in the header"
        assert int(values[name]) == value, name
    assert values["MYSQLLEADER_WAIT_FOREVER"] == "UINT64_MAX"
    assert _native.WAIT_FOREVER == 2**64 - 1
    # Every numeric MYSQLLEADER_ constant of the header is known here (a new one needs a look).
    numeric = {n for n, v in values.items() if re.fullmatch(r"\d+", v)}
    unknown = numeric - set(expected) - {"MYSQLLEADER_VERSION_PATCH"}
    assert not unknown, f"constants in the header the binding does not mirror: {sorted(unknown)}"


STRUCTS = {
    "mysqlleader_campaign_result": _native.CampaignResultStruct,
    "mysqlleader_leader_check": _native.LeaderCheckStruct,
    "mysqlleader_current_leader_result": _native.CurrentLeaderResultStruct,
    "mysqlleader_reelect_result": _native.ReelectResultStruct,
    "mysqlleader_resign_result": _native.ResignResultStruct,
    "mysqlleader_elector_config": _native.ElectorConfigStruct,
    "mysqlleader_event": _native.EventStruct,
    "mysqlleader_elector_state": _native.ElectorStateStruct,
}


def _ctype_of(c_type: str, size: str) -> object:
    if size:
        assert size == "MYSQLLEADER_ID_BUFFER_SIZE", size
        return ctypes.c_char * _native.ID_BUFFER_SIZE
    if c_type == "const char *":
        return ctypes.c_char_p
    if c_type == "const mysqlleader_client * const *":
        return ctypes.POINTER(ctypes.c_void_p)
    return C_TYPES[c_type]


def test_structs_equal_the_header(header: str) -> None:
    in_header = structs(header)
    assert set(STRUCTS) == set(in_header), "a struct was added or removed in the header"
    for name, cls in STRUCTS.items():
        fields = in_header[name]
        assert [f for _, f, _ in fields] == [f for f, _ in cls._fields_], f"{name}: field names or order"
        for (c_type, field, size), (_, py_type) in zip(fields, cls._fields_):
            c_type = " ".join(c_type.replace("*", " * ").split())
            expected = _ctype_of(c_type, size)
            if isinstance(expected, type) and issubclass(expected, ctypes.Array):
                assert issubclass(py_type, ctypes.Array) and py_type._length_ == expected._length_, f"{name}.{field}"
                assert py_type._type_ is ctypes.c_char, f"{name}.{field}"  # type: ignore[union-attr]
            else:
                assert ctypes.sizeof(py_type) == ctypes.sizeof(expected), f"{name}.{field}: {c_type}"  # type: ignore[arg-type]
                assert py_type == expected or (
                    issubclass(py_type, ctypes._Pointer) and issubclass(expected, ctypes._Pointer)  # type: ignore[arg-type]
                ), f"{name}.{field}: {c_type} is {expected}, the binding says {py_type}"


def test_every_function_of_the_header_is_declared(header: str) -> None:
    in_header = functions(header)
    assert len(in_header) >= 40, "the header parser found too few functions"
    assert set(in_header) == set(_native.PROTOTYPES), (
        f"missing here: {sorted(set(in_header) - set(_native.PROTOTYPES))}; "
        f"not in the header: {sorted(set(_native.PROTOTYPES) - set(in_header))}"
    )
    for name, (ret, params) in in_header.items():
        restype, argtypes = _native.PROTOTYPES[name]
        assert len(argtypes) == len(params), f"{name}: {len(params)} parameters in the header"
        if ret == "void":
            assert restype is None, name
        elif ret == "mysqlleader_result":
            assert restype is ctypes.c_uint32, name
        elif ret == "const char *":
            assert restype is ctypes.c_char_p, name
        else:
            assert restype is C_TYPES[ret], name
        for i, (c_type, py_type) in enumerate(zip(params, argtypes)):
            if "*" in c_type:
                pointer_like = (ctypes.c_void_p, ctypes.c_char_p, _native.EVENT_CALLBACK)
                assert py_type in pointer_like or issubclass(py_type, ctypes._Pointer), f"{name} parameter {i}: {c_type}"
            elif c_type == "mysqlleader_event_callback":
                assert py_type is _native.EVENT_CALLBACK, name
            elif c_type == "mysqlleader_log_callback":
                assert py_type is _native.LOG_CALLBACK, name
            elif c_type in ("const mysqlleader_client", "mysqlleader_client"):
                pytest.fail(f"{name}: a handle passed by value")
            else:
                assert py_type is C_TYPES[c_type], f"{name} parameter {i}: {c_type}"


def test_the_library_names_the_codes_as_the_header() -> None:
    lib = _native.library()
    for code in mysqlleader.ResultCode:
        assert lib.mysqlleader_result_name(int(code)).decode() == f"MYSQLLEADER_{code.name}"
    assert lib.mysqlleader_result_name(9999) == b"MYSQLLEADER_UNKNOWN_RESULT"
    for reason in mysqlleader.StopReason:
        assert lib.mysqlleader_stop_reason_name(int(reason)).decode() == reason.name.lower()


def test_the_library_version_matches_the_header(header: str) -> None:
    values = defines(header)
    expected = f"{values['MYSQLLEADER_VERSION_MAJOR']}.{values['MYSQLLEADER_VERSION_MINOR']}.{values['MYSQLLEADER_VERSION_PATCH']}"
    assert mysqlleader.version() == expected
    if "MYSQLLEADER_VERSION" in values:
        assert values["MYSQLLEADER_VERSION"] == f'"{expected}"'
    assert mysqlleader.__version__.split(".")[:2] == expected.split(".")[:2], "the package speaks this ABI"


def test_unknown_numbers_from_a_newer_library_are_kept() -> None:
    assert mysqlleader.ResultCode(99).name == "UNKNOWN_99"
    assert int(mysqlleader.EventKind(42)) == 42
    assert mysqlleader.StopReason(7).name == "UNKNOWN_7"
    with pytest.raises(ValueError):
        mysqlleader.ResultCode("x")  # type: ignore[arg-type]
