package llm

import (
	"encoding/json"
	"regexp"
	"strings"
)

var (
	thinkBlock = regexp.MustCompile(`(?is)<(think|thinking)>.*?</(think|thinking)>`)
	thinkClose = regexp.MustCompile(`(?i)</(think|thinking)>`)
	fence      = regexp.MustCompile("```[A-Za-z0-9_+-]*")
)

// maxCandidates bounds how many opening brackets RepairJSON tries.
const maxCandidates = 64

// RepairJSON makes a best effort to turn a model's answer into the JSON it
// meant: it drops <think>…</think> blocks and ``` fences, keeps the
// outermost JSON object or array (dropping prose before and after), removes
// trailing commas before } or ], and closes brackets left open by a cut-off
// answer. Valid JSON comes back unchanged (trimmed). The result is not
// guaranteed to be valid.
func RepairJSON(s string) string {
	if t := strings.TrimSpace(s); json.Valid([]byte(t)) {
		return t
	}
	s = thinkBlock.ReplaceAllString(s, "")
	if loc := thinkClose.FindAllStringIndex(s, -1); len(loc) > 0 {
		s = s[loc[len(loc)-1][1]:] // a stray closing tag: the answer follows it
	}
	s = strings.TrimSpace(fence.ReplaceAllString(s, ""))

	best, first := "", ""
	tried := 0
	for i := 0; i < len(s) && tried < maxCandidates; i++ {
		if s[i] != '{' && s[i] != '[' {
			continue
		}
		tried++
		raw, n := balanced(s[i:])
		cand := removeTrailingCommas(raw)
		if first == "" {
			first = cand
		}
		if json.Valid([]byte(cand)) {
			if len(cand) > len(best) {
				best = cand
			}
			i += n - 1 // skip what this candidate covers
		}
	}
	switch {
	case best != "":
		return best
	case first != "":
		return first
	}
	return s
}

// jsonString follows JSON strings through text a byte at a time, so the
// repairs leave what is inside a string alone.
type jsonString struct{ in, esc bool }

// takes reads the next byte and says whether it is part of a string, its
// quotes included.
func (st *jsonString) takes(c byte) bool {
	if !st.in {
		st.in = c == '"'
		return st.in
	}
	switch {
	case st.esc:
		st.esc = false
	case c == '\\':
		st.esc = true
	case c == '"':
		st.in = false
	}
	return true
}

// balanced returns the JSON value starting at s[0] ('{' or '['), up to its
// matching bracket, and how many bytes of s it covered. If s ends first,
// the open string and brackets are closed.
func balanced(s string) (string, int) {
	var stack []byte
	var str jsonString
	for i := 0; i < len(s); i++ {
		c := s[i]
		if str.takes(c) {
			continue
		}
		switch c {
		case '{':
			stack = append(stack, '}')
		case '[':
			stack = append(stack, ']')
		case '}', ']':
			if len(stack) > 0 && stack[len(stack)-1] == c {
				stack = stack[:len(stack)-1]
			}
			if len(stack) == 0 {
				return s[:i+1], i + 1
			}
		}
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(s, " \t\r\n"))
	if str.in {
		if str.esc {
			b.WriteByte('\\')
		}
		b.WriteByte('"')
	}
	for i := len(stack) - 1; i >= 0; i-- {
		b.WriteByte(stack[i])
	}
	return b.String(), len(s)
}

// removeTrailingCommas drops commas (outside strings) that are followed,
// after whitespace, by } or ].
func removeTrailingCommas(s string) string {
	var b strings.Builder
	var str jsonString
	for i := 0; i < len(s); i++ {
		c := s[i]
		if str.takes(c) {
			b.WriteByte(c)
			continue
		}
		if c == ',' {
			j := i + 1
			for j < len(s) && strings.IndexByte(" \t\r\n", s[j]) >= 0 {
				j++
			}
			if j == len(s) || s[j] == '}' || s[j] == ']' {
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}
