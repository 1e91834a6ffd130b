package ui

import (
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/store"
	"github.com/researchtui/researchtui/themes"
)

// bigReport is a ~30,000-word Markdown report with headings, lists,
// citations and a table, like a deep run produces.
func bigReport(words int) string {
	rng := rand.New(rand.NewSource(1))
	vocab := strings.Fields("the perovskite film degrades under humidity while encapsulation and additive engineering improve stability of devices measured by T80 lifetime in hours across studies with methylammonium formamidinium cesium lead iodide bromide layers interfaces")
	var b strings.Builder
	b.WriteString("# A long report\n\n")
	n, sec := 0, 0
	for n < words {
		sec++
		fmt.Fprintf(&b, "## Section %d\n\n", sec)
		for p := 0; p < 6 && n < words; p++ {
			for s := 0; s < 5; s++ {
				l := 12 + rng.Intn(10)
				for i := 0; i < l; i++ {
					w := vocab[rng.Intn(len(vocab))]
					if i == 0 {
						w = strings.ToUpper(w[:1]) + w[1:]
					}
					b.WriteString(w)
					if i < l-1 {
						b.WriteByte(' ')
					}
				}
				n += l
				fmt.Fprintf(&b, " [%d]. ", 1+rng.Intn(20))
			}
			b.WriteString("\n\n")
		}
		b.WriteString("- **Finding:** stability improves with encapsulation [3]\n- *Limitation:* small samples [4]\n\n")
	}
	return b.String()
}

func BenchmarkReportRender(b *testing.B) {
	md := bigReport(30000)
	st := themes.Build(themes.Resolve("dark", true), false)
	k := renderKey{id: "big", width: 100, theme: "dark"}
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			r := newMDRenderer()
			if _, err := r.render(k, md, st.Markdown); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		// What the report screen does when a cached rendering comes back
		// (reopen, resize back, theme back): lookup plus viewport content.
		m, svc := newTestModel(b, 120, 40, "dark", false)
		rep := fixtureReport()
		rep.Markdown = md
		svc.reports["s4"] = rep
		press(b, m, "j", "j", "enter")
		if !m.report.loaded || m.report.have != m.report.want {
			b.Fatal("report not rendered")
		}
		w, h := m.bodySize()
		b.ResetTimer()
		for b.Loop() {
			m.report.have = renderKey{}
			if cmd := m.layoutReport(w, h); cmd != nil {
				b.Fatal("cache miss")
			}
			_ = m.render()
		}
	})
}

// BenchmarkRunScreenFlood measures a frame of the run screen (Update plus
// View) while token deltas arrive at 10,000 per second. At 60 frames a
// second the bridge hands Update ~167 events per frame; "per-event" is the
// worst case of one event per Update and View.
func BenchmarkRunScreenFlood(b *testing.B) {
	setup := func(b *testing.B) (*rootModel, *fakeRun) {
		m, svc := newTestModel(b, 120, 40, "dark", false)
		c := &clock{t: testNow}
		m.now = c.now
		r := startScripted(b, m, svc, c, false)
		return m, r
	}
	delta := func(i int) pipeline.Event {
		ev := pipeline.Event{Type: pipeline.TokenDelta, SessionID: "run1", Agent: "writer", Stage: pipeline.StageWrite, Seq: int64(1000 + i), Time: testNow}
		if i%5 == 0 {
			ev.Thinking = "hmm, "
		} else {
			ev.Text = "word "
		}
		if i%97 == 0 {
			ev.Text += "\n\n"
		}
		return ev
	}
	for _, per := range []int{167, 1} {
		name := fmt.Sprintf("batch-%d", per)
		if per == 1 {
			name = "per-event"
		}
		b.Run(name, func(b *testing.B) {
			m, r := setup(b)
			batch := make([]pipeline.Event, per)
			i := 0
			b.ResetTimer()
			for b.Loop() {
				for j := range batch {
					batch[j] = delta(i)
					i++
				}
				m.Update(runEventsMsg{id: r.id, events: batch})
				_ = m.render()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e6, "ms/frame")
		})
	}
}

// BenchmarkStartup500 is start-up to the first full frame with 500 stored
// sessions: open the model, read the list from bbolt, draw.
func BenchmarkStartup500(b *testing.B) {
	dir := b.TempDir()
	st, err := store.Open(filepath.Join(dir, "researchtui.db"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for i := 0; i < 500; i++ {
		s := &store.Session{
			Question:  fmt.Sprintf("Question number %d about perovskite stability under humidity and heat?", i),
			Title:     fmt.Sprintf("Question number %d about perovskite stability", i),
			Status:    []string{store.StatusCompleted, store.StatusFailed, store.StatusAwaitingReview, store.StatusInterrupted}[i%4],
			CreatedAt: testNow.Add(-time.Duration(i) * time.Hour), Model: "qwen3:8b", EmbedModel: "nomic-embed-text",
			Usage: store.Usage{PromptTokens: 1000 * i, CompletionTokens: 200 * i}, Report: strings.Repeat("report text ", 2000),
		}
		if err := st.CreateSession(s); err != nil {
			b.Fatal(err)
		}
	}
	svc := liveServices{st: st}
	dark := true
	for b.Loop() {
		m := newModel(context.Background(), Config{Store: st, Theme: "dark"}, svc, options{now: func() time.Time { return testNow }, darkBG: &dark})
		m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
		msg := loadSessionsCmd(svc, 1)()
		m.Update(msg)
		if len(m.sessions.rows) != 500 {
			b.Fatalf("%d sessions", len(m.sessions.rows))
		}
		_ = m.render()
	}
}
