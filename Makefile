# mysqlleader — the two set-up commands are `make demo` and `make test`.
#
# Every test talks to a real server: MYSQLLEADER_TEST_URL when set, otherwise a throwaway
# mariadbd that scripts/testdb.sh starts (installing mariadb-server with apt when missing and
# running as root) and stops again.

SHELL := /bin/bash
CARGO ?= cargo
TESTDB := scripts/testdb.sh
# Where `make install` puts the C SDK (bin/mysqlleader, lib/, include/, lib/pkgconfig/,
# share/doc/mysqlleader/ with the licenses).
PREFIX ?= /usr/local

.PHONY: all build build-tests dist install test test-all test-rust test-fleet test-sql-client test-c test-python test-go test-java test-tls test-dist test-faults test-galera test-group-replication release-check demo bench clean

all: build

build:
	$(CARGO) build --release --workspace --all-targets

## What the tests run: every target but the two benchmarks, which no test runs (`make build`
## and `make bench` compile them): about a tenth of a cold build's compile work on 2 cores
## (cargo --timings, 2026-11-30: election 159 s and protocol 56 s of 1,977 s of units).
build-tests:
	CARGO=$(CARGO) scripts/build-tests.sh

## The distribution under target/dist (or $CARGO_TARGET_DIR/dist): the C SDK tarball (with the
## command-line tool), the Python wheel, the Go module directory and the Java jar, each with the
## licenses (scripts/dist.sh says what each holds).
dist:
	scripts/dist.sh

## The C SDK (library with its SONAME and links, archive, header, pkg-config files, the
## command-line tool, the licenses) under PREFIX.
install:
	scripts/install.sh "$(PREFIX)"

## The live demo: three candidates, a crash, force, reelect, a graceful handover (about 20 s).
demo:
	scripts/demo.sh

## Every test, in every language, on MariaDB and on MySQL (each part against a throwaway server
## of its own, MYSQLLEADER_TEST_URL / MYSQLLEADER_TEST_MYSQL_URL to use your own), Galera too:
## the parts run side by side in lanes and end with a summary (scripts/test-all.sh).
test: build-tests
	scripts/test-all.sh

## Every part one after the other against the one server of MYSQLLEADER_TEST_URL (or a
## throwaway MariaDB): the old `make test`, for a quick run on one kind of server.
test-all: build-tests
	$(TESTDB) run $(MAKE) --no-print-directory test-rust test-fleet test-sql-client test-c test-python test-go test-java test-tls test-dist test-faults test-galera

# Unit and integration tests and doc tests (benches are not run here: see docs/benchmarks.md).
# The doc tests need no server (they compile, or run without one): on MariaDB's part only.
test-rust:
	$(CARGO) test --release --workspace --lib --bins --tests -- --test-threads=4

## The tests that run alone, with no test beside it (scripts/test-all.sh runs them after every
## other part): the fleet test, 3 nodes x 10,000 services (tests/session.rs), and the two
## contention tests of 16 campaigners on 20-60 ms leases (tests/sql_concurrency.rs).
test-fleet:
	$(CARGO) test --release --test library -- --ignored --exact session::three_nodes_start_10000_services_at_once_on_two_threads_then_a_crash_and_a_close_hand_over --nocapture
	$(CARGO) test --release --test sql -- --ignored --exact sql_concurrency::sixteen_nodes_campaigning_never_hold_a_lease_at_once sql_concurrency::campaigns_with_the_sweep_and_an_operator_never_fail
	if [ "$${MYSQLLEADER_TEST_KIND:-mariadb}" != mysql ]; then $(CARGO) test --release --doc; fi

## The same scenario through the command-line client only (MySQL's own `mysql` on MySQL).
test-sql-client:
	bash tests/sql_client.sh

## C tests (shared and static library, under AddressSanitizer), the example, the header check.
test-c:
	scripts/test-c.sh

## Python binding: pytest in a virtualenv under target/.
test-python:
	scripts/test-python.sh

## Go binding: go vet and go test -race.
test-go:
	scripts/test-go.sh

## Java binding: JUnit 5 under Maven Surefire, then examples/java as a project outside the repository,
## then the Spring Boot starter's tests (Boot 3.5 and 4.0).
test-java:
	scripts/test-java.sh

## The distribution from clean places: the SDK installed and used with pkg-config, the wheel in a
## fresh venv without cargo, a Go module outside the repository, the crate built from its package.
test-dist:
	scripts/test-dist.sh

## Before a release: the registry's own dry run of the crate (it builds every dependency again,
## in the dev profile; test-dist builds the package in the release profile it has built).
release-check:
	$(CARGO) publish --dry-run

## TLS in every language against a TLS-only throwaway server (after test-c, -python, -go).
test-tls:
	scripts/test-tls.sh

## The fault-injection harness, short run (about a minute), with its independent checker.
test-faults:
	scripts/test-faults.sh

## Benchmarks against the classic recipe (not part of `make test`): see docs/benchmarks.md.
bench:
	scripts/bench.sh

## The 3-node Galera cluster tests (start their own cluster, as user mysql).
test-galera:
	scripts/test-galera.sh

## The 3-member MySQL Group Replication tests, single-primary and multi-primary, then the fault
## harness on the single-primary group (each mode on a group of its own; MySQL from the sid root
## of scripts/lib.sh). GR_MODES=single (or multi) runs one mode.
test-group-replication:
	scripts/test-group-replication.sh

clean:
	$(CARGO) clean
