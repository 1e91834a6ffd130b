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

// Encodings are the names --encoding takes, as encodingName writes them.
var Encodings = map[string]encoding.Encoding{
	"latin1": charmap.ISO8859_1, "iso88591": charmap.ISO8859_1,
	"cp1252": charmap.Windows1252, "windows1252": charmap.Windows1252,
	"latin2": charmap.ISO8859_2, "iso88592": charmap.ISO8859_2,
	"cp1250": charmap.Windows1250, "windows1250": charmap.Windows1250,
	"latin9": charmap.ISO8859_15, "iso885915": charmap.ISO8859_15,
	"utf8": nil,
}

// encodingNames are the encodings as a person reads them.
var encodingNames = map[encoding.Encoding]string{charmap.ISO8859_1: "Latin-1", charmap.Windows1252: "Windows-1252",
	charmap.ISO8859_2: "Latin-2", charmap.Windows1250: "Windows-1250", charmap.ISO8859_15: "Latin-9"}

// encodingName is an encoding's name as Encodings keys it: "Latin-9",
// "ISO8859_15", "latin-9-unix" (Emacs) and "iso-8859-15" are "latin9"
// and "iso885915".
func encodingName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	for _, eol := range []string{"-unix", "-dos", "-mac"} {
		s = strings.TrimSuffix(s, eol)
	}
	return strings.NewReplacer("-", "", "_", "", " ", "").Replace(s)
}

// KnownEncoding says whether --encoding may name s.
func KnownEncoding(s string) bool {
	_, ok := Encodings[encodingName(s)]
	return ok
}

var declaredEncoding = regexp.MustCompile(`(?i)(?:%\s*encoding\s*:|@comment\{jabref-meta:\s*encoding:|-\*-.*?coding\s*[:=])\s*([A-Za-z0-9_-]+)`)

// toUTF8 is data as UTF-8: a file that is UTF-8 (or UTF-16) as it is;
// else decoded from the encoding named (--encoding), else from the one the
// file declares (JabRef's "% Encoding:", Emacs's "-*- coding: -*-"), else
// from the one its bytes read best in, which note names.
func toUTF8(data []byte, name string) (out []byte, note string, err error) {
	if name != "" && !KnownEncoding(name) {
		return nil, "", fmt.Errorf("unknown encoding %q (known: latin1, cp1252, latin2, cp1250, latin9)", name)
	}
	if utf8.Valid(data) || len(data) >= 2 && (data[0] == 0xff && data[1] == 0xfe || data[0] == 0xfe && data[1] == 0xff) ||
		len(data) >= 4 && (data[1] == 0 && data[3] == 0 || data[0] == 0 && data[2] == 0) {
		return data, "", nil // --encoding is for the files that are not UTF-8
	}
	if enc := Encodings[encodingName(name)]; enc != nil {
		out, err := enc.NewDecoder().Bytes(data)
		return out, "", err
	}
	if m := declaredEncoding.FindSubmatch(data[:min(len(data), 8192)]); m != nil {
		if enc := Encodings[encodingName(string(m[1]))]; enc != nil {
			out, err := enc.NewDecoder().Bytes(data)
			return out, "", err
		}
	}
	best, bestScore := encoding.Encoding(charmap.Windows1252), wordLetters(data, charmap.Windows1252)
	for _, enc := range []encoding.Encoding{charmap.ISO8859_2, charmap.Windows1250} {
		if s := wordLetters(data, enc); s > bestScore {
			best, bestScore = enc, s
		}
	}
	out, err = best.NewDecoder().Bytes(data)
	return out, "not UTF-8: read as " + encodingNames[best] + " (a guess: --encoding latin1, cp1252, latin2, cp1250 or latin9 says which)", err
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
