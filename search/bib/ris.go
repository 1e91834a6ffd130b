package bib

import (
	"bytes"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// RIS is a list of records of "XX  - value" lines, each from TY to ER,
// as Zotero, EndNote, Mendeley, publishers and databases write it. A line
// that is not a tag line continues the value before it.

// ReadRIS reads a RIS file. A tag line outside a record (before any TY)
// is a problem naming its line; the records are read all the same.
// Attachment paths (L1, L2, LK) are given as written: Read resolves
// relative ones against the file's folder.
func ReadRIS(data []byte) ([]Item, []error) {
	if len(data) > MaxInput {
		return nil, []error{tooLarge("RIS", len(data))}
	}
	var (
		items   []Item
		errs    problems
		rec     *risRecord
		outside bool  // a problem was reported for this stretch outside records
		lines   []int // where each record starts
		// values is every record's map in turn, emptied for the next: a
		// map a record would cost more than the record's strings
		values = map[string][]string{}
	)
	finish := func() {
		if rec != nil {
			it := rec.item()
			it.Clean()
			items = append(items, it)
			rec = nil
			clear(values)
		}
	}
	text := decodeInput(data)
	for n := 1; text != ""; n++ {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		line = strings.TrimRight(line, "\r")
		tag, value, ok := risLine(line)
		switch {
		case !ok:
			if rec != nil {
				rec.continueLine(line)
			}
		case tag == "TY":
			finish()
			if len(items) == MaxItems {
				errs.add(tooMany("RIS", n))
				return items, errs.result()
			}
			rec = &risRecord{values: values}
			lines = append(lines, n)
			rec.add(tag, value)
			outside = false
		case tag == "ER":
			finish()
		case rec == nil:
			if !outside {
				errs.add(&ParseError{Format: "RIS", Line: n, Msg: fmt.Sprintf("%s is outside a record (no TY line starts it); skipped up to the next TY", tag)})
				outside = true
			}
		default:
			rec.add(tag, value)
		}
	}
	finish() // a last record without ER
	items = settleIDs(items, lines, "RIS", "ID", &errs)
	return items, errs.result()
}

// risLine reads "TY  - JOUR": a tag of a capital and a capital or digit,
// one to three spaces, a hyphen, the value.
func risLine(line string) (tag, value string, ok bool) {
	if len(line) < 3 || !isUpperASCII(line[0]) || !(isUpperASCII(line[1]) || line[1] >= '0' && line[1] <= '9') {
		return "", "", false
	}
	rest := line[2:]
	spaces := len(rest) - len(strings.TrimLeft(rest, " "))
	if spaces == 0 || spaces > 3 || spaces == len(rest) || rest[spaces] != '-' {
		return "", "", false
	}
	return line[:2], strings.TrimSpace(rest[spaces+1:]), true
}

func isUpperASCII(c byte) bool { return c >= 'A' && c <= 'Z' }

type risRecord struct {
	values map[string][]string
	last   string
	// more is the continuation of the last value, joined to it when the
	// next tag comes: appending line by line would copy the value each time.
	more strings.Builder
}

func (r *risRecord) add(tag, value string) {
	r.flush()
	switch tag { // one list for the names of each role, in file order
	case "A1":
		tag = "AU"
	case "ED":
		tag = "A2"
	}
	r.last = tag
	if len(r.values[tag]) < maxNames {
		r.values[tag] = append(r.values[tag], value)
	}
}

// continueLine appends a line to the value before it: abstracts keep
// their line breaks, other values are one line.
func (r *risRecord) continueLine(line string) {
	vs := r.values[r.last]
	if len(vs) == 0 || len(vs[len(vs)-1])+r.more.Len()+len(line) > maxValue {
		return
	}
	switch {
	case r.last == "AB" || r.last == "N2":
		r.more.WriteString("\n" + line)
	case strings.TrimSpace(line) != "":
		r.more.WriteString(" " + strings.TrimSpace(line))
	}
}

func (r *risRecord) flush() {
	if r.more.Len() == 0 {
		return
	}
	vs := r.values[r.last]
	vs[len(vs)-1] += r.more.String()
	r.more.Reset()
}

func (r *risRecord) first(tags ...string) string {
	for _, t := range tags {
		for _, v := range r.values[t] {
			if v = strings.TrimSpace(v); v != "" {
				return v
			}
		}
	}
	return ""
}

func (r *risRecord) all(tags ...string) []string {
	var out []string
	for _, t := range tags {
		out = append(out, r.values[t]...)
	}
	return out
}

func (r *risRecord) item() Item {
	r.flush()
	ty := strings.ToUpper(r.first("TY"))
	it := Item{
		ID:        r.first("ID"),
		Type:      risTypes[ty],
		Title:     r.first("TI", "T1", "CT"),
		Authors:   risNames(r.all("AU")),
		Editors:   risNames(r.all("A2")),
		Volume:    r.first("VL"),
		Issue:     r.first("IS", "CP"),
		Publisher: r.first("PB"),
		DOI:       CleanDOI(r.first("DO")),
		Abstract:  r.first("AB", "N2"),
		Language:  languageTag(r.first("LA")),
	}
	if it.Type == "" {
		it.Type = "document"
	}
	if it.Title == "" && (ty == "BOOK" || ty == "EBOOK" || ty == "EDBOOK") {
		it.Title = r.first("BT")
	}
	for _, t := range []string{"T2", "JF", "JO", "BT", "JA", "J2", "J1"} {
		if v := r.first(t); v != "" && v != it.Title {
			it.Venue = v
			break
		}
	}
	it.Year, it.Date = risDate(r.first("DA"))
	if y, d := risDate(r.first("PY", "Y1")); y > 0 {
		if it.Year == 0 || len(d) > len(it.Date) && strings.HasPrefix(d, yearString(it.Year)) {
			it.Date = d
		}
		it.Year = y
	}
	sp, ep := r.first("SP"), r.first("EP")
	switch {
	case sp != "" && ep != "" && !strings.ContainsAny(sp, "-–"):
		it.Pages = sp + "–" + ep
	default:
		it.Pages = NormalizePages(sp)
	}
	if it.DOI == "" {
		for _, v := range r.all("N1", "M3", "UR") {
			if l := strings.ToLower(v); strings.HasPrefix(l, "doi:") || strings.Contains(l, "doi.org/10.") {
				if it.DOI = CleanDOI(v); it.DOI != "" {
					break
				}
			}
		}
	}
	for _, sn := range r.all("SN") {
		switch {
		case sn == "":
		case isISSN(sn):
			if it.ISSN == "" {
				it.ISSN = sn
			}
		case it.ISBN == "":
			it.ISBN = sn
		}
	}
	for _, u := range r.all("UR") {
		if isWebURL(strings.TrimSpace(u)) {
			it.URL = strings.TrimSpace(u)
			break
		}
	}
	for _, f := range r.all("L1", "L2", "L4", "LK") {
		f = strings.TrimSpace(f)
		switch {
		case f == "":
		case isWebURL(f):
			if it.URL == "" {
				it.URL = f
			}
		default:
			it.Files = append(it.Files, fileURLPath(f))
		}
	}
	for _, kw := range r.all("KW") {
		it.Tags = append(it.Tags, splitList(kw, ";")...)
	}
	return it
}

// isISSN tells an ISSN ("0021-9606", "1935-8237, 1935-8245") from an
// ISBN, as RIS puts both in SN.
func isISSN(s string) bool {
	for _, one := range splitList(s, ",; ") {
		d := strings.ReplaceAll(one, "-", "")
		if len(d) != 8 {
			return false
		}
		for i := 0; i < 8; i++ {
			if !(d[i] >= '0' && d[i] <= '9' || i == 7 && (d[i] == 'X' || d[i] == 'x')) {
				return false
			}
		}
	}
	return s != ""
}

// risDate reads "2001/09/01/", "2016/12//", "2005", "2005-07-15".
func risDate(s string) (int, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, ""
	}
	if !strings.Contains(s, "/") {
		return ParseDate(s)
	}
	p := strings.Split(s, "/")
	y := atoiSmall(strings.TrimSpace(p[0]))
	if len(strings.TrimSpace(p[0])) != 4 || y <= 0 {
		return YearIn(s), ""
	}
	date := p[0]
	if m := atoiSmall(strings.TrimSpace(p[1])); m >= 1 && m <= 12 {
		date += "-" + twoDigits(m)
		if len(p) > 2 {
			if d := atoiSmall(strings.TrimSpace(p[2])); d >= 1 && d <= 31 {
				date += "-" + twoDigits(d)
			}
		}
	}
	return y, date
}

// risNames reads "Family, Given, Suffix"; a name without a comma is an
// organisation (RIS writes persons family first, with a comma).
func risNames(values []string) []Name {
	var out []Name
	for _, v := range values {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		family, rest, ok := strings.Cut(v, ",")
		if !ok {
			out = append(out, uncommaName(v))
			continue
		}
		given, suffix, _ := strings.Cut(rest, ",")
		if family = strings.TrimSpace(family); strings.TrimSpace(rest) == "" && strings.Contains(family, " ") && !isLowerWord(strings.Fields(family)[0]) {
			out = append(out, Name{Literal: family}) // "World Health Organization,"
			continue
		}
		out = append(out, Name{Family: strings.TrimSpace(family), Given: strings.TrimSpace(given), Suffix: strings.TrimSpace(suffix)})
	}
	return out
}

// uncommaName reads a name written without a comma ("Catarina Barata", as
// many exporters write AU): a person's "Given Family" when it looks like
// one, else an organisation's name whole.
func uncommaName(v string) Name {
	words := strings.Fields(v)
	if len(words) < 2 || len(words) > 5 {
		return Name{Literal: v}
	}
	for _, w := range words {
		r, _ := utf8.DecodeRuneInString(w)
		if orgWords[strings.ToLower(strings.Trim(w, ".,()&"))] || unicode.IsDigit(r) || strings.ContainsAny(w, "&()") {
			return Name{Literal: v}
		}
	}
	if n, ok := parseName(v); ok && n.Given != "" {
		return n
	}
	return Name{Literal: v}
}

// orgWords mark a name as an organisation's.
var orgWords = setOf("university", "universität", "université", "universidad", "institute", "institut", "instituto",
	"organization", "organisation", "group", "society", "association", "committee", "council", "department", "agency",
	"consortium", "foundation", "center", "centre", "ministry", "office", "laboratory", "laboratories", "inc", "ltd",
	"llc", "gmbh", "company", "corporation", "corp", "network", "team", "collaboration", "project", "board", "bureau",
	"commission", "service", "services", "school", "college", "hospital", "world", "national", "international",
	"federal", "state", "united", "nations", "health", "of", "for", "the", "and", "on", "working", "panel", "initiative",
	"program", "programme", "alliance", "union", "trust", "fund", "bank", "authority", "administration", "museum", "library")

// risTypes maps RIS reference types to CSL types.
var risTypes = map[string]string{
	"JOUR": "article-journal", "JFULL": "article-journal", "EJOUR": "article-journal", "INPR": "article-journal",
	"MGZN": "article-magazine", "NEWS": "article-newspaper", "CONF": "paper-conference", "CPAPER": "paper-conference",
	"BOOK": "book", "EBOOK": "book", "EDBOOK": "book", "CTLG": "book", "CHAP": "chapter", "ECHAP": "chapter",
	"THES": "thesis", "RPRT": "report", "GOVDOC": "report", "ELEC": "webpage", "WEB": "webpage", "ICOMM": "webpage",
	"BLOG": "post-weblog", "UNPB": "article", "MANSCPT": "manuscript", "DATA": "dataset", "DBASE": "dataset",
	"AGGR": "dataset", "COMP": "software", "PAT": "patent", "MAP": "map", "STAT": "legislation", "LEGAL": "legislation",
	"CASE": "legal_case", "BILL": "bill", "HEAR": "hearing", "SLIDE": "speech", "VIDEO": "motion_picture",
	"MPCT": "motion_picture", "SOUND": "song", "MUSIC": "song", "PCOMM": "personal_communication", "ART": "graphic",
	"STAND": "standard", "PAMP": "pamphlet", "ENCYC": "entry-encyclopedia", "DICT": "entry-dictionary",
	"GEN": "document", "SER": "book", "CLSWK": "book", "ABST": "article-journal", "ADVS": "motion_picture",
	"FIGURE": "figure", "CHART": "figure", "EQUA": "document",
}

// risTypeOf is the RIS type written for a CSL type: the inverse of
// risTypes on the types it reads back as themselves; GEN for the rest.
func risTypeOf(typ string) string {
	if t, ok := risTypesOut[typ]; ok {
		return t
	}
	return "GEN"
}

var risTypesOut = map[string]string{
	"article-journal": "JOUR", "article-magazine": "MGZN", "article-newspaper": "NEWS", "paper-conference": "CPAPER",
	"book": "BOOK", "chapter": "CHAP", "thesis": "THES", "report": "RPRT", "webpage": "ELEC", "post-weblog": "BLOG",
	"article": "UNPB", "manuscript": "MANSCPT", "dataset": "DATA", "software": "COMP", "patent": "PAT", "map": "MAP",
	"legislation": "STAT", "legal_case": "CASE", "bill": "BILL", "hearing": "HEAR", "speech": "SLIDE",
	"motion_picture": "VIDEO", "song": "SOUND", "personal_communication": "PCOMM", "graphic": "ART",
	"standard": "STAND", "pamphlet": "PAMP", "entry-encyclopedia": "ENCYC", "entry-dictionary": "DICT",
	"figure": "FIGURE", "document": "GEN",
}

// WriteRIS writes items as RIS with CRLF line ends, as Zotero does and
// EndNote expects. RIS has no tag for collections: Collections are not
// written. A date range keeps its start, and an organisation whose name
// holds a comma reads back as a person.
func WriteRIS(items []Item) []byte {
	var b bytes.Buffer
	for _, it := range items {
		w := func(tag, v string) {
			if v = strings.Join(strings.Fields(v), " "); v != "" {
				b.WriteString(tag + "  - " + v + "\r\n")
			}
		}
		w("TY", risTypeOf(it.Type))
		w("ID", it.ID)
		w("TI", it.Title)
		for _, n := range it.Authors {
			w("AU", risName(n))
		}
		for _, n := range it.Editors {
			w("A2", risName(n))
		}
		if it.Year != 0 {
			w("PY", yearString(it.Year))
		}
		if d, _, _ := strings.Cut(it.Date, "/"); len(d) > 4 {
			w("DA", strings.ReplaceAll(d, "-", "/"))
		}
		w("T2", it.Venue)
		w("VL", it.Volume)
		w("IS", it.Issue)
		sp, ep, _ := strings.Cut(it.Pages, "–")
		w("SP", sp)
		w("EP", ep)
		w("PB", it.Publisher)
		w("DO", it.DOI)
		w("SN", it.ISBN)
		w("SN", it.ISSN)
		w("UR", it.URL)
		writeAbstract(&b, it.Abstract)
		w("LA", it.Language)
		for _, t := range it.Tags {
			w("KW", t)
		}
		for _, f := range it.Files {
			w("L1", f)
		}
		b.WriteString("ER  - \r\n\r\n")
	}
	return b.Bytes()
}

// risName writes "Family, Given, Suffix"; a family name alone keeps its
// comma ("IDC,") so that it is not read back as an organisation.
func risName(n Name) string {
	if n.Literal != "" {
		if uncommaName(n.Literal).Literal == "" || strings.Contains(n.Literal, ",") {
			return n.Literal + "," // it would read as a person's "Given Family"
		}
		return n.Literal
	}
	s := n.Family + ", " + n.Given
	if n.Suffix != "" {
		s += ", " + n.Suffix
	}
	return strings.TrimSpace(s)
}

// writeAbstract writes an abstract's paragraphs as continuation lines, a
// line that would read as a tag indented by a space.
func writeAbstract(b *bytes.Buffer, abstract string) {
	lines := strings.Split(strings.TrimSpace(abstract), "\n")
	if lines[0] == "" {
		return
	}
	for i, l := range lines {
		l = strings.TrimRight(l, " \t\r")
		switch {
		case i == 0:
			b.WriteString("AB  - " + l + "\r\n")
		default:
			if _, _, tagLike := risLine(l); tagLike {
				l = " " + l
			}
			b.WriteString(l + "\r\n")
		}
	}
}
