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
	_, cmd := m.Update(kp("p"))
	for cmd != nil {
		msg := cmd()
		if msg == nil {
			break
		}
		_, cmd = m.Update(msg)
	}
	if !m.noticeErr || !strings.Contains(m.notice, "file does not exist") || m.cfg.BackendErr == nil {
		t.Errorf("notice %q (err %v), banner kept %v", m.notice, m.noticeErr, m.cfg.BackendErr != nil)
	}
}
