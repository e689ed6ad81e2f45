//go:build cgo && !mysqlleader_dynamic

package mysqlleader

// Static linking (the default): the Rust library is linked into the program, so a built
// program needs no libmysqlleader at run time. In this checkout the library is
// target/release/libmysqlleader.a: build it first, from the repository root, with
// `cargo build --release --lib`. (`make dist` writes target/dist/go, a copy of this module with
// the library inside, usable from anywhere with a `replace` directive.)
//
// The archive needs zlib and libm from the system (libpthread and libdl are part of libc since
// glibc 2.34); the C compiler adds libgcc's unwinder. A fully static program:
//
//	go build -ldflags '-linkmode external -extldflags "-static"'
//
// The include path on target/release only lets the check below see whether the archive exists,
// so that a missing library fails with what to do rather than a linker error.

// #cgo CFLAGS: -I${SRCDIR}/../../target/release
// #cgo LDFLAGS: ${SRCDIR}/../../target/release/libmysqlleader.a -lz -lm -lpthread -ldl
// #if !__has_include("libmysqlleader.a")
// #error "mysqlleader: target/release/libmysqlleader.a is missing: run `cargo build --release --lib` in the repository root (with CARGO_TARGET_DIR set, link $CARGO_TARGET_DIR/release to target/release), or use the module directory `make dist` writes (target/dist/go)"
// #endif
import "C"
