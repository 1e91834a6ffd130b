//go:build integration

package integration

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const (
	chatModel  = "tiny-chat"
	embedModel = "tiny-embed"
)

var (
	ollamaURL string // e.g. http://127.0.0.1:40123
	binary    string // the researchtui binary under test
	serverLog string // the server's log, shown when a test fails
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	t0 := time.Now()
	work, err := os.MkdirTemp("", "researchtui-it-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(work)

	binary = filepath.Join(work, "researchtui")
	build := exec.Command("go", "build", "-o", binary, "..")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "integration: building researchtui:", err)
		return 1
	}

	if ollamaURL = strings.TrimRight(os.Getenv("OLLAMA_TEST_URL"), "/"); ollamaURL == "" {
		stop, err := startServer(filepath.Join(work, "ollama"))
		if err != nil {
			// The suite must not pass silently without its server.
			fmt.Fprintln(os.Stderr, "integration: the real Ollama server is unavailable:", err)
			fmt.Fprintln(os.Stderr, "  build it with tools/real-ollama/build.sh \"$(go env GOPATH)/bin\"")
			return 1
		}
		defer stop()
	}
	fmt.Fprintf(os.Stderr, "integration: server %s ready after %s\n", ollamaURL, time.Since(t0).Round(time.Millisecond))
	code := m.Run()
	if code != 0 && serverLog != "" {
		if b, err := os.ReadFile(serverLog); err == nil {
			if len(b) > 4000 {
				b = b[len(b)-4000:]
			}
			fmt.Fprintf(os.Stderr, "--- tail of %s ---\n%s\n", serverLog, b)
		}
	}
	fmt.Fprintf(os.Stderr, "integration: suite took %s\n", time.Since(t0).Round(time.Millisecond))
	return code
}

func toolsDir() string {
	if d := os.Getenv("REAL_OLLAMA_TOOLS"); d != "" {
		return d
	}
	return filepath.Join("..", "tools", "real-ollama")
}

// startServer runs serve.sh on a free loopback port and returns its stop.
func startServer(dir string) (func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	script, err := filepath.Abs(filepath.Join(toolsDir(), "serve.sh"))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, script, port, dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", script, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		return nil, fmt.Errorf("serve.sh printed %q, not a PID", out)
	}
	ollamaURL = "http://127.0.0.1:" + port
	serverLog = filepath.Join(dir, "ollama.log")
	return func() {
		syscall.Kill(pid, syscall.SIGTERM)
		for range 50 { // let it stop its runners before the dir goes
			if syscall.Kill(pid, 0) != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		syscall.Kill(pid, syscall.SIGKILL)
	}, nil
}
