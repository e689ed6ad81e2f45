//go:build !cgo

package mysqlleader

// This package calls the C library libmysqlleader through cgo, which is off (CGO_ENABLED=0, or
// no C compiler was found, or a cross-compilation). The identifier below does not exist, so the
// build stops here with an error whose text says what to do.

var _ = mysqlleader_needs_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler_gcc_or_clang_on_PATH
