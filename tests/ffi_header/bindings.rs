//! The bindings' declarations of the C ABI, generated from include/mysqlleader.h: the header is
//! parsed into a model (its cbindgen output is regular: `#define MYSQLLEADER_* value`, enums with
//! explicit numbers, `typedef struct { fields } name;`, callback typedefs, one prototype per
//! function, each with its doxygen comment), and the model is rendered for
//!
//! - Python: `bindings/python/mysqlleader/_capi.py` (constants, enums, ctypes Structures,
//!   callback types, the prototype table; `_native.py` keeps the loader);
//! - Java: `bindings/java/src/main/java/io/mysqlleader/CApi.java` (the JNA interface that `Lib`
//!   extends: constants, Structures, Callbacks, every function);
//! - Go: `bindings/go/constants.go` (the constants in Go's names and units; cgo calls C itself).
//!
//! The mapping rules of each language are stated once, in its section below. A string whose
//! role the C type alone does not tell is classified by [`str_role`], for every language alike.

use std::fmt::Write as _;

/// The files this module generates, relative to the repository root.
pub const PYTHON: &str = "bindings/python/mysqlleader/_capi.py";
pub const JAVA: &str = "bindings/java/src/main/java/io/mysqlleader/CApi.java";
pub const GO: &str = "bindings/go/constants.go";

const REGENERATE: &str = "MYSQLLEADER_UPDATE_HEADER=1 cargo test --release --test command_line ffi_header";

// ---------------------------------------------------------------------------------------------
// The model.

#[derive(Debug, Clone)]
pub enum Value {
    Int(u64),
    U64Max,
    Str(String),
}

#[derive(Debug, Clone)]
pub struct Define {
    pub name: String,
    pub value: Value,
    pub doc: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Member {
    pub name: String,
    pub value: u64,
    pub doc: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Enum {
    pub name: String,
    pub doc: Vec<String>,
    pub members: Vec<Member>,
}

/// A C type: `const char *const *` is base `char`, `base_const`, `ptrs` [true, false] (whether
/// each `*` is followed by `const`).
#[derive(Debug, Clone, PartialEq)]
pub struct CType {
    pub base: String,
    pub base_const: bool,
    pub ptrs: Vec<bool>,
}

impl CType {
    fn depth(&self) -> usize {
        self.ptrs.len()
    }
    fn is(&self, base: &str, depth: usize) -> bool {
        self.base == base && self.depth() == depth
    }
    fn c(&self) -> String {
        let mut s = String::new();
        if self.base_const {
            s.push_str("const ");
        }
        s.push_str(&self.base);
        for &c in &self.ptrs {
            s.push_str(if c { " *const" } else { " *" });
        }
        s
    }
}

#[derive(Debug, Clone)]
pub struct Decl {
    pub ty: CType,
    pub name: String,
    /// `[SIZE]` of an array field: the constant that sizes it.
    pub array: Option<String>,
    pub doc: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct Struct {
    pub name: String,
    pub doc: Vec<String>,
    pub fields: Vec<Decl>,
}

#[derive(Debug, Clone)]
pub struct Function {
    pub name: String,
    pub doc: Vec<String>,
    pub ret: CType,
    pub params: Vec<Decl>,
}

#[derive(Debug, Default)]
pub struct Header {
    pub defines: Vec<Define>,
    pub enums: Vec<Enum>,
    pub opaques: Vec<String>,
    pub structs: Vec<Struct>,
    pub callbacks: Vec<Function>,
    pub functions: Vec<Function>,
    /// The names of the structs and callback types, in the header's order (each is declared
    /// before its use).
    pub order: Vec<String>,
}

/// What a C base type is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Void,
    Bool,
    Char,
    U32,
    I32,
    U64,
    I64,
    Size,
    Double,
    Enum,
    Struct,
    Opaque,
    Callback,
}

impl Header {
    fn kind(&self, base: &str) -> Kind {
        match base {
            "void" => Kind::Void,
            "bool" => Kind::Bool,
            "char" => Kind::Char,
            "uint32_t" => Kind::U32,
            "int32_t" => Kind::I32,
            "uint64_t" => Kind::U64,
            "int64_t" => Kind::I64,
            "size_t" => Kind::Size,
            "double" => Kind::Double,
            _ if self.enums.iter().any(|e| e.name == base) => Kind::Enum,
            _ if self.structs.iter().any(|s| s.name == base) => Kind::Struct,
            _ if self.opaques.iter().any(|s| s == base) => Kind::Opaque,
            _ if self.callbacks.iter().any(|s| s.name == base) => Kind::Callback,
            _ => panic!("include/mysqlleader.h: the generator does not know the type `{base}`: teach tests/ffi_header/bindings.rs"),
        }
    }

    /// Structs passed in by the caller (`const T *` parameters of a function): their strings are
    /// the caller's.
    fn is_input_struct(&self, name: &str) -> bool {
        self.functions
            .iter()
            .flat_map(|f| &f.params)
            .any(|p| p.ty.base == name && p.ty.base_const && p.ty.depth() == 1)
    }

    /// Structs a callback receives.
    fn is_delivered_struct(&self, name: &str) -> bool {
        self.callbacks.iter().flat_map(|f| &f.params).any(|p| p.ty.base == name)
    }
}

/// The role of a string (or string array) parameter, which the C type alone does not tell; one
/// rule for every language:
#[derive(Debug, Clone, Copy, PartialEq)]
enum StrRole {
    /// `const char *`, `const char **` out, `const char *const *` in: NUL-terminated text.
    Text,
    /// `char *` followed by a `size_t` (its length): a buffer the library writes into.
    Buffer,
    /// `char *` without a length (`mysqlleader_string_free`), `char **` out
    /// (`mysqlleader_install_sql`): a string the library allocated and the caller frees, kept
    /// as a raw pointer.
    Owned,
    /// `const char **` / `const char *const *` followed by a `size_t *` (its lengths): bytes
    /// that may hold NUL (`mysqlleader_txn_query`'s parameters, `mysqlleader_rows_value`).
    Bytes,
}

fn str_role(params: &[Decl], i: usize) -> StrRole {
    let p = &params[i];
    let next = params.get(i + 1).map(|n| &n.ty);
    let next_is_size = next.is_some_and(|n| n.is("size_t", 0));
    let next_is_size_ptr = next.is_some_and(|n| n.is("size_t", 1));
    match (p.ty.base_const, p.ty.depth()) {
        (false, 1) if next_is_size => StrRole::Buffer,
        (false, _) => StrRole::Owned,
        (true, 2) if next_is_size_ptr => StrRole::Bytes,
        _ => StrRole::Text,
    }
}

// ---------------------------------------------------------------------------------------------
// The parser.

/// `const mysqlleader_client *const *fallback_clients`, `char leader_id[SIZE]`, or a type alone
/// (`with_name` false).
fn parse_decl(text: &str, with_name: bool) -> Decl {
    let spaced = text.replace('*', " * ");
    let mut tokens: Vec<&str> = spaced.split_whitespace().collect();
    let (name, array) = if with_name {
        let last = tokens.pop().unwrap_or_else(|| panic!("an empty declaration: {text:?}"));
        match last.split_once('[') {
            Some((n, size)) => (n.to_string(), Some(size.trim_end_matches(']').to_string())),
            None => (last.to_string(), None),
        }
    } else {
        (String::new(), None)
    };
    let mut ty = CType { base: String::new(), base_const: false, ptrs: Vec::new() };
    for t in tokens {
        match t {
            "const" if ty.base.is_empty() => ty.base_const = true,
            "const" => *ty.ptrs.last_mut().unwrap_or_else(|| panic!("`T const` in {text:?}")) = true,
            "*" => ty.ptrs.push(false),
            ident if ty.base.is_empty() => ty.base = ident.to_string(),
            other => panic!("cannot read the declaration {text:?} (at {other:?})"),
        }
    }
    assert!(!ty.base.is_empty(), "no type in {text:?}");
    Decl { ty, name, array, doc: Vec::new() }
}

/// `RET NAME(PARAMS);` (or `RET (*NAME)(PARAMS);` for a callback) with its doc comment.
fn parse_function(text: &str, doc: Vec<String>) -> Function {
    let text = text.trim().trim_end_matches(';').trim();
    let (head, params) = text.split_once('(').unwrap();
    let (head, params) = if head.trim().ends_with("void") && params.starts_with('*') {
        // `void (*name)(params)`: a callback typedef (the caller has cut `typedef`).
        let (name, rest) = params.trim_start_matches('*').split_once(')').unwrap();
        (format!("{} {}", head.trim(), name), rest.trim().trim_start_matches('(').to_string())
    } else {
        (head.to_string(), params.to_string())
    };
    let params = params.trim_end_matches(')');
    let ret = parse_decl(&head, true);
    let params = if params.trim() == "void" || params.trim().is_empty() {
        Vec::new()
    } else {
        params.split(',').map(|p| parse_decl(p, true)).collect()
    };
    Function { name: ret.name, doc, ret: ret.ty, params }
}

/// The header as the generator sees it. Panics on a line it does not understand, so a new
/// shape of declaration is not silently dropped.
pub fn parse(header: &str) -> Header {
    let mut h = Header::default();
    let mut doc: Vec<String> = Vec::new();
    let mut lines = header.lines().peekable();
    // What the lines belong to now.
    enum Block {
        Top,
        Enum(Enum),
        Struct(Struct),
    }
    let mut block = Block::Top;
    while let Some(line) = lines.next() {
        let t = line.trim();
        // Comments.
        if let Some(rest) = t.strip_prefix("/**") {
            doc.clear();
            if let Some(one) = rest.strip_suffix("*/") {
                doc.push(one.trim().to_string());
                continue;
            }
            for l in lines.by_ref() {
                let l = l.trim();
                if l == "*/" {
                    break;
                }
                let l = l.strip_prefix('*').unwrap_or(l);
                doc.push(l.strip_prefix(' ').unwrap_or(l).to_string());
            }
            continue;
        }
        if t.starts_with("/*") {
            if !t.ends_with("*/") {
                for l in lines.by_ref() {
                    if l.trim_end().ends_with("*/") {
                        break;
                    }
                }
            }
            doc.clear();
            continue;
        }
        if t.is_empty() {
            continue;
        }
        let taken = std::mem::take(&mut doc);
        match &mut block {
            Block::Enum(e) => {
                if t == "};" {
                    let Block::Enum(e) = std::mem::replace(&mut block, Block::Top) else { unreachable!() };
                    h.enums.push(e);
                } else if t.starts_with('#') || t == "{" || t == ": uint32_t" {
                    assert!(taken.is_empty());
                } else {
                    let (name, value) = t.trim_end_matches(',').split_once(" = ").unwrap_or_else(|| {
                        panic!("an enumerator without an explicit number in enum {}: {line}", e.name)
                    });
                    e.members.push(Member { name: name.to_string(), value: value.parse().unwrap(), doc: taken });
                }
                continue;
            }
            Block::Struct(s) => {
                if let Some(name) = t.strip_prefix("} ") {
                    s.name = name.trim_end_matches(';').to_string();
                    let Block::Struct(s) = std::mem::replace(&mut block, Block::Top) else { unreachable!() };
                    h.order.push(s.name.clone());
                    h.structs.push(s);
                } else {
                    let mut field = parse_decl(t.trim_end_matches(';'), true);
                    field.doc = taken;
                    s.fields.push(field);
                }
                continue;
            }
            Block::Top => {}
        }
        if let Some(rest) = t.strip_prefix("#define ") {
            let (name, value) = match rest.split_once(' ') {
                Some((n, v)) => (n, v.trim()),
                None => continue, // the include guard
            };
            let value = if value == "UINT64_MAX" {
                Value::U64Max
            } else if let Some(s) = value.strip_prefix('"') {
                Value::Str(s.trim_end_matches('"').to_string())
            } else {
                Value::Int(value.parse().unwrap_or_else(|_| panic!("#define {name} {value}: not a number")))
            };
            h.defines.push(Define { name: name.to_string(), value, doc: taken });
        } else if t.starts_with('#') || t.starts_with("extern \"C\"") || t.starts_with("}  // extern") {
            // preprocessor lines, the C++ guard
        } else if let Some(name) = t.strip_prefix("enum ") {
            block = Block::Enum(Enum { name: name.trim().to_string(), doc: taken, members: Vec::new() });
        } else if t == "typedef struct {" {
            block = Block::Struct(Struct { name: String::new(), doc: taken, fields: Vec::new() });
        } else if let Some(rest) = t.strip_prefix("typedef struct ") {
            // `typedef struct mysqlleader_client mysqlleader_client;`: an opaque handle.
            let name = rest.split_whitespace().next().unwrap();
            h.opaques.push(name.to_string());
        } else if t.starts_with("typedef enum ") || t.starts_with("typedef uint32_t ") {
            // the enum's typedef (C23) or its uint32_t stand-in (before C23)
        } else if let Some(rest) = t.strip_prefix("typedef ") {
            let mut text = rest.to_string();
            while !text.trim_end().ends_with(';') {
                text.push(' ');
                text.push_str(lines.next().expect("an unterminated typedef").trim());
            }
            let callback = parse_function(&text, taken);
            h.order.push(callback.name.clone());
            h.callbacks.push(callback);
        } else if !line.starts_with(' ') && t.contains('(') {
            let mut text = t.to_string();
            while !text.trim_end().ends_with(';') {
                text.push(' ');
                text.push_str(lines.next().expect("an unterminated prototype").trim());
            }
            h.functions.push(parse_function(&text, taken));
        } else {
            panic!("include/mysqlleader.h: the generator cannot read this line: {line:?}");
        }
    }
    for e in &h.enums {
        assert!(!e.members.is_empty(), "enum {} has no members", e.name);
    }
    assert!(h.functions.len() >= 40, "parsed only {} functions", h.functions.len());
    h
}

// ---------------------------------------------------------------------------------------------
// Names.

fn strip_prefix(name: &str) -> &str {
    name.strip_prefix("MYSQLLEADER_")
        .or_else(|| name.strip_prefix("mysqlleader_"))
        .unwrap_or_else(|| panic!("`{name}` lacks the prefix"))
}

/// `snake_case` or `UPPER_CASE` to `CamelCase`.
fn camel(name: &str) -> String {
    name.split('_')
        .filter(|w| !w.is_empty())
        .map(|w| {
            let w = w.to_ascii_lowercase();
            let mut c = w.chars();
            c.next().map(|f| f.to_ascii_uppercase().to_string() + c.as_str()).unwrap_or_default()
        })
        .collect()
}

fn lower_camel(name: &str) -> String {
    let c = camel(name);
    let mut chars = c.chars();
    chars.next().map(|f| f.to_ascii_lowercase().to_string() + chars.as_str()).unwrap_or_default()
}

/// The prefix all members of an enum share (`MYSQLLEADER_STOP_`), cut at an underscore.
fn member_prefix(e: &Enum) -> String {
    let first = &e.members[0].name;
    let mut prefix = first.as_str();
    for m in &e.members {
        while !m.name.starts_with(prefix) {
            prefix = &prefix[..prefix.len() - 1];
        }
    }
    let cut = prefix.rfind('_').map(|i| i + 1).unwrap_or(0);
    // A single-member enum would otherwise lose its whole name.
    if e.members.len() == 1 {
        return "MYSQLLEADER_".to_string();
    }
    first[..cut].to_string()
}

fn short_member(e: &Enum, m: &Member) -> String {
    m.name[member_prefix(e).len()..].to_string()
}

fn header_line(comment: &str) -> String {
    format!("{comment} Generated from include/mysqlleader.h by tests/ffi_header.rs; do not edit.\n{comment} Regenerate: {REGENERATE}\n")
}

// ---------------------------------------------------------------------------------------------
// Python (ctypes).
//
// Names: constants without `MYSQLLEADER_`; enums are `enum.IntEnum`s (open: a number a newer
// library adds reads as `UNKNOWN_<n>`) named in CamelCase (`mysqlleader_result` is
// `ResultCode`), their members without the prefix they share; structs are `<CamelCase>Struct`;
// callback types `<NAME>` in capitals (`EVENT_CALLBACK`).
// Types: `bool` c_bool, `uint32_t` and enums c_uint32, `uint64_t` c_uint64, `size_t` c_size_t,
// `double` c_double; handles (opaque structs) c_void_p, `T **` out POINTER(c_void_p); a struct
// by pointer POINTER(<Struct>); `T *` out POINTER(<T>); strings by [`StrRole`]: Text c_char_p
// (POINTER(c_char_p) for arrays and out-pointers), Buffer POINTER(c_char), Owned and Bytes
// c_void_p (POINTER(c_void_p)), so ctypes converts nothing; `char name[N]` c_char * N.

const PY_ENUM_NAMES: &[(&str, &str)] = &[("mysqlleader_result", "ResultCode")];
/// The base class of each enum (in `_enums.py`, hand-written): `WaitOutcome` is true only for
/// `LEADING`.
const PY_ENUM_BASES: &[(&str, &str)] = &[("mysqlleader_wait_outcome", "_TrueWhenLeading")];

fn lookup<T: Copy>(table: &[(&str, T)], key: &str) -> Option<T> {
    table.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
}

fn py_enum_name(name: &str) -> String {
    lookup(PY_ENUM_NAMES, name).map(str::to_string).unwrap_or_else(|| camel(strip_prefix(name)))
}

fn py_struct_name(name: &str) -> String {
    format!("{}Struct", camel(strip_prefix(name)))
}

fn py_callback_name(name: &str) -> String {
    strip_prefix(name).to_ascii_uppercase()
}

fn py_scalar(h: &Header, base: &str) -> String {
    match h.kind(base) {
        Kind::Void => "None",
        Kind::Bool => "c_bool",
        Kind::U32 | Kind::Enum => "c_uint32",
        Kind::I32 => "c_int32",
        Kind::U64 => "c_uint64",
        Kind::I64 => "c_int64",
        Kind::Size => "c_size_t",
        Kind::Double => "c_double",
        Kind::Callback => return py_callback_name(base),
        k => panic!("{base} ({k:?}) is not a scalar"),
    }
    .to_string()
}

fn py_param(h: &Header, params: &[Decl], i: usize) -> String {
    let ty = &params[i].ty;
    let kind = h.kind(&ty.base);
    match (kind, ty.depth()) {
        (_, 0) => py_scalar(h, &ty.base),
        (Kind::Char, _) => match (str_role(params, i), ty.depth()) {
            (StrRole::Text, 1) => "c_char_p".into(),
            (StrRole::Text, _) => "POINTER(c_char_p)".into(),
            (StrRole::Buffer, _) => "POINTER(c_char)".into(),
            (_, 1) => "c_void_p".into(),
            (_, _) => "POINTER(c_void_p)".into(),
        },
        (Kind::Void | Kind::Opaque, 1) => "c_void_p".into(),
        (Kind::Opaque, 2) => "POINTER(c_void_p)".into(),
        (Kind::Struct, 1) => format!("POINTER({})", py_struct_name(&ty.base)),
        (_, 1) => format!("POINTER({})", py_scalar(h, &ty.base)),
        _ => panic!("Python: no rule for {}", ty.c()),
    }
}

fn py_return(h: &Header, ty: &CType) -> String {
    match ty.depth() {
        0 => py_scalar(h, &ty.base),
        1 if ty.base == "char" && ty.base_const => "c_char_p".into(),
        _ => panic!("Python: no rule for the return type {}", ty.c()),
    }
}

fn py_field(h: &Header, f: &Decl) -> String {
    let ty = &f.ty;
    if let Some(size) = &f.array {
        assert!(ty.is("char", 0), "Python: no rule for the array field {}", f.name);
        return format!("c_char * {}", strip_prefix(size));
    }
    match (h.kind(&ty.base), ty.depth()) {
        (_, 0) => py_scalar(h, &ty.base),
        (Kind::Char, 1) if ty.base_const => "c_char_p".into(),
        (Kind::Opaque, 2) => "POINTER(c_void_p)".into(),
        _ => panic!("Python: no rule for the field {} {}", ty.c(), f.name),
    }
}

fn py_comment(out: &mut String, indent: &str, doc: &[String]) {
    for l in doc {
        let _ = if l.is_empty() { writeln!(out, "{indent}#:") } else { writeln!(out, "{indent}#: {l}") };
    }
}

fn py_docstring(out: &mut String, indent: &str, first: &str, doc: &[String]) {
    let esc = |l: &str| l.replace('\\', "\\\\");
    if doc.is_empty() {
        let _ = writeln!(out, "{indent}\"\"\"{}\"\"\"", esc(first));
        return;
    }
    let _ = writeln!(out, "{indent}\"\"\"{}\n", esc(first));
    for l in doc {
        let _ = if l.is_empty() { writeln!(out) } else { writeln!(out, "{indent}{}", esc(l)) };
    }
    let _ = writeln!(out, "{indent}\"\"\"");
}

pub fn python(h: &Header) -> String {
    let mut o = String::new();
    o.push_str("\"\"\"The C ABI of libmysqlleader for ctypes: the constants, enums, structs, callback types and\n");
    o.push_str("prototypes of ``include/mysqlleader.h``. ``_native.py`` loads the library and declares the\n");
    o.push_str("prototypes on it; the package imports these names from there.\n\"\"\"\n\n");
    o.push_str(&header_line("#"));
    o.push_str("# The mapping rules are in tests/ffi_header/bindings.rs (section Python).\n\n");
    o.push_str("from __future__ import annotations\n\n");
    o.push_str("from ctypes import (\n    CFUNCTYPE,\n    POINTER,\n    Structure,\n    c_bool,\n    c_char,\n    c_char_p,\n    c_double,\n    c_int32,\n    c_int64,\n    c_size_t,\n    c_uint32,\n    c_uint64,\n    c_void_p,\n)\n");
    o.push_str("from typing import Any, Dict, List, Tuple\n\n");
    let mut bases: Vec<&str> = vec!["_OpenIntEnum"];
    for (_, b) in PY_ENUM_BASES {
        if !bases.contains(b) {
            bases.push(b);
        }
    }
    let _ = writeln!(o, "from ._enums import {}\n", bases.join(", "));
    let mut all: Vec<String> = Vec::new();

    o.push_str("# ---------------------------------------------------------------------------------------------\n");
    o.push_str("# Constants (#define MYSQLLEADER_*).\n\n");
    for d in &h.defines {
        let name = strip_prefix(&d.name).to_string();
        py_comment(&mut o, "", &d.doc);
        let value = match &d.value {
            Value::Int(n) => n.to_string(),
            Value::U64Max => "2**64 - 1  # UINT64_MAX".to_string(),
            Value::Str(s) => format!("{s:?}"),
        };
        let _ = writeln!(o, "{name} = {value}");
        all.push(name);
    }

    o.push_str("\n\n# ---------------------------------------------------------------------------------------------\n");
    o.push_str("# Enums: the members are the header's names without the prefix they share.\n");
    for e in &h.enums {
        let name = py_enum_name(&e.name);
        let base = lookup(PY_ENUM_BASES, &e.name).unwrap_or("_OpenIntEnum");
        let _ = writeln!(o, "\n\nclass {name}({base}):");
        py_docstring(&mut o, "    ", &format!("``{}``.", e.name), &e.doc);
        for m in &e.members {
            o.push('\n');
            py_comment(&mut o, "    ", &m.doc);
            let _ = writeln!(o, "    {} = {}", short_member(e, m), m.value);
        }
        all.push(name);
    }

    o.push_str("\n\n# ---------------------------------------------------------------------------------------------\n");
    o.push_str("# Structs (fields as in the header) and callback types, in the header's order.\n");
    let order = struct_and_callback_order(h);
    for item in order {
        match item {
            Item::Struct(s) => {
                let name = py_struct_name(&s.name);
                let _ = writeln!(o, "\n\nclass {name}(Structure):");
                py_docstring(&mut o, "    ", &format!("``{}``.", s.name), &s.doc);
                o.push_str("\n    _fields_ = [\n");
                for f in &s.fields {
                    let _ = writeln!(o, "        ({:?}, {}),", f.name, py_field(h, f));
                }
                o.push_str("    ]\n");
                all.push(name);
            }
            Item::Callback(c) => {
                let name = py_callback_name(&c.name);
                let ret = py_return(h, &c.ret);
                let params: Vec<String> = (0..c.params.len()).map(|i| py_param(h, &c.params, i)).collect();
                o.push_str("\n\n");
                py_comment(&mut o, "", &[format!("``{}``: ``{}``.", c.name, c_signature(c))]);
                py_comment(&mut o, "", &c.doc);
                let _ = writeln!(o, "{name} = CFUNCTYPE({ret}, {})", params.join(", "));
                all.push(name);
            }
        }
    }

    o.push_str("\n\n# ---------------------------------------------------------------------------------------------\n");
    o.push_str("# Prototypes: name -> (restype, argtypes), in the header's order.\n\n");
    o.push_str("PROTOTYPES: Dict[str, Tuple[Any, List[Any]]] = {\n");
    for f in &h.functions {
        let params: Vec<String> = (0..f.params.len()).map(|i| py_param(h, &f.params, i)).collect();
        let _ = writeln!(o, "    {:?}: ({}, [{}]),", f.name, py_return(h, &f.ret), params.join(", "));
    }
    o.push_str("}\n");
    all.push("PROTOTYPES".into());

    o.push_str("\n__all__ = [\n");
    for n in &all {
        let _ = writeln!(o, "    {n:?},");
    }
    o.push_str("]\n");
    o
}

fn c_signature(f: &Function) -> String {
    let params: Vec<String> = f.params.iter().map(|p| format!("{} {}", p.ty.c(), p.name).replace("* ", "*")).collect();
    format!("{} (*)({})", f.ret.c(), params.join(", "))
}

enum Item<'a> {
    Struct(&'a Struct),
    Callback(&'a Function),
}

/// Structs and callback types in the order of the header.
fn struct_and_callback_order(h: &Header) -> Vec<Item<'_>> {
    h.order
        .iter()
        .map(|name| match h.structs.iter().find(|s| &s.name == name) {
            Some(s) => Item::Struct(s),
            None => Item::Callback(h.callbacks.iter().find(|c| &c.name == name).unwrap()),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Java (JNA).
//
// Names: constants and enumerators without `MYSQLLEADER_` (the header's version macros are
// `HEADER_VERSION*`: `Lib.VERSION` is the binding's); `ENUMS` holds each enum's members, by name
// without the prefix they share, for the tests of the Java enums; structs by [`JAVA_STRUCTS`],
// else CamelCase; callbacks `<CamelCase>` (`EventCallback`); methods by their C names,
// parameters in lowerCamelCase.
// Types: `bool` byte (JNA would map boolean to a 4-byte int), `uint32_t`, `int32_t` and enums
// int, `uint64_t`, `int64_t` and `size_t` long (64-bit only), `double` double; handles and
// `void *` Pointer; `T **` out PointerByReference; `uint64_t *`/`size_t *` out LongByReference,
// `uint32_t *`/enum * out IntByReference, `bool *` ByteByReference; `const size_t *` in long[];
// a struct by pointer its Structure class (by reference); callbacks their Callback interface;
// strings by [`StrRole`]: Text String (`const char *const *` String[]), Buffer byte[], Owned
// Pointer, Bytes Pointer[]; a returned `const char *` is String when the header calls it a
// static string, else Pointer (borrowed until the next call, possibly NULL: read it at once with
// `Lib.string`). Struct fields: `char name[N]` byte[N]; `const char *` String in a struct the
// caller passes in, Pointer in one a callback receives (read with `Lib.string`).

const JAVA_STRUCTS: &[(&str, &str)] = &[
    ("mysqlleader_campaign_result", "CampaignRow"),
    ("mysqlleader_leader_check", "CheckRow"),
    ("mysqlleader_current_leader_result", "CurrentLeaderRow"),
    ("mysqlleader_reelect_result", "ReelectRow"),
    ("mysqlleader_resign_result", "ResignRow"),
    ("mysqlleader_elector_config", "ElectorConfig"),
    ("mysqlleader_event", "EventRow"),
    ("mysqlleader_elector_state", "StateRow"),
];

fn java_struct_name(name: &str) -> String {
    lookup(JAVA_STRUCTS, name).map(str::to_string).unwrap_or_else(|| camel(strip_prefix(name)))
}

fn java_constant_name(name: &str) -> String {
    let short = strip_prefix(name);
    if short.starts_with("VERSION") {
        format!("HEADER_{short}")
    } else {
        short.to_string()
    }
}

fn java_scalar(h: &Header, base: &str) -> String {
    match h.kind(base) {
        Kind::Void => "void",
        Kind::Bool => "byte",
        Kind::U32 | Kind::I32 | Kind::Enum => "int",
        Kind::U64 | Kind::I64 | Kind::Size => "long",
        Kind::Double => "double",
        Kind::Callback => return camel(strip_prefix(base)),
        k => panic!("{base} ({k:?}) is not a scalar"),
    }
    .to_string()
}

fn java_param(h: &Header, params: &[Decl], i: usize) -> String {
    let ty = &params[i].ty;
    let kind = h.kind(&ty.base);
    match (kind, ty.depth()) {
        (_, 0) => java_scalar(h, &ty.base),
        (Kind::Char, d) => match (str_role(params, i), d) {
            (StrRole::Text, 1) => "String".into(),
            (StrRole::Text, _) if ty.ptrs[0] => "String[]".into(),
            (StrRole::Bytes, _) if ty.ptrs[0] => "Pointer[]".into(),
            (StrRole::Buffer, _) => "byte[]".into(),
            (StrRole::Owned, 1) => "Pointer".into(),
            (_, _) => "PointerByReference".into(),
        },
        (Kind::Void | Kind::Opaque, 1) => "Pointer".into(),
        (Kind::Opaque, 2) => "PointerByReference".into(),
        (Kind::Struct, 1) => java_struct_name(&ty.base),
        (Kind::Size | Kind::U64 | Kind::I64, 1) if ty.base_const => "long[]".into(),
        (Kind::Size | Kind::U64 | Kind::I64, 1) => "LongByReference".into(),
        (Kind::U32 | Kind::I32 | Kind::Enum, 1) => "IntByReference".into(),
        (Kind::Bool, 1) => "ByteByReference".into(),
        _ => panic!("Java: no rule for {}", ty.c()),
    }
}

fn java_return(h: &Header, f: &Function) -> String {
    match f.ret.depth() {
        0 => java_scalar(h, &f.ret.base),
        1 if f.ret.base == "char" && f.ret.base_const => {
            if f.doc.join(" ").contains("static string") { "String" } else { "Pointer" }.into()
        }
        _ => panic!("Java: no rule for the return type {}", f.ret.c()),
    }
}

fn java_field(h: &Header, s: &Struct, f: &Decl) -> (String, String) {
    let ty = &f.ty;
    if let Some(size) = &f.array {
        assert!(ty.is("char", 0), "Java: no rule for the array field {}", f.name);
        return ("byte[]".into(), format!(" = new byte[{}]", java_constant_name(size)));
    }
    let t = match (h.kind(&ty.base), ty.depth()) {
        (_, 0) => java_scalar(h, &ty.base),
        (Kind::Char, 1) if ty.base_const && h.is_input_struct(&s.name) => "String".into(),
        (Kind::Char, 1) if ty.base_const => "Pointer".into(),
        (Kind::Opaque, 2) => "Pointer".into(),
        _ => panic!("Java: no rule for the field {} {}", ty.c(), f.name),
    };
    (t, String::new())
}

fn java_doc(out: &mut String, indent: &str, doc: &[String]) {
    if doc.is_empty() {
        return;
    }
    // As line comments: the header's text is Markdown, not HTML for javadoc.
    for l in doc {
        let l = if l.is_empty() { String::new() } else { format!(" {l}") };
        let _ = writeln!(out, "{indent}//{l}");
    }
}

pub fn java(h: &Header) -> String {
    let mut o = String::new();
    o.push_str(&header_line("//"));
    o.push_str("// The mapping rules are in tests/ffi_header/bindings.rs (section Java).\n\n");
    o.push_str("package io.mysqlleader;\n\n");
    o.push_str("import com.sun.jna.Callback;\nimport com.sun.jna.Library;\nimport com.sun.jna.Pointer;\nimport com.sun.jna.Structure;\n");
    o.push_str("import com.sun.jna.ptr.ByteByReference;\nimport com.sun.jna.ptr.IntByReference;\nimport com.sun.jna.ptr.LongByReference;\nimport com.sun.jna.ptr.PointerByReference;\n\n");
    o.push_str("import java.util.Map;\n\n");
    o.push_str("/**\n * The C ABI ({@code include/mysqlleader.h}) as JNA sees it: constants, structures, callbacks and\n");
    o.push_str(" * every function. Generated; {@link Lib} extends it and loads the library. Internal.\n */\n");
    o.push_str("interface CApi extends Library {\n");
    o.push_str("    /** JNA's options for the structures and callbacks declared here: strings are UTF-8. */\n");
    o.push_str("    Map<String, Object> OPTIONS = Map.of(Library.OPTION_STRING_ENCODING, \"UTF-8\");\n");

    o.push_str("\n    // --- constants (#define MYSQLLEADER_*) ---------------------------------------------------\n");
    for d in &h.defines {
        o.push('\n');
        java_doc(&mut o, "    ", &d.doc);
        let name = java_constant_name(&d.name);
        let _ = match &d.value {
            Value::Int(n) if *n <= i32::MAX as u64 => writeln!(o, "    int {name} = {n};"),
            Value::Int(n) => writeln!(o, "    long {name} = {n}L;"),
            Value::U64Max => writeln!(o, "    long {name} = -1L; // UINT64_MAX"),
            Value::Str(s) => writeln!(o, "    String {name} = {s:?};"),
        };
    }

    o.push_str("\n    // --- enums: each member as a constant ----------------------------------------------------\n");
    for e in &h.enums {
        let _ = writeln!(o, "\n    // {}", e.name);
        for m in &e.members {
            let _ = writeln!(o, "    int {} = {};", strip_prefix(&m.name), m.value);
        }
    }
    o.push_str("\n    /** Each enum's members, by name without the prefix they share (the tests of the Java enums read it). */\n");
    o.push_str("    Map<String, Map<String, Integer>> ENUMS = Map.of(");
    for (i, e) in h.enums.iter().enumerate() {
        let _ = write!(o, "{}\n            {:?}, Map.ofEntries(", if i == 0 { "" } else { "," }, e.name);
        let entries: Vec<String> =
            e.members.iter().map(|m| format!("Map.entry({:?}, {})", short_member(e, m), strip_prefix(&m.name))).collect();
        o.push_str("\n                    ");
        o.push_str(&entries.join(",\n                    "));
        o.push(')');
    }
    o.push_str(");\n");

    o.push_str("\n    // --- structures and callbacks ------------------------------------------------------------\n");
    for item in struct_and_callback_order(h) {
        match item {
            Item::Struct(s) => {
                let name = java_struct_name(&s.name);
                let fields: Vec<(String, String, String)> = s
                    .fields
                    .iter()
                    .map(|f| {
                        let (t, init) = java_field(h, s, f);
                        (f.name.clone(), t, init)
                    })
                    .collect();
                let _ = writeln!(o, "\n    /** {{@code {}}}. */", s.name);
                let order: Vec<String> = fields.iter().map(|(n, _, _)| format!("{n:?}")).collect();
                let _ = writeln!(o, "    @Structure.FieldOrder({{{}}})", order.join(", "));
                let _ = writeln!(o, "    class {name} extends Structure {{");
                for (f, (n, t, init)) in s.fields.iter().zip(&fields) {
                    java_doc(&mut o, "        ", &f.doc);
                    let _ = writeln!(o, "        public {t} {n}{init};");
                }
                let strings = fields.iter().any(|(_, t, _)| t == "String");
                let _ = writeln!(o, "\n        public {name}() {{\n            super();");
                if strings {
                    o.push_str("            setStringEncoding(\"UTF-8\");\n");
                }
                o.push_str("        }\n");
                if h.is_delivered_struct(&s.name) {
                    let _ = writeln!(o, "\n        public {name}(Pointer p) {{\n            super(p);\n            read();\n        }}");
                }
                o.push_str("    }\n");
            }
            Item::Callback(c) => {
                let _ = writeln!(o, "\n    /** {{@code {}}}. */", c.name);
                java_doc(&mut o, "    ", &c.doc);
                let _ = writeln!(o, "    interface {} extends Callback {{", camel(strip_prefix(&c.name)));
                let params: Vec<String> = (0..c.params.len())
                    .map(|i| format!("{} {}", java_param(h, &c.params, i), lower_camel(&c.params[i].name)))
                    .collect();
                let ret = match c.ret.depth() {
                    0 => java_scalar(h, &c.ret.base),
                    _ => panic!("Java: a callback returning {}", c.ret.c()),
                };
                let _ = writeln!(o, "        {ret} invoke({});\n    }}", params.join(", "));
            }
        }
    }

    o.push_str("\n    // --- functions, in the header's order ----------------------------------------------------\n\n");
    for f in &h.functions {
        let params: Vec<String> =
            (0..f.params.len()).map(|i| format!("{} {}", java_param(h, &f.params, i), lower_camel(&f.params[i].name))).collect();
        let _ = writeln!(o, "    {} {}({});", java_return(h, f), f.name, params.join(", "));
    }
    o.push_str("}\n");
    o
}

// ---------------------------------------------------------------------------------------------
// Go (cgo calls C itself: only the constants are declared).
//
// Names: `MYSQLLEADER_` cut, the rest in CamelCase with Go's initialisms (`ID`, `OK`, `UTF8`);
// the header's version macros are `HeaderVersion*` (`Version()` is the library's); the flags of
// `mysqlleader_elector_config.flags` (`MYSQLLEADER_ELECTOR_*`) are unexported `flag*`
// (ElectorConfig has a field for each); a constant in milliseconds (`_MS` in its name) is a
// time.Duration, named without `Ms`. Enumerators are constants of the Go type in [`GO_ENUMS`],
// named with its prefix (`CodeNotLeader`, `StopLostSeat`), but for [`GO_NAMES`].

/// C enum -> (Go type, prefix of its constants); an enum not listed is not exposed in Go.
const GO_ENUMS: &[(&str, (&str, &str))] = &[
    ("mysqlleader_result", ("Code", "Code")),
    ("mysqlleader_event_kind", ("EventKind", "")),
    ("mysqlleader_stop_reason", ("StopReason", "Stop")),
    ("mysqlleader_column_kind", ("ColumnKind", "Column")),
];
/// Names that the rules above do not give.
const GO_NAMES: &[(&str, &str)] = &[("MYSQLLEADER_EVENT_MISSED", "EventsMissed")];
/// Header constants Go does not declare, and why.
const GO_LEFT_OUT: &[(&str, &str)] = &[
    ("MYSQLLEADER_WAIT_FOREVER", "WaitForLeadership takes a context instead of a timeout"),
    ("mysqlleader_wait_outcome", "the package waits on the events, not with mysqlleader_elector_wait"),
];
const GO_INITIALISMS: &[&str] = &["ID", "OK", "UTF8", "URL", "SQL", "TLS"];

fn go_camel(words: &str) -> String {
    words
        .split('_')
        .filter(|w| !w.is_empty())
        .map(|w| if GO_INITIALISMS.contains(&w) { w.to_string() } else { camel(w) })
        .collect()
}

/// (Go name, whether it is a duration in milliseconds).
fn go_define_name(name: &str) -> (String, bool) {
    if let Some(n) = lookup(GO_NAMES, name) {
        return (n.to_string(), false);
    }
    let short = strip_prefix(name);
    if short.starts_with("VERSION") {
        return (format!("Header{}", go_camel(short)), false);
    }
    if let Some(flag) = short.strip_prefix("ELECTOR_") {
        return (format!("flag{}", go_camel(flag)), false);
    }
    let words: Vec<&str> = short.split('_').collect();
    if words.contains(&"MS") {
        let rest: Vec<&str> = words.into_iter().filter(|w| *w != "MS").collect();
        return (go_camel(&rest.join("_")), true);
    }
    (go_camel(short), false)
}

fn go_comment(out: &mut String, indent: &str, first: &str, doc: &[String]) {
    let _ = writeln!(out, "{indent}// {first}");
    for l in doc {
        let l = if l.is_empty() { String::new() } else { format!(" {l}") };
        let _ = writeln!(out, "{indent}//{l}");
    }
}

pub fn go(h: &Header) -> String {
    let mut o = String::new();
    o.push_str("// Code generated from include/mysqlleader.h by tests/ffi_header.rs. DO NOT EDIT.\n");
    let _ = writeln!(o, "// Regenerate: {REGENERATE}");
    o.push_str("// The mapping rules are in tests/ffi_header/bindings.rs (section Go).\n\n");
    o.push_str("package mysqlleader\n\n// #include \"mysqlleader.h\"\nimport \"C\"\n\nimport \"time\"\n\n");
    o.push_str("// The constants of include/mysqlleader.h, in Go's names and units.\n");
    let mut pairs: Vec<(String, String, String)> = Vec::new(); // (C name, Go value as uint64, C value)
    o.push_str("const (\n");
    let mut first = true;
    for d in &h.defines {
        if lookup(GO_LEFT_OUT, &d.name).is_some() {
            continue;
        }
        let (name, ms) = go_define_name(&d.name);
        if !first {
            o.push('\n');
        }
        first = false;
        go_comment(&mut o, "\t", &format!("{name} is {}.", d.name), &d.doc);
        let _ = match (&d.value, ms) {
            (Value::Int(n), true) => writeln!(o, "\t{name} = {n} * time.Millisecond"),
            (Value::Int(n), false) => writeln!(o, "\t{name} = {n}"),
            (Value::Str(s), _) => writeln!(o, "\t{name} = {s:?}"),
            (Value::U64Max, _) => panic!("Go: no rule for {} (UINT64_MAX): add it to GO_LEFT_OUT or teach go()", d.name),
        };
        match (&d.value, ms) {
            (Value::Str(_), _) => {}
            (_, true) => pairs.push((d.name.clone(), format!("uint64({name} / time.Millisecond)"), format!("uint64(C.{})", d.name))),
            (_, false) => pairs.push((d.name.clone(), format!("uint64({name})"), format!("uint64(C.{})", d.name))),
        }
    }
    o.push_str(")\n");
    for e in &h.enums {
        if lookup(GO_LEFT_OUT, &e.name).is_some() {
            continue;
        }
        let (ty, prefix) = lookup(GO_ENUMS, &e.name)
            .unwrap_or_else(|| panic!("Go: enum {} is new: add it to GO_ENUMS (or GO_LEFT_OUT) in tests/ffi_header/bindings.rs", e.name));
        let _ = writeln!(o, "\n// The members of {} (the header's numbers).\nconst (", e.name);
        for (i, m) in e.members.iter().enumerate() {
            let name = lookup(GO_NAMES, &m.name)
                .map(str::to_string)
                .unwrap_or_else(|| format!("{prefix}{}", go_camel(&short_member(e, m))));
            if i > 0 {
                o.push('\n');
            }
            go_comment(&mut o, "\t", &format!("{name} is {}.", m.name), &m.doc);
            let _ = writeln!(o, "\t{name} {ty} = {}", m.value);
            pairs.push((m.name.clone(), format!("uint64({name})"), format!("uint64(C.{})", m.name)));
        }
        o.push_str(")\n");
    }
    o.push_str("\n// cConstants pairs each constant above with the value the C compiler sees (header_test.go\n// compares them).\n");
    o.push_str("func cConstants() []struct {\n\tname            string\n\tgoValue, cValue uint64\n} {\n\treturn []struct {\n\t\tname            string\n\t\tgoValue, cValue uint64\n\t}{\n");
    for (c, g, v) in &pairs {
        let _ = writeln!(o, "\t\t{{{c:?}, {g}, {v}}},");
    }
    o.push_str("\t}\n}\n");
    o.push_str("\n// cFunctions are the functions of the header (header_test.go checks that the package calls\n// each, or says why not).\n");
    o.push_str("var cFunctions = []string{\n");
    for f in &h.functions {
        let _ = writeln!(o, "\t{:?},", f.name);
    }
    o.push_str("}\n");
    o
}

/// Every generated file: (path from the repository root, text), from the header's text.
pub fn render(header: &str) -> Vec<(&'static str, String)> {
    let h = parse(header);
    vec![(PYTHON, python(&h)), (JAVA, java(&h)), (GO, go(&h))]
}
