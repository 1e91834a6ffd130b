package pipeline_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/researchtui/researchtui/pipeline"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/search"
	"github.com/researchtui/researchtui/store"
)

// libraryDoc stores a work as an item of the person's library (as
// `library import` does) and returns it as the local source lists it.
func libraryDoc(t *testing.T, st *store.Store, rec search.Record, text string) search.LocalDoc {
	t.Helper()
	key := search.LocalStoreKey(rec)
	rec.Key = key
	raw, _ := json.Marshal(rec)
	chunks := []store.Chunk{{ID: store.ChunkID(key, 0), SourceKey: key, Seq: 0, Text: text, Page: 1}}
	if err := st.PutSourceBatch([]store.SourceBatch{{Key: key, Record: raw, Document: []byte(`["` + text + `"]`), Chunks: chunks}}); err != nil {
		t.Fatal(err)
	}
	return search.LocalDoc{Record: rec, Text: text}
}

// A work in the person's library that a scholarly source also finds (the
// same DOI) is one source, read from the person's own copy, and is cited
// as from the library; a library item of a collection the run does not
// name is not searched.
func TestLibraryItemFoundOnlineIsReadFromTheOwnCopy(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, nil, "")
	opt := env.Options(question) // what the scripted planner plans for (its sub-questions share its words)
	online, err := env.Engine.Sources["openalex"].Search(context.Background(), opt.Question, 5)
	if err != nil || len(online) == 0 {
		t.Fatalf("openalex: %d, %v", len(online), err)
	}
	var work search.Record
	for _, r := range online {
		if r.DOI != "" {
			work = r
			break
		}
	}
	if work.DOI == "" {
		t.Fatal("no recorded work with a DOI")
	}
	own := "OWNCOPY " + strings.Repeat(work.Title+" is studied in the person's own annotated copy. ", 3)
	mine := search.Record{Source: "local", FoundBy: []string{"local"}, Library: "zotero", LibraryID: "ABCD1234",
		Collections: []string{"zotero", "Thesis"}, Title: work.Title, Authors: []string{"Ada Lovelace"}, Year: work.Year,
		Venue: "My Journal", DOI: strings.ToUpper(work.DOI), Path: "/home/me/Zotero/storage/ABCD1234/paper.pdf"}
	other := search.Record{Source: "local", FoundBy: []string{"local"}, Library: "zotero", LibraryID: "ZZZZ0000",
		Collections: []string{"zotero", "Elsewhere"}, Title: work.Title + " (a second volume)", Year: 2001, Path: "/home/me/other.pdf"}
	docs := []search.LocalDoc{libraryDoc(t, env.Store, mine, own), libraryDoc(t, env.Store, other, "OTHERCOPY "+own)}
	env.Engine.Sources["local"] = search.NewLocal(func() ([]search.LocalDoc, error) { return docs, nil })

	opt.Sources = []string{"openalex", "local"}
	opt.Collections = []string{"thesis"}
	evs, sess := pipelinetest.RunToEnd(t, env, opt)
	var readOwn, readOther int
	for _, ev := range evs {
		if ev.Type != pipeline.DocumentRead || ev.Source == nil {
			continue
		}
		if strings.Contains(ev.Message, "your library (zotero)") && ev.Source.Library == "zotero" {
			readOwn++
		}
		if ev.Source.Title == other.Title {
			readOther++
		}
	}
	if readOwn != 1 || readOther != 0 {
		t.Fatalf("read from the library %d times (want 1), the other collection's item %d times (want 0)", readOwn, readOther)
	}
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	var dois []string
	cited := false
	for _, s := range rep.Sources {
		if s.DOI != "" {
			dois = append(dois, strings.ToLower(s.DOI))
		}
		if strings.EqualFold(s.DOI, work.DOI) {
			cited = true
			if s.Library != "zotero" || !strings.Contains(rep.Markdown, "*(your library: zotero)*") {
				t.Errorf("the library's work is not cited as the person's: %+v", s)
			}
		}
	}
	if !cited {
		t.Errorf("the library's work is not cited: %+v", rep.Sources)
	}
	// The Method says what the chosen collection gave (issue 36 #11).
	if !strings.Contains(rep.Markdown, "Your library (thesis) gave 1 candidate: 1 read, 1 cited.") {
		t.Errorf("the Method does not say what the collection gave:\n%s", rep.Markdown)
	}
	sorted := slices.Clone(dois)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(dois) {
		t.Errorf("a work cited twice: %q", dois)
	}
	// What the analysts read of it was the person's copy.
	chunks, err := env.Store.Chunks("doi:" + search.NormalizeDOI(work.DOI))
	if err != nil || len(chunks) == 0 || !strings.HasPrefix(chunks[0].Text, "OWNCOPY") {
		t.Errorf("the work's chunks are not the person's copy: %d chunks, %v", len(chunks), err)
	}
}

// A --collection run whose collection holds only a title-only book says so
// in its Method instead of saying nothing of the library (issue 36 #11).
func TestCollectionRunSaysWhatItsLibraryGave(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, nil, "")
	opt := env.Options(question) // what the scripted planner plans for (its sub-questions share its words)
	book := search.Record{Source: "local", FoundBy: []string{"local"}, Library: "zotero", LibraryID: "BOOK0001",
		Collections: []string{"zotero", "Thesis"}, Title: "Large language models augmented with tools for chemistry: a handbook", Authors: []string{"Ada Lovelace"}, Year: 2024}
	env.Engine.Sources["local"] = search.NewLocal(func() ([]search.LocalDoc, error) { return []search.LocalDoc{{Record: book}}, nil })
	opt.Sources = []string{"openalex", "local"}
	opt.Collections = []string{"thesis"}
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Markdown, "Your library (thesis) gave") {
		t.Fatalf("the Method says nothing of the chosen collection:\n%s", rep.Markdown)
	}
	if !strings.Contains(rep.Markdown, "0 read, 0 cited. Not read: 1 with no text to read (an item known by its title only") {
		t.Errorf("the Method does not say why the library's item was left out:\n%s", rep.Markdown)
	}
}

// A source that found nothing in any round is not claimed as searched
// material: an empty library reads "local (nothing found)" in the Method
// (issue 36 #10: "Searched … local" when nothing was imported).
func TestMethodSaysWhichSourcesFoundNothing(t *testing.T) {
	t.Parallel()
	env := pipelinetest.NewEnv(t, nil, "")
	env.Engine.Sources["local"] = search.NewLocal(func() ([]search.LocalDoc, error) { return nil, nil })
	opt := env.Options(question) // what the scripted planner plans for (its sub-questions share its words)
	opt.Sources = []string{"openalex", "local"}
	_, sess := pipelinetest.RunToEnd(t, env, opt)
	rep, err := pipeline.LoadReport(env.Store, sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(rep.Markdown, "Searched openalex, local (nothing found) for") {
		t.Errorf("the Method claims an empty library was searched material:\n%s", rep.Markdown)
	}
	// Named by the person, the empty library is searched, and the run
	// says why it finds nothing and how to fill it (trial).
	if !slices.ContainsFunc(rep.Warnings, func(w string) bool {
		return strings.Contains(w, "local holds no documents yet") && strings.Contains(w, "corpus add")
	}) {
		t.Errorf("no warning that the library is empty: %q", rep.Warnings)
	}
}

// With no sources named, an empty library is not searched, and the Method
// does not name it (a trial's "local (nothing found)" where no corpus
// existed); a library that holds something is searched.
func TestAnEmptyLibraryIsNotChosen(t *testing.T) {
	t.Parallel()
	for _, holds := range []bool{false, true} {
		env := pipelinetest.NewEnv(t, nil, "")
		var docs []search.LocalDoc
		if holds {
			docs = []search.LocalDoc{{Record: search.Record{Title: "Notes on software testing", Source: "local", Path: "notes.txt"}, Text: "software testing notes"}}
		}
		env.Engine.Sources["local"] = search.NewLocal(func() ([]search.LocalDoc, error) { return docs, nil })
		opt := env.Options(question)
		opt.Sources, opt.AutoSources = []string{"arxiv", "openalex", "local"}, true
		_, sess := pipelinetest.RunToEnd(t, env, opt)
		rep, err := pipeline.LoadReport(env.Store, sess.ID)
		if err != nil {
			t.Fatal(err)
		}
		if searched := slices.Contains(rep.Searched, "local"); searched != holds {
			t.Errorf("library holds documents %v: searched %v (%v)", holds, rep.Searched, searched)
		}
		if !holds && strings.Contains(rep.Markdown, "local (nothing found)") {
			t.Errorf("the Method names the empty library:\n%s", rep.Markdown)
		}
	}
}
