package ui

import "github.com/researchtui/researchtui/pipeline"

// restore puts a resumed run's earlier log on its screen: the stages it
// finished with their times, the sources it found, read and analysed, the
// agents that finished, its warnings; without it a resumed run showed "no
// sources yet" while its review asked about a draft built from them.
// What belonged to the earlier process's ending is not replayed (its last
// event, the review it asked, the text it streamed, agents and stages it
// left unfinished): the resumed run says its own.
func (rs *runView) restore(past []pipeline.Event) {
	for _, ev := range past {
		switch ev.Type {
		case pipeline.RunStarted, pipeline.RunFinished, pipeline.RunFailed, pipeline.RunCancelled, pipeline.RunSuspended,
			pipeline.ReviewRequested, pipeline.ReviewDecided, pipeline.TokenDelta, pipeline.AgentStarted, pipeline.UsageUpdated:
			continue
		}
		rs.apply(ev)
	}
	for _, st := range rs.stages {
		if st.phase == phaseRunning { // the earlier process stopped in it
			st.phase = phasePending
		}
	}
}
