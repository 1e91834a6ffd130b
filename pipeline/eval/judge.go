package eval

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/researchtui/researchtui/llm"
)

// ModelJudge is the optional second judge (--judge MODEL): a model, never
// the one under test, asked about each cited sentence the lexical judge
// rejected whether a cited work's recorded text says the same in other
// words. It can only add support the words missed; it never takes any away.
type ModelJudge struct {
	LLM   llm.Backend
	Model string
	// Seed, when not 0, makes its calls repeatable where the backend
	// honours a seed.
	Seed int
}

// JudgeName says which judges an eval used, for its summary and table.
func JudgeName(j *ModelJudge) string {
	if j == nil || j.Model == "" {
		return Judge
	}
	return Judge + "; then " + j.Model + " for paraphrase, asked about each sentence the words alone do not support"
}

// Verdict is what the model judge answered about one sentence and source.
type Verdict int

const (
	// Unclear: the answer said neither yes nor no (a model that ignored
	// the form); the sentence stays unsupported.
	Unclear Verdict = iota
	Yes
	No
)

const judgeSystem = "You check a claim against a source. Reply with one word: YES if the source states the claim, in its words or in other words; NO if it does not."

// judgeMaxTokens bounds an answer: one word is asked for, a short sentence
// is read, a model that would lecture is cut off (and read as unclear).
const judgeMaxTokens = 24

// Ask asks the judge whether p's recorded title and abstract support claim.
func (j *ModelJudge) Ask(ctx context.Context, claim string, p *Paper) (Verdict, llm.Usage, error) {
	zero := 0.0
	req := llm.ChatRequest{
		Model: j.Model,
		Messages: []llm.Message{
			{Role: "system", Content: judgeSystem},
			{Role: "user", Content: fmt.Sprintf("Source:\n%s\n%s\n\nClaim: %s\n\nDoes the source support the claim? Answer YES or NO.", p.Title, p.Abstract, claim)},
		},
		Temperature: &zero,
		MaxTokens:   judgeMaxTokens,
	}
	if j.Seed != 0 {
		seed := j.Seed
		req.Seed = &seed
	}
	resp, err := j.LLM.Chat(ctx, req, nil)
	if err != nil {
		return Unclear, resp.Usage, err
	}
	return ParseVerdict(resp.Content), resp.Usage, nil
}

var (
	thinkBlock = regexp.MustCompile(`(?is)<think>.*?(</think>|$)`)
	// keyed is an answer in a JSON form: {"answer": "yes"}, {"supported": false}.
	keyed    = regexp.MustCompile(`"?(?:answer|supported|supports|verdict|support|result)"?\s*:\s*"?(yes|no|true|false)\b`)
	negative = regexp.MustCompile(`\b(not supported|unsupported|does not support|doesn't support|not stated|does not state|doesn't state|no evidence|cannot be supported)\b`)
)

// ParseVerdict reads a judge's answer as a small model writes it: "YES",
// "No.", "**Yes** — the source says…", "The claim is not supported",
// {"answer": "yes"}, or a thinking block before any of them. What says
// neither is Unclear, never a guess.
func ParseVerdict(answer string) Verdict {
	a := strings.ToLower(thinkBlock.ReplaceAllString(answer, " "))
	fields := strings.FieldsFunc(a, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r == '\'')
	})
	if len(fields) == 0 {
		return Unclear
	}
	if m := keyed.FindStringSubmatch(a); m != nil {
		if m[1] == "yes" || m[1] == "true" {
			return Yes
		}
		return No
	}
	switch fields[0] {
	case "yes", "supported", "supports", "true", "correct":
		return Yes
	case "no", "not", "unsupported", "false", "incorrect":
		return No
	}
	if negative.MatchString(a) {
		return No
	}
	yes, no := false, false
	for _, f := range fields {
		switch f {
		case "yes", "supports", "supported", "true":
			yes = true
		case "no", "false":
			no = true
		}
	}
	switch {
	case yes && !no:
		return Yes
	case no && !yes:
		return No
	}
	return Unclear
}
