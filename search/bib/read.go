package bib

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

// Read reads a library file in any of the three formats. The format is
// the one its content shows, else its extension's (.bib .bibtex .biblatex;
// .json .csljson; .ris), since exports are often misnamed (a .txt of RIS,
// a .bib that is JSON). name is the file's path: relative attachment
// paths are resolved against its folder. The problems are per entry: the
// items that could be read are returned with them.
func Read(name string, data []byte) ([]Item, []error) {
	if len(data) > MaxInput {
		return nil, []error{fmt.Errorf("%s is %d MB, more than the %d MB a library file may have", filepath.Base(name), len(data)>>20, MaxInput>>20)}
	}
	dir := ""
	if name != "" {
		dir = filepath.Dir(name)
	}
	switch Format(name, data) {
	case "bibtex":
		return ReadBibTeX(data, dir)
	case "csljson":
		return readCSLJSON(data)
	case "ris":
		items, errs := ReadRIS(data)
		for i := range items {
			for j, f := range items[i].Files {
				items[i].Files[j] = resolve(f, dir)
			}
		}
		return items, errs
	}
	return nil, []error{fmt.Errorf("%s: not a library file: neither BibTeX, CSL-JSON nor RIS", filepath.Base(name))}
}

// Format names the format of a library file, "bibtex", "csljson" or "ris",
// from its content or else its name's extension; "" when it is none.
func Format(name string, data []byte) string {
	byName := formatOfName(name)
	byContent := sniff(data)
	switch {
	case byContent == "" || byContent == byName:
		return byName
	case byName == "":
		return byContent
	case byContent == "csljson" && !json.Valid(data):
		return byName // broken JSON named .bib: say what is wrong with the BibTeX
	}
	return byContent
}

func formatOfName(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".bib", ".bibtex", ".biblatex":
		return "bibtex"
	case ".json", ".csljson", ".csl":
		return "csljson"
	case ".ris":
		return "ris"
	}
	return ""
}

var bibEntryHead = regexp.MustCompile(`@[A-Za-z]+[ \t]*[{(]`)

// sniff tells the format from the first megabyte.
func sniff(data []byte) string {
	text := decodeInput(data[:min(len(data), 1<<20)])
	t := strings.TrimLeft(text, " \t\r\n")
	if t == "" {
		return ""
	}
	if t[0] == '[' || t[0] == '{' {
		return "csljson"
	}
	first, _, _ := strings.Cut(t, "\n")
	if tag, _, ok := risLine(strings.TrimRight(first, "\r")); ok && tag == "TY" {
		return "ris"
	}
	if bibEntryHead.MatchString(text) {
		return "bibtex"
	}
	for i, line := range strings.SplitN(t, "\n", 200) {
		if tag, _, ok := risLine(strings.TrimRight(line, "\r")); ok && tag == "TY" && i < 199 {
			return "ris"
		}
	}
	return ""
}
