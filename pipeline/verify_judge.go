package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline/report"
	"github.com/researchtui/researchtui/textkit"
)

// The model's part of verification: the sentences matching could not
// decide, judged in batches against the passages that matching found.

const verifySchema = `{
  "type": "object",
  "properties": {
    "verdicts": {"type": "array", "items": {"type": "object",
      "properties": {
        "c": {"type": "integer"},
        "v": {"type": "string", "enum": ["supported", "partly", "unsupported", "contradicted"]},
        "p": {"type": "integer"}
      },
      "required": ["c", "v"]}}
  },
  "required": ["verdicts"]
}`

const verifierSystem = `You are the verifier agent of a research assistant. For each claim C, read the numbered passages P listed under it and judge whether they say what the claim says. Answer with JSON only: "verdicts", one per claim: "c" (the claim number), "v" (supported: a passage states it; partly: a passage states part of it; unsupported: no passage states it; contradicted: a passage says the opposite), "p" (the number of the passage that decides, when one does). Judge only from the passages.`

// verifyBatch is how many sentences one model call judges.
const verifyBatch = 6

// judgedBatch is the checkpoint of one verifier call: verdicts by sentence.
type judgedBatch struct {
	Verdicts map[int]modelVerdict `json:"verdicts"`
}

type modelVerdict struct {
	Verdict string   `json:"verdict"`
	Passage Evidence `json:"passage"`
	Cited   bool     `json:"cited"` // the passage is of a cited source
}

// judgeByModel asks the model about the sentences matching could not
// decide, in batches, each checkpointed so a resume repeats none.
func (o *orchestrator) judgeByModel(ctx context.Context, a *agentCall, round int, ix *evidenceIndex, spans []report.CitedSpan, checks []SentenceCheck, ask []int) error {
	for b := 0; b*verifyBatch < len(ask); b++ {
		part := ask[b*verifyBatch : min(len(ask), (b+1)*verifyBatch)]
		name := fmt.Sprintf("verify/%d/batch%d", round, b)
		var jb judgedBatch
		if ok, err := o.loadCheckpoint(name, &jb); err != nil {
			return err
		} else if !ok {
			var err error
			if jb, err = o.judgeBatch(ctx, a, ix, spans, checks, part); err != nil {
				return err
			}
			if err := o.checkpoint(name, jb); err != nil {
				return err
			}
		}
		for i, mv := range jb.Verdicts {
			o.applyModelVerdict(ix, spans[i], &checks[i], mv)
		}
	}
	return nil
}

// judgeBatch is one verifier call: each sentence with the best passages of
// its cited sources and the best passage elsewhere.
func (o *orchestrator) judgeBatch(ctx context.Context, a *agentCall, ix *evidenceIndex, spans []report.CitedSpan, checks []SentenceCheck, part []int) (judgedBatch, error) {
	type shown struct {
		ev    Evidence
		cited bool
	}
	passages := map[int][]shown{}
	var b strings.Builder
	b.WriteString(verifierSystem + "\n\n")
	for ci, i := range part {
		fmt.Fprintf(&b, "C%d: %s\n", ci+1, spans[i].Text)
		cited := map[string]bool{}
		var list []shown
		for _, key := range checks[i].Cited {
			cited[key] = true
			if m := ix.best(spans[i].Text, key); m.Text != "" {
				list = append(list, shown{m.Evidence, true})
			} else if o.opt.Language != "" {
				// A sentence in another language matches no passage by
				// its words: the model reads the source's first ones.
				for _, ev := range ix.leading(key, 2) {
					list = append(list, shown{ev, true})
				}
			}
		}
		if m := ix.bestElsewhere(spans[i].Text, cited); m.Score >= clearMiss {
			list = append(list, shown{m.Evidence, false})
		}
		for pi, s := range list {
			fmt.Fprintf(&b, "  P%d: %s\n", pi+1, textkit.Clip(s.ev.Text, 500))
		}
		passages[ci+1] = list
	}
	req := llm.ChatRequest{
		Messages:    []llm.Message{{Role: "system", Content: o.reportContext()}, {Role: "user", Content: b.String()}},
		Schema:      json.RawMessage(verifySchema),
		Temperature: ptr(0.0),
	}
	type answer struct {
		Verdicts []struct {
			C int    `json:"c"`
			V string `json:"v"`
			P int    `json:"p"`
		} `json:"verdicts"`
	}
	validate := func(ans *answer) error {
		if len(ans.Verdicts) == 0 {
			return fmt.Errorf("verdicts is empty; give one per claim C1..C%d", len(part))
		}
		return nil
	}
	ans, info, err := structured(ctx, a, req, validate, func() answer { return answer{} })
	if fatal(ctx, err) {
		return judgedBatch{}, err
	}
	o.budgetWarn(StageVerify, err)
	jb := judgedBatch{Verdicts: map[int]modelVerdict{}}
	if info.Fallback {
		a.warnUnusable("the verifier's answer was unusable; %s judged by matching alone", textkit.Plural(len(part), "sentence is", "sentences are"))
		return jb, nil
	}
	for _, v := range ans.Verdicts {
		if v.C < 1 || v.C > len(part) {
			continue
		}
		mv := modelVerdict{}
		switch strings.ToLower(strings.TrimSpace(v.V)) {
		case "supported":
			mv.Verdict = VerdictSupported
		case "partly", "partly_supported", "partially":
			mv.Verdict = VerdictPartly
		case "unsupported", "not_supported":
			mv.Verdict = VerdictNotSupported
		case "contradicted":
			mv.Verdict = VerdictContradicted
		default:
			continue
		}
		if list := passages[v.C]; v.P >= 1 && v.P <= len(list) {
			mv.Passage, mv.Cited = list[v.P-1].ev, list[v.P-1].cited
		}
		jb.Verdicts[part[v.C-1]] = mv
	}
	return jb, nil
}

// applyModelVerdict turns the model's verdict into an action. The model
// cannot move a citation to a passage that matching finds no closer than
// the cited source's, and a verdict without a passage is checked against
// the cited source's best.
func (o *orchestrator) applyModelVerdict(ix *evidenceIndex, sp report.CitedSpan, ch *SentenceCheck, mv modelVerdict) {
	ch.By = "model"
	switch mv.Verdict {
	case VerdictSupported, VerdictPartly:
		if mv.Passage.Text != "" && !mv.Cited {
			cited := map[string]bool{}
			for _, k := range ch.Cited {
				cited[k] = true
			}
			other := ix.bestElsewhere(sp.Text, cited)
			if other.SourceKey == mv.Passage.SourceKey && other.Score > ch.Score {
				ch.Verdict, ch.Action, ch.Now = VerdictNotSupported, ActionRecited, []string{other.SourceKey}
				ch.Passage = &other.Evidence
				return
			}
		}
		ch.Verdict, ch.Action, ch.Now = mv.Verdict, ActionKept, ch.Cited
		if mv.Passage.Text != "" && mv.Cited {
			p := mv.Passage
			ch.Passage = &p
		} else if o.opt.Language == "" { // across languages the words cannot overrule the model
			o.settleByMatch(ix, sp, ch) // no passage named: the evidence decides
			ch.By = "model"
		}
	case VerdictNotSupported:
		ch.Verdict, ch.Action = VerdictNotSupported, o.unsupportedAction()
	case VerdictContradicted:
		ch.Verdict, ch.Action = VerdictContradicted, ActionDropped
		if mv.Passage.Text != "" {
			p := mv.Passage
			ch.Passage = &p
		}
	}
}
