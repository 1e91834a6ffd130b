package bib

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// Every item keeps its place in the library, whatever its key: an entry
// without a citation key (Mendeley writes `@article{,`, EndNote
// `@article{` with none) gets one made of its metadata, and an entry whose
// key another entry already has gets that key with a suffix, as Zotero and
// Better BibTeX keep both. Each is a note naming the entry's line, not a
// skipped entry.

// settleIDs gives every item an ID of its own. lines are where each item
// starts (0 unknown); what was suffixed or merged is noted in errs, and a
// derived ID too where the format asks for an ID (BibTeX). It returns the
// items left: an entry that repeats an earlier one whole (same key, same
// work) is merged into it.
//
// A suffix is made of the entry's content ("Scales2015-b1e4"), not of its
// place, so deleting or moving one of two entries with one key does not
// hand its ID to the other.
func settleIDs(items []Item, lines []int, format, what string, errs *problems) []Item {
	noteMissing := format == "BibTeX"         // RIS and CSL-JSON records often have none
	taken := make(map[string]int, len(items)) // lower-case ID to the line of its first item
	for i := range items {
		if id := strings.ToLower(items[i].ID); id != "" {
			if _, dup := taken[id]; !dup {
				taken[id] = lineOf(lines, i)
			}
		}
	}
	seen := make(map[string]int, len(items)) // lower-case ID given to the index of its item in out
	out := items[:0]
	for i := range items {
		it := items[i]
		id := it.ID
		switch {
		case id == "":
			id = unique(DeriveKey(it), taken)
			if noteMissing {
				errs.add(&ParseError{Format: format, Line: lineOf(lines, i), Imported: true,
					Msg: fmt.Sprintf("it has no %s: imported as %s", what, id)})
			}
		default:
			j, dup := seen[strings.ToLower(id)]
			if !dup {
				break
			}
			first := taken[strings.ToLower(id)]
			where := "an earlier entry"
			if first > 0 {
				where = fmt.Sprintf("the entry on line %d", first)
			}
			if sameWork(out[j], it) {
				errs.add(&ParseError{Format: format, Line: lineOf(lines, i), Key: CleanLine(it.ID), Imported: true,
					Msg: fmt.Sprintf("a second copy of %s: imported once", where)})
				continue
			}
			id = unique(it.ID+"-"+contentTag(it), taken)
			errs.add(&ParseError{Format: format, Line: lineOf(lines, i), Key: CleanLine(it.ID), Imported: true,
				Msg: fmt.Sprintf("%s %s is also the %s of %s, another work: this one is imported as %s", what, it.ID, what, where, id)})
		}
		it.ID = id
		seen[strings.ToLower(id)] = len(out)
		out = append(out, it)
	}
	return out
}

// sameWork tells an entry that repeats another whole (Mendeley exports
// the same item three times) from another work under the same key.
func sameWork(a, b Item) bool {
	if a.DOI != "" || b.DOI != "" {
		return a.DOI == b.DOI && strings.EqualFold(a.Title, b.Title)
	}
	return strings.EqualFold(a.Title, b.Title) && a.Year == b.Year && a.Type == b.Type
}

// contentTag is four hex digits of an item's title, year and type.
func contentTag(it Item) string {
	sum := sha256.Sum256([]byte(strings.ToLower(it.Title) + "\x00" + strconv.Itoa(it.Year) + "\x00" + it.Type + "\x00" + it.DOI))
	return hex.EncodeToString(sum[:2])
}

func lineOf(lines []int, i int) int {
	if i < len(lines) {
		return lines[i]
	}
	return 0
}

// unique is id, or id-2, id-3, … when id is taken; the one returned is
// taken from then on.
func unique(id string, taken map[string]int) string {
	out := id
	for n := 2; ; n++ {
		if _, ok := taken[strings.ToLower(out)]; !ok {
			taken[strings.ToLower(out)] = 0
			return out
		}
		out = id + "-" + strconv.Itoa(n)
	}
}

// DeriveKey is a citation key made of an item's metadata, as Better
// BibTeX's default makes one: the first author's family name, the year and
// the first word of the title that is not a stop word ("barata2019deep"),
// in ASCII. Without any of those, a hash of the item stands in.
func DeriveKey(it Item) string {
	var b strings.Builder
	if len(it.Authors) > 0 {
		n := it.Authors[0]
		name := n.Family
		if name == "" {
			name = n.Literal
		}
		if f := strings.Fields(name); len(f) > 0 {
			b.WriteString(asciiWord(f[len(f)-1]))
			if n.Literal != "" {
				b.Reset()
				b.WriteString(asciiWord(f[0]))
			}
		}
	}
	if it.Year != 0 {
		b.WriteString(strconv.Itoa(it.Year))
	}
	for _, w := range strings.Fields(it.Title) {
		w = asciiWord(w)
		if w != "" && !keyStopWords[w] {
			b.WriteString(w)
			break
		}
	}
	if b.Len() < 4 {
		sum := sha256.Sum256([]byte(it.Type + "\x00" + it.Title + "\x00" + it.Date + "\x00" + it.URL + "\x00" + it.DOI))
		return "item-" + hex.EncodeToString(sum[:4])
	}
	return b.String()
}

// asciiWord is a word in lower-case ASCII letters and digits: accents
// dropped (Müller is muller), the rest left out.
func asciiWord(w string) string {
	var b strings.Builder
	for _, r := range norm.NFD.String(w) {
		switch {
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(unicode.ToLower(r))
		case r == 'ß':
			b.WriteString("ss")
		case r == 'ø' || r == 'Ø':
			b.WriteByte('o')
		case r == 'ł' || r == 'Ł':
			b.WriteByte('l')
		}
	}
	return b.String()
}

var keyStopWords = setOf("a", "an", "the", "of", "on", "in", "and", "for", "to", "with", "at", "by", "from", "is", "are",
	"der", "die", "das", "le", "la", "les", "un", "une", "el", "los", "de", "des", "del", "il", "lo")
