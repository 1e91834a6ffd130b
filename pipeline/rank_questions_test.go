package pipeline_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/eval"
	"github.com/researchtui/researchtui/pipeline/history"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/runopts"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/search/sourcefake"
)

// rankCase is a question over the recorded Semantic Scholar pool for
// "turing" (100 papers) whose on-topic papers are known by title.
type rankCase struct {
	name, question string
	topics         []pipelinetest.Topic
	canonical      string
	onTopic        []string // lower-case titles (prefixes) of the on-topic papers
	// pool is the recorded Semantic Scholar answer searched (a key of
	// sourcefake.Pools), ranked by each query; "" is "turing".
	pool string
}

// evalCase is a ranking case of one of the eval's questions, asked over
// pool ("" is "turing"): its on-topic papers are the eval's ground truth.
func evalCase(pool, name string, q eval.Question, canonical string, topics ...pipelinetest.Topic) rankCase {
	return rankCase{pool: pool, name: name, question: q.Text, topics: topics, canonical: canonical, onTopic: q.OnTopic}
}

// rankedS2 is Semantic Scholar over c's recorded pool, ranked by the
// query and honouring its limit as the real API does.
func (c rankCase) rankedS2(t testing.TB, client *search.Client, latency time.Duration) search.Source {
	pool := c.pool
	if pool == "" {
		pool = "turing"
	}
	s2 := sourcefake.NewWith(sourcefake.Options{Pool: pool, Latency: latency})
	t.Cleanup(s2.Close)
	return search.NewSemanticScholar(client, s2.SemanticScholarURL(), "")
}

// turingTestCase and turingCompleteCase are the eval's questions
// (pipeline/eval: `researchtui eval`), their on-topic papers its ground
// truth; the topics are what the scripted planner writes for them.
var turingTestCase = evalCase("", "turing test", eval.TuringTest, "Turing test",
	pipelinetest.Topic{Question: "How do large language models and chatbots perform in Turing tests?", Strict: "large language models Turing test", Moderate: "chatbot Turing test", Broad: "Turing test"},
	pipelinetest.Topic{Question: "What do Turing tests show about machine intelligence?", Strict: "Turing test machine intelligence", Moderate: "Turing test", Broad: "Turing"},
)

var turingCompleteCase = evalCase("", "turing complete", eval.TuringComplete, "Turing completeness",
	pipelinetest.Topic{Question: "Are transformers and recurrent neural networks Turing complete?", Strict: "transformers recurrent neural networks Turing complete", Moderate: "neural network Turing completeness", Broad: "Turing complete"},
	pipelinetest.Topic{Question: "What can neural Turing machines compute?", Strict: "neural Turing machines computation", Moderate: "neural Turing machine", Broad: "Turing machine"},
)

var turingCatalystCase = rankCase{
	name:     "turing catalysts",
	question: "How do Turing-type nanostructures make better electrocatalysts and membranes?",
	topics: []pipelinetest.Topic{
		{Question: "How do Turing-type nanostructures improve electrocatalysts for water splitting?", Strict: "Turing-type catalysts electrocatalyst", Moderate: "Turing structures catalyst", Broad: "Turing catalyst"},
		{Question: "How are Turing structures used in membranes and nanomaterials?", Strict: "Turing structures membranes", Moderate: "nanoscale Turing structures", Broad: "Turing nanostructures"},
	},
	canonical: "Turing structures",
	onTopic: []string{
		"twinning engineering of platinum/iridium nanonets", "turing structuring with multiple nanotwins", "polyamide membranes with nanoscale turing",
		"homogeneous solution assembled turing structures", "an efficient turing-type ag2se", "nanoscale turing patterns in a bismuth",
		"diverse set of turing nanopatterns", "dendrite-free zinc-based battery",
	},
}

func (c rankCase) on(title string) bool {
	t := strings.ToLower(title)
	for _, p := range c.onTopic {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// rankOutcome is what a run over the recorded pool read and cited.
type rankOutcome struct {
	read, readOn, cited, citedOn int
	offRead, offCited            []string
	rep                          pipeline.Report
	cands                        []pipeline.Candidate
	detail                       history.SessionDetail
	env                          *pipelinetest.Env
	events                       []pipeline.Event
}

func (r rankOutcome) String() string {
	return fmt.Sprintf("read %d/%d on topic, cited %d/%d on topic; off-topic read %q, cited %q", r.readOn, r.read, r.citedOn, r.cited, r.offRead, r.offCited)
}

// runRankCase runs c at standard depth over the recorded pool, with one
// follow-up round that chases citations (the recorded references and
// citing works are economics papers, nothing to do with Turing).
func runRankCase(t *testing.T, c rankCase, script *pipelinetest.Script, tune func(*runopts.Options)) rankOutcome {
	t.Helper()
	if script == nil {
		script = &pipelinetest.Script{}
	}
	script.Topics, script.Canonical = c.topics, c.canonical
	script.MissingSlot = "open problems"
	if script.GapQueries == nil {
		script.GapQueries = []string{"turing open problems"}
	}
	env := pipelinetest.NewEnv(t, script, "")
	env.Engine.Sources["semanticscholar"] = c.rankedS2(t, env.Client, 0)
	opt := env.Options(c.question)
	opt.Sources = []string{"semanticscholar"}
	if tune != nil {
		tune(&opt)
	}
	evs, sess := pipelinetest.RunToEnd(t, env, opt)
	cands, err := pipeline.LoadCandidates(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	detail, err := history.LoadDetail(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	out := rankOutcome{rep: rep, cands: cands, detail: detail, env: env, events: evs}
	seen := map[string]bool{}
	for _, cd := range cands {
		if !cd.Read || seen[cd.Key] {
			continue
		}
		seen[cd.Key] = true
		out.read++
		if c.on(cd.Title) {
			out.readOn++
		} else {
			out.offRead = append(out.offRead, cd.Title)
		}
	}
	for _, s := range rep.Sources {
		out.cited++
		if c.on(s.Title) {
			out.citedOn++
		} else {
			out.offCited = append(out.offCited, s.Title)
		}
	}
	return out
}

// TestTheScreenReadsTheOnTopicWorks: in a world whose search ranks each
// recorded pool by the query and whose screen judges like a competent
// reader (wrong on one title in ten), a standard run cites most of the
// pool's on-topic works that can be read (they have an abstract or a
// PDF): recall at least 0.7, where word overlap alone cited 0.25–0.80.
// Nothing the screen judged off topic is read. Precision is bounded by
// the screen's errors (a tenth of 50–70 namesakes judged on topic, a
// second and third look at the verdicts that decide): 0.82–0.92 here, at
// least 0.8 asked; issue 44 asks 0.85, not reached on every question yet.
// The held-out pools (Kubernetes, turing-2) are only benchmarked.
// DUMP=1 logs every candidate.
func TestTheScreenReadsTheOnTopicWorks(t *testing.T) {
	t.Parallel()
	for _, c := range []rankCase{turingTestCase, turingCompleteCase, turingCatalystCase, editDistance1Case, editDistance2Case} {
		t.Run(c.name, func(t *testing.T) {
			got := runRankCase(t, c, &pipelinetest.Script{Screen: competent(c), Realistic: true, ByReference: true}, nil)
			readable := readableOnTopic(c)
			t.Logf("%s: %s; recall %d/%d readable (%d labelled)", c.name, got, got.citedOn, readable, len(c.onTopic))
			if os.Getenv("DUMP") != "" {
				dumpCands(t, c, got.cands)
			}
			if 10*got.citedOn < 7*readable || 5*got.citedOn < 4*got.cited {
				t.Errorf("%s: %s; want ≥0.7 of the %d readable on-topic works cited, precision ≥0.8", c.name, got, readable)
			}
			for _, cd := range got.cands {
				if cd.Reason == "" || (cd.Read && strings.HasPrefix(cd.Screen, "off topic")) {
					t.Errorf("candidate %q: read %v, screen %q, reason %q", cd.Title, cd.Read, cd.Screen, cd.Reason)
				}
			}
		})
	}
}

// TestWithoutJudgementTheWordsChoose: a screen with no judgement (every
// candidate on topic) does not flood the report: the floors choose, in
// every round, and what is cited is mostly on topic.
func TestWithoutJudgementTheWordsChoose(t *testing.T) {
	t.Parallel()
	for _, c := range []rankCase{turingTestCase, turingCompleteCase, turingCatalystCase} {
		got := runRankCase(t, c, nil, nil)
		t.Logf("%s, no judgement: %s; fallbacks %q", c.name, got, got.detail.Screen.Fallbacks)
		if 5*got.citedOn < 4*got.cited || len(got.detail.Screen.Fallbacks) == 0 {
			t.Errorf("%s with a screen of no judgement: %s; want ≥80%% on topic, the words choosing", c.name, got)
		}
		for _, cd := range got.cands {
			if cd.Read && cd.Relevance < cd.Floor {
				t.Errorf("%q read below the floor (%.2f < %.2f): %s", cd.Title, cd.Relevance, cd.Floor, cd.Reason)
			}
		}
	}
}

// readableOnTopic counts c's on-topic works that can be read in its pool:
// those with an abstract or a PDF (a title alone is never read).
func readableOnTopic(c rankCase) int {
	pool := c.pool
	if pool == "" {
		pool = "turing"
	}
	var page struct {
		Data []struct {
			Title    string  `json:"title"`
			Abstract *string `json:"abstract"`
			PDF      *struct {
				URL string `json:"url"`
			} `json:"openAccessPdf"`
		} `json:"data"`
	}
	if err := json.Unmarshal(sourcefake.PoolBody(pool), &page); err != nil {
		panic(err)
	}
	seen := map[string]bool{}
	for _, d := range page.Data {
		t := strings.ToLower(strings.TrimSpace(d.Title))
		if c.on(t) && !seen[t] && ((d.Abstract != nil && *d.Abstract != "") || (d.PDF != nil && d.PDF.URL != "")) {
			seen[t] = true
		}
	}
	return len(seen)
}

// dumpCands logs the first round's candidates and what later rounds read,
// with their scores, to show why a ranking went wrong.
func dumpCands(t *testing.T, c rankCase, cs []pipeline.Candidate) {
	for _, cd := range cs {
		if cd.Round > 1 && !cd.Read {
			continue
		}
		on := " "
		if c.on(cd.Title) {
			on = "+"
		}
		r := " "
		if cd.Read {
			r = "R"
		}
		t.Logf("%s%s r%d %s sc %.2f rel %.2f fl %.2f sem %.2f lex %.2f cov %.2f ph %.2f %.60s | %s", on, r, cd.Round, cd.SubQ, cd.Score, cd.Relevance, cd.Floor, cd.Semantic, cd.Lexical, cd.Coverage, cd.Phrase, cd.Title, cd.Reason)
	}
}
