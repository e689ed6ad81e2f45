package mysqlleader

import (
	"context"
	"errors"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// tlsEnv returns the environment variable name, set by scripts/test-tls.sh. Unset, the test is
// skipped (a plain `go test`), unless MYSQLLEADER_TEST_TLS_ELECTION is set, as test-tls.sh
// sets it: then a missing variable is a failure, never a skip.
func tlsEnv(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		if os.Getenv("MYSQLLEADER_TEST_TLS_ELECTION") != "" {
			t.Fatalf("%s is not set", name)
		}
		t.Skip("run by scripts/test-tls.sh against the TLS-only server")
	}
	return v
}

// TestElectionOverTLS: an election and a fenced transaction over TLS, as a REQUIRE X509 account
// with its client certificate. Run by scripts/test-tls.sh (make test-tls), which starts the
// TLS-only server and sets MYSQLLEADER_TLS_X509_URL; there MYSQLLEADER_TEST_TLS_ELECTION=1 makes
// a missing URL a failure, never a skip.
func TestElectionOverTLS(t *testing.T) {
	url := tlsEnv(t, "MYSQLLEADER_TLS_X509_URL")
	c, err := Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Migrated here too, so that the test stands alone (the X509 account may install).
	mctx, mcancel := context.WithTimeout(context.Background(), time.Minute)
	_, err = c.Migrate(mctx)
	mcancel()
	if err != nil {
		t.Fatalf("Migrate over TLS: %v", err)
	}
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

// TestTLSModesOverTheCABI: what each TLS setting of the URL does, through this package, against
// the TLS-only server (require_secure_transport=ON) of scripts/test-tls.sh: every ssl-mode
// connects; a wrong CA, a wrong host name, plaintext, a server without TLS and a REQUIRE X509
// account without its client certificate are refused with the error the library decides (not
// transient, a message that says why); bad TLS parameters name themselves (Error.Param).
//
// Needs MYSQLLEADER_TEST_URL (the TLS server; only its host, port and database are used),
// MYSQLLEADER_TEST_TLS_DIR (ca.pem, other-ca.pem, client-cert.pem, client-key.pem),
// MYSQLLEADER_TEST_PLAIN_URL (a server without TLS) and MYSQLLEADER_TLS_X509_URL (the REQUIRE
// X509 account with its certificate). Skipped without MYSQLLEADER_TEST_TLS_DIR, unless
// MYSQLLEADER_TEST_TLS_ELECTION is set (scripts/test-tls.sh): then a missing variable fails.
func TestTLSModesOverTheCABI(t *testing.T) {
	dir := tlsEnv(t, "MYSQLLEADER_TEST_TLS_DIR")
	need := func(name string) string {
		v := os.Getenv(name)
		if v == "" {
			t.Fatalf("%s is not set: run scripts/test-tls.sh (make test-tls)", name)
		}
		return v
	}
	base, err := url.Parse(need("MYSQLLEADER_TEST_URL"))
	if err != nil {
		t.Fatalf("MYSQLLEADER_TEST_URL: %v", err)
	}
	plain := need("MYSQLLEADER_TEST_PLAIN_URL")
	x509 := need("MYSQLLEADER_TLS_X509_URL")
	file := func(name string) string { return url.QueryEscape(filepath.Join(dir, name)) }
	ca, otherCA, cert := file("ca.pem"), file("other-ca.pem"), file("client-cert.pem")
	// tlsURL is the TLS server's URL as user (password = user name) at host, with params as the
	// query (MYSQLLEADER_TEST_URL's own query, if any, is dropped).
	tlsURL := func(user, host, params string) string {
		u := *base
		u.User = url.UserPassword(user, user)
		u.Host = net.JoinHostPort(host, base.Port())
		u.RawQuery = params
		u.Fragment = ""
		return u.String()
	}
	withParam := func(u, param string) string {
		if strings.Contains(u, "?") {
			return u + "&" + param
		}
		return u + "?" + param
	}

	// Migrate the database once, over TLS with the CA checked.
	{
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		c, err := Open(tlsURL("mysqlleader", "127.0.0.1", "ssl-mode=VERIFY_CA&ssl-ca="+ca))
		if err != nil {
			cancel()
			t.Fatalf("Open (to migrate over VERIFY_CA): %v", err)
		}
		_, err = c.Migrate(ctx)
		c.Close()
		cancel()
		if err != nil {
			t.Fatalf("Migrate over VERIFY_CA: %v", err)
		}
	}

	// probe opens a client on u and makes one call (Open may not connect: the connection is
	// made on the first call); it returns the step that failed and its error.
	probe := func(u string) (step string, err error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := Open(u)
		if err != nil {
			return "Open", err
		}
		defer c.Close()
		_, err = c.CurrentLeader(ctx, "tls-probe")
		return "CurrentLeader", err
	}

	// A plaintext login to the TLS-only server: MariaDB's 1045, MySQL's 3159.
	plaintextCode := uint32(1045)
	if os.Getenv("MYSQLLEADER_TEST_KIND") == "mysql" {
		plaintextCode = 3159
	}
	cases := []struct {
		name       string
		url        string
		want       error  // nil: the call succeeds; else the sentinel of the refusal
		serverCode uint32 // Error.ServerCode of the refusal
		says       string // in Error.Message
		param      string // Error.Param, for ErrInvalidArgument
	}{
		// 1. Every ssl-mode connects.
		{name: "REQUIRED", url: tlsURL("mysqlleader", "127.0.0.1", "ssl-mode=REQUIRED")},
		{name: "VERIFY_CA", url: tlsURL("mysqlleader", "127.0.0.1", "ssl-mode=VERIFY_CA&ssl-ca="+ca)},
		{name: "VERIFY_IDENTITY", url: tlsURL("mysqlleader", "127.0.0.1", "ssl-mode=VERIFY_IDENTITY&ssl-ca="+ca)},
		{name: "ssl-ca alone", url: tlsURL("mysqlleader", "127.0.0.1", "ssl-ca="+ca)},
		// 2. A server certificate from another CA.
		{name: "wrong CA", url: tlsURL("mysqlleader", "127.0.0.1", "ssl-mode=VERIFY_CA&ssl-ca="+otherCA),
			want: ErrUsage, says: "TLS"},
		// 3. The certificate is for 127.0.0.1 alone.
		{name: "wrong host name", url: tlsURL("mysqlleader", "localhost", "ssl-mode=VERIFY_IDENTITY&ssl-ca="+ca),
			want: ErrUsage, says: "not valid for name"},
		// 4. Plaintext: MariaDB answers 1045, as for a wrong password, MySQL 3159 ("insecure
		// transport"); the message says TLS is (or may be) what is missing.
		{name: "plaintext DISABLED", url: tlsURL("mysqlleader", "127.0.0.1", "ssl-mode=DISABLED"),
			want: ErrAuthentication, serverCode: plaintextCode, says: "requires TLS"},
		{name: "plaintext no ssl parameter", url: tlsURL("mysqlleader", "127.0.0.1", ""),
			want: ErrAuthentication, serverCode: plaintextCode, says: "requires TLS"},
		// 5. TLS required of a server that has none.
		{name: "server without TLS", url: withParam(plain, "ssl-mode=REQUIRED"),
			want: ErrUsage, says: "does not offer TLS"},
		// 6. A REQUIRE X509 account without its client certificate.
		{name: "X509 account without certificate", url: tlsURL("mlx509", "127.0.0.1", "ssl-mode=VERIFY_IDENTITY&ssl-ca="+ca),
			want: ErrAuthentication, serverCode: 1045, says: "client certificate"},
		// 7. Bad TLS parameters name themselves.
		{name: "unknown ssl-mode", url: tlsURL("mysqlleader", "127.0.0.1", "ssl-mode=SOMETIMES"),
			want: ErrInvalidArgument, param: "ssl-mode"},
		{name: "ssl-cert without ssl-key", url: tlsURL("mysqlleader", "127.0.0.1", "ssl-cert="+cert),
			want: ErrInvalidArgument, param: "ssl-key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			step, err := probe(tc.url)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("%s: want success over TLS (%s), got: %v", step, tc.url, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want a refusal matching %v (%s), but Open and CurrentLeader succeeded", tc.want, tc.url)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%s: want a *mysqlleader.Error, got %T: %v", step, err, err)
			}
			t.Logf("%s refused: code %v, server code %d, transient %v, param %q: %v",
				step, e.Code, e.ServerCode, e.Transient, e.Param, err)
			if !errors.Is(err, tc.want) {
				t.Errorf("%s: want errors.Is(err, %v), got code %v: %v", step, tc.want, e.Code, err)
			}
			if e.Transient {
				t.Errorf("%s: want a refusal that is not transient (a retry cannot mend it): %v", step, err)
			}
			if e.ServerCode != tc.serverCode {
				t.Errorf("%s: want ServerCode %d, got %d: %v", step, tc.serverCode, e.ServerCode, err)
			}
			if tc.param != "" && e.Param != tc.param {
				t.Errorf("%s: want Param %q, got %q: %v", step, tc.param, e.Param, err)
			}
			if !strings.Contains(e.Message, tc.says) {
				t.Errorf("%s: want %q in the message, got: %q", step, tc.says, e.Message)
			}
			for _, secret := range []string{"mysqlleader:mysqlleader", "mlx509:mlx509"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("%s: the password is in the message: %v", step, err)
				}
			}
		})
	}

	// 6. The REQUIRE X509 account with its client certificate wins an election.
	t.Run("X509 account with certificate", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := Open(x509)
		if err != nil {
			t.Fatalf("Open as the X509 account: %v", err)
		}
		defer c.Close()
		won, err := c.Campaign(ctx, "tls-go-x509", "g1", 5*time.Second)
		if err != nil {
			t.Fatalf("Campaign as the X509 account with its certificate: %v", err)
		}
		if !won.IsLeader {
			t.Fatalf("Campaign as the X509 account: want IsLeader, got %+v", won)
		}
		if r, err := c.Resign(ctx, "tls-go-x509", "g1"); err != nil || !r.Resigned {
			t.Errorf("Resign as the X509 account: want resigned, got %+v, %v", r, err)
		}
	})
}
