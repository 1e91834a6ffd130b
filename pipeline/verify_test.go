package pipeline_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/history"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// carelessWorld is a run whose writer misattributes (pipelinetest.Script
// Careless) on one of two questions: the default one over the recorded
// arXiv and OpenAlex answers, or one on Turing patterns over the recorded
// Semantic Scholar answer.
func carelessWorld(t *testing.T, turing bool, script *pipelinetest.Script) (*pipelinetest.Env, runopts.Options) {
	t.Helper()
	if turing {
		script.Topics = []pipelinetest.Topic{
			{Question: "How do Turing reaction-diffusion patterns form in animal skin pigmentation?", Strict: "Turing patterns skin pigmentation", Moderate: "Turing pattern", Broad: "Turing"},
			{Question: "Which Turing-type mechanisms pattern digits and limbs during development?", Strict: "Turing mechanism digit limb morphogenesis", Moderate: "Turing morphogenesis", Broad: "Turing"},
		}
		script.Canonical = "Turing patterns"
	}
	script.Realistic = true // analyses with several findings each
	env := pipelinetest.NewEnv(t, script, "")
	opt := env.Options("How is software testing studied, and how are language models given tools for chemistry?")
	if turing {
		env.Engine.Sources["semanticscholar"] = search.NewSemanticScholar(env.Client, env.Sources.SemanticScholarURL(), "")
		opt = env.Options("How do Turing patterns form in biological development, from skin pigmentation to digit patterning?")
		opt.Sources = []string{"semanticscholar"}
	}
	return env, opt
}

var citedSentence = regexp.MustCompile(`((?:[^.\n]|et al\.)+?)\s*\[(\d+(?:, \d+)*)\]\.`)

// attribution checks every cited sentence of a report against the text of
// the sources it cites: how many there are, how many a cited source
// contains word for word, and the sweeping claims that kept a citation.
func attribution(t *testing.T, env *pipelinetest.Env, rep pipeline.Report) (cited, contained, sweeping int) {
	t.Helper()
	body, _, _ := strings.Cut(rep.Markdown, "## Method")
	texts := map[int]string{}
	for _, s := range rep.Sources {
		chunks, err := env.Store.Chunks(s.Key)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, c := range chunks {
			b.WriteString(c.Text + " ")
		}
		texts[s.N] = wordsOnly(b.String())
	}
	authors := map[int]string{}
	for _, s := range rep.Sources {
		if len(s.Authors) > 0 {
			f := strings.Fields(s.Authors[0])
			authors[s.N] = wordsOnly(f[len(f)-1])
		}
	}
	for _, m := range citedSentence.FindAllStringSubmatch(body, -1) {
		sentence := wordsOnly(m[1])
		// A first-person sentence given to its authors by name ("Bran et
		// al. (2024) introduce …", report/voice.go) is checked without the name
		// and verb the report put there: it is attributed rightly when
		// the name is the cited work's first author's.
		if v := voicedName.FindStringSubmatch(m[1]); v != nil && !strings.Contains(m[2], ",") && authors[atoi(m[2])] != "" &&
			strings.Contains(wordsOnly(v[1]), authors[atoi(m[2])]) {
			sentence = wordsOnly(v[3])
		}
		cited++
		if strings.Contains(sentence, wordsOnly(pipelinetest.SweepingClaim)) {
			sweeping++
			continue
		}
		found := false
		for _, n := range strings.Split(m[2], ", ") {
			if strings.Contains(texts[atoi(n)], sentence) {
				found = true
				break
			}
		}
		if found {
			contained++
		} else {
			t.Logf("not in its cited source: %q [%s]", sentence, m[2])

		}
	}
	return cited, contained, sweeping
}

// voicedName is a sentence report/voice.go gave to its authors: the names and
// year, then a verb ("… (2024) introduce") or "'s" and the rest.
var voicedName = regexp.MustCompile(`^\s*(?:[-*+]\s+)?(.+?)(?:'s)? \((\d{4}|n\.d\.)\)(?:'s)?\s+(?:[a-z]+\s+)?(.*)$`)

// wordsOnly is s lower-cased, its punctuation dropped: two records of one
// paper (arXiv's abstract and OpenAlex's, rebuilt from an inverted index)
// differ in punctuation, not in words.
func wordsOnly(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}), " ")
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// A writer that cites the neighbouring source every third sentence and
// adds sweeping claims every fifth, with a verifier model whose verdicts
// carry no judgement: the evidence matching and the repairs alone must
// leave every cited sentence cited to a source that says it.
func TestVerifierRepairsACarelessWriter(t *testing.T) {
	t.Parallel()
	for _, turing := range []bool{false, true} {
		name := map[bool]string{false: "testing", true: "turing"}[turing]
		t.Run(name, func(t *testing.T) {
			env, opt := carelessWorld(t, turing, &pipelinetest.Script{Careless: true, VerifierJudges: pipelinetest.JudgeNothing})
			_, sess := pipelinetest.RunToEnd(t, env, opt)
			rep, err := pipeline.LoadReport(env.Store, sess.ID)
			if err != nil {
				t.Fatal(err)
			}
			cited, contained, sweeping := attribution(t, env, rep)
			t.Logf("%d cited sentences, %d cited to a source that contains them, %d sweeping claims cited; repairs %+v", cited, contained, sweeping, rep.Metrics.Verified)
			if cited < 6 {
				t.Fatalf("%d cited sentences, want at least 6:\n%s", cited, rep.Markdown)
			}
			if sweeping > 0 {
				t.Errorf("%d sweeping claims kept a citation:\n%s", sweeping, rep.Markdown)
			}
			if float64(contained) < 0.95*float64(cited) {
				t.Errorf("%d of %d cited sentences are cited to a source that contains them, want >= 95%%:\n%s", contained, cited, rep.Markdown)
			}
			v := rep.Metrics.Verified
			if v == nil || v.Recited == 0 || v.Uncited == 0 {
				t.Fatalf("the repairs are not counted: %+v", v)
			}
			if !strings.Contains(rep.Markdown, "re-cited to the source that says it") {
				t.Error("the Method section does not account for the repairs")
			}
			if !strings.Contains(rep.Markdown, pipelinetest.SweepingClaim+".") {
				t.Error("the sweeping claim was not kept as the report's own, uncited synthesis (the default policy)")
			}
			for _, s := range rep.Support {
				if s.Passage == "" || len(s.N) == 0 {
					t.Errorf("support entry without a passage: %+v", s)
				}
			}
			// sessions show --json and the MCP get_session carry them.
			d, err := history.LoadDetail(env.Store, sess.ID)
			if err != nil || len(d.Support) != len(rep.Support) || len(d.Repairs) == 0 || d.Metrics.Verified == nil {
				t.Errorf("session detail lacks the support map or repairs: %v, %d/%d support, %d repairs", err, len(d.Support), len(rep.Support), len(d.Repairs))
			}
		})
	}
}

// With --unsupported drop, sentences no source says are removed.
func TestUnsupportedSentencesCanBeDropped(t *testing.T) {
	t.Parallel()
	env, opt := carelessWorld(t, false, &pipelinetest.Script{Careless: true})
	opt.Unsupported = runopts.UnsupportedDrop
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rep.Markdown, pipelinetest.SweepingClaim) {
		t.Errorf("the sweeping claim survived --unsupported drop:\n%s", rep.Markdown)
	}
	if rep.Metrics.Verified == nil || rep.Metrics.Verified.Dropped == 0 {
		t.Errorf("no drop counted: %+v", rep.Metrics.Verified)
	}
}

// Paraphrased sentences match no passage word for word: the model judges
// them, and only those, in batches.
func TestParaphrasesAreJudgedByTheModel(t *testing.T) {
	t.Parallel()
	env, opt := carelessWorld(t, false, &pipelinetest.Script{Careless: true, Paraphrase: true})
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	v := rep.Metrics.Verified
	if v == nil || v.ByModel == 0 {
		t.Fatalf("no sentence judged by the model: %+v", v)
	}
	calls := env.Script.Calls(pipelinetest.Verifier)
	if calls == 0 || calls > (v.ByModel+5)/6+1 {
		t.Errorf("%d verifier calls for %d sentences judged: want batches of up to 6", calls, v.ByModel)
	}
	if rep.Metrics.SupportedRatio <= 0 || rep.Metrics.SupportedRatio > 1 {
		t.Errorf("supported ratio %v", rep.Metrics.SupportedRatio)
	}
}

// --verify quick asks no model; --verify off leaves the draft as written.
func TestVerifyModes(t *testing.T) {
	t.Parallel()
	env, opt := carelessWorld(t, false, &pipelinetest.Script{Careless: true, Paraphrase: true})
	opt.Verify = runopts.VerifyQuick
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	if n := env.Script.Calls(pipelinetest.Verifier); n != 0 {
		t.Errorf("--verify quick made %d verifier calls", n)
	}
	rep, _ := pipeline.LoadReport(env.Store, sess.ID)
	if rep.Metrics.Verified == nil {
		t.Error("--verify quick verified nothing")
	}

	env, opt = carelessWorld(t, false, &pipelinetest.Script{Careless: true})
	opt.Verify = runopts.VerifyOff
	_, sess = pipelinetest.RunToEnd(t, env, opt)
	rep, _ = pipeline.LoadReport(env.Store, sess.ID)
	if rep.Metrics.Verified != nil || !strings.Contains(rep.Markdown, pipelinetest.SweepingClaim+" [") {
		t.Errorf("--verify off changed the draft or counted a verification: %+v", rep.Metrics.Verified)
	}
}

// retracting marks the records of one title retracted, as OpenAlex's
// is_retracted does.
type retracting struct {
	search.Source
	title string
}

func (r retracting) Search(ctx context.Context, q string, limit int) ([]search.Record, error) {
	recs, err := r.Source.Search(ctx, q, limit)
	for i := range recs {
		if strings.EqualFold(recs[i].Title, r.title) {
			recs[i].Retracted = true
		}
	}
	return recs, err
}

// A retracted work is never cited as support, even by a writer that cites
// it, and is marked retracted among the candidates.
func TestRetractedWorksSupportNothing(t *testing.T) {
	t.Parallel()
	env, opt := carelessWorld(t, false, &pipelinetest.Script{Careless: true})
	const title = "Augmenting large language models with chemistry tools"
	env.Engine.Sources["openalex"] = retracting{env.Engine.Sources["openalex"], title}
	env.Engine.Sources["arxiv"] = retracting{env.Engine.Sources["arxiv"], title}
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Sources {
		if strings.EqualFold(s.Title, title) {
			t.Errorf("the retracted work is cited as [%d]:\n%s", s.N, rep.Markdown)
		}
	}
	cands, err := pipeline.LoadCandidates(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	marked := false
	for _, c := range cands {
		if strings.EqualFold(c.Title, title) {
			if !c.Retracted {
				t.Errorf("candidate %q is not marked retracted", c.Title)
			}
			marked = true
		}
	}
	if !marked {
		t.Fatal("the retracted work was not among the candidates; the test proves nothing")
	}
}

// A verifier that answers junk is not trusted: matching decides, and the
// run says so.
func TestVerifierJunkFallsBackToMatching(t *testing.T) {
	t.Parallel()
	junk := ollamafake.Reply{Content: `{"verdicts": [{"c": "one", "v": 7}`}
	script := &pipelinetest.Script{Careless: true, Paraphrase: true, Faults: []pipelinetest.Fault{
		{Kind: pipelinetest.Verifier, Nth: 1, Reply: junk}, {Kind: pipelinetest.Verifier, Nth: 2, Reply: junk},
		{Kind: pipelinetest.Verifier, Nth: 3, Reply: junk}, {Kind: pipelinetest.Verifier, Nth: 4, Reply: junk},
	}}
	env, opt := carelessWorld(t, false, script)
	evs, sess := pipelinetest.RunToEnd(t, env, opt)
	if !warnedAbout(evs, "verifier's answer was unusable") {
		t.Error("no warning that the verifier's answer was unusable")
	}
	rep, _ := pipeline.LoadReport(env.Store, sess.ID)
	if v := rep.Metrics.Verified; v == nil || v.Cited == 0 {
		t.Fatalf("nothing verified: %+v", v)
	}
	if _, _, sweeping := attribution(t, env, rep); sweeping > 0 {
		t.Errorf("%d sweeping claims kept a citation after a junk verifier", sweeping)
	}
}

// A claim the passage contradicts is dropped, and the repair recorded.
func TestContradictedClaimsAreDropped(t *testing.T) {
	t.Parallel()
	env, opt := carelessWorld(t, false, &pipelinetest.Script{Careless: true, Paraphrase: true, VerifierJudges: pipelinetest.JudgeContradicted})
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	rep, _ := pipeline.LoadReport(env.Store, sess.ID)
	if rep.Metrics.Verified == nil || rep.Metrics.Verified.Dropped == 0 {
		t.Fatalf("no contradicted claim dropped: %+v", rep.Metrics.Verified)
	}
	for _, r := range rep.Repairs {
		if r.Verdict == pipeline.VerdictContradicted {
			if r.Action != pipeline.ActionDropped || r.Passage == nil {
				t.Errorf("contradicted claim %q: action %s, passage %v", r.Sentence, r.Action, r.Passage)
			}
			if strings.Contains(rep.Markdown, r.Sentence) {
				t.Errorf("the contradicted claim %q is still in the report", r.Sentence)
			}
		}
	}
}

// A run killed during verification resumes without repeating a finished
// verifier batch.
func TestResumeMidVerificationRepeatsNoBatch(t *testing.T) {
	t.Parallel()
	env, opt := carelessWorld(t, false, &pipelinetest.Script{Careless: true, Paraphrase: true})
	r, err := env.Engine.Start(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	for ev := range r.Events() {
		// A finished verifier call, not an embedding of the sentences.
		if ev.Type == pipeline.ModelCalled && ev.Stage == pipeline.StageVerify && ev.Call != nil && ev.Call.Operation == "chat" {
			r.Cancel()
		}
	}
	sess, _ := r.Wait()
	first := env.Script.Calls(pipelinetest.Verifier)
	if first == 0 {
		t.Fatal("the run was not stopped during verification")
	}
	r2, err := env.Engine.Resume(context.Background(), sess.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The resumed run's own verifier calls, counted by its events: the
	// fake server's count would also take in the first run's call cut off
	// in flight, which a loaded machine delivers after that run ended.
	resumed := 0
	for _, ev := range pipelinetest.Drive(t, r2, nil) {
		if ev.Type == pipeline.ModelCalled && ev.Stage == pipeline.StageVerify && ev.Call != nil && ev.Call.Operation == "chat" {
			resumed += ev.Call.Attempts
		}
	}
	sess, err = r2.Wait()
	if err != nil || sess.Status != store.StatusCompleted {
		t.Fatalf("resume: status %q err %v", sess.Status, err)
	}
	rep, _ := pipeline.LoadReport(env.Store, sess.ID)
	v := rep.Metrics.Verified
	batches := (v.ByModel + 5) / 6
	if batches < 2 {
		t.Fatalf("%d sentences judged by the model: the test needs at least two batches", v.ByModel)
	}
	// The first attempt finished a batch (the event that cancelled it
	// reports a finished call); another may have been in flight, cut off
	// and rightly asked again. The resumed run asks for less than every
	// batch: the finished one is not repeated.
	if resumed >= batches {
		t.Errorf("the resumed run made %d verifier calls for %d batches: a finished batch was repeated", resumed, batches)
	}
}

// The scores say what the model was made to write: in all, per source read
// and per cited sentence.
func TestScoresCountGeneratedTokens(t *testing.T) {
	t.Parallel()
	env, opt := carelessWorld(t, false, &pipelinetest.Script{Careless: true})
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	sc, err := history.LoadScores(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if served := env.Ollama.Served().CompletionTokens; sc.GeneratedTokens != served {
		t.Errorf("generated tokens %d, the model served %d", sc.GeneratedTokens, served)
	}
	if sc.GeneratedPerSource <= 0 || sc.CitedSentences < 6 || sc.GeneratedPerSentence <= 0 {
		t.Errorf("scores %+v", sc)
	}
}

// A revision that keeps sentences as they were does not send them to the
// model again: no claim is put to the verifier twice.
func TestRevisionDoesNotRejudgeKeptSentences(t *testing.T) {
	t.Parallel()
	env, opt := carelessWorld(t, false, &pipelinetest.Script{Careless: true, Paraphrase: true, RevisionRounds: 1})
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	rep, _ := pipeline.LoadReport(env.Store, sess.ID)
	if len(rep.Decisions) == 0 {
		t.Fatal("no revision: the test needs one")
	}
	claim := regexp.MustCompile(`(?m)^C\d+: (.+)$`)
	asked := map[string]int{}
	for _, c := range env.Ollama.ChatCalls() {
		if pipelinetest.KindOf(c) != pipelinetest.Verifier {
			continue
		}
		for _, m := range claim.FindAllStringSubmatch(c.Messages[len(c.Messages)-1].Content, -1) {
			asked[m[1]]++
		}
	}
	if len(asked) == 0 {
		t.Fatal("the verifier was asked nothing")
	}
	for s, n := range asked {
		if n > 1 {
			t.Errorf("claim asked %d times: %q", n, s)
		}
	}
}

// A follow-up's draft repeats the report's sentences: those the model
// judged for the report are not put to it again.
func TestFollowUpDoesNotRejudgeTheReport(t *testing.T) {
	t.Parallel()
	env, opt := carelessWorld(t, false, &pipelinetest.Script{Careless: true, Paraphrase: true})
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	claims := func() map[string]int {
		claim := regexp.MustCompile(`(?m)^C\d+: (.+)$`)
		asked := map[string]int{}
		for _, c := range env.Ollama.ChatCalls() {
			if pipelinetest.KindOf(c) == pipelinetest.Verifier {
				for _, m := range claim.FindAllStringSubmatch(c.Messages[len(c.Messages)-1].Content, -1) {
					asked[m[1]]++
				}
			}
		}
		return asked
	}
	if len(claims()) == 0 {
		t.Fatal("the run's verifier was asked nothing: the test needs sentences the model judged")
	}
	r, err := env.Engine.Ask(context.Background(), sess.ID, "Which software testing techniques do these papers study?", nil)
	if err != nil {
		t.Fatal(err)
	}
	pipelinetest.Drive(t, r, nil)
	if _, err := r.Wait(); err != nil {
		t.Fatal(err)
	}
	for s, n := range claims() {
		if n > 1 {
			t.Errorf("claim asked %d times: %q", n, s)
		}
	}
}
