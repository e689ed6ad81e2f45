package mysqlleader

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// Issue 26, item 2: a statement that would end the transaction (several statements, COMMIT,
// DDL, ...) is refused before anything is sent; before, the rows after a COMMIT in the text
// were committed outside the fence.
func TestTxnExecRefusesTextThatWouldEndTheTransaction(t *testing.T) {
	c := newClient(t)
	ctx := ctxTimeout(t, time.Minute)
	table := newTable(t, c)
	svc := service(t)
	won, err := c.Campaign(ctx, svc, "a", 10*time.Second)
	if err != nil || !won.IsLeader {
		t.Fatalf("campaign: %+v %v", won, err)
	}
	for _, query := range []string{
		"INSERT INTO " + table + " (id) VALUES (100); COMMIT; DO SLEEP(0.2); INSERT INTO " + table + " (id) VALUES (101)",
		"COMMIT",
		"SET autocommit = 1",
		"DROP TABLE " + table,
	} {
		for _, fenced := range []bool{false, true} {
			if !fenced && strings.HasPrefix(query, "DROP") {
				continue // a plain transaction may run DDL (it commits what came before, as with any driver)
			}
			tx, err := c.BeginTx(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if fenced {
				if _, err := tx.AssertLeader(ctx, svc, "a", won.Term); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := tx.Exec(ctx, "INSERT INTO "+table+" (id) VALUES (1)"); err != nil {
				t.Fatal(err)
			}
			_, err = tx.Exec(ctx, query)
			e := wantCode(t, err, CodeUsage, ErrUsage)
			if e.Param != "query" || e.Transient {
				t.Errorf("%q: Param %q, Transient %v: %v", query, e.Param, e.Transient, err)
			}
			_ = tx.Rollback()
			tx.Close()
			for _, id := range []int{1, 100, 101} {
				if n := rows(t, c, table, id); n != 0 {
					t.Errorf("%q (fenced %v): row %d committed", query, fenced, id)
				}
			}
		}
	}
}

// Issue 26, item 4: an elector whose calls fail with what retrying cannot fix says so:
// WaitForLeadership returns the error at once (before: it waited for ever), as its own kind.
func TestWaitForLeadershipReturnsWhatRetryingCannotFix(t *testing.T) {
	for _, tc := range []struct {
		name     string
		url      string
		sentinel error
		code     Code
	}{
		{"wrong password", strings.Replace(testURL, "://", "://mlgo_nobody:wrong@", 1), ErrAuthentication, CodeAuthentication},
		{"schema not installed", newDatabase(t), ErrNotMigrated, CodeNotMigrated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url
			if tc.code == CodeAuthentication {
				// The test URL's own credentials come after ours: drop them.
				at := strings.LastIndex(url, "@")
				first := strings.Index(url, "@")
				url = url[:first] + url[at:]
			}
			c := openClient(t, url)
			e, err := NewElector(c, ElectorConfig{ServiceID: service(t), Lease: 2 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			began := time.Now()
			err = e.WaitForLeadership(ctx)
			t.Logf("returned after %v: %v", time.Since(began), err)
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("WaitForLeadership waited for ever")
			}
			got := wantCode(t, err, tc.code, tc.sentinel)
			if got.Transient {
				t.Errorf("transient: %v", err)
			}
		})
	}
}
