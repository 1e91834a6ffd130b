package pipeline

import (
	"encoding/json"
	"testing"
)

// screenAnswers are what models answer a screen: the asked forms, objects
// where numbers were asked, both lists, neither, strangers.
var screenAnswers = []string{
	`{"on_topic":[2,5]}`,
	`{"off_topic":[3,7]}`,
	`{"off_topic":[{"n":3,"why":"GPU hardware"}]}`,
	`{"on_topic":[]}`,
	`{"off_topic":[]}`,
	`{"on_topic":[1],"off_topic":[2]}`,
	`{"on_topic":[0,-1,99,2]}`,
	`{"verdict":"all relevant"}`,
	`{"on_topic":null}`,
	`{"off_topic":[{"n":"3"}]}`,
	`{"on_topic":["3","[5]"]}`,
	`{"on_topic":["Large Language Models Pass the Turing Test"]}`,
}

// TestReadScreenAnswer: the list given names its candidates and the rest
// take the opposite verdict; both lists judge only what they name; numbers
// out of range are dropped, and a list of nothing but such numbers (a model
// writing at random) judges nothing, as does an answer with neither list;
// numbers written as strings are read, titles written for numbers judge
// nothing.
func TestReadScreenAnswer(t *testing.T) {
	for _, c := range []struct {
		answer string
		want   []int // per candidate 1..5
	}{
		{`{"on_topic":[2,5]}`, []int{-1, 1, -1, -1, 1}},
		{`{"off_topic":[3]}`, []int{1, 1, -1, 1, 1}},
		{`{"off_topic":[{"n":3,"why":"GPU hardware"}]}`, []int{1, 1, -1, 1, 1}},
		{`{"on_topic":[]}`, []int{-1, -1, -1, -1, -1}},
		{`{"on_topic":[1],"off_topic":[2]}`, []int{1, -1, 0, 0, 0}},
		{`{"on_topic":[0,-1,99,2]}`, []int{-1, 1, -1, -1, -1}},
		{`{"on_topic":[73921,-4]}`, []int{0, 0, 0, 0, 0}},
		{`{"on_topic":["3","[5]"]}`, []int{-1, -1, 1, -1, 1}},
		{`{"on_topic":["Large Language Models Pass the Turing Test"]}`, []int{0, 0, 0, 0, 0}},
		{`{"verdict":"all relevant"}`, []int{0, 0, 0, 0, 0}},
	} {
		var ans screenAnswer
		if err := json.Unmarshal([]byte(c.answer), &ans); err != nil {
			t.Fatalf("%s: %v", c.answer, err)
		}
		got, why := readScreenAnswer(ans, []int{1, 2, 3, 4, 5})
		for k, w := range c.want {
			if got[k+1] != w {
				t.Errorf("%s: candidate %d judged %d, want %d", c.answer, k+1, got[k+1], w)
			}
			if got[k+1] == -1 && why[k+1] == "" {
				t.Errorf("%s: candidate %d off topic without a reason", c.answer, k+1)
			}
		}
	}
	var ans screenAnswer
	_ = json.Unmarshal([]byte(`{"off_topic":[{"n":3,"why":"GPU hardware"}]}`), &ans)
	if _, why := readScreenAnswer(ans, []int{1, 2, 3, 4, 5}); why[3] != "GPU hardware" {
		t.Errorf("the model's reason was lost: %q", why[3])
	}
	// A later look asks about some numbers only: the rest of the list is
	// the rest of those, and a number it was not asked about is dropped.
	var look screenAnswer
	_ = json.Unmarshal([]byte(`{"on_topic":[4,9]}`), &look)
	got, _ := readScreenAnswer(look, []int{2, 4, 7})
	if len(got) != 3 || got[2] != -1 || got[4] != 1 || got[7] != -1 {
		t.Errorf("a look at 2, 4, 7 read %v", got)
	}
}

// FuzzScreenAnswer: whatever a model answers, reading it never panics,
// judges each candidate at most one way, and judges nothing beyond n.
func FuzzScreenAnswer(f *testing.F) {
	for _, a := range screenAnswers {
		f.Add([]byte(a), 5)
	}
	f.Fuzz(func(t *testing.T, raw []byte, n int) {
		if n < 0 || n > 500 {
			return
		}
		var ans screenAnswer
		if json.Unmarshal(raw, &ans) != nil {
			return
		}
		asked := make([]int, n)
		for i := range asked {
			asked[i] = i + 1
		}
		verdict, why := readScreenAnswer(ans, asked)
		if len(verdict) > n {
			t.Fatalf("%d verdicts for %d candidates", len(verdict), n)
		}
		for k, v := range verdict {
			if k < 1 || k > n || (v != 1 && v != -1) || (v == -1) != (why[k] != "") {
				t.Fatalf("candidate %d: verdict %d, reason %q", k, v, why[k])
			}
		}
	})
}
