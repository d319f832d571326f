package pgtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Server is a PostgreSQL server of a test's own, on loopback, that the
// test may stop and start again to take the database away from what it
// tests, without touching the server other tests share (go test runs
// packages side by side). Make one with [NewServer].
type Server struct {
	t       testing.TB
	bin     string // the directory of initdb, pg_ctl and postgres
	dir     string // the cluster's data directory
	port    int
	asUser  string // the user the server runs as, through runuser; "" for this process's
	started bool
}

// NewServer creates a cluster in a temporary directory and starts it; it
// is stopped and removed when the test ends. It needs PostgreSQL's server
// binaries (Debian's postgresql package, as .ci/run installs it); without
// them the test is skipped, unless CI is set. As root, the server runs as
// the postgres user, since PostgreSQL refuses to run as root.
func NewServer(t testing.TB) *Server {
	t.Helper()
	bins, _ := filepath.Glob("/usr/lib/postgresql/*/bin/pg_ctl")
	if len(bins) == 0 {
		skipUnlessCI(t, "no PostgreSQL server binaries under /usr/lib/postgresql")
	}
	slices.SortFunc(bins, func(a, b string) int { return versionOf(a) - versionOf(b) })
	s := &Server{t: t, bin: filepath.Dir(bins[len(bins)-1])}
	owner := -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			skipUnlessCI(t, "running as root and there is no postgres user to run the server as")
		}
		s.asUser = "postgres"
		owner, _ = strconv.Atoi(u.Uid)
	}
	root, err := os.MkdirTemp("", "wopneg-pgtest-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	if owner >= 0 {
		if err := os.Chown(root, owner, -1); err != nil {
			t.Fatal(err)
		}
	}
	s.dir = filepath.Join(root, "data")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.port = ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	// Trust on loopback: the server lives as long as the test, and only
	// the test's own process can reach its port and socket directory.
	s.run("initdb", "-D", s.dir, "-U", "wopneg", "-A", "trust", "--no-sync", "-E", "UTF8")
	// No fsync: what the tests take away is the server, never the
	// machine, and a flush per commit would make them slow.
	conf := fmt.Sprintf("\nport = %d\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '%s'\nmax_connections = 50\nfsync = off\n", s.port, root)
	f, err := os.OpenFile(filepath.Join(s.dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(conf); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if s.started {
			s.Stop()
		}
	})
	s.Start()
	return s
}

func versionOf(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(bin))))
	return n
}

func skipUnlessCI(t testing.TB, why string) {
	t.Helper()
	if ci := os.Getenv("CI"); ci != "" && ci != "false" && ci != "0" {
		t.Fatalf("CI is set but %s", why)
	}
	t.Skip(why)
}

// run runs one of the server's programs as the server's user, and fails
// the test when it fails.
func (s *Server) run(program string, args ...string) {
	s.t.Helper()
	path := filepath.Join(s.bin, program)
	cmd := exec.Command(path, args...)
	if s.asUser != "" {
		cmd = exec.Command("runuser", append([]string{"-u", s.asUser, "--", path}, args...)...)
	}
	cmd.Dir = "/"
	if out, err := cmd.CombinedOutput(); err != nil {
		s.t.Fatalf("%s %s: %v\n%s", program, strings.Join(args, " "), err, out)
	}
}

// URL is the server's database URL.
func (s *Server) URL() string {
	return fmt.Sprintf("postgres://wopneg@127.0.0.1:%d/postgres?sslmode=disable&connect_timeout=5", s.port)
}

// Connect returns a pool on the server, closed when the test ends.
func (s *Server) Connect() *pgxpool.Pool {
	s.t.Helper()
	cfg, err := pgxpool.ParseConfig(s.URL())
	if err != nil {
		s.t.Fatal(err)
	}
	cfg.MaxConns = 16
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(pool.Close)
	return pool
}

// Stop shuts the server down as pg_ctlcluster stop does (fast: the
// sessions are ended, their transactions rolled back), and returns once
// it is down.
func (s *Server) Stop() {
	s.t.Helper()
	s.run("pg_ctl", "-D", s.dir, "-m", "fast", "-w", "-t", "60", "stop")
	s.started = false
}

// Start starts the server, and returns once it accepts connections.
func (s *Server) Start() {
	s.t.Helper()
	s.run("pg_ctl", "-D", s.dir, "-l", filepath.Join(filepath.Dir(s.dir), "log"), "-w", "-t", "60", "start")
	s.started = true
}

// Outage stops the server after down, starts it again after up more,
// and returns when it stopped and when it was started again.
func (s *Server) Outage(down, up time.Duration) (stopped, restarted time.Time) {
	s.t.Helper()
	time.Sleep(down)
	stopped = time.Now()
	s.Stop()
	s.t.Logf("stopping took %v", time.Since(stopped))
	time.Sleep(up)
	start := time.Now()
	s.Start()
	s.t.Logf("starting took %v", time.Since(start))
	return stopped, time.Now()
}
