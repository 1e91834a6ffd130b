package store

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"strings"
	"time"
)

// idAlphabet is lowercase Crockford-style base32 (no i, l, o, u), so random
// suffixes are unambiguous when a user types an ID.
const idAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// NewID returns an 18-character ID: 12 hex digits of t's Unix milliseconds
// followed by 6 random base32 characters. Because the time prefix is fixed
// width, lexicographic order is creation order, so bbolt's key order lists
// sessions chronologically without an index. IDs made in the same millisecond
// order randomly among themselves. 48 bits of milliseconds last until year
// 10889; times before 1970 clamp to zero.
func NewID(t time.Time) string {
	ms := t.UnixMilli()
	if ms < 0 {
		ms = 0
	}
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], uint64(ms))
	out := make([]byte, 0, 18)
	out = hex.AppendEncode(out, buf[2:])
	var r [6]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails on supported platforms
	for _, c := range r {
		out = append(out, idAlphabet[c&31])
	}
	return string(out)
}

// IDTime recovers the creation time an ID made by NewID carries, to the
// millisecond, so an export can date a report from its session ID alone.
// ok is false for IDs of any other shape (fixtures, IDs typed by hand).
func IDTime(id string) (t time.Time, ok bool) {
	if len(id) != 18 {
		return time.Time{}, false
	}
	var buf [8]byte
	if _, err := hex.Decode(buf[2:], []byte(id[:12])); err != nil {
		return time.Time{}, false
	}
	for _, c := range id[12:] {
		if !strings.ContainsRune(idAlphabet, c) {
			return time.Time{}, false
		}
	}
	return time.UnixMilli(int64(binary.BigEndian.Uint64(buf[:]))), true
}
