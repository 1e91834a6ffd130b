package store

// Reader is the read side of the store: what showing, exporting and
// listing sessions needs. Both the owner's *Store and a *Client connected to
// the owner implement it (README.md), so code that only reads works in
// whichever process it runs.
type Reader interface {
	Session(id string) (Session, error)
	ListSessions() ([]Session, error)
	ListSessionPage(status string, limit int) (SessionPage, error)
	SessionStamps() ([]SessionStamp, error)
	Checkpoint(sessionID, name string) ([]byte, bool, error)
	CheckpointNames(sessionID string) ([]string, error)
	Events(sessionID string) ([]EventRecord, error)
	LastSeq(sessionID string) (int64, error)
}

var (
	_ Reader = (*Store)(nil)
	_ Reader = (*Client)(nil)
)
