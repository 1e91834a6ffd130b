package store

// Conn's data methods: each runs on the current owner (conn.go's with),
// and once more on the new one when the owner went away during the call.

func (c *Conn) Session(id string) (Session, error) {
	return with(c, func(db DB) (Session, error) { return db.Session(id) })
}

func (c *Conn) ListSessions() ([]Session, error) {
	return with(c, func(db DB) ([]Session, error) { return db.ListSessions() })
}

func (c *Conn) ListSessionPage(status string, limit int) (SessionPage, error) {
	return with(c, func(db DB) (SessionPage, error) { return db.ListSessionPage(status, limit) })
}

func (c *Conn) SessionStamps() ([]SessionStamp, error) {
	return with(c, func(db DB) ([]SessionStamp, error) { return db.SessionStamps() })
}

func (c *Conn) Checkpoint(sessionID, name string) ([]byte, bool, error) {
	return with2(c, func(db DB) ([]byte, bool, error) { return db.Checkpoint(sessionID, name) })
}

func (c *Conn) CheckpointNames(sessionID string) ([]string, error) {
	return with(c, func(db DB) ([]string, error) { return db.CheckpointNames(sessionID) })
}

func (c *Conn) Events(sessionID string) ([]EventRecord, error) {
	return with(c, func(db DB) ([]EventRecord, error) { return db.Events(sessionID) })
}

func (c *Conn) LastSeq(sessionID string) (int64, error) {
	return with(c, func(db DB) (int64, error) { return db.LastSeq(sessionID) })
}

func (c *Conn) Chunk(id string) (Chunk, bool, error) {
	return with2(c, func(db DB) (Chunk, bool, error) { return db.Chunk(id) })
}

func (c *Conn) Source(key string) ([]byte, bool, error) {
	return with2(c, func(db DB) ([]byte, bool, error) { return db.Source(key) })
}

func (c *Conn) CreateSession(sess *Session) error {
	return c.do(func(db DB) error { return db.CreateSession(sess) })
}

func (c *Conn) UpdateSession(id string, fn func(*Session) error) (Session, error) {
	return with(c, func(db DB) (Session, error) { return db.UpdateSession(id, fn) })
}

func (c *Conn) CheckpointAndUpdate(id, name string, data []byte, fn func(*Session) error) (Session, error) {
	return with(c, func(db DB) (Session, error) { return db.CheckpointAndUpdate(id, name, data, fn) })
}

func (c *Conn) PutCheckpoint(sessionID, name string, data []byte) error {
	return c.do(func(db DB) error { return db.PutCheckpoint(sessionID, name, data) })
}

func (c *Conn) DeleteSession(id string) error {
	return c.do(func(db DB) error { return db.DeleteSession(id) })
}

func (c *Conn) AppendEvents(sessionID string, evs []EventRecord) error {
	return c.do(func(db DB) error { return db.AppendEvents(sessionID, evs) })
}

func (c *Conn) PutSource(key string, data []byte) error {
	return c.do(func(db DB) error { return db.PutSource(key, data) })
}

func (c *Conn) PutDocument(key string, text []byte) error {
	return c.do(func(db DB) error { return db.PutDocument(key, text) })
}

func (c *Conn) Document(key string) ([]byte, bool, error) {
	return with2(c, func(db DB) ([]byte, bool, error) { return db.Document(key) })
}

func (c *Conn) PutChunks(sourceKey string, chunks []Chunk) error {
	return c.do(func(db DB) error { return db.PutChunks(sourceKey, chunks) })
}

func (c *Conn) Chunks(sourceKey string) ([]Chunk, error) {
	return with(c, func(db DB) ([]Chunk, error) { return db.Chunks(sourceKey) })
}

// AllChunks is not repeated after a change of owner (fn has seen part of
// the chunks); the caller gets the error.
func (c *Conn) AllChunks(fn func(Chunk) error) error {
	db, _ := c.current()
	return db.AllChunks(fn)
}

func (c *Conn) PutEmbeddings(model string, items map[string][]float32) error {
	return c.do(func(db DB) error { return db.PutEmbeddings(model, items) })
}

func (c *Conn) Embedding(model, hash string) ([]float32, bool, error) {
	return with2(c, func(db DB) ([]float32, bool, error) { return db.Embedding(model, hash) })
}

func (c *Conn) MissingEmbeddings(model string, hashes []string) ([]string, error) {
	return with(c, func(db DB) ([]string, error) { return db.MissingEmbeddings(model, hashes) })
}

func (c *Conn) IndexStatus(model string) (IndexStatus, bool) {
	db, _ := c.current()
	return db.IndexStatus(model)
}

func (c *Conn) SendControl(id string, ctl Control) error {
	return c.do(func(db DB) error { return db.SendControl(id, ctl) })
}

// with2 is with for lookups that also say whether they found anything.
func with2[T any](c *Conn, fn func(DB) (T, bool, error)) (T, bool, error) {
	type found struct {
		v  T
		ok bool
	}
	r, err := with(c, func(db DB) (found, error) {
		v, ok, err := fn(db)
		return found{v, ok}, err
	})
	return r.v, r.ok, err
}
