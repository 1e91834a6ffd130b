// Package eval measures a model on frozen worlds (issue 40): recorded
// scholarly answers served in-process, questions whose ground truth is
// known (the on-topic works, key facts tied to sentences of the recorded
// abstracts), and scores computed from that ground truth and the recorded
// text, never from the pipeline's own verdicts.
//
// It imports pipeline, llm (the --judge model), search, search/replay,
// store and textkit; nothing imports
// it but ui/cli (researchtui eval) and tests. Each of the eval's worlds is
// a recording (Semantic Scholar's pool for "turing", arXiv's answer for
// "testing", ...): the eval's own data (worlds/, embedded, with its
// attribution), served over loopback HTTP by search/replay so the
// pipeline reads it as it reads the real API; each question names its
// world. It never imports search/sourcefake, the tests' fake.
package eval

import (
	"fmt"
	"sort"
	"strings"
)

// Question is one eval question over a world, with its ground truth.
type Question struct {
	// ID names the question on the command line and in results.
	ID   string `json:"id"`
	Text string `json:"question"`
	// World is the world the question is asked in (TuringWorld,
	// TestingWorld); "" is TuringWorld, the first.
	World string `json:"world"`
	// OnTopic are the lower-case title prefixes of the world's on-topic
	// works (each matches one recorded title, or a work and its revised
	// version): recall is the share of them cited.
	OnTopic []string `json:"on_topic"`
	// Facts are what a good answer states, each tied to a sentence of a
	// recorded abstract.
	Facts []Fact `json:"facts"`
}

// Fact is a key fact: Words are what a report sentence must state (every
// content word of them, compared as the scorer compares words), Paper the
// recorded work (its ID in the question's world: a Semantic Scholar
// paperId, an arXiv ID) and Sentence the sentence of its recorded abstract
// that states it.
type Fact struct {
	ID       string `json:"id"`
	Words    string `json:"words"`
	Paper    string `json:"paper"`
	Sentence string `json:"sentence"`
}

// WorldID is the world q is asked in.
func (q Question) WorldID() string {
	if q.World == "" {
		return TuringWorld
	}
	return q.World
}

// On reports whether a title is one of q's on-topic works, and which
// prefix it matches ("" when none).
func (q Question) On(title string) (string, bool) {
	t := strings.ToLower(strings.TrimSpace(title))
	for _, p := range q.OnTopic {
		if strings.HasPrefix(t, p) {
			return p, true
		}
	}
	return "", false
}

// TuringTest asks about large language models in Turing tests over the
// recorded Semantic Scholar pool for "turing" (100 papers, most of them
// namesakes: Turing patterns, machines, GPUs, catalysts).
var TuringTest = Question{
	ID:    "turing-test",
	Text:  "How well do large language models and chatbots do in Turing tests, and what do these tests show?",
	World: TuringWorld,
	OnTopic: []string{
		"large language models pass the turing test", "a turing test of whether ai chatbots", "people cannot distinguish gpt-4",
		"chatgpt broke the turing test", "does gpt-4 pass the turing test", "the turing trap", "putting chatgpt's medical advice",
		"large language models and the reverse turing test", "turingbench", "the turing test is a thought experiment",
		"can gpt-3 pass a writer", "towards an automatic turing test", "common sense, the turing test", "can machines think? a report on turing test",
		"twitter turing test", "a visual turing test", "simulated penetration testing",
	},
	Facts: []Fact{
		{ID: "gpt45-73", Words: "GPT-4.5 human 73%", Paper: "66e350075a66ca5fd0c09f20d76aaad2c5c6860c",
			Sentence: "When prompted to adopt a humanlike persona, GPT-4.5 was judged to be the human 73% of the time: significantly more often than interrogators selected the real human participant."},
		{ID: "gpt4-54", Words: "GPT-4 human 54%", Paper: "505c7b471457ac447efdb9abc714247dd10dbef8",
			Sentence: "GPT-4 was judged to be a human 54% of the time, significantly more often than ELIZA (22%) but less often than actual humans (67%)."},
		{ID: "gpt4-49.7", Words: "GPT-4 49.7%", Paper: "682918c9c1705907ca1fe3f1207561f403f6ea0e",
			Sentence: "The best-performing GPT-4 prompt passed in 49.7% of games, outperforming ELIZA (22%) and GPT-3.5 (20%), but falling short of the baseline set by human participants (66%)."},
		{ID: "style", Words: "linguistic style socioemotional", Paper: "682918c9c1705907ca1fe3f1207561f403f6ea0e",
			Sentence: "Participants’ decisions were based mainly on linguistic style (35%) and socioemotional traits (27%), supporting the idea that intelligence, narrowly conceived, is not sufficient to pass the Turing test."},
		{ID: "goostman", Words: "Eugene Goostman", Paper: "902fb60fa3493171b2aa9d485291a54185763a79",
			Sentence: "The transcripts presented all involve one machine only, namely ‘Eugene Goostman’, the result being that the machine became the first to pass the Turing test, as set out by Alan Turing, on unrestricted conversation."},
	},
}

// TuringComplete asks about the Turing completeness of neural networks
// over the same pool.
var TuringComplete = Question{
	ID:    "turing-complete",
	Text:  "Are transformers and recurrent neural networks Turing complete, and what can neural Turing machines compute?",
	World: TuringWorld,
	OnTopic: []string{
		"neural turing machines", "attention is turing-complete", "[pdf] neural networks and analog computation", "statistically meaningful approximation",
		"on the turing completeness of modern neural", "turing completeness of bounded-precision", "implementing neural turing machines",
		"dynamic neural turing machine", "reinforcement learning neural turing machines", "simplified and yet turing universal spiking neural",
		"photonic information processing beyond turing",
	},
	Facts: []Fact{
		{ID: "no-external-memory", Words: "Transformer Turing complete external memory", Paper: "3694381e74445a8b9f8cb8d373e39626e47191b5",
			Sentence: "In particular, neither the Transformer nor the Neural GPU requires access to an external memory to become Turing complete."},
		{ID: "ntm-memory", Words: "neural networks coupling external memory", Paper: "c1126fbffd6b8547a44c58b192b36b08b18299de",
			Sentence: "We extend the capabilities of neural networks by coupling them to external memory resources, which they can interact with by attentional processes."},
		{ID: "ntm-algorithms", Words: "copying sorting associative recall", Paper: "c1126fbffd6b8547a44c58b192b36b08b18299de",
			Sentence: "Preliminary results demonstrate that Neural Turing Machines can infer simple algorithms such as copying, sorting, and associative recall from input and output examples."},
		{ID: "sm-approximation", Words: "transformers approximate Turing machines", Paper: "0e9ac2cfc5a3ecb66eeace720901390f7809ba0a",
			Sentence: "In addition, we show that transformers can SM approximate Turing machines with computation time bounded by $T$ with sample complexity polynomial in the alphabet size, state space size, and $\\log (T)$."},
		{ID: "one-spike", Words: "one type of spike Turing universality", Paper: "b0e69af8e8f7f2501cb26290e57a8563dba5d178",
			Sentence: "It is proved that one type of spike is enough to guarantee the Turing universality of SNQ P systems."},
	},
}

// GUITesting asks about automated testing of GUIs, web and mobile apps
// over the recorded arXiv answer for "testing" (10 papers on software
// testing, three of them on this: GUI test case generation, a survey of
// web testing, a review of automated GUI testing of mobile apps). REST API
// test generation is testing of web services, not of their user-facing
// applications, and is left off topic.
var GUITesting = Question{
	ID:    "gui-testing",
	Text:  "What automated techniques exist for testing graphical user interfaces, web applications and mobile apps?",
	World: TestingWorld,
	OnTopic: []string{
		"study paper on test case generation for gui based testing", "a survey on web testing",
		"a systematic literature review of automated techniques for functional gui testing",
	},
	Facts: []Fact{
		{ID: "gui-sequence-length", Words: "length of the test sequence", Paper: "1202.4527",
			Sentence: "To cover all use cases and to provide testing for all possible (success/failure) scenarios the length of the test sequence is considered important."},
		{ID: "web-black-box", Words: "automation black-box testing", Paper: "2503.05378",
			Sentence: "Most studies focus on novel techniques, emphasizing automation in black-box testing."},
		{ID: "selenium", Words: "Selenium most widely used tool", Paper: "2503.05378",
			Sentence: "Selenium is the most widely used tool, while industrial adoption and human studies remain comparatively limited."},
		{ID: "beats-random", Words: "symbolic execution more effective than random test generation", Paper: "1812.11470",
			Sentence: "From effectiveness, we conclude that testing techniques which implement model-checking, symbolic execution, constraint solving, and search-based test generation approach tend to be more effective than those implementing random test generation."},
		{ID: "half-effective", Words: "nearly half of the desired level of effectiveness", Paper: "1812.11470",
			Sentence: "For effectiveness, we observe that the existing automated testing techniques are not effective enough, and currently they achieve nearly half of the desired level of effectiveness."},
	},
}

// Sets are the question sets by name; DefaultSet is what eval runs unless
// told otherwise. Each question names its world: "turing" is over the
// recorded Semantic Scholar pool for "turing", "testing" over the
// recorded arXiv answer for "testing", "all" both; "pools" are the
// questions over three more recorded pools, labelled by hand (pools.go).
var Sets = map[string][]Question{
	"turing":  {TuringTest, TuringComplete},
	"testing": {GUITesting},
	"all":     {TuringTest, TuringComplete, GUITesting},
	"pools":   PoolQuestions,
}

// DefaultSet is the set eval runs by default.
const DefaultSet = "turing"

// Select returns the questions a --questions value names: sets and
// question IDs separated by commas, in the order given (a set's own order
// is fixed), each question once, so every run asks in the same order.
func Select(spec string) ([]Question, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		spec = DefaultSet
	}
	byID := map[string]Question{}
	for _, qs := range Sets {
		for _, q := range qs {
			byID[q.ID] = q
		}
	}
	var out []Question
	seen := map[string]bool{}
	for _, id := range strings.Split(spec, ",") {
		id = strings.TrimSpace(id)
		qs, ok := Sets[id]
		if q, one := byID[id]; one {
			qs, ok = []Question{q}, true
		}
		if !ok {
			return nil, fmt.Errorf("no question set or question %q (sets: %s; questions: %s)", id, strings.Join(names(Sets), ", "), strings.Join(names(byID), ", "))
		}
		for _, q := range qs {
			if !seen[q.ID] {
				seen[q.ID] = true
				out = append(out, q)
			}
		}
	}
	return out, nil
}

func names[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
