// Command fakeserve starts the test fakes — an Ollama-protocol server driven
// by the scripted research model, and arXiv/OpenAlex servers replaying real
// recorded responses — and prints the environment that points researchtui
// at them. It is for trying the program by hand without Ollama or network:
//
//	eval "$(go run ./tools/fakeserve -delay 20ms &)"   # or copy the exports
//	researchtui run "how is software testing studied?"
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/researchtui/researchtui/llm/ollamafake"
	"github.com/researchtui/researchtui/pipeline/pipelinetest"
	"github.com/researchtui/researchtui/search/sourcefake"
)

func main() {
	delay := flag.Duration("delay", 15*time.Millisecond, "simulated generation time per streamed token")
	rounds := flag.Int("revision-rounds", 1, "review rounds that ask for revisions before approving")
	fresh := flag.Bool("fresh", false, "start with no models installed (they can be pulled), like a new Ollama")
	flag.Parse()
	script := &pipelinetest.Script{RevisionRounds: *rounds}
	opt := ollamafake.Options{Responder: script.Responder(), TokenDelay: *delay}
	if *fresh {
		opt.Models, opt.Pullable = map[string]ollamafake.Model{}, ollamafake.DefaultModels()
	}
	oll := ollamafake.New(opt)
	defer oll.Close()
	src := sourcefake.New()
	defer src.Close()
	fmt.Printf("export OLLAMA_HOST=%s\n", oll.URL)
	fmt.Printf("export RESEARCHTUI_ARXIV_URL=%s\n", src.ArxivURL())
	fmt.Printf("export RESEARCHTUI_OPENALEX_URL=%s\n", src.OpenAlexURL())
	fmt.Fprintln(os.Stderr, "fakes running; Ctrl-C stops them")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	<-sig
}
