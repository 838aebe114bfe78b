package pipeline

import (
	"io"
	"testing"

	"github.com/ctxtop/ctxtop/internal/model"
)

// pairs is a raw source over samples in memory: each Read is the next
// interval, as a sampler taking them would give it.
type pairs struct {
	in []model.Sample
	i  int
}

func (p *pairs) Read() (prev, cur *model.Sample, err error) {
	if p.i+1 >= len(p.in) {
		return nil, nil, io.EOF
	}
	p.i++
	return &p.in[p.i-1], &p.in[p.i], nil
}

// steps is the Snapshot of every interval of in, through the pipeline.
func steps(t testing.TB, in []model.Sample, opts model.Options) []model.Snapshot {
	t.Helper()
	it := NewIntervals(&pairs{in: in}, opts, 0)
	var out []model.Snapshot
	for range len(in) - 1 {
		var s model.Snapshot
		if err := it.Next(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}
