module github.com/mysqlleader/mysqlleader/examples/go/elect

go 1.22

require github.com/mysqlleader/mysqlleader/bindings/go v0.0.0

replace github.com/mysqlleader/mysqlleader/bindings/go => ../../../bindings/go
