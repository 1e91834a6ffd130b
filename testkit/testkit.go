// Package testkit holds what test packages share about how they run; its
// subpackages, what they share about what they run (child: a second
// process).
package testkit

import (
	"flag"
	"strconv"
)

// WaitingTestsInParallel runs up to n of a package's parallel tests at
// once, unless -test.parallel says otherwise. Call it from TestMain before
// m.Run, in a package whose tests spend their time waiting (on child
// processes, sockets, fake servers' delays) rather than computing: there
// more at once than the machine has cores finish sooner.
func WaitingTestsInParallel(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", strconv.Itoa(n))
	}
}
