package zoterotest

import (
	"fmt"
	"strconv"
)

// Sample is a library of n journal articles in cols collections (the
// last a sub-collection of the first when cols > 1), each with a DOI, two
// authors, a tag and an imported PDF whose text names the article: the
// shape of a real library, for tests that need many items.
func Sample(n, cols int) Library {
	var lib Library
	for c := range cols {
		col := Collection{Key: Key(100_000 + c), Name: fmt.Sprintf("Collection %d", c+1)}
		if c > 0 && c == cols-1 {
			col.Parent = Key(100_000)
		}
		lib.Collections = append(lib.Collections, col)
	}
	for i := range n {
		title := fmt.Sprintf("Sample article %d on topic %d", i+1, i%7)
		e := Entry{
			Key:  Key(i + 1),
			Type: "journalArticle",
			Fields: map[string]string{
				"title":            title,
				"publicationTitle": fmt.Sprintf("Journal of Samples %d", i%5),
				"date":             strconv.Itoa(1990 + i%35),
				"volume":           strconv.Itoa(1 + i%40),
				"pages":            fmt.Sprintf("%d-%d", 1+i, 10+i),
				"DOI":              fmt.Sprintf("10.5555/sample.%d", i+1),
				"abstractNote":     "An abstract of " + title + ".",
			},
			Creators: []Creator{
				{First: "Ada", Last: fmt.Sprintf("Author%d", i)},
				{First: "Ben", Last: fmt.Sprintf("Writer%d", i%11)},
			},
			Tags: []string{fmt.Sprintf("topic %d", i%7)},
			Attachments: []Attachment{{
				Key:      Key(200_000 + i),
				Filename: fmt.Sprintf("sample-%d.pdf", i+1),
				Content:  PDF(title, fmt.Sprintf("Sample article number %d.", i+1)),
			}},
		}
		if cols > 0 {
			e.Collections = []string{Key(100_000 + i%cols)}
		}
		lib.Items = append(lib.Items, e)
	}
	return lib
}
