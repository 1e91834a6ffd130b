package pipeline_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/eval"
	"github.com/researchtui/researchtui/pipeline/history"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/search"
)

// rankCase is a question over the recorded Semantic Scholar pool for
// "turing" (100 papers) whose on-topic papers are known by title.
type rankCase struct {
	name, question string
	topics         []pipelinetest.Topic
	canonical      string
	onTopic        []string // lower-case titles (prefixes) of the on-topic papers
}

// turingTestCase and turingCompleteCase are the eval's questions
// (pipeline/eval: `researchtui eval`), their on-topic papers its ground
// truth; the topics are what the scripted planner writes for them.
var turingTestCase = rankCase{
	name:     "turing test",
	question: eval.TuringTest.Text,
	topics: []pipelinetest.Topic{
		{Question: "How do large language models and chatbots perform in Turing tests?", Strict: "large language models Turing test", Moderate: "chatbot Turing test", Broad: "Turing test"},
		{Question: "What do Turing tests show about machine intelligence?", Strict: "Turing test machine intelligence", Moderate: "Turing test", Broad: "Turing"},
	},
	canonical: "Turing test",
	onTopic:   eval.TuringTest.OnTopic,
}

var turingCompleteCase = rankCase{
	name:     "turing complete",
	question: eval.TuringComplete.Text,
	topics: []pipelinetest.Topic{
		{Question: "Are transformers and recurrent neural networks Turing complete?", Strict: "transformers recurrent neural networks Turing complete", Moderate: "neural network Turing completeness", Broad: "Turing complete"},
		{Question: "What can neural Turing machines compute?", Strict: "neural Turing machines computation", Moderate: "neural Turing machine", Broad: "Turing machine"},
	},
	canonical: "Turing completeness",
	onTopic:   eval.TuringComplete.OnTopic,
}

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
func runRankCase(t *testing.T, c rankCase, script *pipelinetest.Script, tune func(*pipeline.Options)) rankOutcome {
	t.Helper()
	if script == nil {
		script = &pipelinetest.Script{}
	}
	script.Topics, script.Canonical = c.topics, c.canonical
	script.MissingSlot, script.GapQueries = "open problems", []string{"turing open problems"}
	env := pipelinetest.NewEnv(t, script, "")
	env.Engine.Sources["semanticscholar"] = eval.WholePool{Source: search.NewSemanticScholar(env.Client, env.Sources.SemanticScholarURL(), "")}
	opt := env.Options(c.question)
	opt.Sources = []string{"semanticscholar"}
	if tune != nil {
		tune(&opt)
	}
	evs, sess := runToEnd(t, env, opt)
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

// TestRankingQuestionsOverTheTuringPool measures, for questions whose
// on-topic papers are known, what share of what is read and cited is on
// topic (precision: at least 80%) and what share of the pool's on-topic
// papers the report cites (recall: at least half; before the run-wide
// reading plan, 7 of 17 and 4 of 11). DUMP=1 logs every candidate.
func TestRankingQuestionsOverTheTuringPool(t *testing.T) {
	for _, c := range []rankCase{turingTestCase, turingCompleteCase, turingCatalystCase} {
		t.Run(c.name, func(t *testing.T) {
			got := runRankCase(t, c, nil, nil)
			t.Logf("%s: %s", c.name, got)
			if os.Getenv("DUMP") != "" {
				dumpCands(t, c, got.cands)
			}
			if 2*got.citedOn < len(c.onTopic) || 5*got.citedOn < 4*got.cited || 5*got.readOn < 4*got.read {
				dumpCands(t, c, got.cands)
				t.Errorf("%s: %s; want ≥80%% on topic and ≥%d on-topic references (half the pool's %d)", c.name, got, (len(c.onTopic)+1)/2, len(c.onTopic))
			}
			// Round 2 follows the references and citing works of what was
			// read: economics papers (the recording), none relevant.
			rs := got.rep.Rounds
			if len(rs) != 2 || rs[1].Found == 0 || rs[1].Read != 0 || !strings.Contains(got.rep.Markdown, "none relevant enough to read") {
				t.Errorf("round 2 over unrelated references: %+v; want nothing read and the Method section saying so", rs)
			}
			for _, cd := range got.cands {
				if cd.Reason == "" || (cd.Read && cd.Relevance < cd.Floor) {
					t.Errorf("candidate %q: read %v, relevance %.2f, floor %.2f, reason %q", cd.Title, cd.Read, cd.Relevance, cd.Floor, cd.Reason)
				}
			}
		})
	}
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
