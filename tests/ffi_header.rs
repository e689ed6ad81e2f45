//! The committed C header is exactly what cbindgen generates from src/ffi now, and its version
//! macros match Cargo.toml. Regenerate the header with
//!
//! ```text
//! MYSQLLEADER_UPDATE_HEADER=1 cargo test --release --test command_line ffi_header
//! ```
//!
//! (no database needed).

use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn header_path() -> PathBuf {
    root().join("include/mysqlleader.h")
}

/// What cbindgen generates from src/ffi with cbindgen.toml.
fn generated() -> String {
    let mut config = cbindgen::Config::from_file(root().join("cbindgen.toml")).expect("cbindgen.toml parses");
    // The version macros, from Cargo.toml (the only place the version is written).
    let version = format!(
        "\n/** The version of the library this header belongs to (Cargo.toml's); compare with mysqlleader_version(). */\n\
         #define MYSQLLEADER_VERSION_MAJOR {}\n#define MYSQLLEADER_VERSION_MINOR {}\n#define MYSQLLEADER_VERSION_PATCH {}\n\
         #define MYSQLLEADER_VERSION \"{}\"\n",
        env!("CARGO_PKG_VERSION_MAJOR"),
        env!("CARGO_PKG_VERSION_MINOR"),
        env!("CARGO_PKG_VERSION_PATCH"),
        env!("CARGO_PKG_VERSION"),
    );
    config.after_includes = Some(config.after_includes.take().unwrap_or_default() + &version);
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(root().join("src/ffi/mod.rs"))
        .generate()
        .expect("cbindgen generates the header from src/ffi");
    let mut out = Vec::new();
    bindings.write(&mut out);
    String::from_utf8(out).expect("the header is UTF-8")
}

fn committed() -> String {
    std::fs::read_to_string(header_path()).unwrap_or_default()
}

#[test]
fn committed_header_matches_cbindgen() {
    let fresh = generated();
    if std::env::var_os("MYSQLLEADER_UPDATE_HEADER").is_some() {
        std::fs::write(header_path(), &fresh).expect("write include/mysqlleader.h");
        return;
    }
    let old = committed();
    if old != fresh {
        let first = old
            .lines()
            .zip(fresh.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| old.lines().count().min(fresh.lines().count()));
        panic!(
            "include/mysqlleader.h differs from what cbindgen generates from src/ffi (first difference at line {}):\n  \
             committed: {:?}\n  generated: {:?}\nRegenerate it with `MYSQLLEADER_UPDATE_HEADER=1 cargo test --release --test command_line ffi_header` and commit it.",
            first + 1,
            old.lines().nth(first).unwrap_or("<end of file>"),
            fresh.lines().nth(first).unwrap_or("<end of file>"),
        );
    }
}

/// The value of `#define NAME value` in the committed header.
fn define(header: &str, name: &str) -> String {
    let prefix = format!("#define {name} ");
    header
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("include/mysqlleader.h has no `#define {name}`"))
        .trim()
        .to_string()
}

#[test]
fn version_macros_match_cargo_toml() {
    let header = committed();
    assert_eq!(define(&header, "MYSQLLEADER_VERSION_MAJOR"), env!("CARGO_PKG_VERSION_MAJOR"));
    assert_eq!(define(&header, "MYSQLLEADER_VERSION_MINOR"), env!("CARGO_PKG_VERSION_MINOR"));
    assert_eq!(define(&header, "MYSQLLEADER_VERSION_PATCH"), env!("CARGO_PKG_VERSION_PATCH"));
    assert_eq!(define(&header, "MYSQLLEADER_VERSION"), format!("\"{}\"", env!("CARGO_PKG_VERSION")));
    // And the library reports the same version at run time.
    let runtime = unsafe { std::ffi::CStr::from_ptr(mysqlleader::ffi::mysqlleader_version()) };
    assert_eq!(runtime.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}

/// The last C identifier in `text`.
fn last_ident(text: &str) -> &str {
    text.trim_end_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("")
}

#[test]
fn every_name_in_the_header_carries_the_prefix() {
    let header = committed();
    let mut names: Vec<(String, &str)> = Vec::new(); // (name, line)
    let mut in_comment = false;
    for line in header.lines() {
        let t = line.trim();
        if in_comment {
            in_comment = !t.ends_with("*/");
            continue;
        }
        if t.starts_with("/*") {
            in_comment = !t.ends_with("*/");
            continue;
        }
        if let Some(rest) = t.strip_prefix("#define ") {
            names.push((rest.split_whitespace().next().unwrap().to_string(), line));
        } else if let Some(rest) = t.strip_prefix("typedef ") {
            let name = match rest.split_once("(*") {
                Some((_, after)) => after.split(')').next().unwrap(),
                None if rest.ends_with(';') => last_ident(rest),
                None => continue, // `typedef struct {`: named at its closing brace
            };
            names.push((name.to_string(), line));
        } else if let Some(rest) = t.strip_prefix("} ") {
            if rest.ends_with(';') && !rest.contains("extern") {
                names.push((last_ident(rest).to_string(), line));
            }
        } else if let Some(rest) = t.strip_prefix("enum ") {
            names.push((rest.split_whitespace().next().unwrap().to_string(), line));
        } else if !line.starts_with(' ') && !t.starts_with('#') && t.contains('(') {
            // A function declaration: `type name(` at the start of a line.
            names.push((last_ident(t.split('(').next().unwrap()).to_string(), line));
        } else if line.starts_with("    ") && t.contains(" = ") && t.ends_with(',') {
            names.push((t.split(" = ").next().unwrap().to_string(), line)); // an enumerator
        }
    }
    let functions = names.iter().filter(|(_, l)| l.contains('(') && !l.contains("typedef")).count();
    assert!(functions >= 40, "found only {functions} function declarations");
    for (name, line) in &names {
        let ok = name.starts_with("mysqlleader_") || name.starts_with("MYSQLLEADER_");
        assert!(ok, "`{name}` lacks the mysqlleader_/MYSQLLEADER_ prefix: {line}");
    }
    // Enumerators carry explicit, stable numbers.
    for line in header.lines().filter(|l| l.trim_start().starts_with("MYSQLLEADER_") && l.starts_with("    ")) {
        assert!(line.contains(" = "), "an enumerator without an explicit number: {line}");
    }
}
