package mysqlleader

// #include "mysqlleader.h"
import "C"

import (
	"time"
)

// The constants of include/mysqlleader.h, in Go's units (a test parses the header so that
// they cannot drift).
const (
	// HeaderVersionMajor, HeaderVersionMinor and HeaderVersionPatch are the version of the
	// header this package was written against; Version() is the library's.
	HeaderVersionMajor = 0
	HeaderVersionMinor = 1
	HeaderVersionPatch = 0

	// IDMaxChars is the longest service or node id the procedures accept, in characters.
	IDMaxChars = 128
	// IDBufferSize is the bytes a C buffer needs for any id with its NUL (MYSQLLEADER_ID_BUFFER_SIZE).
	IDBufferSize = 513

	// LeaseMin and LeaseMax bound every lease (whole milliseconds).
	LeaseMin = 1 * time.Millisecond
	LeaseMax = 86_400_000 * time.Millisecond

	// DefaultRequestTimeout is the request timeout of a new Client: the longest one call may
	// take before it fails with ErrConnection.
	DefaultRequestTimeout = 5000 * time.Millisecond
	// MigrateTimeout is the longest Client.Migrate may take once connected (it waits up to 60 s
	// for another process's migration first).
	MigrateTimeout = 120_000 * time.Millisecond
)

// Flags of mysqlleader_elector_config.flags, set through ElectorConfig.
const (
	flagNoResignOnFree = 1 // MYSQLLEADER_ELECTOR_NO_RESIGN_ON_FREE
	flagNoJitter       = 2 // MYSQLLEADER_ELECTOR_NO_JITTER
)

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

// cConstants returns the values the C compiler sees, for the test that compares them with the
// header's text and this package's constants.
func cConstants() map[string]uint64 {
	return map[string]uint64{
		"MYSQLLEADER_VERSION_MAJOR":              uint64(C.MYSQLLEADER_VERSION_MAJOR),
		"MYSQLLEADER_VERSION_MINOR":              uint64(C.MYSQLLEADER_VERSION_MINOR),
		"MYSQLLEADER_VERSION_PATCH":              uint64(C.MYSQLLEADER_VERSION_PATCH),
		"MYSQLLEADER_ID_MAX_CHARS":               uint64(C.MYSQLLEADER_ID_MAX_CHARS),
		"MYSQLLEADER_ID_BUFFER_SIZE":             uint64(C.MYSQLLEADER_ID_BUFFER_SIZE),
		"MYSQLLEADER_LEASE_MS_MIN":               uint64(C.MYSQLLEADER_LEASE_MS_MIN),
		"MYSQLLEADER_LEASE_MS_MAX":               uint64(C.MYSQLLEADER_LEASE_MS_MAX),
		"MYSQLLEADER_DEFAULT_REQUEST_TIMEOUT_MS": uint64(C.MYSQLLEADER_DEFAULT_REQUEST_TIMEOUT_MS),
		"MYSQLLEADER_MIGRATE_TIMEOUT_MS":         uint64(C.MYSQLLEADER_MIGRATE_TIMEOUT_MS),
		"MYSQLLEADER_ELECTOR_NO_RESIGN_ON_FREE":  uint64(C.MYSQLLEADER_ELECTOR_NO_RESIGN_ON_FREE),
		"MYSQLLEADER_ELECTOR_NO_JITTER":          uint64(C.MYSQLLEADER_ELECTOR_NO_JITTER),
		"MYSQLLEADER_WAIT_FOREVER":               uint64(C.MYSQLLEADER_WAIT_FOREVER),
		"MYSQLLEADER_OK":                         uint64(C.MYSQLLEADER_OK),
		"MYSQLLEADER_INVALID_STATE":              uint64(C.MYSQLLEADER_INVALID_STATE),
		"MYSQLLEADER_EVENT_MISSED":               uint64(C.MYSQLLEADER_EVENT_MISSED),
		"MYSQLLEADER_STOP_SHUTDOWN":              uint64(C.MYSQLLEADER_STOP_SHUTDOWN),
	}
}
