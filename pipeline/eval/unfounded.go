package eval

// Unfounded is a claim a model may well state on a question, from what it
// learnt in training, that no recorded work of the world states: a report
// stating it states what its sources do not. Words are compared as a
// Fact's are (every content word in one sentence of the report's body,
// cited or not).
type Unfounded struct {
	ID    string `json:"id"`
	Words string `json:"words"`
	Why   string `json:"why"`
}

// unfounded are each question's unfounded claims by question ID, checked
// against the recording by TestUnfoundedClaimsAreAbsent.
var unfounded = map[string][]Unfounded{
	TuringTest.ID: {
		{ID: "loebner", Words: "Loebner Prize", Why: "the annual Turing-test contest; no recorded work mentions it"},
		{ID: "chinese-room", Words: "Chinese Room", Why: "Searle's argument against machine understanding; not in the recording"},
		{ID: "gpt4-90", Words: "GPT-4 90%", Why: "no recorded test gives GPT-4 90% (the recorded figures are 54% and 49.7%)"},
		{ID: "gpt45-95", Words: "GPT-4.5 95%", Why: "the recorded figure is 73%"},
	},
	TuringComplete.ID: {
		{ID: "lstm", Words: "LSTM Turing complete", Why: "no recorded work says so of LSTMs"},
		{ID: "halting-decidable", Words: "halting problem decidable", Why: "no recorded work calls it decidable"},
		{ID: "ntm-2016", Words: "Neural Turing Machines 2016", Why: "the recorded paper is from 2014"},
	},
	GUITesting.ID: {
		{ID: "appium", Words: "Appium", Why: "the mobile test framework; no recorded work names it"},
		{ID: "android-monkey", Words: "Android Monkey", Why: "Android's random UI exerciser; the recording names neither"},
		{ID: "cypress", Words: "Cypress", Why: "the web test framework; not in the recording"},
		{ID: "record-replay", Words: "record replay", Why: "record-and-replay tools; no recorded work mentions them"},
	},
}

// UnfoundedClaims are q's unfounded claims (none when the question has none).
func (q Question) UnfoundedClaims() []Unfounded { return unfounded[q.ID] }

// statedUnfounded are the IDs of q's unfounded claims that some sentence of
// the report's body states.
func statedUnfounded(q Question, sentences []Sentence) []string {
	var out []string
	for _, u := range q.UnfoundedClaims() {
		want := set(content(u.Words))
		for _, s := range sentences {
			if len(want) > 0 && subset(want, set(words(s.Text))) {
				out = append(out, u.ID)
				break
			}
		}
	}
	return out
}
