package store

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Living's interval is written as a person reads it ("7d", "36h"), not
// in nanoseconds, in the store and in every JSON the commands print;
// reading takes both, so sessions stored before read as they were.

type livingJSON struct {
	Every any `json:"every,omitempty"`
	livingFields
}

// livingFields are Living's fields but Every (a type without methods, so
// encoding it does not recurse).
type livingFields struct {
	LastChecked time.Time `json:"last_checked,omitempty"`
	LastNew     int       `json:"last_new"`
	Checks      int       `json:"checks,omitempty"`
	Unread      int       `json:"unread,omitempty"`
}

// MarshalJSON writes Every as EveryText does.
func (l Living) MarshalJSON() ([]byte, error) {
	out := livingJSON{livingFields: livingFields{l.LastChecked, l.LastNew, l.Checks, l.Unread}}
	if l.Every > 0 {
		out.Every = EveryText(l.Every)
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads Every as "7d", "2w", "36h", or nanoseconds.
func (l *Living) UnmarshalJSON(b []byte) error {
	var in struct {
		Every json.RawMessage `json:"every,omitempty"`
		livingFields
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	every, err := parseEveryJSON(in.Every)
	if err != nil {
		return err
	}
	f := in.livingFields
	*l = Living{Every: every, LastChecked: f.LastChecked, LastNew: f.LastNew, Checks: f.Checks, Unread: f.Unread}
	return nil
}

// EveryText writes an interval as a person would: 7d, 2w, 12h, 1h30m.
func EveryText(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d%(7*day) == 0 && d >= 14*day:
		return strconv.FormatInt(int64(d/(7*day)), 10) + "w"
	case d > 0 && d%day == 0:
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	s := d.String() // 1h30m0s, 36h0m0s, 45m0s
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

func parseEveryJSON(raw json.RawMessage) (time.Duration, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var ns int64
	if json.Unmarshal(raw, &ns) == nil {
		return time.Duration(ns), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("store: living.every %s: %w", raw, err)
	}
	for unit, size := range map[string]time.Duration{"d": 24 * time.Hour, "w": 7 * 24 * time.Hour} {
		if count, ok := strings.CutSuffix(s, unit); ok {
			n, err := strconv.ParseInt(count, 10, 64)
			if err != nil || n < 0 || n > 10000 {
				return 0, fmt.Errorf("store: living.every %q is not a number of days or weeks", s)
			}
			return time.Duration(n) * size, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("store: living.every %q: %w", s, err)
	}
	return d, nil
}
