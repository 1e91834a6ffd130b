package cli

import (
	"bufio"
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/search/sourcefake"
	"github.com/researchtui/researchtui/store"
)

// `researchtui run … | head -3`: the reader goes away mid-run. The run
// stops as it would on ctrl+c, its session recorded as cancelled (and
// resumable), instead of the process dying of SIGPIPE in the middle of a
// write with the session left as it was (running, or awaiting a review
// nobody is asked for).
func TestRunPipedToAClosedReaderStopsLikeAnInterrupt(t *testing.T) {
	t.Parallel()
	script := &pipelinetest.Script{RevisionRounds: 1}
	oll := ollamafake.New(ollamafake.Options{Responder: script.Responder(), TokenDelay: 5 * time.Millisecond})
	defer oll.Close()
	src := sourcefake.New()
	defer src.Close()
	c := newCLI(t, oll.URL, src)
	cmd := c.command("run", "--review", "approve", "--sources", "arxiv,openalex", "How is software testing studied?")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = cmd.Stdout // 2>&1 | head
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(out)
	for i := 0; i < 3 && lines.Scan(); i++ {
	}
	out.Close() // head has what it wanted
	err = cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	}
	if code == -1 { // killed by a signal: SIGPIPE was not handled
		t.Fatalf("the run died of a signal: %v", err)
	}
	stdout, _, _, _ := c.run("sessions", "list", "--json")
	var sess store.Session
	if err := json.Unmarshal([]byte(strings.SplitN(stdout, "\n", 2)[0]), &sess); err != nil {
		t.Fatalf("sessions list: %v %q", err, stdout)
	}
	if sess.Status != store.StatusCancelled || code != exitCancelled {
		t.Errorf("after the reader left: exit %d, session %q at %q, want %d and cancelled", code, sess.Status, sess.Stage, exitCancelled)
	}
}
