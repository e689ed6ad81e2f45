// Package sqldrivertest tests Elector.Fence on a transaction the application opened with its
// own database/sql driver, go-sql-driver/mysql, against the server of MYSQLLEADER_TEST_URL
// (scripts/test-go.sh sets it, starting a throwaway server when needed).
package sqldrivertest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	mysqlleader "github.com/mysqlleader/mysqlleader/bindings/go"
)

// lease: the leader's next renew is lease/5 = 4 s away, so only the fence can tell it in time.
const lease = 20 * time.Second

// database makes a database of the test's own (dropped at its end) and returns the library's
// URL of it, a go-sql-driver pool of it, and one of the server with no database selected.
func database(t *testing.T) (string, *sql.DB, *sql.DB) {
	t.Helper()
	base := os.Getenv("MYSQLLEADER_TEST_URL")
	if base == "" {
		t.Fatal("MYSQLLEADER_TEST_URL is not set: run scripts/test-go.sh (it starts a throwaway server when needed)")
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net, cfg.Addr = "tcp", u.Host
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "mlgodrv_" + hex.EncodeToString(b)
	ctx := context.Background()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE `"+name+"`"); err != nil {
		t.Fatal(err)
	}
	cfg.DBName = name
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		db.Close()
		_, _ = admin.ExecContext(context.Background(), "DROP DATABASE IF EXISTS `"+name+"`")
		admin.Close()
	})
	u.Path = "/" + name
	return u.String(), db, admin
}

func count(t *testing.T, db *sql.DB, id int) int {
	t.Helper()
	var n int
	if err := db.QueryRow("SELECT COUNT(*) FROM ledger WHERE id = ?", id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestFenceOnTheApplicationsOwnTransaction(t *testing.T) {
	dbURL, db, noDB := database(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := mysqlleader.Open(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if _, err := client.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE ledger (id INT PRIMARY KEY, term BIGINT UNSIGNED NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	elector, err := mysqlleader.NewElector(client, mysqlleader.ElectorConfig{ServiceID: "fence", NodeID: "a", Lease: lease, NoResignOnClose: true})
	if err != nil {
		t.Fatal(err)
	}
	defer elector.Close()
	if err := elector.WaitForLeadership(ctx); err != nil {
		t.Fatal(err)
	}
	term := elector.Term()

	// 1. Leading: the fence passes inside the caller's transaction, which then commits.
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO ledger VALUES (?, ?)", 1, term); err != nil {
		t.Fatal(err)
	}
	if err := elector.Fence(ctx, tx); err != nil {
		t.Fatalf("Fence while leading: %v", err)
	}
	// The connection goes on as usual after the CALL's results.
	if _, err := tx.ExecContext(ctx, "UPDATE ledger SET term = ? WHERE id = 1", term); err != nil {
		t.Fatalf("the transaction after Fence: %v", err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if count(t, db, 1) != 1 {
		t.Fatal("the fenced insert did not commit")
	}

	// 2. A statement ended the transaction under the *sql.Tx: a fence now would fence nothing.
	// MariaDB refuses it, and that is no refusal of the term: the elector still leads.
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	err = elector.Fence(ctx, tx)
	if !errors.Is(err, mysqlleader.ErrUsage) {
		t.Fatalf("Fence outside a transaction: got %v, want ErrUsage", err)
	}
	var myErr *mysql.MySQLError
	if !errors.As(err, &myErr) || myErr.Number != 31003 {
		t.Fatalf("the *Error does not wrap the driver's error 31003 (a call the session's state does not allow): %#v", err)
	}
	if !elector.IsLeader() {
		t.Fatal("a usage error stepped the elector down")
	}
	_ = tx.Rollback()

	// Any other error of the driver passes through unchanged (here: no database selected).
	tx, err = noDB.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = elector.Fence(ctx, tx)
	if !errors.As(err, &myErr) || myErr.Number != 1046 {
		t.Fatalf("Fence on a connection without a database: got %#v, want the driver's error 1046", err)
	}
	var own *mysqlleader.Error
	if errors.As(err, &own) || !elector.IsLeader() {
		t.Fatalf("the driver's error was not passed through unchanged (%v), or it stepped the elector down", err)
	}
	_ = tx.Rollback()

	// 3. An operator moves the seat. The insert before the fence must not commit.
	if _, err := client.ForceLeader(ctx, "fence", "b", lease); err != nil {
		t.Fatal(err)
	}
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO ledger VALUES (?, ?)", 3, term); err != nil {
		t.Fatal(err)
	}
	err = elector.Fence(ctx, tx)
	// At once, not at the next renew.
	if elector.IsLeader() {
		t.Fatal("still leading right after the refused Fence returned")
	}
	if !errors.Is(err, mysqlleader.ErrNotLeader) {
		t.Fatalf("Fence after force_leader: got %v, want ErrNotLeader", err)
	}
	var e *mysqlleader.Error
	if !errors.As(err, &e) || e.SQLState != "45001" || e.ServerCode != 31001 || e.CurrentTerm != term+1 {
		t.Fatalf("the refusal: %#v, want SQLSTATE 45001, error 31001 and current term %d", err, term+1)
	}
	_ = tx.Rollback()
	if count(t, db, 3) != 0 {
		t.Fatal("the insert before the refused fence committed")
	}
	// Not leading now: refused without a round trip.
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := elector.Fence(ctx, tx); !errors.Is(err, mysqlleader.ErrNotLeader) {
		t.Fatalf("Fence while not leading: got %v, want ErrNotLeader", err)
	}
	_ = tx.Rollback()

}
