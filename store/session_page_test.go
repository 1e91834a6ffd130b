package store

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// A page of the session list is the full list filtered and cut, in the
// same order (ties on CreatedAt included), from the owner and from a client.
func TestSessionPageIsTheListFilteredAndCut(t *testing.T) {
	t.Parallel()
	st, sock, _ := sharedStore(t)
	rng := rand.New(rand.NewPCG(7, 9))
	base := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	statuses := []string{StatusCompleted, StatusFailed, StatusRunning}
	for i := range 60 {
		// Times out of key order and some shared, as clock steps and
		// imports make them.
		at := base.Add(time.Duration(rng.IntN(20)) * time.Minute)
		sess := &Session{ID: NewID(base.Add(time.Duration(i) * time.Second)), Question: fmt.Sprint("q", i), Status: statuses[rng.IntN(3)], CreatedAt: at}
		if err := st.CreateSession(sess); err != nil {
			t.Fatal(err)
		}
	}
	all, err := st.ListSessions()
	if err != nil {
		t.Fatal(err)
	}
	c := dialShared(t, sock)
	for _, status := range []string{"", StatusCompleted, StatusFailed, "nothing-has-this"} {
		var want []string
		for _, s := range all {
			if status == "" || s.Status == status {
				want = append(want, s.ID)
			}
		}
		for _, limit := range []int{0, 1, 7, 20, 100} {
			for who, r := range map[string]Reader{"owner": st, "client": c} {
				page, err := r.ListSessionPage(status, limit)
				if err != nil {
					t.Fatal(err)
				}
				if page.Total != len(want) {
					t.Errorf("%s %q limit %d: total %d, want %d", who, status, limit, page.Total, len(want))
				}
				n := min(limit, len(want))
				if len(page.Sessions) != n {
					t.Fatalf("%s %q limit %d: %d sessions, want %d", who, status, limit, len(page.Sessions), n)
				}
				for i, s := range page.Sessions {
					if s.ID != want[i] {
						t.Errorf("%s %q limit %d: #%d is %s, want %s", who, status, limit, i, s.ID, want[i])
					}
				}
			}
		}
	}
}

// Stamps are every session's ID, status and update time, from the owner
// and over the socket alike.
func TestSessionStamps(t *testing.T) {
	t.Parallel()
	st, sock, _ := sharedStore(t)
	for i := range 5 {
		sess := &Session{Question: fmt.Sprint("q", i), Status: StatusCompleted, CreatedAt: time.Now().Add(time.Duration(i) * time.Second)}
		if err := st.CreateSession(sess); err != nil {
			t.Fatal(err)
		}
	}
	all, _ := st.ListSessions()
	c := dialShared(t, sock)
	for who, r := range map[string]Reader{"owner": st, "client": c} {
		stamps, err := r.SessionStamps()
		if err != nil || len(stamps) != len(all) {
			t.Fatalf("%s: %d stamps, %v", who, len(stamps), err)
		}
		byID := map[string]SessionStamp{}
		for _, s := range stamps {
			byID[s.ID] = s
		}
		for _, s := range all {
			if got := byID[s.ID]; got.Status != s.Status || !got.UpdatedAt.Equal(s.UpdatedAt) {
				t.Errorf("%s: stamp %+v for %s %s %v", who, got, s.ID, s.Status, s.UpdatedAt)
			}
		}
	}
}
