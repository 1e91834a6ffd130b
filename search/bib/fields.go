package bib

import (
	"net/url"
	"strings"
)

// Field values every format shares: dates, pages, DOIs, URLs, languages,
// each normalised once so that the three readers agree.

// bibDate is the year and ISO-like date of BibLaTeX's date or BibTeX's
// year, month and day.
func bibDate(f map[string]string) (int, string) {
	if d := strings.TrimSpace(decodeVerbatim(f["date"])); d != "" {
		if y, date := ParseDate(d); y != 0 {
			return y, date
		}
	}
	y := YearIn(decodeTeX(f["year"]))
	if y == 0 {
		y, _ = ParseDate(strings.TrimSpace(decodeVerbatim(f["date"])))
		return y, ""
	}
	date := yearString(y)
	if m := monthNumber(decodeTeX(f["month"])); m > 0 {
		date += "-" + twoDigits(m)
		if d := atoiSmall(strings.TrimSpace(f["day"])); d >= 1 && d <= 31 {
			date += "-" + twoDigits(d)
		}
	}
	return y, date
}

// ParseDate reads "2019", "2019-03", "2019-03-04", "2019-03-04T10:00:00"
// and ranges "2015-06-22/2015-06-26" (EDTF marks ~ ? % dropped); a range
// keeps both ends, an open one ("2019/..") its start.
func ParseDate(s string) (int, string) {
	s = strings.TrimSpace(s)
	if rest, bc := strings.CutPrefix(s, "-"); bc && !strings.Contains(rest, "/") {
		// EDTF's years before the common era: -0043 is 44 BC, kept as
		// ISO 8601 writes it
		if y, d := isoDay(rest); y > 0 {
			return -y, "-" + d
		}
	}
	start, end, isRange := strings.Cut(s, "/")
	y, a := isoDay(start)
	if y == 0 {
		return YearIn(s), ""
	}
	if isRange {
		if _, b := isoDay(end); b != "" && b != a {
			return y, a + "/" + b
		}
	}
	return y, a
}

// isoDay normalises one date ("2019-3-4" is "2019-03-04").
func isoDay(s string) (int, string) {
	s = strings.TrimSpace(strings.Trim(s, "~?%[]{} "))
	if t := strings.IndexAny(s, "T "); t > 0 {
		s = s[:t]
	}
	parts := strings.Split(s, "-")
	if len(parts) > 3 || len(parts[0]) != 4 {
		return 0, ""
	}
	y := atoiSmall(parts[0])
	if y <= 0 {
		return 0, ""
	}
	out := parts[0]
	if len(parts) > 1 {
		m := atoiSmall(parts[1])
		if m < 1 || m > 12 {
			return y, out
		}
		out += "-" + twoDigits(m)
		if len(parts) > 2 {
			if d := atoiSmall(parts[2]); d >= 1 && d <= 31 {
				out += "-" + twoDigits(d)
			}
		}
	}
	return y, out
}

// YearIn is the first four-digit number in s ("2019a", "{2019}", "c. 1850").
func YearIn(s string) int {
	run := 0
	for i := 0; i <= len(s); i++ {
		if i < len(s) && s[i] >= '0' && s[i] <= '9' {
			run++
			continue
		}
		if run == 4 {
			return atoiSmall(s[i-4 : i])
		}
		run = 0
	}
	return 0
}

// atoiSmall reads up to 9 digits; anything else is -1.
func atoiSmall(s string) int {
	if s == "" || len(s) > 9 {
		return -1
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return -1
		}
		n = n*10 + int(s[i]-'0')
	}
	return n
}

func twoDigits(n int) string { return string([]byte{byte('0' + n/10%10), byte('0' + n%10)}) }

var monthNames = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}

// monthNumber reads "3", "03", "mar", "March", "Mar." as 3.
func monthNumber(s string) int {
	s = strings.ToLower(strings.Trim(strings.TrimSpace(s), "{}."))
	if n := atoiSmall(s); n >= 1 && n <= 12 {
		return n
	}
	if len(s) >= 3 {
		for i, m := range monthNames {
			if strings.HasPrefix(s, m) {
				return i + 1
			}
		}
	}
	return 0
}

// NormalizePages writes a page range with an en dash, whatever dash the
// file used ("493--518", "245-251", "1—4" are "493–518", "245–251",
// "1–4"), as CSL and Zotero do; a value that is not one range of two
// tokens ("12a", "e1002", "No Pagination Specified") is kept as it is.
func NormalizePages(s string) string {
	s = strings.TrimSpace(s)
	for _, dash := range []string{"–", "—", "‐", "‑", "-"} {
		a, b, ok := strings.Cut(s, dash)
		if !ok {
			continue
		}
		a, b = strings.TrimSpace(a), strings.TrimLeft(strings.TrimSpace(b), "-–—")
		if a == "" || b == "" || strings.ContainsAny(a+b, " \t-–—") {
			return s
		}
		return a + "–" + b
	}
	return s
}

// CleanDOI is a DOI without resolver or "doi:" prefix, in lower case (DOIs
// are case-insensitive), or "" when s holds none. Every reader of a
// library (these files, Zotero) cleans DOIs with it, so one work has one
// DOI whichever way it came in.
func CleanDOI(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return ""
	}
	if strings.Contains(s, "%2f") {
		if u, err := url.PathUnescape(s); err == nil {
			s = u
		}
	}
	if !strings.HasPrefix(s, "10.") && !strings.HasPrefix(s, "10/") {
		i := strings.Index(s, "10.")
		if i < 0 || i > 0 && strings.IndexByte("/: ", s[i-1]) < 0 {
			return ""
		}
		s = s[i:]
	}
	if i := strings.IndexAny(s, " \t\r\n"); i > 0 {
		s = s[:i]
	}
	s = strings.TrimRight(s, ".,;")
	if !strings.Contains(s, "/") || strings.HasSuffix(s, "/") {
		return "" // a DOI is a prefix and a suffix: "10.1000" alone names nothing
	}
	return s
}

// percentDecode undoes percent-encoding where s holds any (WriteBibTeX
// encodes a DOI's braces, quotes, spaces, # and %), and leaves s as it is
// where a % starts no escape.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// firstURL is the first of the space-separated URLs Mendeley puts in one
// url field.
func firstURL(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

// urlIn finds \url{...} in a howpublished field.
func urlIn(s string) string {
	i := strings.Index(s, `\url{`)
	if i < 0 {
		if u := decodeVerbatim(strings.TrimSpace(s)); isWebURL(u) {
			return u
		}
		return ""
	}
	rest := s[i+len(`\url{`):]
	if j := strings.IndexByte(rest, '}'); j >= 0 {
		return decodeVerbatim(rest[:j])
	}
	return ""
}

func isWebURL(s string) bool {
	l := strings.ToLower(s)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://") || strings.HasPrefix(l, "ftp://")
}

// languageTags are the babel names BibLaTeX's langid uses, as the BCP 47
// tags CSL and RIS carry.
var languageTags = map[string]string{"english": "en", "american": "en-US", "usenglish": "en-US", "british": "en-GB",
	"ukenglish": "en-GB", "canadian": "en-CA", "australian": "en-AU", "german": "de", "ngerman": "de", "austrian": "de-AT",
	"naustrian": "de-AT", "swissgerman": "de-CH", "nswissgerman": "de-CH", "french": "fr", "francais": "fr",
	"spanish": "es", "italian": "it", "dutch": "nl", "portuguese": "pt", "portuges": "pt", "brazil": "pt-BR",
	"brazilian": "pt-BR", "russian": "ru", "ukrainian": "uk", "polish": "pl", "czech": "cs", "slovak": "sk",
	"slovene": "sl", "croatian": "hr", "serbian": "sr", "bulgarian": "bg", "romanian": "ro", "hungarian": "hu",
	"magyar": "hu", "greek": "el", "turkish": "tr", "swedish": "sv", "danish": "da", "norwegian": "nb", "norsk": "nb",
	"nynorsk": "nn", "finnish": "fi", "icelandic": "is", "estonian": "et", "latvian": "lv", "lithuanian": "lt",
	"catalan": "ca", "basque": "eu", "galician": "gl", "irish": "ga", "welsh": "cy", "latin": "la", "hebrew": "he",
	"arabic": "ar", "persian": "fa", "hindi": "hi", "japanese": "ja", "chinese": "zh", "korean": "ko", "thai": "th",
	"vietnamese": "vi", "indonesian": "id", "malay": "ms"}

// languageTag is the BCP 47 tag of a language name, or the value as given
// when it is already a tag or unknown.
func languageTag(s string) string {
	if t, ok := languageTags[strings.ToLower(strings.TrimSpace(s))]; ok {
		return t
	}
	return strings.TrimSpace(s)
}
