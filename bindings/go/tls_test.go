package mysqlleader

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestElectionOverTLS: an election and a fenced transaction over TLS, as a REQUIRE X509 account
// with its client certificate. Run by scripts/test-tls.sh (make test-tls), which starts the
// TLS-only server and sets MYSQLLEADER_TLS_X509_URL; there MYSQLLEADER_TEST_TLS_ELECTION=1 makes
// a missing URL a failure, never a skip.
func TestElectionOverTLS(t *testing.T) {
	url := os.Getenv("MYSQLLEADER_TLS_X509_URL")
	if url == "" {
		if os.Getenv("MYSQLLEADER_TEST_TLS_ELECTION") != "" {
			t.Fatal("MYSQLLEADER_TLS_X509_URL is not set")
		}
		t.Skip("run by scripts/test-tls.sh against the TLS-only server")
	}
	c, err := Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	e, err := NewElector(c, ElectorConfig{ServiceID: "tls-go", NodeID: "g1", Lease: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := e.WaitForLeadership(ctx); err != nil {
		t.Fatalf("no leadership over TLS: %v", err)
	}
	tx, err := e.BeginFencedTx(ctx)
	if err != nil {
		t.Fatalf("fenced transaction over TLS: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}
