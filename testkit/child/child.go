// Package child gives a test a second process: the test binary run again
// to run one helper test, which a variable tells it is a child. The tests
// of crashes, kills and locks across processes use it; the helper test
// skips in the ordinary run, where its variable is unset.
package child

import (
	"context"
	"os"
	"os/exec"
	"testing"
)

// Command is this test binary run again to run only the test named helper
// (with args after, e.g. "-test.v"), with env added to this process's
// environment; ctx kills it.
func Command(ctx context.Context, helper string, env []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-test.run=^" + helper + "$"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// Var is the value of the child's variable name; where it is unset (the
// ordinary test run) the helper skips, saying which test it serves.
func Var(t testing.TB, name, helperOf string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Skip("helper for " + helperOf)
	}
	return v
}
