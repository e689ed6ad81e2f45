//go:build mysqlleader_dynamic

package mysqlleader

// Dynamic linking, with `go build -tags mysqlleader_dynamic`: the program loads
// libmysqlleader.so at run time, from target/release of this checkout (an rpath) or from the
// loader's usual search path (LD_LIBRARY_PATH, /usr/local/lib after ldconfig, ...).

// #cgo LDFLAGS: -L${SRCDIR}/../../target/release -lmysqlleader -Wl,-rpath,${SRCDIR}/../../target/release
import "C"
