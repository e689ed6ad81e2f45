module github.com/mysqlleader/mysqlleader/bindings/go

go 1.22
