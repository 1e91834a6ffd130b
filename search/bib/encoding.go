package bib

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
)

// Library files that are not UTF-8 are in the encoding their writer's
// system had: Windows-1252 or Latin-1 in western Europe, Latin-2 or
// Windows-1250 in central Europe (Czech, Polish, Hungarian names), Latin-9.
// The file's own declaration (JabRef's "% Encoding: ISO8859_2") is
// believed first; else the encoding in which the non-ASCII bytes read as
// the letters of words wins: in Latin-1, a Czech "ř" (0xF8) is "ø", a
// possible letter, but "š" (0xB9) is "¹" and "ž" (0xBE) "¾", which no word
// holds.

// Encodings are the names --encoding takes, lower case.
var Encodings = map[string]encoding.Encoding{
	"latin1": charmap.ISO8859_1, "iso-8859-1": charmap.ISO8859_1, "iso8859-1": charmap.ISO8859_1,
	"cp1252": charmap.Windows1252, "windows-1252": charmap.Windows1252,
	"latin2": charmap.ISO8859_2, "iso-8859-2": charmap.ISO8859_2, "iso8859-2": charmap.ISO8859_2, "iso8859_2": charmap.ISO8859_2,
	"cp1250": charmap.Windows1250, "windows-1250": charmap.Windows1250,
	"latin9": charmap.ISO8859_15, "iso-8859-15": charmap.ISO8859_15, "iso8859_15": charmap.ISO8859_15,
	"utf-8": nil, "utf8": nil,
}

var declaredEncoding = regexp.MustCompile(`(?i)(?:%\s*encoding\s*:|@comment\{jabref-meta:\s*encoding:)\s*([A-Za-z0-9_-]+)`)

// toUTF8 is data as UTF-8: decoded from the encoding named (--encoding),
// else from the one the file declares, else the one its bytes read best
// in. UTF-8 and UTF-16 files are returned as they are.
func toUTF8(data []byte, name string) ([]byte, error) {
	if name != "" {
		enc, ok := Encodings[strings.ToLower(name)]
		if !ok {
			return nil, fmt.Errorf("unknown encoding %q (known: latin1, cp1252, latin2, cp1250, latin9, utf-8)", name)
		}
		if enc == nil {
			return data, nil
		}
		return enc.NewDecoder().Bytes(data)
	}
	if utf8.Valid(data) || len(data) >= 2 && (data[0] == 0xff && data[1] == 0xfe || data[0] == 0xfe && data[1] == 0xff) ||
		len(data) >= 4 && (data[1] == 0 && data[3] == 0 || data[0] == 0 && data[2] == 0) {
		return data, nil
	}
	if m := declaredEncoding.FindSubmatch(data[:min(len(data), 8192)]); m != nil {
		n := strings.ReplaceAll(strings.ToLower(string(m[1])), "_", "-")
		if enc, ok := Encodings[n]; ok && enc != nil {
			return enc.NewDecoder().Bytes(data)
		}
	}
	best, bestScore := encoding.Encoding(charmap.Windows1252), wordLetters(data, charmap.Windows1252)
	for _, enc := range []encoding.Encoding{charmap.ISO8859_2, charmap.Windows1250} {
		if s := wordLetters(data, enc); s > bestScore {
			best, bestScore = enc, s
		}
	}
	return best.NewDecoder().Bytes(data)
}

// wordLetters counts the non-ASCII bytes that, read in enc, are letters
// next to a letter (inside a word), less those that are not letters.
func wordLetters(data []byte, enc encoding.Encoding) int {
	cm, ok := enc.(*charmap.Charmap)
	if !ok {
		return 0
	}
	score := 0
	for i, c := range data {
		if c < 0x80 || i == 0 || i == len(data)-1 {
			continue
		}
		if !isWordByte(data[i-1], cm) && !isWordByte(data[i+1], cm) {
			continue
		}
		if unicode.IsLetter(cm.DecodeByte(c)) {
			score++
		} else {
			score -= 2
		}
	}
	return score
}

func isWordByte(c byte, cm *charmap.Charmap) bool {
	if c < 0x80 {
		return isASCIILetter(c)
	}
	return unicode.IsLetter(cm.DecodeByte(c))
}
