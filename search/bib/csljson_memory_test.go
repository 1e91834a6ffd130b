package bib

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// hugeCSLJSON is a CSL-JSON file whose items hold n authors, n keywords,
// n container titles and n date parts each: arrays far past every cap.
func hugeCSLJSON(n int) []byte {
	var b bytes.Buffer
	list := func(format string) {
		b.WriteByte('[')
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, format, i)
		}
		b.WriteByte(']')
	}
	b.WriteString(`[{"id": "authors", "title": "Many authors", "author": `)
	list(`{"family": "Family%d", "given": "Given"}`)
	b.WriteString(`},
{"id": "strings", "title": "Many strings", "keyword": `)
	list(`"keyword %d"`)
	b.WriteString(`, "container-title": `)
	list(`"Journal %d"`)
	b.WriteString(`},
{"id": "dates", "title": "Many dates", "issued": {"date-parts": `)
	list(`[2019, 1, 2, %d]`)
	b.WriteString(`}},
{"id": "after", "title": "After", "author": [{"family": "Last"}]}]`)
	return b.Bytes()
}

// allocated is the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// Arrays are capped while they are read, not after: 200,000 authors,
// keywords, container titles and date parts cost less than one more copy
// of the file (the reader used to allocate seventeen times its size),
// and the person is told that names were cut.
func TestCSLJSONHugeArrays(t *testing.T) {
	const n = 200_000
	data := hugeCSLJSON(n)
	var items []Item
	var errs []error
	alloc := allocated(func() { items, errs = Read("huge.json", data) })
	t.Logf("%d MB file, %d MB allocated", len(data)>>20, alloc>>20)
	if limit := uint64(len(data) + 8<<20); alloc > limit {
		t.Errorf("reading a %d MB file allocated %d MB, want at most %d MB", len(data)>>20, alloc>>20, limit>>20)
	}
	if len(items) != 4 {
		t.Fatalf("%d items, want 4 (problems %v)", len(items), errs)
	}
	eq(t, "authors kept", len(items[0].Authors), maxNames)
	eq(t, "first author", items[0].Authors[0], Name{Family: "Family0", Given: "Given"})
	eq(t, "keywords kept", len(items[1].Tags), maxList)
	eq(t, "venue", items[1].Venue, "Journal 0")
	eq(t, "date", items[2].Date, "2019-01-02")
	eq(t, "the item after", items[3].Authors, []Name{{Family: "Last"}})
	var said bool
	for _, err := range errs {
		msg := err.Error()
		said = said || strings.Contains(msg, "(authors)") && strings.Contains(msg, fmt.Sprintf("first %d of its %d authors", maxNames, n))
	}
	if !said {
		t.Errorf("problems %v: none says the authors were cut", errs)
	}
}
