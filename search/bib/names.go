package bib

import (
	"strings"
)

// BibTeX names follow BibTeX's own rules, since that is how every exporter
// writes them: "Family, Given", "Given Family", "von Family, Given",
// "Family, Jr., Given"; a lower-case word is a particle ("van", "de la")
// that belongs to the family; a name wholly in braces is an organisation
// ({World Health Organization}); "others" is et al. and is dropped.

// parseNames reads an author or editor list.
func parseNames(raw string) []Name {
	var out []Name
	for _, n := range splitTop(raw, "and") {
		for _, n := range commaList(strings.TrimSpace(n)) {
			if len(out) == maxNames {
				return out
			}
			if n == "" || strings.EqualFold(n, "others") {
				continue
			}
			if name, ok := parseName(n); ok {
				out = append(out, name)
			}
		}
	}
	return out
}

// commaList splits what a person wrote as a list with commas ("Ryszard
// Michalski, Jaime G. Carbonell, and Tom M. Mitchell") into its names. A
// name is read as such a list only when it has three or more parts, none
// is a suffix (Jr., III) and each is two or more words: "Family, Jr.,
// Given" and "Family, Given" stay one name.
func commaList(n string) []string {
	// "A B, C D, and E F" splits at "and" first: "A B, C D," is a list too
	trimmed := strings.TrimSuffix(n, ",")
	parts := splitTop(trimmed, ",")
	if len(parts) < 3 && (trimmed == n || len(parts) < 2) {
		return []string{n}
	}
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if i == len(parts)-1 {
			p = strings.TrimSpace(strings.TrimPrefix(p, "and "))
		}
		if isSuffix(p) || len(nameWords(p)) < 2 || strings.Contains(p, "=") {
			return []string{n}
		}
		parts[i] = p
	}
	return parts
}

// extendedName reads BibLaTeX's extended name format: "family=Doe,
// given=John, prefix=von, suffix=Jr." (with given-i and useprefix, which
// say how to abbreviate and sort).
func extendedName(parts []string) (Name, bool) {
	var n Name
	var prefix string
	for _, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return Name{}, false
		}
		v = decodeTeX(strings.TrimSpace(v))
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "family":
			n.Family = v
		case "given":
			n.Given = v
		case "prefix":
			prefix = v
		case "suffix":
			n.Suffix = v
		case "given-i", "family-i", "prefix-i", "suffix-i", "useprefix", "sortingnamekeytemplatename", "hash", "uniquename":
		default:
			return Name{}, false
		}
	}
	switch {
	case strings.HasSuffix(prefix, "-") || strings.HasSuffix(prefix, "'") || strings.HasSuffix(prefix, "’"):
		n.Family = prefix + n.Family // al-Hakim, d'Alembert
	case prefix != "":
		n.Family = strings.TrimSpace(prefix + " " + n.Family)
	}
	return n, true
}

func parseName(raw string) (Name, bool) {
	if raw[0] == '{' && closingBrace(raw, 0) == len(raw)-1 {
		lit := strings.TrimSpace(decodeTeX(raw[1 : len(raw)-1]))
		return Name{Literal: lit}, lit != ""
	}
	parts := splitTop(raw, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	if n, ok := extendedName(parts); ok {
		return n, n.Family != "" || n.Given != ""
	}
	var n Name
	switch len(parts) {
	case 1: // Given von Family
		w := nameWords(parts[0])
		last := len(w) - 1
		von := -1
		for i := 0; i < last; i++ {
			if isParticle(w[i]) {
				von = i
				break
			}
		}
		switch {
		case last == 0:
			n.Family = w[0]
		case von < 0:
			n.Given, n.Family = strings.Join(w[:last], " "), w[last]
		default:
			n.Given, n.Family = strings.Join(w[:von], " "), strings.Join(w[von:], " ")
		}
	case 2: // von Family, Given
		n.Family, n.Given = parts[0], parts[1]
	default: // von Family, Jr, Given
		n.Family, n.Suffix, n.Given = parts[0], parts[1], strings.Join(parts[2:], ", ")
		if len(parts) == 3 && !isSuffix(parts[1]) && isSuffix(parts[2]) {
			n.Given, n.Suffix = parts[1], parts[2] // "Sherry, John F., Jr.", a common misspelling
		}
	}
	n.Family = decodeTeX(n.Family)
	n.Given = decodeTeX(n.Given)
	n.Suffix = decodeTeX(n.Suffix)
	if n.Family == "" && n.Given == "" {
		return n, false
	}
	return n, true
}

func isSuffix(s string) bool {
	switch strings.ToLower(strings.TrimSuffix(strings.TrimSpace(s), ".")) {
	case "jr", "sr", "jun", "sen", "ii", "iii", "iv", "v", "vi", "2nd", "3rd":
		return true
	}
	return false
}

// isParticle tells "van", "de", "d'" (lower case) from a given or family
// name. A word starting with a brace group is capitalised, as in BibTeX,
// unless the group is an accented letter ({\'e}tienne).
func isParticle(w string) bool {
	if strings.HasPrefix(w, "{") && !strings.HasPrefix(w, "{\\") {
		return false
	}
	return isLowerWord(decodeTeX(w))
}

// nameWords splits a name at the spaces (and ~) outside braces.
func nameWords(s string) []string {
	var words []string
	depth, start := 0, -1
	for i := 0; i <= len(s); i++ {
		sep := i == len(s)
		if !sep {
			switch s[i] {
			case '{':
				depth++
			case '}':
				depth = max(depth-1, 0)
			case '\\':
				if i+1 < len(s) && s[i+1] != '~' {
					if start < 0 {
						start = i // a word that starts with an accent: \"{O}stberg
					}
					i++
					continue
				}
			case ' ', '\t', '\n', '\r', '~':
				sep = depth == 0
			}
		}
		switch {
		case sep && start >= 0:
			words = append(words, s[start:i])
			start = -1
		case !sep && start < 0:
			start = i
		}
	}
	if len(words) == 0 {
		return []string{""}
	}
	return words
}

// splitTop splits s at sep outside braces: at commas, or (sep "and") at
// the word "and" between spaces, in any case.
func splitTop(s, sep string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '{':
			depth++
		case c == '}':
			depth = max(depth-1, 0)
		case c == '\\':
			i++
		case depth > 0:
		case sep == "," && c == ',':
			parts = append(parts, s[start:i])
			start = i + 1
		case sep == "and" && isSpace(c) && i+4 < len(s) && strings.EqualFold(s[i+1:i+4], "and") && isSpace(s[i+4]):
			parts = append(parts, s[start:i])
			start = i + 4
			i += 3
		}
	}
	return append(parts, s[min(start, len(s)):])
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// closingBrace is the index of the brace closing the one at s[open], or -1.
func closingBrace(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}
