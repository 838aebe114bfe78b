package sampler

import (
	"testing"

	"github.com/ctxtop/ctxtop/internal/procfs"
)

// What the tests through the pipeline (package sampler_test) take from
// the sampler's own.
var (
	StartChild = startChild
	Write      = write
)

// QuotaCgroup is a cgroup made for a test (makeQuotaCgroup): its directory,
// its path as the sampler names it, and its cpu.stat.
type QuotaCgroup struct {
	Dir, Path string
	cg        testCgroup
}

func (q QuotaCgroup) Stat(t *testing.T) procfs.CgroupCPUStat { return q.cg.stat(t) }

// MakeQuotaCgroup is makeQuotaCgroup.
func MakeQuotaCgroup(t *testing.T) QuotaCgroup {
	cg := makeQuotaCgroup(t)
	return QuotaCgroup{Dir: cg.dir, Path: cg.path, cg: cg}
}
