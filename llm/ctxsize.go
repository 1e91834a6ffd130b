package llm

import (
	"fmt"
	"math"
	"unicode/utf8"
)

const (
	// charsPerToken is the rough prompt size estimate: bytes / 3. English runs
	// near 4 bytes a token, code and non-Latin scripts nearer 2-3: erring large
	// costs a little memory, erring small silently truncates the prompt.
	charsPerToken = 3.0
	// msgOverhead is the template overhead per message, in tokens.
	msgOverhead = 8
	// defaultAnswerRoom is the room left for the answer when MaxTokens is 0.
	defaultAnswerRoom = 2048
	// thinkingAnswerRoom is used instead when the model will think.
	thinkingAnswerRoom = 4096
	// truncMarker replaces the cut middle of a message.
	truncMarker = "\n[…truncated…]\n"
	// minKeptChars is the least of a message worth keeping when cutting.
	minKeptChars = 256
)

// EstimateTokens is the rough prompt size of messages: ceil(bytes/3) plus
// a per-message overhead. It errs on the large side for English text.
func EstimateTokens(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += int(math.Ceil(float64(len(m.Content))/charsPerToken)) + msgOverhead
	}
	return n
}

// contextPlan is how one chat call will be sized.
type contextPlan struct {
	Messages  []Message
	NumCtx    int
	Truncated bool
	Warning   string
}

// planContext sizes num_ctx for a call and, when the prompt cannot fit the
// model's context length (ctxLen, 0 = unknown), cuts the middle of the
// longest user message. floor is the smallest num_ctx to use.
func planContext(req ChatRequest, ctxLen, floor int, thinking bool) (contextPlan, error) {
	answer := req.MaxTokens
	if answer <= 0 {
		answer = defaultAnswerRoom
		if thinking {
			answer = thinkingAnswerRoom
		}
	}
	if ctxLen > 0 && answer > ctxLen/2 {
		answer = ctxLen / 2
	}
	p := contextPlan{Messages: req.Messages}
	prompt := EstimateTokens(req.Messages)
	need := prompt + answer

	if ctxLen > 0 && need > ctxLen {
		idx := -1
		for i, m := range req.Messages {
			if m.Role == "user" && (idx < 0 || len(m.Content) > len(req.Messages[idx].Content)) {
				idx = i
			}
		}
		tooSmall := &ContextTooSmallError{Model: req.Model, Need: need, Have: ctxLen}
		if idx < 0 {
			return p, tooSmall
		}
		excess := need - ctxLen
		content := req.Messages[idx].Content
		cut := int(math.Ceil(float64(excess)*charsPerToken)) + len(truncMarker) + 64
		keep := len(content) - cut
		if keep < minKeptChars {
			return p, tooSmall
		}
		p.Messages = append([]Message(nil), req.Messages...)
		p.Messages[idx].Content = cutMiddle(content, keep)
		removed := len(content) - len(p.Messages[idx].Content) + len(truncMarker)
		p.Truncated = true
		p.Warning = fmt.Sprintf("prompt too long for %s's %d-token context: cut %d of %d characters (about %d tokens) from the middle of the longest message",
			req.Model, ctxLen, removed, len(content), int(math.Ceil(float64(removed)/charsPerToken)))
		need = EstimateTokens(p.Messages) + answer
	}

	p.NumCtx = max((need+1023)/1024*1024, floor)
	if ctxLen > 0 && p.NumCtx > ctxLen {
		p.NumCtx = ctxLen
	}
	return p, nil
}

// cutMiddle keeps about keep bytes of s, two thirds from the head and one
// third from the tail, on rune boundaries, with truncMarker between.
func cutMiddle(s string, keep int) string {
	head := keep * 2 / 3
	tail := len(s) - (keep - head)
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + truncMarker + s[tail:]
}
