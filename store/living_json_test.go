package store

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Living's interval reads as a person writes it, and what earlier versions
// stored (nanoseconds) still reads.
func TestLivingEveryJSON(t *testing.T) {
	t.Parallel()
	week := Living{Every: 7 * 24 * time.Hour, LastNew: 2, Checks: 3, Unread: 4, LastChecked: time.Date(2026, 11, 1, 7, 0, 0, 0, time.UTC)}
	b, err := json.Marshal(week)
	if err != nil || !strings.Contains(string(b), `"every":"7d"`) {
		t.Fatalf("%s %v", b, err)
	}
	var back Living
	if err := json.Unmarshal(b, &back); err != nil || back != week {
		t.Errorf("round trip: %+v %v", back, err)
	}
	for raw, want := range map[string]time.Duration{
		`{"every":604800000000000,"last_new":1}`: 7 * 24 * time.Hour, // stored before
		`{"every":"36h0m0s"}`:                    36 * time.Hour,
		`{"every":"2w"}`:                         14 * 24 * time.Hour,
		`{"last_new":1}`:                         0,
	} {
		var l Living
		if err := json.Unmarshal([]byte(raw), &l); err != nil || l.Every != want {
			t.Errorf("%s: %v %v, want %v", raw, l.Every, err, want)
		}
	}
	for _, bad := range []string{`{"every":"soon"}`, `{"every":"-3d"}`, `{"every":true}`} {
		var l Living
		if err := json.Unmarshal([]byte(bad), &l); err == nil {
			t.Errorf("%s read as %v", bad, l.Every)
		}
	}
	for d, want := range map[time.Duration]string{36 * time.Hour: "36h", 90 * time.Minute: "1h30m", 10 * time.Hour: "10h", 50 * time.Minute: "50m",
		time.Hour + 30*time.Second: "1h0m30s", 3 * 24 * time.Hour: "3d", 21 * 24 * time.Hour: "3w"} {
		b, _ := json.Marshal(Living{Every: d})
		var back Living
		if got := EveryText(d); got != want || !strings.Contains(string(b), `"every":"`+want+`"`) || json.Unmarshal(b, &back) != nil || back.Every != d {
			t.Errorf("%v: %q, %s, read back %v; want %q", d, got, b, back.Every, want)
		}
	}
	if b, _ := json.Marshal(Living{}); strings.Contains(string(b), "every") {
		t.Errorf("not followed: %s", b)
	}
}
