package llm

import (
	"context"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/llm/ollamafake"
)

func TestPullInstallsAMissingModelWithProgress(t *testing.T) {
	t.Parallel()
	_, o := newFake(t, ollamafake.Options{Pullable: map[string]ollamafake.Model{
		"qwen3:8b": {ContextLength: 40960, Capabilities: []string{"completion"}, Family: "qwen3"},
	}, Models: map[string]ollamafake.Model{}})
	if _, err := o.Show(context.Background(), "qwen3:8b"); !IsModelMissing(err) {
		t.Fatalf("before the pull: %v, want a missing model", err)
	}
	var steps []PullProgress
	if err := o.Pull(context.Background(), "qwen3:8b", func(p PullProgress) { steps = append(steps, p) }); err != nil {
		t.Fatal(err)
	}
	if len(steps) < 3 || steps[len(steps)-1].Status != "success" {
		t.Fatalf("progress %+v", steps)
	}
	sawBytes := false
	for _, p := range steps {
		if p.Total > 0 && p.Completed == p.Total {
			sawBytes = true
		}
	}
	if !sawBytes {
		t.Error("no byte progress reported")
	}
	if info, err := o.Show(context.Background(), "qwen3:8b"); err != nil || info.ContextLength != 40960 {
		t.Errorf("after the pull: %+v, %v", info, err)
	}
	err := o.Pull(context.Background(), "no-such-model:1b", nil)
	if err == nil || !strings.Contains(err.Error(), "no-such-model:1b") {
		t.Errorf("pulling an unknown model: %v", err)
	}
}
