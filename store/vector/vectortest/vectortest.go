// Package vectortest makes the test data of vector indexes, for the tests
// and benchmarks of store/vector and of the store that keeps its indexes.
//
// Real embeddings are not uniform: texts on one topic crowd together and
// topics differ in size and spread. Clustered mimics that: centres drawn at
// random, cluster sizes skewed, points scattered around their centre with a
// per-cluster spread, so some clusters are tight and hard (many near-ties)
// and others loose. Topics is closer still to text embeddings (a low-rank
// spread per topic). Uniform Gaussian vectors are the other, harder
// extreme: every distance is about the same. Every generator is seeded, so
// a test sees the same vectors at every run.
//
// It also holds the checks both packages' tests make of an index (check.go).
//
// It imports nothing of the project, so that store/vector's own tests can
// use it.
package vectortest

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Dataset is vectors with chunk-like IDs, IDs[i] naming Vecs[i].
type Dataset struct {
	IDs  []string
	Vecs [][]float32
}

// RandVec is a vector of dim standard normal components.
func RandVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// Unit scales v to unit length, in place, and returns it.
func Unit(v []float32) []float32 {
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

// Clustered draws points around a fixed set of centres.
type Clustered struct {
	r       *rand.Rand
	dim     int
	centres [][]float32
	spread  []float64
	weight  []float64 // cumulative
}

// NewClustered returns a generator of dim-dimensional points in clusters.
func NewClustered(seed uint64, dim, clusters int) *Clustered {
	r := rand.New(rand.NewPCG(seed, 99))
	g := &Clustered{r: r, dim: dim, weight: zipf(clusters)}
	for c := 0; c < clusters; c++ {
		g.centres = append(g.centres, Unit(RandVec(r, dim)))
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

// Next draws one unit vector.
func (g *Clustered) Next() []float32 {
	c := pick(g.r, g.weight)
	v := make([]float32, g.dim)
	sd := g.spread[c] / math.Sqrt(float64(g.dim))
	for i := range v {
		v[i] = g.centres[c][i] + float32(g.r.NormFloat64()*sd)
	}
	return Unit(v)
}

// Data draws n vectors with IDs.
func (g *Clustered) Data(n int) Dataset { return makeData(g, n) }

// Queries draws n vectors from the same distribution.
func (g *Clustered) Queries(n int) [][]float32 { return makeQueries(g, n) }

// makeData draws n vectors with chunk-like IDs.
func makeData(g interface{ Next() []float32 }, n int) Dataset {
	d := Dataset{IDs: make([]string, n), Vecs: make([][]float32, n)}
	for i := range d.IDs {
		d.IDs[i] = fmt.Sprintf("src%05d#%06d", i/37, i%37)
		d.Vecs[i] = g.Next()
	}
	return d
}

func makeQueries(g interface{ Next() []float32 }, n int) [][]float32 {
	q := make([][]float32, n)
	for i := range q {
		q[i] = g.Next()
	}
	return q
}

// Gaussian is n uniform random vectors (not normalised) with IDs.
func Gaussian(seed uint64, n, dim int) Dataset {
	r := rand.New(rand.NewPCG(seed, 7))
	d := Dataset{IDs: make([]string, n), Vecs: make([][]float32, n)}
	for i := range d.IDs {
		d.IDs[i] = fmt.Sprintf("g%07d", i)
		d.Vecs[i] = RandVec(r, dim)
	}
	return d
}

// Topics mimics text embeddings more closely than Clustered: texts on a
// topic vary along a few directions of their own (a low-rank subspace, as
// embeddings of real text have an intrinsic dimension of tens, not
// hundreds), plus a little isotropic noise. Topic sizes are Zipf-like.
type Topics struct {
	r      *rand.Rand
	dim    int
	centre [][]float32
	basis  [][][]float32 // per topic: rank directions
	weight []float64
}

const topicRank = 16

// NewTopics returns a generator of dim-dimensional vectors on topics.
func NewTopics(seed uint64, dim, topics int) *Topics {
	r := rand.New(rand.NewPCG(seed, 5))
	g := &Topics{r: r, dim: dim, weight: zipf(topics)}
	for t := 0; t < topics; t++ {
		g.centre = append(g.centre, Unit(RandVec(r, dim)))
		var b [][]float32
		for j := 0; j < topicRank; j++ {
			b = append(b, Unit(RandVec(r, dim)))
		}
		g.basis = append(g.basis, b)
	}
	return g
}

// Next draws one unit vector.
func (g *Topics) Next() []float32 {
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
	return Unit(v)
}

// Data draws n vectors with IDs.
func (g *Topics) Data(n int) Dataset { return makeData(g, n) }

// Queries draws n vectors from the same distribution.
func (g *Topics) Queries(n int) [][]float32 { return makeQueries(g, n) }
