package ui

import (
	"errors"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A new user with Ollama running but no models: the banner offers the pull,
// p downloads them with progress, and the banner goes away.
func TestPullMissingModelsFromTheBanner(t *testing.T) {
	m, svc := newTestModel(t, 100, 30, "dark", false, func(c *Config) {
		c.BackendErr = errors.New("model qwen3:8b is not installed: press p, or run `ollama pull qwen3:8b`")
		c.MissingModels = []string{"qwen3:8b", "nomic-embed-text"}
	})
	if out := ansi.Strip(m.render()); !strings.Contains(out, "Press p to download qwen3:8b and nomic-embed-text") {
		t.Fatalf("banner does not offer the pull:\n%s", out)
	}
	_, cmd := m.Update(kp("p"))
	if !m.pull.active || cmd == nil {
		t.Fatal("p did not start the pull")
	}
	sawProgress := false
	for cmd != nil {
		msg := cmd()
		if msg == nil {
			break
		}
		_, cmd = m.Update(msg)
		if m.pull.active && strings.Contains(ansi.Strip(m.render()), "Pulling") {
			sawProgress = true
		}
	}
	if !sawProgress {
		t.Error("no progress was shown while pulling")
	}
	if strings.Join(svc.pulled, ",") != "qwen3:8b,nomic-embed-text" {
		t.Errorf("pulled %v", svc.pulled)
	}
	if m.cfg.BackendErr != nil || strings.Contains(ansi.Strip(m.render()), "⚠") {
		t.Error("the banner stays after the models arrived")
	}
}

func TestPullFailureIsShown(t *testing.T) {
	m, svc := newTestModel(t, 100, 30, "dark", false, func(c *Config) {
		c.BackendErr = errors.New("model qwen3:8b is not installed")
		c.MissingModels = []string{"qwen3:8b"}
	})
	svc.pullErr = errors.New("pull model manifest: file does not exist")
	pullAll(m)
	if !m.noticeErr || !strings.Contains(m.notice, "file does not exist") || m.cfg.BackendErr == nil {
		t.Errorf("notice %q (err %v), banner kept %v", m.notice, m.noticeErr, m.cfg.BackendErr != nil)
	}
}

// A fresh install: no sessions and no models. The keys start on the list,
// so the banner's p works; once the models are in, the question line has
// them.
func TestFreshInstallFocus(t *testing.T) {
	m, _ := newTestModel(t, 80, 24, "dark", false, func(c *Config) {
		c.BackendErr = errors.New("models qwen3:8b and nomic-embed-text are not installed")
		c.MissingModels = []string{"qwen3:8b", "nomic-embed-text"}
	})
	m.Update(listLoaded(m))
	if m.sessions.focus != focusList {
		t.Fatal("with models missing the list has the keys (p pulls)")
	}
	pullAll(m)
	if m.sessions.focus != focusLine || m.sessions.line.Value() != "" {
		t.Fatalf("after the pull: focus %v, line %q; want the empty question line", m.sessions.focus, m.sessions.line.Value())
	}
}

// pullAll presses p and follows the pull's Cmds to their end (they block on
// the pull's channel, so run cannot drop them as a bridge wait).
func pullAll(m *rootModel) {
	_, cmd := m.Update(kp("p"))
	for cmd != nil {
		msg := cmd()
		if msg == nil {
			break
		}
		_, cmd = m.Update(msg)
	}
}
