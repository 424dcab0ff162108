package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Cluster is a PostgreSQL server of a test's own: initdb into a
// temporary folder and pg_ctl start on a free loopback port, with the
// binaries installed on this machine. Its processes are the test's to
// stop (SIGSTOP) and to let go on (SIGCONT): a server that stops
// answering with what was sent to it still in its sockets, and executes
// it when it resumes, as one whose disk stalls or that a hypervisor
// pauses does.
type Cluster struct {
	// URL is the server's database "postgres", as its superuser.
	URL  string
	dir  string
	bin  string
	cred *syscall.Credential // whom the server runs as, when this process is root
	mu   sync.Mutex
	// frozen are the processes Freeze stopped.
	frozen []int
	// stall is the control group of StallDisk, dev the disk it throttles.
	stall, dev string
}

// NewCluster starts a PostgreSQL server for the test, stopped and
// removed when it ends, with settings ("name=value") besides the
// defaults; commit timestamps are always tracked, so a test can tell
// when a row was committed (pg_xact_commit_timestamp). It skips the test
// (fails it under CI) when no PostgreSQL binaries are installed.
func NewCluster(t testing.TB, settings ...string) *Cluster {
	t.Helper()
	bin := postgresBinaries()
	if bin == "" {
		SkipOrFail(t, "no PostgreSQL binaries (initdb, pg_ctl) in /usr/lib/postgresql/*/bin or on PATH: a private PostgreSQL server is not tested")
	}
	dir, err := os.MkdirTemp("", "planwerk-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	c := &Cluster{dir: dir, bin: bin}
	t.Cleanup(func() { os.RemoveAll(dir) })
	// initdb refuses to run as root: the server then runs as the
	// system's postgres user, which owns the folder.
	if os.Geteuid() == 0 {
		c.cred = postgresUser(t)
		if err := os.Chown(dir, int(c.cred.Uid), int(c.cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	c.run(t, "initdb", "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8")
	port := freePort(t)
	opts := []string{"-p", port, "-k", dir, "-c", "listen_addresses=127.0.0.1", "-c", "fsync=off",
		"-c", "track_commit_timestamp=on", "-c", "max_connections=200"}
	for _, s := range settings {
		opts = append(opts, "-c", s)
	}
	c.run(t, "pg_ctl", "-D", data, "-l", filepath.Join(dir, "log"), "-w", "-t", "60", "-o", strings.Join(opts, " "), "start")
	t.Cleanup(func() {
		c.Thaw(t)
		c.run(t, "pg_ctl", "-D", data, "-m", "immediate", "-w", "stop")
	})
	c.URL = "postgres://postgres@127.0.0.1:" + port + "/postgres?sslmode=disable"
	return c
}

// Addr is the server's HOST:PORT, for a proxy in front of it.
func (c *Cluster) Addr() string {
	return strings.TrimSuffix(strings.TrimPrefix(c.URL, "postgres://postgres@"), "/postgres?sslmode=disable")
}

// Freeze stops every process of the server (SIGSTOP), the postmaster
// first so that it starts no new one: connections stay open, what is
// sent to them waits in their sockets, nothing is answered, and new
// connections wait in the listen queue.
func (c *Cluster) Freeze(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.frozen) > 0 {
		return
	}
	pm := c.postmaster(t)
	c.frozen = append(c.frozen, pm)
	if err := syscall.Kill(pm, syscall.SIGSTOP); err != nil {
		t.Fatalf("stop the postmaster: %v", err)
	}
	for _, pid := range childrenOf(pm) {
		if err := syscall.Kill(pid, syscall.SIGSTOP); err == nil {
			c.frozen = append(c.frozen, pid)
		}
	}
}

// Thaw lets the processes Freeze stopped go on (SIGCONT), the postmaster
// last; a server not frozen is left alone.
func (c *Cluster) Thaw(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, pid := range slices.Backward(c.frozen) {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
	c.frozen = nil
}

// StallDisk makes the disk stall for every process of the server, as a
// disk that stops completing writes does (a checkpoint's sync on a
// saturated volume, a storage fail-over): the processes move into a
// blkio control group of their own whose writes to the disk are
// throttled to one byte a second, so that a process waiting for a write
// to reach the disk (a commit's WAL flush) waits, uninterruptibly, while
// the server goes on accepting connections, cancel requests and reads
// from memory. It skips the test where this process may not make such a
// group (cgroup v1 blkio, as root): a machine's capability, not a
// dependency to install.
func (c *Cluster) StallDisk(t testing.TB) {
	t.Helper()
	c.PrepareDiskStall(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.throttle(t, "1")
}

// PrepareDiskStall moves the server's processes into the control group
// of StallDisk, its writes not yet throttled; a test calls it before it
// starts what must not be cut short by a skip.
func (c *Cluster) PrepareDiskStall(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stall == "" {
		dev := c.device(t)
		dir, err := os.MkdirTemp("/sys/fs/cgroup/blkio", "planwerk-stall-")
		if err != nil {
			t.Skipf("no blkio control group for a stalled disk (%v): a stalled disk is not tested", err)
		}
		c.stall, c.dev = dir, dev
		t.Cleanup(func() { c.removeStall(t) })
		for _, pid := range c.processes(t) {
			if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
				t.Fatalf("move process %d into %s: %v", pid, dir, err)
			}
		}
	}
}

// removeStall moves every process of StallDisk's group back to the root
// group, those the server started meanwhile too, and removes the group.
func (c *Cluster) removeStall(t testing.TB) {
	t.Helper()
	for range 100 {
		raw, err := os.ReadFile(filepath.Join(c.stall, "cgroup.procs"))
		if err != nil {
			t.Errorf("processes of %s: %v", c.stall, err)
			return
		}
		pids := strings.Fields(string(raw))
		if len(pids) == 0 {
			if err := os.Remove(c.stall); err != nil {
				t.Errorf("remove %s: %v", c.stall, err)
			}
			return
		}
		for _, pid := range pids {
			_ = os.WriteFile("/sys/fs/cgroup/blkio/cgroup.procs", []byte(pid), 0)
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("%s keeps getting processes", c.stall)
}

// UnstallDisk lets the server's writes reach the disk again.
func (c *Cluster) UnstallDisk(t testing.TB) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stall != "" {
		c.throttle(t, "0")
	}
}

func (c *Cluster) throttle(t testing.TB, bps string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(c.stall, "blkio.throttle.write_bps_device"), []byte(c.dev+" "+bps), 0); err != nil {
		t.Fatalf("throttle writes of %s: %v", c.dev, err)
	}
}

// device is MAJOR:MINOR of the whole disk the server's folder is on, as
// blkio names it.
func (c *Cluster) device(t testing.TB) string {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(c.dir, &st); err != nil {
		t.Fatal(err)
	}
	// Linux's encoding of a device number (makedev(3)).
	dev := st.Dev
	major, minor := (dev>>8)&0xfff|(dev>>32)&^uint64(0xfff), dev&0xff|(dev>>12)&^uint64(0xff)
	sys := fmt.Sprintf("/sys/dev/block/%d:%d", major, minor)
	if _, err := os.Stat(sys + "/partition"); err == nil {
		// The kernel resolves the link before "..": the disk's folder.
		if raw, err := os.ReadFile(sys + "/../dev"); err == nil {
			return strings.TrimSpace(string(raw))
		}
	}
	return fmt.Sprintf("%d:%d", major, minor)
}

// processes are the postmaster and its children.
func (c *Cluster) processes(t testing.TB) []int {
	t.Helper()
	pm := c.postmaster(t)
	return append([]int{pm}, childrenOf(pm)...)
}

// postmaster is the server's first process, from the first line of
// postmaster.pid.
func (c *Cluster) postmaster(t testing.TB) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(c.dir, "data", "postmaster.pid"))
	if err != nil {
		t.Fatalf("postmaster.pid: %v", err)
	}
	first, _, _ := strings.Cut(string(raw), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil {
		t.Fatalf("postmaster.pid: %q: %v", first, err)
	}
	return pid
}

// run runs one of the server's programs, as the server's user.
func (c *Cluster) run(t testing.TB, program string, args ...string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(c.bin, program), args...)
	cmd.Dir = c.dir
	if c.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
		t.Fatalf("%s %s: %v\n%s\n%s", program, strings.Join(args, " "), err, out, log)
	}
}

// childrenOf lists the processes whose parent is pid, from /proc.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var kids []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so fields
		// are counted after its closing parenthesis.
		i := strings.LastIndexByte(string(stat), ')')
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			kids = append(kids, child)
		}
	}
	return kids
}

// postgresBinaries is the folder of initdb and pg_ctl: the newest of
// /usr/lib/postgresql/*/bin, else the one on PATH; "" when there is none.
func postgresBinaries() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return versionOf(a) - versionOf(b) })
	for _, d := range slices.Backward(dirs) {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

// versionOf is the major version in /usr/lib/postgresql/VERSION/bin.
func versionOf(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

// postgresUser is the system user "postgres", whom a server started by
// root runs as.
func postgresUser(t testing.TB) *syscall.Credential {
	t.Helper()
	u, err := user.Lookup("postgres")
	if err != nil {
		SkipOrFail(t, fmt.Sprintf("running as root and no user postgres to run a private PostgreSQL server as (%v)", err))
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		t.Fatalf("user postgres: uid %q, gid %q", u.Uid, u.Gid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
}

// freePort is a loopback port nobody listens on.
func freePort(t testing.TB) string {
	t.Helper()
	_, port, err := net.SplitHostPort(FreeAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	return port
}
