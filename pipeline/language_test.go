package pipeline_test

import (
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/pipeline/runopts"
)

// --language de: the writer is asked for German without finding labels,
// the reviewer is told the language is on purpose, the code's headings are
// German, the Method section is translated (its counts kept) and the
// references are as an English run writes them.
func TestLanguageReachesTheWriterAndTheMethod(t *testing.T) {
	t.Parallel()
	run := func(lang string) (*pipelinetest.Env, pipeline.Report) {
		env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 1}, "")
		opt := env.Options(question)
		opt.Language = lang
		_, sess := pipelinetest.RunToEnd(t, env, opt)
		rep, err := pipeline.LoadReport(env.Store, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		return env, rep
	}
	env, de := run("German")
	_, en := run("")
	var writerAsked, labels, reviewerTold bool
	for _, c := range env.Ollama.ChatCalls() {
		text := ""
		for _, m := range c.Messages {
			text += m.Content
		}
		switch pipelinetest.KindOf(c) {
		case pipelinetest.Writer:
			writerAsked = writerAsked || strings.Contains(text, "Write the whole report in German (de)")
			labels = labels || strings.Contains(text, "{F2.1}")
		case pipelinetest.Reviewer:
			reviewerTold = reviewerTold || strings.Contains(text, "written in German on purpose")
		}
	}
	if !writerAsked || labels || !reviewerTold {
		t.Errorf("writer asked for German %v, told about finding labels %v; reviewer told %v", writerAsked, labels, reviewerTold)
	}
	md := de.Markdown
	if !strings.Contains(md, "\n## Methode\n\n[translated] Searched arxiv") || !strings.Contains(md, "\n## Literatur\n\n[1] ") || strings.Contains(md, "## Method\n") || strings.Contains(md, "## References") {
		t.Errorf("German headings or Method:\n%s", md[strings.Index(md, "## Consensus"):])
	}
	_, deRefs, _ := strings.Cut(md, "## Literatur\n")
	_, enRefs, _ := strings.Cut(en.Markdown, "## References\n")
	if deRefs == "" || deRefs != enRefs {
		t.Errorf("the references differ from an English run's:\n%s\n---\n%s", deRefs, enRefs)
	}
	// A follow-up inherits the language.
	before := len(env.Ollama.ChatCalls())
	ask(t, env, de.SessionID, "What do the sources say about test case prioritisation?")
	german := false
	for _, c := range env.Ollama.ChatCalls()[before:] {
		if pipelinetest.KindOf(c) == pipelinetest.Writer {
			for _, m := range c.Messages {
				german = german || strings.Contains(m.Content, "Write the whole report in German (de)")
			}
		}
	}
	fu, err := pipeline.LoadReport(env.Store, de.SessionID)
	if err != nil || !german || !strings.Contains(fu.Markdown, "\n## Methode\n") || !strings.Contains(fu.Markdown, "\n## Literatur\n") || strings.Count(fu.Markdown, "## Methode") != 1 {
		t.Errorf("the follow-up's writer asked for German %v; its report:\n%s", german, fu.Markdown)
	}
	if len(de.Sources) != len(en.Sources) || de.Metrics.Verified == nil || de.Metrics.Verified.Uncited > en.Metrics.Verified.Uncited {
		t.Errorf("German sentences lost citations an English run keeps: %d sources, %+v; English %d, %+v", len(de.Sources), de.Metrics.Verified, len(en.Sources), en.Metrics.Verified)
	}
}

func TestLanguageNames(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"de": "de", "German": "de", "deutsch": "de", "pt-BR": "pt-BR", "en": "", "English": "", "": ""} {
		o := runopts.Options{Question: "why?", Model: "m", EmbedModel: "e", Language: in}
		if err := o.Normalize(); err != nil || o.Language != want {
			t.Errorf("%q: %q %v, want %q", in, o.Language, err, want)
		}
	}
	for _, bad := range []string{"Klingonish", "zz", "x"} {
		o := runopts.Options{Question: "why?", Model: "m", EmbedModel: "e", Language: bad}
		if err := o.Normalize(); err == nil || !strings.Contains(err.Error(), "unknown --language") {
			t.Errorf("the unknown language %q: %v", bad, err)
		}
	}
}

// A report in German shares no words with its English sources: matching
// would take every cited sentence for a miss and remove its citation. In
// a --language run it condemns none; the model judges them (here it finds
// them supported), even with --verify quick.
func TestForeignSentencesAreJudgedNotUncited(t *testing.T) {
	t.Parallel()
	for _, verify := range []string{runopts.VerifyFull, runopts.VerifyQuick} {
		run := func(lang string) pipeline.VerifyCounts {
			env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 0, Foreign: true, VerifierJudges: pipelinetest.JudgeSupported}, "")
			opt := env.Options(question)
			opt.Language, opt.Verify = lang, verify
			_, sess := pipelinetest.RunToEnd(t, env, opt)
			rep, err := pipeline.LoadReport(env.Store, sess.ID)
			if err != nil || rep.Metrics.Verified == nil {
				t.Fatalf("%v %+v", err, rep.Metrics)
			}
			return *rep.Metrics.Verified
		}
		en, de := run(""), run("de")
		if en.Uncited == 0 {
			t.Fatalf("%s: the English run kept foreign sentences' citations (%+v): the test world does not test anything", verify, en)
		}
		if de.Uncited != 0 || de.ByModel == 0 || de.Supported+de.Partly != de.Cited {
			t.Errorf("%s: German run %+v, want every cited sentence judged by the model and kept", verify, de)
		}
	}
}
