//go:build !mysqlleader_dynamic

package mysqlleader

// Static linking (the default): the Rust library is linked into the program, so a built
// program needs no libmysqlleader at run time. Build the library first, from the repository
// root: `cargo build --release --lib`.
//
// The Rust standard library inside libmysqlleader.a needs libm, libdl and libpthread (part of
// libc on current glibc); the C compiler adds libgcc_s for unwinding when it is needed.

// #cgo LDFLAGS: ${SRCDIR}/../../target/release/libmysqlleader.a -lz -lm -ldl -lpthread
import "C"
