package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/wopneg/wopneg/examples/internal/pgtest"
	"github.com/wopneg/wopneg/facets"
)

// replicaDB returns a pool on CI's PostgreSQL and the URL of a schema of
// the test's own on it, which a replica given that URL writes into.
func replicaDB(t testing.TB) (*pgxpool.Pool, string, string) {
	t.Helper()
	pool := pgtest.Connect(t, nil)
	schema := pgtest.Schema(t, pool)
	if _, err := pool.Exec(context.Background(), "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	sep := "?"
	if strings.Contains(pgtest.URL(), "?") {
		sep = "&"
	}
	return pool, schema, pgtest.URL() + sep + "search_path=" + url.QueryEscape(schema)
}

// discover sends an MCP server/discover at revision to the host at base,
// as an anonymous caller, and returns the HTTP status; 0 when no answer
// came.
func discover(client *http.Client, base, revision string) int {
	body := `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` + revision + `","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", revision)
	req.Header.Set("Mcp-Method", "server/discover")
	res, err := client.Do(req)
	if err != nil {
		return 0
	}
	var sink bytes.Buffer
	_, err = sink.ReadFrom(res.Body)
	res.Body.Close()
	if err != nil {
		return 0 // the answer was cut: not answered
	}
	return res.StatusCode
}

// With -pg the host requires the audit and answers only once a decision's
// event committed; an audit write that fails makes the request an
// internal error and the host exit with an error.
func TestReplicaAnswersNothingUnrecordedAndExitsWithTheFailure(t *testing.T) {
	pool, schema, pgURL := replicaDB(t)
	cfg := config{Addr: "127.0.0.1:0", Token: testToken, Facets: defaultFacets(), PG: pgURL, SharedKeys: fleetKeys, AuditWait: time.Second}
	serveCtx, stop := context.WithCancel(context.Background())
	defer stop()
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(serveCtx, cfg, false, &bytes.Buffer{}, &stderr) }()
	base := waitServing(t, &stderr, done)
	if got := discover(http.DefaultClient, base, "2026-07-28"); got != http.StatusOK {
		t.Errorf("server/discover = %d, want 200", got)
	}
	if got := len(pgtest.All(t, pool, schema)); got != 1 {
		t.Errorf("%d events in the database once answered, want 1", got)
	}
	// A table the writer cannot write to: PostgreSQL refuses, for good.
	if _, err := pool.Exec(context.Background(), "DROP TABLE "+pgx.Identifier{schema, "wopneg_host_events"}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	if got := discover(http.DefaultClient, base, "2026-07-28"); got != http.StatusInternalServerError {
		t.Errorf("server/discover with the audit failing = %d, want 500", got)
	}
	stop()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "wopneg_host_events") {
		t.Errorf("run = %v, want the failed audit write", err)
	}
	if !strings.Contains(stderr.String(), "audit flushed: 1 recorded, 1 failed, 0 dropped") {
		t.Errorf("stderr:\n%s\nwant one event written and one failed", stderr.String())
	}
}

// The discovery document lists negotiation.decided as durable only when
// the host keeps that promise: with -pg and the audit acknowledged; with
// -audit-wait 0 (a queue in memory in front of the database) it lists it
// as ephemeral, as it does without -pg (TestDiscovery).
func TestDiscoveryDurableOnlyWithAnAcknowledgedDatabase(t *testing.T) {
	_, _, pgURL := replicaDB(t)
	for _, c := range []struct {
		wait     time.Duration
		delivery string
	}{{time.Second, "durable"}, {0, "ephemeral"}} {
		cfg := config{Addr: "127.0.0.1:0", Token: testToken, Facets: defaultFacets(), PG: pgURL, SharedKeys: fleetKeys, AuditWait: c.wait}
		serveCtx, stop := context.WithCancel(context.Background())
		var stderr syncBuffer
		done := make(chan error, 1)
		go func() { done <- run(serveCtx, cfg, false, &bytes.Buffer{}, &stderr) }()
		base := waitServing(t, &stderr, done)
		res, err := http.Get(base + facets.WellKnownPath)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		d, err := facets.ParseDiscovery(raw)
		if err != nil {
			t.Fatalf("-audit-wait %v: %v\n%s", c.wait, err, raw)
		}
		if want := []facets.HostEvent{{Type: "negotiation.decided", Delivery: c.delivery}}; !slices.Equal(d.HostEvents, want) {
			t.Errorf("-audit-wait %v: hostEvents %v, want %v", c.wait, d.HostEvents, want)
		}
		stop()
		if err := <-done; err != nil {
			t.Errorf("-audit-wait %v: run = %v", c.wait, err)
		}
	}
}

// waitServing waits for run to say where it serves, and returns its base
// URL.
func waitServing(t testing.TB, stderr *syncBuffer, done <-chan error) string {
	t.Helper()
	serving := regexp.MustCompile(`serving MCP on (http://[^ ]+)/mcp`)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if m := serving.FindStringSubmatch(stderr.String()); m != nil {
			return m[1]
		}
	}
	t.Fatalf("the replica did not start: %v\n%s", <-done, stderr.String())
	return ""
}

// A host killed with SIGKILL under load, with -pg, loses no answered
// decision: every request it answered has its event in the database.
func TestKilledReplicaLosesNoAnsweredDecision(t *testing.T) {
	pool, schema, pgURL := replicaDB(t)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "WOPNEG_HOST_MAIN=1", "WOPNEG_HOST_ARGS=-port 0 -pg "+pgURL+" -keys "+fleetKeys)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	sc := bufio.NewScanner(stderr)
	serving := regexp.MustCompile(`serving MCP on (http://[^ ]+)/mcp`)
	var base string
	for base == "" && sc.Scan() {
		if m := serving.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatal("the host did not start")
	}
	go func() { // keep the pipe drained
		for sc.Scan() {
		}
	}()

	// Accepted (2026-07-28) and refused below the floor (2025-06-18).
	revisions := []string{"2026-07-28", "2025-06-18"}
	answered := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	stop := make(chan struct{})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	for w := range 16 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				rev := revisions[(w+i)%2]
				status := discover(client, base, rev)
				if status != 0 && status != http.StatusInternalServerError {
					mu.Lock()
					answered[rev]++
					mu.Unlock()
				}
			}
		})
	}
	time.Sleep(2 * time.Second)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	close(stop)
	wg.Wait()

	rows, err := pool.Query(context.Background(), "SELECT payload->>'requested', count(*) FROM "+pgx.Identifier{schema, "wopneg_host_events"}.Sanitize()+" GROUP BY 1")
	if err != nil {
		t.Fatal(err)
	}
	recorded := map[string]int{}
	var (
		rev string
		n   int
	)
	if _, err := pgx.ForEachRow(rows, []any{&rev, &n}, func() error { recorded[rev] = n; return nil }); err != nil {
		t.Fatal(err)
	}
	t.Logf("answered %v, recorded %v", answered, recorded)
	for _, rev := range revisions {
		if answered[rev] == 0 {
			t.Errorf("no request at %s was answered: the load did not run", rev)
		}
		if recorded[rev] < answered[rev] {
			t.Errorf("at %s: %d answered, %d recorded: %d answered decisions have no event", rev, answered[rev], recorded[rev], answered[rev]-recorded[rev])
		}
	}
}

// waitFor waits until cond holds, checking every 10 ms, and fails the
// test when it has not in a minute: a bound on a hang, not on speed.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
	}
}

// answer is one request of a load: its revision, its status (0 when no
// answer came), and when it ran.
type answer struct {
	revision   string
	status     int
	start, end time.Time
}

// A replica with -pg whose database restarts under load answers no
// decision it has no event of, and answers 500 only while it cannot
// write: each answered request is matched to a distinct event of its
// revision decided while it ran (the payload's at), and every request
// answered 500 ran between the database's stop and the first request
// answered after its restart (the writer reconnects at its next attempt,
// up to its backoff after the restart). The outage lasts until a request
// has been answered 500, and the load until requests have been answered
// after the restart: conditions, not pauses, so that a slow machine
// changes how long the test takes, not what it finds.
func TestReplicaRidesOutADatabaseRestart(t *testing.T) {
	srv := pgtest.NewServer(t)
	pool := srv.Connect()
	schema := pgtest.Schema(t, pool)
	if _, err := pool.Exec(context.Background(), "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	cfg := config{Addr: "127.0.0.1:0", Token: testToken, Facets: defaultFacets(), SharedKeys: fleetKeys,
		PG: srv.URL() + "&search_path=" + url.QueryEscape(schema), AuditWait: 2 * time.Second}
	serveCtx, stopServing := context.WithCancel(context.Background())
	defer stopServing()
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(serveCtx, cfg, false, &bytes.Buffer{}, &stderr) }()
	base := waitServing(t, &stderr, done)

	revisions := []string{"2026-07-28", "2025-06-18"}
	var (
		mu      sync.Mutex
		answers []answer
		wg      sync.WaitGroup
		// restarted is set once the database is back; answeredAfter
		// counts the requests started after it and answered.
		restarted     time.Time
		answeredAfter int
	)
	stop := make(chan struct{})
	failedOnce := make(chan struct{})
	var failOnce sync.Once
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				a := answer{revision: revisions[(w+i)%2], start: time.Now()}
				a.status = discover(client, base, a.revision)
				a.end = time.Now()
				mu.Lock()
				answers = append(answers, a)
				if !restarted.IsZero() && a.start.After(restarted) && a.status != http.StatusInternalServerError {
					answeredAfter++
				}
				mu.Unlock()
				if a.status == http.StatusInternalServerError {
					failOnce.Do(func() { close(failedOnce) })
				}
			}
		})
	}
	// Load before the outage, then the database away until -audit-wait
	// has run out for a request, then back.
	waitFor(t, "requests answered before the outage", func() bool { mu.Lock(); defer mu.Unlock(); return len(answers) >= 50 })
	stopped := time.Now()
	srv.Stop()
	select {
	case <-failedOnce:
	case <-time.After(time.Minute):
		t.Fatal("no request was answered 500 in a minute with the database stopped")
	}
	srv.Start()
	mu.Lock()
	restarted = time.Now()
	mu.Unlock()
	waitFor(t, "requests answered after the restart", func() bool { mu.Lock(); defer mu.Unlock(); return answeredAfter >= 50 })
	close(stop)
	wg.Wait()
	stopServing()
	if err := <-done; err != nil {
		t.Errorf("run = %v, want every accepted event written once the database was back", err)
	}
	// The writer was writing again by the time the first request started
	// after the restart was answered: that request's start bounds the
	// outage as the writer saw it.
	recovered := time.Time{}
	for _, a := range answers {
		if a.start.After(restarted) && a.status != http.StatusInternalServerError && (recovered.IsZero() || a.start.Before(recovered)) {
			recovered = a.start
		}
	}

	rows, err := pool.Query(context.Background(), "SELECT payload->>'requested', (payload->>'at')::timestamptz FROM "+pgx.Identifier{schema, "wopneg_host_events"}.Sanitize())
	if err != nil {
		t.Fatal(err)
	}
	decided := map[string][]time.Time{}
	var (
		rev string
		at  time.Time
	)
	if _, err := pgx.ForEachRow(rows, []any{&rev, &at}, func() error { decided[rev] = append(decided[rev], at); return nil }); err != nil {
		t.Fatal(err)
	}
	var answered, failed int
	byRevision := map[string][]answer{}
	for _, a := range answers {
		switch a.status {
		case http.StatusOK, http.StatusBadRequest:
			answered++
			byRevision[a.revision] = append(byRevision[a.revision], a)
		case http.StatusInternalServerError:
			failed++
			if !a.start.Before(recovered) || !a.end.After(stopped) {
				t.Errorf("a request from %v to %v was answered 500 outside the outage (%v to %v, restarted %v)",
					a.start.Format(time.StampMilli), a.end.Format(time.StampMilli), stopped.Format(time.StampMilli),
					recovered.Format(time.StampMilli), restarted.Format(time.StampMilli))
			}
		default:
			t.Errorf("a request at %s was answered %d", a.revision, a.status)
		}
	}
	t.Logf("%d requests: %d answered, %d answered 500; %d events", len(answers), answered, failed, len(decided[revisions[0]])+len(decided[revisions[1]]))
	for _, rev := range revisions {
		if unmatched := unmatchedAnswers(byRevision[rev], decided[rev]); unmatched != 0 {
			t.Errorf("at %s: %d of %d answered decisions have no event decided while they ran", rev, unmatched, len(byRevision[rev]))
		}
	}
}

// unmatchedAnswers matches each answer to a distinct decision time within
// its request, the earliest ending first taking the earliest time it can
// (which matches as many as any matching can), and returns how many found
// none. The decision time is to the microsecond, so the request's start
// is too.
func unmatchedAnswers(answers []answer, decided []time.Time) int {
	slices.SortFunc(answers, func(a, b answer) int { return a.end.Compare(b.end) })
	slices.SortFunc(decided, time.Time.Compare)
	used := make([]bool, len(decided))
	unmatched := 0
	for _, a := range answers {
		from := a.start.Truncate(time.Microsecond)
		i, _ := slices.BinarySearchFunc(decided, from, time.Time.Compare)
		for i < len(decided) && used[i] {
			i++
		}
		if i == len(decided) || decided[i].After(a.end) {
			unmatched++
			continue
		}
		used[i] = true
	}
	return unmatched
}
