package mysqlleader

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Every test talks to a real server: the one of MYSQLLEADER_TEST_URL (an account that may
// create databases), or, when it is unset, a throwaway mariadbd that scripts/testdb.sh starts
// and stops. Each run creates its own databases and drops them at the end:
//
//	testURL   a migrated database, shared by the tests (each test uses its own service ids)
//	emptyURL  a database without the schema (ErrNotMigrated)
var (
	baseURL  string
	testURL  string
	emptyURL string
	testDBs  []string
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain())
	}
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	baseURL = os.Getenv("MYSQLLEADER_TEST_URL")
	if baseURL == "" {
		stop, url, err := startThrowawayServer()
		if err != nil {
			fmt.Fprintln(os.Stderr, "mysqlleader tests: MYSQLLEADER_TEST_URL is not set and no throwaway server could be started:", err)
			return 2
		}
		defer stop()
		baseURL = url
	}
	suffix := randomHex(4)
	main := fmt.Sprintf("mlgo_%d_%s", os.Getpid(), suffix)
	empty := main + "_empty"
	var err error
	if testURL, err = createDatabase(main); err == nil {
		emptyURL, err = createDatabase(empty)
	}
	defer dropDatabases()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mysqlleader tests: creating the test databases:", err)
		return 2
	}
	client, err := Open(testURL)
	if err == nil {
		_, err = client.Migrate(context.Background())
		client.Close()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "mysqlleader tests: migrating the test database:", err)
		return 2
	}
	// The examples read the URL the way a program would.
	os.Setenv("MYSQLLEADER_URL", testURL)
	return m.Run()
}

// startThrowawayServer runs scripts/testdb.sh start in a temporary directory.
func startThrowawayServer() (stop func(), url string, err error) {
	script, err := filepath.Abs("../../scripts/testdb.sh")
	if err != nil {
		return nil, "", err
	}
	dir, err := os.MkdirTemp("", "mysqlleader-go-db.")
	if err != nil {
		return nil, "", err
	}
	stop = func() { _ = exec.Command(script, "stop", dir).Run() }
	out, err := exec.Command(script, "start", dir).Output()
	if err != nil {
		stop()
		return nil, "", fmt.Errorf("%s start: %w", script, err)
	}
	match := regexp.MustCompile(`MYSQLLEADER_TEST_URL=(\S+)`).FindSubmatch(out)
	if match == nil {
		stop()
		return nil, "", fmt.Errorf("%s start printed no URL: %s", script, out)
	}
	fmt.Fprintln(os.Stderr, "mysqlleader tests: throwaway server in", dir)
	return stop, string(match[1]), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// urlWithDB replaces the database of a URL.
func urlWithDB(base, db string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	u.Path = "/" + db
	return u.String(), nil
}

// execSQL runs statements in one transaction of a client of url.
func execSQL(url string, statements ...string) error {
	client, err := Open(url)
	if err != nil {
		return err
	}
	defer client.Close()
	ctx := context.Background()
	tx, err := client.BeginTx(ctx)
	if err != nil {
		return err
	}
	defer tx.Close()
	for _, s := range statements {
		if _, err := tx.Exec(ctx, s); err != nil {
			return err
		}
	}
	return tx.Commit(ctx)
}

var dbMu sync.Mutex

// createDatabase creates a database through the base URL's account and returns its URL.
func createDatabase(name string) (string, error) {
	if err := execSQL(baseURL, "CREATE DATABASE `"+name+"`"); err != nil {
		return "", err
	}
	dbMu.Lock()
	testDBs = append(testDBs, name)
	dbMu.Unlock()
	return urlWithDB(baseURL, name)
}

func dropDatabases() {
	dbMu.Lock()
	defer dbMu.Unlock()
	for _, name := range testDBs {
		if err := execSQL(baseURL, "DROP DATABASE IF EXISTS `"+name+"`"); err != nil {
			fmt.Fprintln(os.Stderr, "mysqlleader tests: dropping", name, ":", err)
		}
	}
	testDBs = nil
}

// newDatabase makes a database of the test's own (dropped at the end of the run).
func newDatabase(t *testing.T) string {
	t.Helper()
	url, err := createDatabase(fmt.Sprintf("mlgo_%d_%s", os.Getpid(), randomHex(4)))
	if err != nil {
		t.Fatalf("creating a database: %v", err)
	}
	return url
}

// newClient opens a client of the shared migrated database, closed at the end of the test.
func newClient(t *testing.T) *Client {
	t.Helper()
	return openClient(t, testURL)
}

func openClient(t *testing.T, url string) *Client {
	t.Helper()
	c, err := Open(url)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// service returns a service id of the test's own.
func service(t *testing.T, suffix ...string) string {
	s := strings.NewReplacer("/", ".", " ", "_").Replace(t.Name()) + "-" + randomHex(3)
	for _, x := range suffix {
		s += "-" + x
	}
	if len(s) > IDMaxChars {
		s = s[len(s)-IDMaxChars:]
	}
	return s
}

func ctxTimeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// wantCode checks that err is an *Error with the code, matching the code's sentinel.
func wantCode(t *testing.T, err error, code Code, sentinel error) *Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %v", code)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %T %v, want an *Error with %v", err, err, code)
	}
	if e.Code != code {
		t.Fatalf("got code %v (%v), want %v", e.Code, err, code)
	}
	if !errors.Is(err, sentinel) {
		t.Fatalf("errors.Is(%v, %v) = false", err, sentinel)
	}
	return e
}

// wantParam checks an invalid-argument error and the parameter it names.
func wantParam(t *testing.T, err error, param string) {
	t.Helper()
	e := wantCode(t, err, CodeInvalidArgument, ErrInvalidArgument)
	if e.Param != param {
		t.Fatalf("Param = %q, want %q (%v)", e.Param, param, err)
	}
	if !strings.Contains(e.Error(), param) {
		t.Fatalf("the message does not name %q: %v", param, err)
	}
}

// eventually polls cond every 20 ms until it holds or limit passes.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// blackhole is a TCP server that accepts connections and never answers: calls on it block
// until their timeout.
func blackhole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	return "mysql://user:hunter2@" + ln.Addr().String() + "/db"
}

// proxy forwards TCP connections to the database server until cut: then it closes every
// connection and refuses new ones, so calls fail with ErrConnection.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	cut    bool
}

func newProxy(t *testing.T, dbURL string) (*proxy, string) {
	t.Helper()
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: u.Host}
	go p.serve()
	t.Cleanup(func() { p.cutAll(); ln.Close() })
	u.Host = ln.Addr().String()
	// Otherwise the driver moves loopback connections to the server's Unix socket, past the proxy.
	q := u.Query()
	q.Set("prefer_socket", "false")
	u.RawQuery = q.Encode()
	return p, u.String()
}

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			c.Close()
			continue
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			p.mu.Unlock()
			c.Close()
			continue
		}
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(s, c); s.Close() }()
		go func() { _, _ = io.Copy(c, s); c.Close() }()
	}
}

func (p *proxy) cutAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// nextEvent receives the next event, failing the test after limit.
func nextEvent(t *testing.T, ch <-chan Event, limit time.Duration) Event {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			t.Fatalf("the Changes channel was closed")
		}
		return ev
	case <-time.After(limit):
		t.Fatalf("no event within %v", limit)
	}
	return Event{}
}

// waitEvent receives events until one satisfies match; the others are returned too.
func waitEvent(t *testing.T, ch <-chan Event, limit time.Duration, what string, match func(Event) bool) (Event, []Event) {
	t.Helper()
	var seen []Event
	deadline := time.After(limit)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("%s: the Changes channel was closed (seen %v)", what, seen)
			}
			seen = append(seen, ev)
			if match(ev) {
				return ev, seen
			}
		case <-deadline:
			t.Fatalf("%s: not within %v (seen %v)", what, limit, seen)
		}
	}
}

// linesOf reads lines from r into a channel (for the helper processes).
func linesOf(r io.Reader) <-chan string {
	ch := make(chan string, 100)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}
