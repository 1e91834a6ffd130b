package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/researchtui/researchtui/llm"
	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// Setup is what every run of an eval shares: the model under test and
// where its fresh stores go.
type Setup struct {
	LLM        llm.Backend
	Model      string
	EmbedModel string
	// ModelParallel is the backend's chat slots (pipeline.Engine).
	ModelParallel int
	// Dir holds each run's fresh store, removed after the run; "" means a
	// new temporary directory. Never the person's data dir.
	Dir string
	// OnEvent, when set, sees every event of every run (progress).
	OnEvent func(pipeline.Event)
	// Seed, when not 0, is the sampling seed of every chat call of run 1
	// (Seed+1 of run 2, ...), so an eval repeats where the backend honours
	// a seed (Ollama and OpenAI-compatible servers take one).
	Seed int
	// Judge, when set, is the second judge of cited sentences (--judge):
	// another model, asked about paraphrase. Its calls are not the model
	// under test's and are counted apart.
	Judge *ModelJudge
}

// seeded gives every chat call that has no seed one.
type seeded struct {
	llm.Backend
	seed int
}

func (b seeded) Chat(ctx context.Context, req llm.ChatRequest, onDelta func(llm.Delta)) (llm.ChatResponse, error) {
	if req.Seed == nil {
		seed := b.seed
		req.Seed = &seed
	}
	return b.Backend.Chat(ctx, req, onDelta)
}

// Options are the run options of every eval run: the pipeline's defaults
// (standard depth, the verifier on), the model under test, and the sources
// of q's world, so runs compare across people and machines whatever their
// configuration says.
func (s Setup) Options(q Question) runopts.Options {
	o := runopts.DefaultOptions()
	o.Question, o.Model, o.EmbedModel = q.Text, s.Model, s.EmbedModel
	o.Sources, o.AutoSources = append([]string(nil), worldSpecs[q.WorldID()].sources...), false
	return o
}

// RunQuestion runs q once in w, its world, with the model under test, on a
// fresh store, approving every review as a headless run does, and scores
// it. A run that fails is a Result with Error set, not an error: the eval
// goes on; the error is for what stops the eval (a cancelled context, a
// store that cannot be made, w not q's world).
func RunQuestion(ctx context.Context, s Setup, w *World, q Question, run int) (Result, error) {
	if _, err := w.For(q); err != nil {
		return Result{}, err
	}
	dir := s.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "researchtui-eval-")
		if err != nil {
			return Result{}, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	runDir, err := os.MkdirTemp(dir, q.ID+"-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(runDir)
	st, err := store.Open(filepath.Join(runDir, "eval.db"), store.Options{})
	if err != nil {
		return Result{}, err
	}
	defer st.Close()

	client := search.NewClient(search.ClientOptions{})
	client.SetHostLimit(w.Host(), 0) // the recording answers at once; no politeness to keep
	backend := s.LLM
	if s.Seed != 0 {
		backend = seeded{s.LLM, s.Seed + run - 1}
	}
	eng := &pipeline.Engine{Store: st, LLM: backend, Sources: w.Sources(client), ModelParallel: s.ModelParallel}
	start := time.Now()
	r, err := eng.Start(ctx, s.Options(q))
	if err != nil {
		return Result{}, err
	}
	var evs []pipeline.Event
	on := func(ev pipeline.Event) {
		evs = append(evs, ev)
		if s.OnEvent != nil {
			s.OnEvent(ev)
		}
	}
	approve := func(context.Context, *pipeline.ReviewRequest) (pipeline.Decision, error) {
		return pipeline.Decision{Approve: true}, nil
	}
	sess, _, err := pipeline.Drive(ctx, r, on, approve)
	wall := time.Since(start)
	if ctx.Err() != nil {
		return Result{}, ctx.Err()
	}
	failed := func(err error) Result {
		res := Result{Question: q.ID, Run: run, Session: sess.ID, Error: err.Error(), OnTopic: len(q.OnTopic), Facts: len(q.Facts), WallSeconds: wall.Seconds()}
		for _, f := range q.Facts {
			res.FactsMissed = append(res.FactsMissed, f.ID)
		}
		res.addEvents(evs)
		res.Assembled = false // a failed run has no report, assembled or not
		return res
	}
	if err != nil {
		return failed(err), nil
	}
	if chats, fails, first := chatFailures(evs); chats > 0 && fails == chats {
		// The pipeline degrades to a report assembled from abstracts when
		// the model answers nothing: that measures the fallback, not the
		// model.
		return failed(fmt.Errorf("the model answered none of its %d chat calls (%s)", chats, first)), nil
	}
	if sess.Status != store.StatusCompleted {
		return failed(fmt.Errorf("the run ended %s", sess.Status)), nil
	}
	rep, err := pipeline.LoadReport(st, sess.ID)
	if err != nil {
		return failed(err), nil
	}
	res := Score(q, w, rep, evs)
	res.Run, res.WallSeconds = run, wall.Seconds()
	if err := res.JudgeParaphrase(ctx, s.Judge); err != nil {
		return Result{}, err
	}
	return res, nil
}

// Summary is an eval: who was measured, how, and the results.
type Summary struct {
	Model      string    `json:"model"`
	EmbedModel string    `json:"embed_model"`
	Backend    string    `json:"backend"`
	World      string    `json:"world"`
	Judge      string    `json:"judge"`
	Threshold  float64   `json:"support_threshold"`
	Questions  []string  `json:"questions"`
	Runs       int       `json:"runs"`
	Seed       int       `json:"seed,omitempty"` // run k's seed is Seed+k-1
	Started    time.Time `json:"started"`
	Results    []Result  `json:"results"`
	Overall    Totals    `json:"overall"`
}

// Totals pool every result: ratios of sums (a question with more on-topic
// works weighs more), costs as means per run.
type Totals struct {
	Runs           int            `json:"runs"`
	Failed         int            `json:"failed"`
	Recall         float64        `json:"recall"`
	Precision      float64        `json:"precision"`
	FactsCovered   float64        `json:"facts_covered"` // share of all facts
	SupportedShare float64        `json:"supported_share"`
	Repaired       float64        `json:"repaired"`         // per run
	Unfounded      float64        `json:"unfounded"`        // per run
	PromptTokens   float64        `json:"prompt_tokens"`    // per run
	Generated      float64        `json:"generated_tokens"` // per run
	ModelCalls     float64        `json:"model_calls"`      // per run
	WallSeconds    float64        `json:"wall_seconds"`     // all runs
	FailedCalls    float64        `json:"unanswered"`       // per run: chat requests not answered
	Assembled      int            `json:"assembled"`        // runs whose report the pipeline assembled (the writer failed)
	ParseFailures  map[string]int `json:"parse_failures,omitempty"`
	Unusable       map[string]int `json:"unusable_answers,omitempty"`
	// The model judge's work in all runs (--judge): sentences put to it,
	// accepted, answers it gave that said neither, its tokens.
	Judged           int `json:"judged,omitempty"`
	SupportedByJudge int `json:"supported_by_judge,omitempty"`
	JudgeUnclear     int `json:"judge_unclear,omitempty"`
	JudgeTokens      int `json:"judge_tokens,omitempty"`
}

// Total pools results.
func Total(rs []Result) Totals {
	var t Totals
	var cited, citedOn, onCovered, on, facts, covered, sentences, supported int
	for _, r := range rs {
		t.Runs++
		if r.Error != "" {
			t.Failed++
		}
		cited += r.Cited
		citedOn += r.CitedOnTopic
		onCovered += r.OnTopicCited
		on += r.OnTopic
		facts += r.Facts
		covered += r.FactsCovered
		sentences += r.CitedSentences
		supported += r.Supported
		t.Repaired += float64(r.Repaired)
		t.Unfounded += float64(r.Unfounded)
		t.FailedCalls += float64(r.FailedCalls)
		if r.Assembled {
			t.Assembled++
		}
		t.PromptTokens += float64(r.PromptTokens)
		t.Generated += float64(r.GeneratedTokens)
		t.ModelCalls += float64(r.ModelCalls)
		t.WallSeconds += r.WallSeconds
		t.Judged += r.Judged
		t.SupportedByJudge += r.SupportedByJudge
		t.JudgeUnclear += r.JudgeUnclear
		t.JudgeTokens += r.JudgeTokens
		for k, v := range r.ParseFailures {
			t.ParseFailures = add(t.ParseFailures, k, v)
		}
		for k, v := range r.Unusable {
			t.Unusable = add(t.Unusable, k, v)
		}
	}
	t.Recall, t.Precision = ratio(onCovered, on), ratio(citedOn, cited)
	t.FactsCovered, t.SupportedShare = ratio(covered, facts), ratio(supported, sentences)
	if t.Runs > 0 {
		n := float64(t.Runs)
		t.Repaired, t.Unfounded, t.PromptTokens, t.Generated, t.ModelCalls = t.Repaired/n, t.Unfounded/n, t.PromptTokens/n, t.Generated/n, t.ModelCalls/n
		t.FailedCalls /= n
	}
	return t
}

func add(m map[string]int, k string, v int) map[string]int {
	if m == nil {
		m = map[string]int{}
	}
	m[k] += v
	return m
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Step is where an eval is: run i (from 0) of n is about to start.
type Step struct {
	I, N     int
	Question Question
	Run      int // 1-based, of Runs of this question
	Runs     int
	Elapsed  time.Duration
}

// Run runs every question runs times, in its world (ws: one *World, or
// the WorldSet OpenWorlds opens for qs), in order (question by question,
// each one's runs together), calling step before each run, and pools the
// results; the summary names every world asked in. It stops at the first
// error that stops an eval (see RunQuestion; a question whose world ws
// lacks stops it before any run) and returns what was done with it.
func Run(ctx context.Context, s Setup, ws Worlds, qs []Question, runs int, step func(Step)) (Summary, error) {
	if len(qs) == 0 {
		return Summary{}, errors.New("eval: no questions")
	}
	runs = max(runs, 1)
	worlds := make([]*World, len(qs))
	var names []string
	for i, q := range qs {
		w, err := ws.For(q)
		if err != nil {
			return Summary{}, err
		}
		if worlds[i] = w; !slices.Contains(names, w.Name) {
			names = append(names, w.Name)
		}
	}
	sum := Summary{Model: s.Model, EmbedModel: s.EmbedModel, World: strings.Join(names, "; "), Judge: JudgeName(s.Judge), Threshold: SupportThreshold, Runs: runs, Seed: s.Seed, Started: time.Now()}
	for _, q := range qs {
		sum.Questions = append(sum.Questions, q.ID)
	}
	n, i := len(qs)*runs, 0
	for qi, q := range qs {
		for run := 1; run <= runs; run++ {
			if step != nil {
				step(Step{I: i, N: n, Question: q, Run: run, Runs: runs, Elapsed: time.Since(sum.Started)})
			}
			res, err := RunQuestion(ctx, s, worlds[qi], q, run)
			if err != nil {
				sum.Overall = Total(sum.Results)
				return sum, err
			}
			sum.Results = append(sum.Results, res)
			i++
		}
	}
	sum.Overall = Total(sum.Results)
	return sum, nil
}
