// Package mysqlleader is leader election for services that already run on MySQL or MariaDB:
// several copies of a service run for high availability, exactly one must be active, and the
// database they already depend on settles which.
//
// It is a thin binding of the C library libmysqlleader (include/mysqlleader.h). The election
// itself is decided by stored procedures in the database (installed by Client.Migrate); this
// package calls them through the library and adds Go's idioms: context.Context, channels,
// errors.Is, idempotent Close.
//
// # Quick start
//
//	client, err := mysqlleader.Open("mysql://app:secret@db:3306/app")
//	...
//	defer client.Close()
//	if _, err := client.Migrate(ctx); err != nil { ... }        // once, or `mysqlleader migrate`
//	elector, err := mysqlleader.NewElector(client, mysqlleader.ElectorConfig{ServiceID: "billing"})
//	...
//	defer elector.Close()                                        // resigns: another node takes over at once
//	err = elector.RunWhileLeader(ctx, func(ctx context.Context) error {
//		// the leader's work; ctx ends the moment leadership does
//	})
//
// # What is guaranteed
//
// A lease is measured on the database server's clock alone. A node counts itself leader only
// until a deadline on its own monotonic clock, taken before it sent the renew (minus
// ElectorConfig.DriftMargin), so it stops leading before its lease can end in the database;
// failed, slow or lost renews never extend it. Given that the two clocks run at rates that
// differ by less than the drift margin over one lease, no two nodes believe they lead at the
// same instant. IsLeader checks the deadline at the moment it is called.
//
// Not guaranteed: a process paused after IsLeader and before acting still acts late. Fence
// what matters: every acquisition raises the term (the fencing token, never reused);
// Elector.RunFencedTx runs a transaction in which assert_leader has checked the term and holds
// the term share-locked (its history row, not the seat) until the commit, so no takeover commits in between. Stamp the
// term on requests to other systems that reject lower terms. See the repository's README,
// "Safety model", for clocks that stop or jump and for asynchronous replication.
//
// # Calls
//
// Client holds a connection pool. Its methods call one procedure each (Campaign, AmILeader,
// CurrentLeader, ForceLeader, Reelect, Resign, Handover, AssertLeader, SetExpiryEvent) and
// return its row as a small struct with the contract's column names; durations are
// time.Duration. Migrate
// installs or upgrades the schema; InstallSQL returns it as a script for a DBA. BeginTx and
// Txn run transactions for fenced writes.
//
// Elector campaigns in the background from NewElector until Close: the leader renews every
// RenewInterval, followers retry every RetryInterval and are woken at once when a leader
// resigns. IsLeader, Term, Leader, NodeID, ValidFor and State answer without a round trip.
// Changes delivers StartedLeading, StoppedLeading (with a StopReason) and LeaderChanged events
// in order, each once, and never drops one. WaitForLeadership, RunWhileLeader, Resign, Handover,
// BeginFencedTx and RunFencedTx complete the set.
//
// Session is one node's part in the elections of many services: NewSession with one node id
// and lease configuration (SessionConfig), then Session.Elector(serviceID) for each service,
// each an ordinary *Elector. The session's electors share one connection and one batched
// renew; Session.Close resigns and closes them all.
//
// # Contexts
//
// The C calls block and cannot be interrupted; each is bounded by its own timeout (the
// client's request timeout, DefaultRequestTimeout unless changed with SetRequestTimeout; the
// elector's RequestTimeout). Every blocking method takes a context and returns ctx.Err() as
// soon as the context ends; the call then finishes in the background (holding its client or
// transaction open until it does), and the outcome of an abandoned write is unknown, as with a
// lost connection. A transaction whose call was abandoned is spent: only Rollback and Close
// remain.
//
// # Errors
//
// A failed call returns an *Error with the result code, the server's error number and the
// library's message (never a password). It matches one sentinel with errors.Is:
// ErrInvalidArgument (Error.Param names the parameter), ErrInvalidUTF8, ErrNotLeader,
// ErrConnection (Error.Transient: may be retried), ErrNotMigrated, ErrServer (Error.ServerCode),
// ErrMigration, ErrInvalidState, plus ErrClosed and ErrNotCampaigning. RunWhileLeader returns a
// *LeadershipLostError (ErrLeadershipLost) when leadership ended under the function.
//
// # Threads and callbacks
//
// The library runs its own threads. The C error state is thread-local, so each call is made
// with the goroutine locked to its OS thread until the error is read. Leadership changes
// arrive on the elector's callback thread in the library; the callback passes a cgo.Handle
// (an integer, never a Go pointer) back to an exported trampoline, which copies the event into
// an unbounded queue and returns at once: no user code runs on the library's thread, it never
// blocks, and no panic crosses into C. Forgotten Clients, Electors and Txns are closed by
// finalizers, but Close them yourself: an Elector's Close resigns at once, a finalizer only
// when the garbage collector gets to it.
//
// # Building
//
// The package links libmysqlleader statically by default, with cgo flags relative to this
// directory: build the library first from the repository root with
// `cargo build --release --lib`. A program built this way needs no libmysqlleader at run time
// (only libc, libm, libgcc_s and libz). With the build tag mysqlleader_dynamic it links
// target/release/libmysqlleader.so instead.
package mysqlleader
