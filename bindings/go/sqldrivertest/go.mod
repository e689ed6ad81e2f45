// A test-only module: Elector.Fence with a real database/sql driver (go-sql-driver/mysql).
// Apart from the package's module, so that the package itself requires no driver and no newer
// Go; make dist does not ship it. scripts/test-go.sh runs it.
module github.com/mysqlleader/mysqlleader/bindings/go/sqldrivertest

go 1.24.0

require (
	github.com/go-sql-driver/mysql v1.10.1
	github.com/mysqlleader/mysqlleader/bindings/go v0.0.0
)

require filippo.io/edwards25519 v1.2.0 // indirect

replace github.com/mysqlleader/mysqlleader/bindings/go => ../
