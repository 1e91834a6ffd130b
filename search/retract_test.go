package search

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// Retractions and corrections, read from recorded answers. The real answers
// for PNAS 10.1073/pnas.1414271111 carry a Crossref correction; the files
// named MODIFIED-* are those answers with the one field changed that makes
// the work retracted (see testdata/ATTRIBUTION.md): no real recording of a
// retracted work was found.

func TestCrossrefCorrectionFromRecordedAnswer(t *testing.T) {
	t.Parallel()
	recs, err := ParseCrossref(fixture(t, "crossref/work-doi-10.1073-pnas.1414271111.json"))
	if err != nil || len(recs) != 1 {
		t.Fatal(recs, err)
	}
	r := recs[0]
	if r.Retracted {
		t.Error("a corrected work is not retracted")
	}
	if !r.Corrected() {
		t.Error("updated-by correction not read")
	}
	want := Update{Type: "correction", DOI: "10.1073/pnas.1507001112", Date: "2015-05-04", Source: "publisher"}
	if len(r.Updates) != 1 || r.Updates[0] != want {
		t.Errorf("updates %+v, want %+v", r.Updates, want)
	}

	// the PLOS record: a correction published as an annotation
	recs, err = ParseCrossref(fixture(t, "crossref/work-doi-10.1371-journal.pone.0033693.json"))
	if err != nil || len(recs) != 1 || !recs[0].Corrected() || recs[0].Retracted {
		t.Fatalf("%+v %v", recs, err)
	}
	if u := recs[0].Updates[0]; u.DOI != "10.1371/annotation/c76da2c1-ccb8-4797-94c1-359d3ceceeda" || u.Date != "2012-05-08" {
		t.Errorf("PLOS correction %+v", u)
	}
}

// A correction notice (update-to) is not itself a corrected work: it names
// the work it corrects.
func TestCrossrefNoticeFromRecordedList(t *testing.T) {
	t.Parallel()
	recs, err := ParseCrossref(fixture(t, "crossref/types-journal-article-works-rows30-cursor-page3.json"))
	if err != nil || len(recs) != 30 {
		t.Fatal(len(recs), err)
	}
	notices := 0
	for _, r := range recs {
		if r.Retracted {
			t.Errorf("%s marked retracted", r.DOI)
		}
		if len(r.Updates) == 0 {
			continue
		}
		notices++
		want := Update{Type: "correction", DOI: "10.1111/ijal.12157", Date: "2019-11-24", Notice: true}
		if r.DOI != "10.1111/ijal.12281" || len(r.Updates) != 1 || r.Updates[0] != want {
			t.Errorf("%s: %+v", r.DOI, r.Updates)
		}
		if r.Corrected() {
			t.Error("the notice is not the corrected work")
		}
	}
	if notices != 1 {
		t.Errorf("%d records with updates, want the one corrigendum", notices)
	}
}

func TestRetractedFromModifiedAnswers(t *testing.T) {
	t.Parallel()
	recs, err := ParseOpenAlex(fixture(t, "openalex/work-doi-10.1073-pnas.1414271111.json"))
	if err != nil || len(recs) != 1 || recs[0].Retracted {
		t.Fatalf("the real answer says is_retracted false: %+v %v", recs, err)
	}
	recs, err = ParseOpenAlex(fixture(t, "openalex/MODIFIED-work-doi-10.1073-pnas.1414271111-is_retracted-true.json"))
	if err != nil || len(recs) != 1 || !recs[0].Retracted {
		t.Fatalf("is_retracted true not read: %+v %v", recs, err)
	}
	recs, err = ParseCrossref(fixture(t, "crossref/MODIFIED-work-doi-10.1073-pnas.1414271111-updated-by-retraction.json"))
	if err != nil || len(recs) != 1 {
		t.Fatal(recs, err)
	}
	r := recs[0]
	if !r.Retracted || r.Corrected() || len(r.Updates) != 1 || !r.Updates[0].IsRetraction() || r.Updates[0].DOI != "10.1073/pnas.1507001112" {
		t.Errorf("updated-by retraction: %+v", r)
	}
	b, _ := json.Marshal(r)
	if !strings.Contains(string(b), `"retracted":true`) || !strings.Contains(string(b), `"type":"retraction"`) {
		t.Errorf("json %s", b)
	}
	// and a record that is neither says nothing
	b, _ = json.Marshal(Record{Key: "doi:10.1/x", Source: "crossref", Title: "t"})
	if strings.Contains(string(b), "retracted") || strings.Contains(string(b), "updates") {
		t.Errorf("json of a plain record %s", b)
	}
}

// When the sources disagree, the merged record is retracted if any of them
// says so, and keeps every notice.
func TestMergeKeepsRetractionAndNotices(t *testing.T) {
	t.Parallel()
	oaRetracted, _ := ParseOpenAlex(fixture(t, "openalex/MODIFIED-work-doi-10.1073-pnas.1414271111-is_retracted-true.json"))
	oaPlain, _ := ParseOpenAlex(fixture(t, "openalex/work-doi-10.1073-pnas.1414271111.json"))
	crCorrected, _ := ParseCrossref(fixture(t, "crossref/work-doi-10.1073-pnas.1414271111.json"))
	crRetracted, _ := ParseCrossref(fixture(t, "crossref/MODIFIED-work-doi-10.1073-pnas.1414271111-updated-by-retraction.json"))
	for name, in := range map[string][]Record{
		"openalex retracted first":  {oaRetracted[0], crCorrected[0]},
		"openalex retracted second": {crCorrected[0], oaRetracted[0]},
	} {
		out := Merge(in)
		if len(out) != 1 {
			t.Fatalf("%s: %d records", name, len(out))
		}
		if !out[0].Retracted || !out[0].Corrected() || len(out[0].Updates) != 1 {
			t.Errorf("%s: %+v", name, out[0])
		}
	}
	out := Merge([]Record{oaPlain[0], crCorrected[0], crRetracted[0]})
	if len(out) != 1 || !out[0].Retracted || len(out[0].Updates) != 2 {
		t.Errorf("correction and retraction: %+v", out)
	}
	// merging must not write into the inputs
	if crCorrected[0].Retracted || len(crCorrected[0].Updates) != 1 || oaPlain[0].Retracted {
		t.Error("Merge changed its input")
	}
}

// A search asks Crossref for the update fields, or it would never see them.
func TestCrossrefSearchAsksForUpdates(t *testing.T) {
	t.Parallel()
	srv, reqs := serveRoutes(t, map[string]routeBody{
		"/works": {200, "application/json", fixture(t, "crossref/works-query-ecology-rows2.json")},
	})
	if _, err := NewCrossref(noWaitClient(srv.URL), srv.URL, "").Search(context.Background(), "ecology", 2); err != nil {
		t.Fatal(err)
	}
	sel := "," + (*reqs)[0].URL.Query().Get("select") + ","
	for _, f := range []string{"update-to", "updated-by", "relation"} {
		if !strings.Contains(sel, ","+f+",") {
			t.Errorf("select %q lacks %s", sel, f)
		}
	}
}

func TestCrossrefRelationRetractedBy(t *testing.T) {
	t.Parallel()
	body := `{"status":"ok","message-type":"work","message":{"DOI":"10.1/a","title":["A"],` +
		`"relation":{"is-retracted-by":[{"id-type":"doi","id":"10.1/notice","asserted-by":"subject"}],"has-preprint":[{"id-type":"doi","id":"10.1/p"}]}}}`
	recs, err := ParseCrossref([]byte(body))
	if err != nil || len(recs) != 1 || !recs[0].Retracted || recs[0].Updates[0].DOI != "10.1/notice" {
		t.Errorf("%+v %v", recs, err)
	}
}
