package unwind

import "errors"

// errExpr is an expression that cannot be evaluated here: an unknown or
// unsupported operation, a stack underflow, a register not known.
var errExpr = errors.New("DWARF expression not evaluated")

// maxExprSteps bounds an expression's run: DW_OP_bra and DW_OP_skip can
// loop. Real CFI expressions (PLT stubs, signal frames) take under 20.
const maxExprSteps = 1000

// evalExpr runs a DWARF expression of CFI (DWARF 5, 2.5), with initial
// pushed on the stack first when push is set (DW_CFA_expression pushes
// the CFA). Memory is read from the copy of the stack only.
func evalExpr(code []byte, regs *regState, mem *memory, initial uint64, push bool) (uint64, error) {
	var st [64]uint64
	n := 0
	if push {
		st[0], n = initial, 1
	}
	r := reader{b: code}
	pop := func() (uint64, bool) {
		if n == 0 {
			return 0, false
		}
		n--
		return st[n], true
	}
	for steps := 0; r.left() > 0; steps++ {
		if steps == maxExprSteps || n >= len(st)-1 {
			return 0, errExpr
		}
		op := r.u8()
		switch {
		case op >= 0x30 && op <= 0x4f: // DW_OP_lit0..31
			st[n] = uint64(op - 0x30)
			n++
			continue
		case op >= 0x70 && op <= 0x8f: // DW_OP_breg0..31
			v, ok := regs.get(uint64(op - 0x70))
			if !ok {
				return 0, errExpr
			}
			st[n] = v + uint64(r.sleb())
			n++
			continue
		}
		switch op {
		case 0x03: // addr
			st[n] = r.u64()
			n++
		case 0x06: // deref
			a, ok := pop()
			if !ok {
				return 0, errExpr
			}
			v, err := mem.read(a)
			if err != nil {
				return 0, err
			}
			st[n] = v
			n++
		case 0x08: // const1u
			st[n] = uint64(r.u8())
			n++
		case 0x09: // const1s
			st[n] = uint64(int64(int8(r.u8())))
			n++
		case 0x0a:
			st[n] = uint64(r.u16())
			n++
		case 0x0b:
			st[n] = uint64(int64(int16(r.u16())))
			n++
		case 0x0c:
			st[n] = uint64(r.u32())
			n++
		case 0x0d:
			st[n] = uint64(int64(int32(r.u32())))
			n++
		case 0x0e, 0x0f:
			st[n] = r.u64()
			n++
		case 0x10: // constu
			st[n] = r.uleb()
			n++
		case 0x11: // consts
			st[n] = uint64(r.sleb())
			n++
		case 0x12: // dup
			if n == 0 {
				return 0, errExpr
			}
			st[n] = st[n-1]
			n++
		case 0x13: // drop
			if _, ok := pop(); !ok {
				return 0, errExpr
			}
		case 0x14: // over
			if n < 2 {
				return 0, errExpr
			}
			st[n] = st[n-2]
			n++
		case 0x15: // pick
			i := int(r.u8())
			if i >= n {
				return 0, errExpr
			}
			st[n] = st[n-1-i]
			n++
		case 0x16: // swap
			if n < 2 {
				return 0, errExpr
			}
			st[n-1], st[n-2] = st[n-2], st[n-1]
		case 0x17: // rot
			if n < 3 {
				return 0, errExpr
			}
			st[n-1], st[n-2], st[n-3] = st[n-2], st[n-3], st[n-1]
		case 0x19, 0x1f, 0x20: // abs, neg, not
			if n == 0 {
				return 0, errExpr
			}
			v := int64(st[n-1])
			switch op {
			case 0x19:
				if v < 0 {
					v = -v
				}
			case 0x1f:
				v = -v
			case 0x20:
				v = ^v
			}
			st[n-1] = uint64(v)
		case 0x23: // plus_uconst
			if n == 0 {
				return 0, errExpr
			}
			st[n-1] += r.uleb()
		case 0x1a, 0x1b, 0x1c, 0x1d, 0x1e, 0x21, 0x22, 0x24, 0x25, 0x26, 0x27,
			0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e:
			b, ok1 := pop()
			a, ok2 := pop()
			if !ok1 || !ok2 {
				return 0, errExpr
			}
			v, ok := binop(op, a, b)
			if !ok {
				return 0, errExpr
			}
			st[n] = v
			n++
		case 0x28: // bra
			off := int16(r.u16())
			c, ok := pop()
			if !ok {
				return 0, errExpr
			}
			if c != 0 && !r.jump(int(off)) {
				return 0, errExpr
			}
		case 0x2f: // skip
			if !r.jump(int(int16(r.u16()))) {
				return 0, errExpr
			}
		case 0x92: // bregx
			v, ok := regs.get(r.uleb())
			if !ok {
				return 0, errExpr
			}
			st[n] = v + uint64(r.sleb())
			n++
		case 0x96: // nop
		default:
			return 0, errExpr
		}
		if r.bad {
			return 0, errExpr
		}
	}
	if n == 0 {
		return 0, errExpr
	}
	return st[n-1], nil
}

func (r *reader) jump(off int) bool {
	to := r.off + off
	if r.bad || to < 0 || to > len(r.b) {
		return false
	}
	r.off = to
	return true
}

func binop(op byte, a, b uint64) (uint64, bool) {
	bool64 := func(c bool) uint64 {
		if c {
			return 1
		}
		return 0
	}
	switch op {
	case 0x1a:
		return a & b, true
	case 0x1b: // div, signed
		if b == 0 || (int64(a) == -1<<63 && int64(b) == -1) {
			return 0, false
		}
		return uint64(int64(a) / int64(b)), true
	case 0x1c:
		return a - b, true
	case 0x1d:
		if b == 0 {
			return 0, false
		}
		return a % b, true
	case 0x1e:
		return a * b, true
	case 0x21:
		return a | b, true
	case 0x22:
		return a + b, true
	case 0x24:
		if b >= 64 {
			return 0, true
		}
		return a << b, true
	case 0x25:
		if b >= 64 {
			return 0, true
		}
		return a >> b, true
	case 0x26:
		return uint64(int64(a) >> min(b, 63)), true
	case 0x27:
		return a ^ b, true
	case 0x29:
		return bool64(a == b), true
	case 0x2a:
		return bool64(int64(a) >= int64(b)), true
	case 0x2b:
		return bool64(int64(a) > int64(b)), true
	case 0x2c:
		return bool64(int64(a) <= int64(b)), true
	case 0x2d:
		return bool64(int64(a) < int64(b)), true
	case 0x2e:
		return bool64(a != b), true
	}
	return 0, false
}
