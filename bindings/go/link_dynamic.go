//go:build cgo && mysqlleader_dynamic

package mysqlleader

// Dynamic linking, with `go build -tags mysqlleader_dynamic`: the program loads
// libmysqlleader.so at run time, from target/release of this checkout (an rpath) or from the
// loader's usual search path (LD_LIBRARY_PATH, /usr/local/lib after ldconfig, ...).

// #cgo CFLAGS: -I${SRCDIR}/../../target/release
// #cgo LDFLAGS: -L${SRCDIR}/../../target/release -lmysqlleader -Wl,-rpath,${SRCDIR}/../../target/release
// #if !__has_include("libmysqlleader.so")
// #error "mysqlleader: target/release/libmysqlleader.so is missing: run `cargo build --release --lib` in the repository root (with CARGO_TARGET_DIR set, link $CARGO_TARGET_DIR/release to target/release)"
// #endif
import "C"
