package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Pool spreads independent calls over several servers of the same kind
// (e.g. several Ollama hosts listed in OLLAMA_HOST, comma-separated). Each
// call goes to the reachable host with the fewest calls in flight (ties in
// turn). A host that cannot be reached is skipped for a cool-down (2 s,
// doubling to 1 min while it stays down) and tried again afterwards, so it
// rejoins once it recovers; the call that found it down is retried on the
// next host. A host without the asked-for model is skipped for that model.
// Other errors are returned as they are: a call is never sent twice once a
// server has accepted it.
type Pool struct {
	hosts []*poolHost
	now   func() time.Time

	mu   sync.Mutex
	turn int
}

var _ Backend = (*Pool)(nil)

const (
	poolMinCooldown = 2 * time.Second
	poolMaxCooldown = time.Minute
	poolMissingTTL  = time.Minute
)

type poolHost struct {
	b Backend

	// guarded by Pool.mu
	inFlight  int
	fails     int
	downUntil time.Time
	lastErr   error
	missing   map[string]time.Time // model -> when it was found missing
	served    int
}

// HostStatus is one host of a Pool, for `doctor` and tests.
type HostStatus struct {
	Host      string
	Up        bool // not in a cool-down
	DownUntil time.Time
	LastError error
	Served    int // calls it answered
}

// NewPool returns a Pool over backends (at least one).
func NewPool(backends ...Backend) (*Pool, error) {
	if len(backends) == 0 {
		return nil, errors.New("llm: a pool needs at least one backend")
	}
	p := &Pool{now: time.Now}
	for _, b := range backends {
		p.hosts = append(p.hosts, &poolHost{b: b, missing: map[string]time.Time{}})
	}
	return p, nil
}

// NewOllamaHosts builds the backend for an OLLAMA_HOST-style value that may
// list several addresses separated by commas: one address gives an
// *Ollama, several a *Pool of them.
func NewOllamaHosts(hosts string, opt OllamaOptions) (Backend, error) {
	var list []string
	for _, h := range strings.Split(hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			list = append(list, h)
		}
	}
	if len(list) <= 1 {
		return NewOllama(strings.Join(list, ""), opt)
	}
	var bs []Backend
	seen := map[string]bool{}
	for _, h := range list {
		o, err := NewOllama(h, opt)
		if err != nil {
			return nil, err
		}
		if seen[o.Host()] {
			continue
		}
		seen[o.Host()] = true
		bs = append(bs, o)
	}
	if len(bs) == 1 {
		return bs[0], nil
	}
	return NewPool(bs...)
}

// Name is the first backend's name ("ollama").
func (p *Pool) Name() string { return p.hosts[0].b.Name() }

// Host lists the hosts, comma-separated.
func (p *Pool) Host() string {
	hs := make([]string, len(p.hosts))
	for i, h := range p.hosts {
		hs[i] = h.b.Host()
	}
	return strings.Join(hs, ",")
}

// Backends returns the pooled backends, in order.
func (p *Pool) Backends() []Backend {
	bs := make([]Backend, len(p.hosts))
	for i, h := range p.hosts {
		bs[i] = h.b
	}
	return bs
}

// Status reports each host's state.
func (p *Pool) Status() []HostStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	out := make([]HostStatus, len(p.hosts))
	for i, h := range p.hosts {
		out[i] = HostStatus{Host: h.b.Host(), Up: !now.Before(h.downUntil), DownUntil: h.downUntil, LastError: h.lastErr, Served: h.served}
	}
	return out
}

// order returns the hosts to try for model, best first: reachable hosts by
// fewest calls in flight (ties in turn), then hosts in a cool-down (soonest
// back first) as a last resort. Hosts known to lack the model are left out
// unless every host lacks it.
func (p *Pool) order(model string) []*poolHost {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	n := len(p.hosts)
	start := p.turn % n
	p.turn++
	var up, down, lacking []*poolHost
	for i := range n {
		h := p.hosts[(start+i)%n]
		if t, ok := h.missing[model]; ok && model != "" {
			if now.Sub(t) < poolMissingTTL {
				lacking = append(lacking, h)
				continue
			}
			delete(h.missing, model)
		}
		if now.Before(h.downUntil) {
			down = append(down, h)
		} else {
			up = append(up, h)
		}
	}
	// Stable insertion sort by in-flight count keeps the turn order on ties.
	for i := 1; i < len(up); i++ {
		for j := i; j > 0 && up[j].inFlight < up[j-1].inFlight; j-- {
			up[j], up[j-1] = up[j-1], up[j]
		}
	}
	for i := 1; i < len(down); i++ {
		for j := i; j > 0 && down[j].downUntil.Before(down[j-1].downUntil); j-- {
			down[j], down[j-1] = down[j-1], down[j]
		}
	}
	out := append(up, down...)
	if len(out) == 0 {
		out = lacking
	}
	return out
}

func (p *Pool) begin(h *poolHost) {
	p.mu.Lock()
	h.inFlight++
	p.mu.Unlock()
}

// end records the outcome of a call on h.
func (p *Pool) end(h *poolHost, model string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	h.inFlight--
	switch {
	case err == nil:
		h.fails = 0
		h.downUntil = time.Time{}
		h.lastErr = nil
		if model != "" {
			h.served++
		}
	case IsUnreachable(err):
		h.fails++
		cd := poolMinCooldown << min(h.fails-1, 10)
		h.downUntil = p.now().Add(min(cd, poolMaxCooldown))
		h.lastErr = err
	case IsModelMissing(err) && model != "":
		h.missing[model] = p.now()
		h.fails = 0
		h.downUntil = time.Time{}
	default:
		// The host answered: it is up, whatever the call's fate.
		h.fails = 0
		h.downUntil = time.Time{}
	}
}

// do runs call on the best host, moving on to the next one while hosts are
// unreachable or lack the model.
func (p *Pool) do(ctx context.Context, model string, call func(Backend) error) error {
	var unreach []error
	var missing error
	for _, h := range p.order(model) {
		if err := ctx.Err(); err != nil {
			return err
		}
		p.begin(h)
		err := call(h.b)
		p.end(h, model, err)
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return err
		case IsUnreachable(err) && !isAuth(err):
			unreach = append(unreach, err)
		case IsModelMissing(err):
			missing = err
		default:
			return err
		}
	}
	if missing != nil {
		return missing
	}
	if len(unreach) == 1 {
		return unreach[0]
	}
	return &UnreachableError{Host: p.Host(), Err: fmt.Errorf("none of the %d hosts answered: %w", len(p.hosts), errors.Join(unreach...))}
}

func isAuth(err error) bool {
	var a *AuthError
	return errors.As(err, &a)
}

// Chat runs the call on one host. See Backend.
func (p *Pool) Chat(ctx context.Context, req ChatRequest, onDelta func(Delta)) (ChatResponse, error) {
	var resp ChatResponse
	err := p.do(ctx, req.Model, func(b Backend) error {
		var err error
		resp, err = b.Chat(ctx, req, onDelta)
		return err
	})
	return resp, err
}

// Embed runs the call on one host. See Backend.
func (p *Pool) Embed(ctx context.Context, model string, inputs []string) ([][]float32, Usage, error) {
	var vecs [][]float32
	var u Usage
	err := p.do(ctx, model, func(b Backend) error {
		var err error
		vecs, u, err = b.Embed(ctx, model, inputs)
		return err
	})
	return vecs, u, err
}

// Show asks the hosts in turn until one has the model. See Backend.
func (p *Pool) Show(ctx context.Context, model string) (ModelInfo, error) {
	var mi ModelInfo
	err := p.do(ctx, model, func(b Backend) error {
		var err error
		mi, err = b.Show(ctx, model)
		return err
	})
	return mi, err
}

// Ping succeeds when at least one host answers; it pings them all, so
// their states are fresh.
func (p *Pool) Ping(ctx context.Context) error {
	errs := make([]error, len(p.hosts))
	var wg sync.WaitGroup
	for i, h := range p.hosts {
		wg.Go(func() {
			p.begin(h)
			errs[i] = h.b.Ping(ctx)
			p.end(h, "", errs[i])
		})
	}
	wg.Wait()
	var bad []error
	for _, err := range errs {
		if err == nil {
			return nil
		}
		bad = append(bad, err)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	return &UnreachableError{Host: p.Host(), Err: fmt.Errorf("none of the %d hosts answered: %w", len(p.hosts), errors.Join(bad...))}
}
