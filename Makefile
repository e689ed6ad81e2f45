# mysqlleader — the two set-up commands are `make demo` and `make test`.
#
# Every test talks to a real server: MYSQLLEADER_TEST_URL when set, otherwise a throwaway
# mariadbd that scripts/testdb.sh starts (installing mariadb-server with apt when missing and
# running as root) and stops again.

SHELL := /bin/bash
CARGO ?= cargo
TESTDB := scripts/testdb.sh

.PHONY: all build test test-all test-rust test-galera demo clean

all: build

build:
	$(CARGO) build --release --all-targets

## Every test, in every language, against one throwaway server.
test: build
	$(TESTDB) run $(MAKE) --no-print-directory test-all

test-all: test-rust test-galera

test-rust:
	$(CARGO) test --release --all-targets -- --test-threads=4

## The 3-node Galera cluster tests (start their own cluster, as user mysql).
test-galera:
	scripts/test-galera.sh

clean:
	$(CARGO) clean
