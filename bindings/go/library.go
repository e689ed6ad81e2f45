package mysqlleader

// #include "mysqlleader.h"
import "C"

// The library's own version and the calls that need no handle. (The constants of the header are
// in constants.go, generated from it.)

// Version returns the version of the library linked into the program, e.g. "0.1.0".
func Version() string {
	return C.GoString(C.mysqlleader_version())
}

// DefaultNodeID returns the node id an elector uses when ElectorConfig.NodeID is empty:
// "hostname:pid", at most 128 characters.
func DefaultNodeID() (string, error) {
	var id string
	err := ccall("default_node_id", func() C.mysqlleader_result {
		var rc C.mysqlleader_result
		id, rc = copyOut(func(buf *C.char, n C.size_t, needed *C.size_t) C.mysqlleader_result {
			return C.mysqlleader_default_node_id(buf, n, needed)
		})
		return rc
	})
	return id, err
}

// InstallSQL returns the whole installation as one script for the mysql/mariadb command-line
// client (what `mysqlleader sql` prints), for a DBA to review and apply. Applying it has the
// same effect as Client.Migrate.
func InstallSQL() (string, error) {
	var sql string
	err := ccall("install_sql", func() C.mysqlleader_result {
		var out *C.char
		rc := C.mysqlleader_install_sql(&out)
		if rc == C.MYSQLLEADER_OK {
			sql = C.GoString(out)
			C.mysqlleader_string_free(out)
		}
		return rc
	})
	return sql, err
}
