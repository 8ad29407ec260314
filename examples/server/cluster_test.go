package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// cluster is a PostgreSQL cluster of one test's own, listening on a Unix
// socket in its directory only (no TCP port), so that the test can stop
// its server process without touching the shared test database.
type cluster struct {
	bin, dir string
	asOwner  func(name string, args ...string) *exec.Cmd
	dsn      string
}

// startCluster creates and starts a cluster in a temporary directory with
// the newest installed PostgreSQL, and removes it when the test ends. As
// root it runs the server as the postgres user, as scripts/pg-test.sh
// does.
func startCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{bin: pgBindir()}
	if c.bin == "" {
		t.Fatal("no PostgreSQL server programs (initdb, pg_ctl) found; scripts/pg-test.sh start installs them")
	}
	dir, err := os.MkdirTemp("", "vouch-readyz-")
	if err != nil {
		t.Fatal(err)
	}
	c.dir = dir
	c.asOwner = exec.Command
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Fatalf("running as root needs a postgres user (scripts/pg-test.sh start makes one): %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		c.asOwner = func(name string, args ...string) *exec.Cmd {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
		}
	}
	t.Cleanup(func() {
		c.stop(t)
		os.RemoveAll(dir)
	})
	data := filepath.Join(dir, "data")
	c.run(t, "initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-locale")
	c.run(t, "pg_ctl", "-D", data, "-l", filepath.Join(dir, "server.log"), "-w", "-t", "60",
		"-o", fmt.Sprintf("-c listen_addresses='' -c unix_socket_directories=%s -p 5432", dir), "start")
	c.dsn = fmt.Sprintf("host=%s port=5432 user=postgres dbname=postgres sslmode=disable", dir)
	return c
}

// stop stops the cluster's server, if it runs.
func (c *cluster) stop(t *testing.T) {
	t.Helper()
	data := filepath.Join(c.dir, "data")
	if _, err := os.Stat(filepath.Join(data, "postmaster.pid")); err != nil {
		return
	}
	c.run(t, "pg_ctl", "-D", data, "-m", "fast", "-w", "stop")
}

func (c *cluster) run(t *testing.T, prog string, args ...string) {
	t.Helper()
	if out, err := c.asOwner(filepath.Join(c.bin, prog), args...).CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "server.log"))
		t.Fatalf("%s: %v\n%s\n%s", prog, err, out, log)
	}
}

// pgBindir returns the directory of the newest installed server's
// programs, or "".
func pgBindir() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return va - vb
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		if _, err := os.Stat(filepath.Join(dirs[i], "initdb")); err == nil {
			return dirs[i]
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("pg_ctl"); err == nil {
			return filepath.Dir(p)
		}
	}
	return ""
}
