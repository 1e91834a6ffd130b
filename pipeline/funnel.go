package pipeline

import (
	"encoding/json"

	"github.com/researchtui/researchtui/store"
)

// checkpointCandidates holds every candidate of a run with its score and
// why it was or was not read.
const checkpointCandidates = "candidates"

// Funnel is how a run narrowed what it found down to what it cited.
type Funnel struct {
	Found    int `json:"found"`    // distinct candidates
	Read     int `json:"read"`     // sources read (full text or abstract)
	Analysed int `json:"analysed"` // sources whose analysis was kept
	Cited    int `json:"cited"`    // sources the report cites
	// CitedOfRead is the share of read sources that ended up cited.
	CitedOfRead float64 `json:"cited_of_read"`
}

// LoadCandidates reads a session's candidates (nil when the run has not
// ranked any yet, or predates ranking). It needs no model backend.
func LoadCandidates(st *store.Store, id string) ([]Candidate, error) {
	raw, ok, err := st.Checkpoint(id, checkpointCandidates)
	if err != nil || !ok {
		return nil, err
	}
	var out []Candidate
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// funnel counts the run's narrowing from its candidates, analyses and the
// number of sources the report cites.
func (o *orchestrator) funnel(cited int) Funnel {
	f := Funnel{Analysed: len(o.st.Analyses), Cited: cited}
	if o.st.Found != nil {
		f.Read = len(o.st.Found.Records)
	}
	var cands []Candidate
	if ok, _ := o.loadCheckpoint(checkpointCandidates, &cands); ok {
		seen := map[string]bool{}
		for _, c := range cands {
			seen[c.Key] = true
		}
		f.Found = len(seen)
	}
	f.Found = max(f.Found, f.Read)
	if f.Read > 0 {
		f.CitedOfRead = float64(cited) / float64(f.Read)
	}
	return f
}
