package report

import (
	"cmp"
	"slices"
)

// flameNode is one frame of a flame graph: the sampled events whose stack
// passes through it, by the frame under it.
type flameNode struct {
	Name  string       `json:"name"`
	Count uint64       `json:"count"`
	Kids  []*flameNode `json:"children,omitempty"`
	index map[string]int
}

func newFlame(name string) *flameNode { return &flameNode{Name: name} }

// add counts one folded stack: root first, the thread's name, the
// [off-cpu] or [woken by WAKER] marker, then the frames outward in.
func (n *flameNode) add(frames []string, count uint64) {
	n.Count += count
	cur := n
	for _, f := range frames {
		if cur.index == nil {
			cur.index = map[string]int{}
		}
		i, ok := cur.index[f]
		if !ok {
			i = len(cur.Kids)
			cur.index[f] = i
			cur.Kids = append(cur.Kids, &flameNode{Name: f})
		}
		cur = cur.Kids[i]
		cur.Count += count
	}
}

// Flame bounds: a frame narrower than this share of the whole is left
// out (a browser draws nothing narrower than a pixel at 1280 wide), and
// so is a frame deeper than flameDepth; flameNodes caps the total, so an
// hour of stacks draws as fast as a second's.
const (
	flameMinShare = 0.002
	flameDepth    = 48
	flameNodes    = 1500
)

// pruned is a copy of n with the narrow, deep and excess frames left out,
// the widest first at each level.
func (n *flameNode) pruned() *flameNode {
	if n.Count == 0 {
		return nil
	}
	min := uint64(float64(n.Count) * flameMinShare)
	budget := flameNodes
	var walk func(src *flameNode, depth int) *flameNode
	walk = func(src *flameNode, depth int) *flameNode {
		out := &flameNode{Name: src.Name, Count: src.Count}
		budget--
		if depth >= flameDepth {
			return out
		}
		kids := slices.Clone(src.Kids)
		sortBy(kids, func(a, b **flameNode) int {
			return cmp.Or(cmp.Compare((*b).Count, (*a).Count), cmp.Compare((*a).Name, (*b).Name))
		})
		for _, k := range kids {
			if k.Count < max(min, 1) || budget <= 0 {
				break
			}
			out.Kids = append(out.Kids, walk(k, depth+1))
		}
		return out
	}
	return walk(n, 0)
}
