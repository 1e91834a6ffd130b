package store

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// FuzzShareRequest: whatever a connection sends as a request, the owner
// answers with a response it can encode (a refusal always says why), and
// never panics. Seeds are one valid request of each kind a client sends.
func FuzzShareRequest(f *testing.F) {
	for _, seed := range []string{
		`{"op":"list_sessions"}`,
		`{"op":"session","id":"01a"}`,
		`{"op":"create_session","arg":{"question":"q","status":"running"}}`,
		`{"op":"put_session","arg":{"session":{"id":"01a","status":"running"},"read_at":"2026-11-24T00:00:00Z","name":"plan","data":"e30="}}`,
		`{"op":"put_checkpoint","id":"01a","name":"plan","arg":"e30="}`,
		`{"op":"append_events","id":"01a","arg":[{"Seq":1,"Data":"e30="},{"Seq":2,"Data":"e30=","Transient":true}]}`,
		`{"op":"put_source","id":"k","arg":"e30="}`,
		`{"op":"put_chunks","id":"k","arg":[{"seq":0,"text":"alpha"}]}`,
		`{"op":"chunk_page","id":""}`,
		`{"op":"put_embeddings","name":"m","arg":{"h":[1,0]}}`,
		`{"op":"missing_embeddings","name":"m","arg":["h","g"]}`,
		`{"op":"index_add","name":"m","id":"k#0000","vec":[1,0]}`,
		`{"op":"index_search","name":"m","vec":[1,0],"k":3}`,
		`{"op":"index_status","name":"m"}`,
		`{"op":"claim","id":"01a","k":1}`,
		`{"op":"control","id":"01a","arg":{"kind":"decide","decision":"e30="}}`,
		`{"op":"delete_session","id":"01a"}`,
		`{"op":"nonsense"}`,
	} {
		f.Add([]byte(seed))
	}
	st, err := Open(filepath.Join(f.TempDir(), "researchtui.db"), Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { st.Close() })
	srv := &shareServer{st: st}
	f.Fuzz(func(t *testing.T, line []byte) {
		var req request
		if json.Unmarshal(line, &req) != nil {
			return // the connection answers "bad request" before do
		}
		resp := srv.do(req, claim{conn: 1, pid: 1})
		if !resp.OK && resp.Err == "" {
			t.Fatalf("refused without a reason: %s", line)
		}
		if _, err := json.Marshal(resp); err != nil {
			t.Fatalf("an answer that cannot be sent: %v", err)
		}
	})
}
