package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// checkMCP says whether the researchtui that MCP clients would launch (the
// one on PATH: the snippets in the README name it without a path) can serve
// MCP. An older build on PATH has no `mcp` command; no build on PATH means
// the client config needs the absolute path. Neither is a problem for
// people who do not use researchtui from other agents, so both are notes.
func (d *doctor) checkMCP(ctx context.Context) {
	self, _ := os.Executable()
	path, err := exec.LookPath("researchtui")
	if err != nil {
		fix := "put researchtui on PATH, or give MCP clients the full path"
		if self != "" {
			fix += ": " + self
		}
		d.info("mcp", "researchtui is not on PATH; "+fix)
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "mcp", "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Model Context Protocol") {
		d.info("mcp", path+" cannot serve MCP (an older build?); install this one, e.g. go install ./ in the source tree")
		return
	}
	note := "researchtui mcp (stdio) works for MCP clients"
	if a, b := resolved(path), resolved(self); a != "" && a != b {
		note += "; note: it is " + path + ", not this binary"
	}
	d.ok("mcp", path+": "+note)
}

func resolved(p string) string {
	if p == "" {
		return ""
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}
