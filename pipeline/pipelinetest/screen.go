package pipelinetest

import (
	"encoding/json"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"

	"github.com/researchtui/researchtui/llm/ollamafake"
)

// ScreenScript is how the scripted relevance screener answers. The zero
// value (and a nil Script.Screen) says every candidate is on topic: a
// screen with no judgement.
type ScreenScript struct {
	// OffTopic, when set, judges a candidate by its title, as a competent
	// model would (from a ground-truth list, say).
	OffTopic func(title string) bool
	// ErrorRate is the share of candidates the screen judges wrongly (the
	// opposite of OffTopic's verdict), chosen by a hash of the title and
	// Seed: a competent model errs on about one title in ten. A second
	// or third look (screening_batch.go: another prompt, more of the
	// abstract) errs as often, on titles drawn independently of the other
	// looks', unless Stubborn.
	ErrorRate float64
	// Stubborn repeats the first look's errors on the second: the worst
	// case, in which looking again gains nothing.
	Stubborn bool
	// Random rejects about half the candidates, chosen by a hash of the
	// title and the seed: an answer that carries no judgement.
	Random bool
	Seed   int
	// RejectAll says every candidate is off topic.
	RejectAll bool
	// Junk answers text that is not JSON, every time.
	Junk bool
	// Plain answers bare numbers ({"off_topic":[1,2]}) instead of objects
	// (as every screen does when its prompt asks for numbers only).
	Plain bool
	// Long always lists the off-topic candidates, with reasons, even when
	// the on-topic list is shorter (a model that ignores "whichever is
	// shorter").
	Long bool
	// Reads makes the analyst judge too: a source it reads gets the
	// confidence a competent model gives (0.1 when OffTopic), instead of
	// 0.8 whatever it is about. It errs half as often as the screen (it
	// reads the whole abstract or text, where the screen reads a title
	// and a few words), on titles drawn independently of the looks'.
	Reads bool
}

// analystSource is the title line of an analyst's prompt: "Source: T
// (2023), full text" or, in a batch, "Source 2: T (n.d.)".
var analystSource = regexp.MustCompile(`(?m)^Source(?: \d+)?: (.+) \((?:\d+|n\.d\.)\)`)

// analystConfidence is the confidence a judging analyst (Reads) gives the
// source its prompt block names; 0.8 when it does not judge.
func (sc *ScreenScript) analystConfidence(block string) float64 {
	m := analystSource.FindStringSubmatch(block)
	if sc == nil || !sc.Reads || m == nil || sc.OffTopic == nil {
		return 0.8
	}
	off := sc.OffTopic(m[1])
	if sc.mixedHash("analyst"+m[1])%1000 < uint32(sc.ErrorRate*500) {
		off = !off
	}
	if off {
		return 0.1
	}
	return 0.8
}

var screenLine = regexp.MustCompile(`(?m)^\[(\d+)\] (.+)$`)

// screen answers a screening call from the numbered titles in its last
// message (a later look continues the first look's conversation), naming
// the shorter list as the prompt (all of it) asks.
func (s *Script) screen(user, prompt string) ollamafake.Reply {
	sc := s.Screen
	if sc == nil {
		sc = &ScreenScript{}
	}
	if sc.Junk {
		return ollamafake.Reply{Content: "Most of these look relevant to me, except perhaps the third."}
	}
	look := ""
	for _, nth := range []string{"second look", "third look"} {
		if strings.Contains(user, nth) && !sc.Stubborn {
			look = nth
		}
	}
	var on, off []int
	for _, m := range screenLine.FindAllStringSubmatch(user, -1) {
		n, _ := strconv.Atoi(m[1])
		if sc.rejects(m[2], look) {
			off = append(off, n)
		} else {
			on = append(on, n)
		}
	}
	var answer map[string]any
	switch {
	case len(on) < len(off) && !sc.Long:
		answer = map[string]any{"on_topic": nonNil(on)}
	case sc.Plain || strings.Contains(prompt, "numbers only"):
		answer = map[string]any{"off_topic": nonNil(off)}
	default:
		marks := []any{}
		for _, n := range off {
			marks = append(marks, map[string]any{"n": n, "why": "another topic"})
		}
		answer = map[string]any{"off_topic": marks}
	}
	b, _ := json.Marshal(answer)
	return ollamafake.Reply{Content: string(b)}
}

func nonNil(ns []int) []int {
	if ns == nil {
		return []int{}
	}
	return ns
}

// rejects is the screen's verdict on one title, at the first look ("") or
// a later one ("second look", "third look").
func (sc *ScreenScript) rejects(title, look string) bool {
	switch {
	case sc.RejectAll:
		return true
	case sc.OffTopic != nil:
		off := sc.OffTopic(title)
		if sc.ErrorRate > 0 && sc.hash(look+title)%1000 < uint32(sc.ErrorRate*1000) {
			off = !off
		}
		return off
	case sc.Random:
		return sc.hash(title)%2 == 0
	}
	return false
}

func (sc *ScreenScript) hash(title string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(strconv.Itoa(sc.Seed) + title))
	return h.Sum32()
}

// mixedHash is hash with a final mix (murmur3's): FNV alone gives titles
// that share their last words ("… in Kubernetes") related numbers, so
// errors drawn by it bunch on them. The looks keep FNV (the tests' worlds
// were drawn with it); the analyst's draw is mixed.
func (sc *ScreenScript) mixedHash(title string) uint32 {
	x := sc.hash(title)
	x ^= x >> 16
	x *= 0x85ebca6b
	x ^= x >> 13
	x *= 0xc2b2ae35
	x ^= x >> 16
	return x
}
