package pipeline_test

import (
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
)

// --language de: the writer is asked for German without finding labels,
// the reviewer is told the language is on purpose, the code's headings are
// German, the Method section is translated (its counts kept) and the
// references are as an English run writes them.
func TestLanguageReachesTheWriterAndTheMethod(t *testing.T) {
	run := func(lang string) (*pipelinetest.Env, pipeline.Report) {
		env := pipelinetest.NewEnv(t, &pipelinetest.Script{RevisionRounds: 1}, "")
		opt := env.Options(question)
		opt.Language = lang
		_, sess := runToEnd(t, env, opt)
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
	if len(de.Sources) != len(en.Sources) || de.Metrics.Verified == nil || de.Metrics.Verified.Uncited > en.Metrics.Verified.Uncited {
		t.Errorf("German sentences lost citations an English run keeps: %d sources, %+v; English %d, %+v", len(de.Sources), de.Metrics.Verified, len(en.Sources), en.Metrics.Verified)
	}
}

func TestLanguageNames(t *testing.T) {
	for in, want := range map[string]string{"de": "de", "German": "de", "deutsch": "de", "pt-BR": "pt-BR", "en": "", "English": "", "": ""} {
		o := pipeline.Options{Question: "q?", Model: "m", EmbedModel: "e", Language: in}
		if err := o.Normalize(); err != nil || o.Language != want {
			t.Errorf("%q: %q %v, want %q", in, o.Language, err, want)
		}
	}
	o := pipeline.Options{Question: "q?", Model: "m", EmbedModel: "e", Language: "Klingonish"}
	if err := o.Normalize(); err == nil || !strings.Contains(err.Error(), "unknown --language") {
		t.Errorf("an unknown language: %v", err)
	}
}
