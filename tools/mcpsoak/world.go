package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// world is the fake model and sources (tools/fakeserve) and the MCP server
// under test, each a process of its own, on loopback.
type world struct {
	bin       string
	dir       string
	env       []string
	fake      *exec.Cmd
	server    *exec.Cmd
	addr      string // the MCP server's HOST:PORT
	debugAddr string // its pprof
}

func startWorld(bin, fakeBin string) (*world, error) {
	dir, err := os.MkdirTemp("", "mcpsoak-")
	if err != nil {
		return nil, err
	}
	w := &world{bin: bin, dir: dir}
	// -revision-rounds 0: every review approves, so runs end on their own.
	w.fake = exec.Command(fakeBin, "-delay", "1ms", "-revision-rounds", "0")
	out, err := w.fake.StdoutPipe()
	if err != nil {
		return nil, err
	}
	w.fake.Stderr = io.Discard
	if err := w.fake.Start(); err != nil {
		return nil, fmt.Errorf("starting fakeserve: %w", err)
	}
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if kv, ok := strings.CutPrefix(lines.Text(), "export "); ok {
			w.env = append(w.env, kv)
		}
		if strings.Contains(lines.Text(), "RESEARCHTUI_SEMANTICSCHOLAR_URL") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("full_text = false\n"), 0o600); err != nil {
		return nil, err
	}
	w.env = append(w.env, "RESEARCHTUI_DATA_DIR="+filepath.Join(dir, "data"), "RESEARCHTUI_CONFIG="+cfg)
	w.addr, w.debugAddr = freeAddr(), freeAddr()
	return w, w.startServer()
}

// freeAddr is a loopback address nothing listens on.
func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func (w *world) url() string { return "http://" + w.addr + "/mcp" }

func (w *world) startServer() error {
	w.server = exec.Command(w.bin, "mcp", "--http", w.addr, "--session-idle", "1m")
	w.server.Env = append(append(os.Environ(), w.env...), "RESEARCHTUI_DEBUG_ADDR="+w.debugAddr)
	w.server.Stderr = os.Stderr
	if err := w.server.Start(); err != nil {
		return err
	}
	for i := 0; i < 200; i++ {
		if c, err := net.Dial("tcp", w.addr); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("the MCP server never listened at %s", w.addr)
}

// restart stops the server as Ctrl-C does and starts it again on the same
// data dir: what the clients saw must have been committed.
func (w *world) restart() error {
	_ = w.server.Process.Signal(os.Interrupt)
	_ = w.server.Wait()
	return w.startServer()
}

func (w *world) close() {
	for _, c := range []*exec.Cmd{w.server, w.fake} {
		if c != nil && c.Process != nil {
			_ = c.Process.Signal(syscall.SIGTERM)
			_ = c.Wait()
		}
	}
	os.RemoveAll(w.dir)
}

// measurement is the server's use of the machine at one moment.
type measurement struct {
	at         time.Duration
	goroutines int
	heapMB     float64 // Go heap in use
	rssMB      float64 // resident memory (the store's mapped pages included)
	fds        int
	threads    int
}

func (m measurement) String() string {
	return fmt.Sprintf("%7s  goroutines %4d  heap %6.1f MB  rss %6.1f MB  fds %4d  threads %3d",
		m.at.Round(time.Second), m.goroutines, m.heapMB, m.rssMB, m.fds, m.threads)
}

var (
	goroutineTotal = regexp.MustCompile(`goroutine profile: total (\d+)`)
	heapInUse      = regexp.MustCompile(`# HeapInuse = (\d+)`)
)

func (w *world) measure() measurement {
	var m measurement
	pid := w.server.Process.Pid
	if fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid)); err == nil {
		m.fds = len(fds)
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid)); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.Atoi(f[1])
				m.rssMB = float64(kb) / 1024
			}
			if len(f) >= 2 && f[0] == "Threads:" {
				m.threads, _ = strconv.Atoi(f[1])
			}
		}
	}
	if s := w.debug("goroutine?debug=1"); s != "" {
		if g := goroutineTotal.FindStringSubmatch(s); g != nil {
			m.goroutines, _ = strconv.Atoi(g[1])
		}
	}
	if s := w.debug("heap?gc=1&debug=1"); s != "" {
		if h := heapInUse.FindStringSubmatch(s); h != nil {
			b, _ := strconv.ParseFloat(h[1], 64)
			m.heapMB = b / (1 << 20)
		}
	}
	return m
}

func (w *world) debug(profile string) string {
	resp, err := http.Get("http://" + w.debugAddr + "/debug/pprof/" + profile)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
