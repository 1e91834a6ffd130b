package pipelinetest

import (
	"encoding/json"
	"hash/fnv"
	"regexp"
	"strconv"

	"github.com/researchtui/researchtui/llm/ollamafake"
)

// ScreenScript is how the scripted relevance screener answers. The zero
// value (and a nil Script.Screen) says every candidate is on topic: a
// screen with no judgement, so ranking and floors must do the work.
type ScreenScript struct {
	// OffTopic, when set, judges a candidate by its title, as a competent
	// model would.
	OffTopic func(title string) bool
	// Random rejects about half the candidates, chosen by a hash of the
	// title and the seed: an answer that carries no judgement.
	Random bool
	Seed   int
	// RejectAll says every candidate is off topic.
	RejectAll bool
	// Junk answers text that is not JSON, every time.
	Junk bool
	// Plain answers bare numbers ({"off_topic":[1,2]}) instead of objects.
	Plain bool
}

var screenLine = regexp.MustCompile(`(?m)^\[(\d+)\] (.+)$`)

// screen answers a screening call from the numbered titles in its prompt.
func (s *Script) screen(user string) ollamafake.Reply {
	sc := s.Screen
	if sc == nil {
		sc = &ScreenScript{}
	}
	if sc.Junk {
		return ollamafake.Reply{Content: "Most of these look relevant to me, except perhaps the third."}
	}
	var off []any
	for _, m := range screenLine.FindAllStringSubmatch(user, -1) {
		n, _ := strconv.Atoi(m[1])
		title := m[2]
		reject := sc.RejectAll
		switch {
		case sc.OffTopic != nil:
			reject = reject || sc.OffTopic(title)
		case sc.Random:
			h := fnv.New32a()
			h.Write([]byte(strconv.Itoa(sc.Seed) + title))
			reject = reject || h.Sum32()%2 == 0
		}
		if !reject {
			continue
		}
		if sc.Plain {
			off = append(off, n)
		} else {
			off = append(off, map[string]any{"n": n, "why": "another topic"})
		}
	}
	if off == nil {
		off = []any{}
	}
	b, _ := json.Marshal(map[string]any{"off_topic": off})
	return ollamafake.Reply{Content: string(b)}
}
