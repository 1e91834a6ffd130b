package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/store"
)

// TestUpdateFollowAndDue: a finished session is updated (the recorded
// world has nothing new, so no version), followed, found due once its
// interval has passed (the last check moved back, as time would), updated
// by --due, and not due again straight after. Each check shows in
// `sessions show` and its JSON.
func TestUpdateFollowAndDue(t *testing.T) {
	t.Parallel()
	script := &pipelinetest.Script{}
	c, oll, _ := scriptedCLI(t, script)
	stdout, stderr, code, _ := c.run("run", "--json", "--sources", "arxiv,openalex", "How is software testing studied?")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, stderr)
	}
	var ev struct {
		SessionID string `json:"session_id"`
	}
	_ = json.Unmarshal([]byte(strings.SplitN(stdout, "\n", 2)[0]), &ev)
	id := ev.SessionID

	calls := len(oll.ChatCalls())
	stdout, stderr, code, _ = c.run("update", id)
	if code != 0 || !strings.Contains(stdout, id+"  no new version: ") || !strings.Contains(stdout, "met before") {
		t.Fatalf("update: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if n := len(oll.ChatCalls()) - calls; n != 0 {
		t.Errorf("an update of an unchanged world made %d model calls", n)
	}
	for _, bad := range [][]string{{"update"}, {"update", "--due", id}, {"update", "nope"}, {"follow", id}, {"follow", id, "--every", "30m"}, {"follow", id, "--every", "soon"}, {"follow", "nope", "--every", "7d"}} {
		if _, stderr, code, _ := c.run(bad...); code != 2 {
			t.Errorf("%q: exit %d, want 2 (%s)", bad, code, stderr)
		}
	}
	if _, stderr, code, _ = c.run("update", "--due"); code != 0 || !strings.Contains(stderr, "no session is followed") {
		t.Errorf("update --due with nothing followed: exit %d: %s", code, stderr)
	}
	if stdout, _, code, _ = c.run("follow", id, "--every", "7d"); code != 0 || !strings.Contains(stdout, "followed every 7d") {
		t.Fatalf("follow: exit %d: %s", code, stdout)
	}
	if _, stderr, code, _ = c.run("update", "--due"); code != 0 || !strings.Contains(stderr, "nothing is due: 1 session followed") {
		t.Errorf("update --due right after a check: exit %d: %s", code, stderr)
	}
	// Eight days pass.
	st, err := store.Open(filepath.Join(c.dir, "data", "researchtui.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.UpdateSession(id, func(s *store.Session) error {
		s.Living.LastChecked = s.Living.LastChecked.Add(-8 * 24 * time.Hour)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	stdout, stderr, code, _ = c.run("update", "--due", "--json")
	var check struct {
		Session string `json:"session"`
		N       int    `json:"n"`
		Seen    int    `json:"seen"`
		Queries int    `json:"queries"`
	}
	if err := json.Unmarshal([]byte(stdout), &check); code != 0 || err != nil || check.Session != id || check.N != 2 || check.Seen == 0 || check.Queries == 0 {
		t.Fatalf("update --due: exit %d, %v: %q %s", code, err, stdout, stderr)
	}
	if stdout, stderr, code, _ = c.run("update", "--due"); code != 0 || stdout != "" || !strings.Contains(stderr, "nothing is due") {
		t.Errorf("a second update --due updated again: exit %d: %q %s", code, stdout, stderr)
	}
	stdout, _, _, _ = c.run("sessions", "show", id)
	if !strings.Contains(stdout, "follows   every 7d") || !strings.Contains(stdout, "updates   ") || strings.Count(stdout, "no new version") != 2 {
		t.Errorf("sessions show does not tell the checks:\n%s", stdout)
	}
	stdout, _, _, _ = c.run("sessions", "list")
	if !strings.Contains(stdout, "[follows 7d; checked ") {
		t.Errorf("sessions list does not mark the followed session:\n%s", stdout)
	}
	if _, stderr, code, _ = c.run("sessions", "export", id, "--since", "1", "--format", "ris"); code != 0 || !strings.Contains(stderr, "no works were added after version 1") {
		t.Errorf("export --since 1 with nothing added: exit %d: %s", code, stderr)
	}
	if _, stderr, code, _ = c.run("sessions", "export", id, "--since", "1", "--format", "md"); code != 2 {
		t.Errorf("export --since as Markdown: exit %d, want 2: %s", code, stderr)
	}
	if stdout, _, code, _ = c.run("follow", id, "--off"); code != 0 || !strings.Contains(stdout, "no longer followed") {
		t.Errorf("follow --off: exit %d: %s", code, stdout)
	}
}

// TestCheckLineIsCleaned: a check's reason quotes a failing source's
// error text; what the terminal gets has no control sequence in it.
func TestCheckLineIsCleaned(t *testing.T) {
	t.Parallel()
	c := pipeline.UpdateCheck{Reason: "the searches failed (1 warning: openalex failed: \x1b]0;owned\x07HTTP 503\x1b[2J)", Seen: 0}
	if got := checkLine(c); strings.ContainsAny(got, "\x1b\x07") || !strings.Contains(got, "HTTP 503") {
		t.Errorf("checkLine = %q", got)
	}
}
