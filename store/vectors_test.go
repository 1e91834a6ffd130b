package store

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Test data. Real embeddings are not uniform: texts on one topic crowd
// together and topics differ in size and spread. clustered mimics that:
// centres drawn at random, cluster sizes skewed, points scattered around
// their centre with a per-cluster spread, so some clusters are tight and
// hard (many near-ties) and others loose. Uniform Gaussian vectors are the
// other, harder extreme: every distance is about the same.

type dataset struct {
	ids  []string
	vecs [][]float32
}

func unit(v []float32) []float32 {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// clusteredGen draws points around a fixed set of centres.
type clusteredGen struct {
	r       *rand.Rand
	dim     int
	centres [][]float32
	spread  []float64
	weight  []float64 // cumulative
}

func newClustered(seed uint64, dim, clusters int) *clusteredGen {
	r := rand.New(rand.NewPCG(seed, 99))
	g := &clusteredGen{r: r, dim: dim, weight: zipf(clusters)}
	for c := 0; c < clusters; c++ {
		g.centres = append(g.centres, unit(randVec(r, dim)))
		g.spread = append(g.spread, 0.5+r.Float64()) // noise norm relative to the centre
	}
	return g
}

// zipf is the cumulative distribution of n groups sized 1, 1/2, 1/3, ...
func zipf(n int) []float64 {
	w := make([]float64, n)
	total := 0.0
	for i := range w {
		total += 1 / float64(i+1)
		w[i] = total
	}
	for i := range w {
		w[i] /= total
	}
	return w
}

// pick draws a group from cumulative weights.
func pick(r *rand.Rand, cum []float64) int {
	u := r.Float64()
	c := 0
	for c < len(cum)-1 && cum[c] < u {
		c++
	}
	return c
}

func (g *clusteredGen) next() []float32 {
	c := pick(g.r, g.weight)
	v := make([]float32, g.dim)
	sd := g.spread[c] / math.Sqrt(float64(g.dim))
	for i := range v {
		v[i] = g.centres[c][i] + float32(g.r.NormFloat64()*sd)
	}
	return unit(v)
}

func (g *clusteredGen) data(n int) dataset        { return makeData(g, n) }
func (g *clusteredGen) queries(n int) [][]float32 { return makeQueries(g, n) }

// makeData draws n vectors with chunk-like IDs.
func makeData(g interface{ next() []float32 }, n int) dataset {
	d := dataset{ids: make([]string, n), vecs: make([][]float32, n)}
	for i := range d.ids {
		d.ids[i] = fmt.Sprintf("src%05d#%06d", i/37, i%37)
		d.vecs[i] = g.next()
	}
	return d
}

func makeQueries(g interface{ next() []float32 }, n int) [][]float32 {
	q := make([][]float32, n)
	for i := range q {
		q[i] = g.next()
	}
	return q
}

func gaussianData(seed uint64, n, dim int) dataset {
	r := rand.New(rand.NewPCG(seed, 7))
	d := dataset{ids: make([]string, n), vecs: make([][]float32, n)}
	for i := range d.ids {
		d.ids[i] = fmt.Sprintf("g%07d", i)
		d.vecs[i] = randVec(r, dim)
	}
	return d
}

func fill(tb testing.TB, ix VectorIndex, d dataset) {
	tb.Helper()
	for i := range d.ids {
		if err := ix.Add(d.ids[i], d.vecs[i]); err != nil {
			tb.Fatal(err)
		}
	}
}

// recall is the share of the exact top-k that ix also returns.
func recall(tb testing.TB, ix, exact VectorIndex, qs [][]float32, k int) float64 {
	tb.Helper()
	found, total := 0, 0
	for _, q := range qs {
		want, err := exact.Search(q, k)
		if err != nil {
			tb.Fatal(err)
		}
		got, err := ix.Search(q, k)
		if err != nil {
			tb.Fatal(err)
		}
		in := map[string]bool{}
		for _, h := range got {
			in[h.ID] = true
		}
		for _, h := range want {
			if in[h.ID] {
				found++
			}
		}
		total += len(want)
	}
	return float64(found) / float64(total)
}

// topicGen mimics text embeddings more closely than clusteredGen: texts on
// a topic vary along a few directions of their own (a low-rank subspace, as
// embeddings of real text have an intrinsic dimension of tens, not
// hundreds), plus a little isotropic noise. Topic sizes are Zipf-like.
type topicGen struct {
	r      *rand.Rand
	dim    int
	centre [][]float32
	basis  [][][]float32 // per topic: rank directions
	weight []float64
}

const topicRank = 16

func newTopics(seed uint64, dim, topics int) *topicGen {
	r := rand.New(rand.NewPCG(seed, 5))
	g := &topicGen{r: r, dim: dim, weight: zipf(topics)}
	for t := 0; t < topics; t++ {
		g.centre = append(g.centre, unit(randVec(r, dim)))
		var b [][]float32
		for j := 0; j < topicRank; j++ {
			b = append(b, unit(randVec(r, dim)))
		}
		g.basis = append(g.basis, b)
	}
	return g
}

func (g *topicGen) next() []float32 {
	t := pick(g.r, g.weight)
	v := make([]float32, g.dim)
	copy(v, g.centre[t])
	for _, b := range g.basis[t] {
		z := float32(g.r.NormFloat64() * 0.8 / math.Sqrt(topicRank))
		for i := range v {
			v[i] += z * b[i]
		}
	}
	sd := 0.25 / math.Sqrt(float64(g.dim))
	for i := range v {
		v[i] += float32(g.r.NormFloat64() * sd)
	}
	return unit(v)
}

func (g *topicGen) data(n int) dataset        { return makeData(g, n) }
func (g *topicGen) queries(n int) [][]float32 { return makeQueries(g, n) }
