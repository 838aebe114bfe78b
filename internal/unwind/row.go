package unwind

// x86-64 DWARF register numbers (System V psABI, figure 3.36).
const (
	regRBP = 6
	regRSP = 7
	regRA  = 16 // the return address column, rip
	nRegs  = 17 // rax..r15 and rip; vector registers are parsed and ignored
)

// ruleKind says how a register of the caller (or the CFA) is found.
type ruleKind uint8

const (
	// ruleSame is the zero value: a register no instruction mentions keeps
	// its value across the call, as GCC's unwinder treats it.
	ruleSame      ruleKind = iota
	ruleUndef              // not recoverable; for the RA column, the outermost frame
	ruleOffset             // saved at CFA+off
	ruleValOffset          // is CFA+off
	ruleRegister           // is in register reg
	ruleExpr               // saved at the address the expression computes
	ruleValExpr            // is the value the expression computes
	ruleCFAReg             // CFA only: reg+off
	ruleCFAExpr            // CFA only: the expression's value
)

// rule is one column of a row. An expression is kept as its place in the
// section's bytes (off, n), so a cached row holds no pointer into a file's
// data and the object may be evicted and read again meanwhile.
type rule struct {
	kind ruleKind
	reg  uint8
	n    uint16 // expression length
	off  int64  // the offset, or the expression's start in the section
}

// row is the unwind rule set at one PC: how to find the CFA and the
// caller's registers.
type row struct {
	cfa    rule
	regs   [nRegs]rule
	signal bool // a signal frame (CIE augmentation 'S'): its PC is exact
	debug  bool // the expressions are in .debug_frame, else .eh_frame
}

// DW_CFA_* opcodes.
const (
	cfaNop              = 0x00
	cfaSetLoc           = 0x01
	cfaAdvanceLoc1      = 0x02
	cfaAdvanceLoc2      = 0x03
	cfaAdvanceLoc4      = 0x04
	cfaOffsetExtended   = 0x05
	cfaRestoreExtended  = 0x06
	cfaUndefined        = 0x07
	cfaSameValue        = 0x08
	cfaRegister         = 0x09
	cfaRememberState    = 0x0a
	cfaRestoreState     = 0x0b
	cfaDefCFA           = 0x0c
	cfaDefCFARegister   = 0x0d
	cfaDefCFAOffset     = 0x0e
	cfaDefCFAExpression = 0x0f
	cfaExpression       = 0x10
	cfaOffsetExtendedSF = 0x11
	cfaDefCFASF         = 0x12
	cfaDefCFAOffsetSF   = 0x13
	cfaValOffset        = 0x14
	cfaValOffsetSF      = 0x15
	cfaValExpression    = 0x16
	cfaGNUArgsSize      = 0x2e
	cfaGNUNegOffsetExt  = 0x2f
	cfaAdvanceLoc       = 0x40 // high two bits
	cfaOffset           = 0x80
	cfaRestore          = 0xc0
)

// maxStateStack bounds remember_state nesting (libc's deepest is 2).
const maxStateStack = 16

// computeRow runs the CIE's initial instructions and then the FDE's up to
// pc, and returns the row in effect at pc.
func computeRow(f *fde, s *section, pc uint64) (row, error) {
	var init row
	init.signal, init.debug = f.cie.signal, s.debug
	base := func(b []byte) int { return len(s.data[:cap(s.data)]) - cap(b) }
	ci := program{c: &f.cie, sec: s, base: base(f.cie.initial)}
	if err := ci.run(&init, nil, f.cie.initial, 0, f.start, ^uint64(0)); err != nil {
		return row{}, err
	}
	cur := init
	fi := program{c: &f.cie, sec: s, base: base(f.instructions)}
	if err := fi.run(&cur, &init, f.instructions, f.instrAddr, f.start, pc); err != nil {
		return row{}, err
	}
	if cur.cfa.kind != ruleCFAReg && cur.cfa.kind != ruleCFAExpr {
		return row{}, cfiError("FDE defines no CFA")
	}
	return cur, nil
}

type program struct {
	c    *cie
	sec  *section
	base int // offset in sec.data of the instructions' first byte
}

// run executes instructions from location loc until the location passes
// pc. init is the CIE's row, for DW_CFA_restore (nil while running the
// CIE's own instructions).
func (p *program) run(cur, init *row, ins []byte, insAddr, loc, pc uint64) error {
	r := reader{b: ins, addr: insAddr}
	var stack [maxStateStack]row
	depth := 0
	set := func(reg uint64, ru rule) {
		if reg < nRegs {
			cur.regs[reg] = ru
		}
	}
	expr := func() (int64, uint16, bool) {
		n := r.uleb()
		at := r.off
		if n > 0xffff || r.take(int(n)) == nil && n > 0 {
			return 0, 0, false
		}
		return int64(p.base + at), uint16(n), true
	}
	restore := func(reg uint64) {
		if reg >= nRegs {
			return
		}
		if init != nil {
			cur.regs[reg] = init.regs[reg]
		} else {
			cur.regs[reg] = rule{}
		}
	}
	for r.left() > 0 {
		op := r.u8()
		switch op & 0xc0 {
		case cfaAdvanceLoc:
			loc += uint64(op&0x3f) * p.c.codeAlign
			if loc > pc {
				return nil
			}
			continue
		case cfaOffset:
			set(uint64(op&0x3f), rule{kind: ruleOffset, off: int64(r.uleb()) * p.c.dataAlign})
			continue
		case cfaRestore:
			restore(uint64(op & 0x3f))
			continue
		}
		switch op {
		case cfaNop:
		case cfaSetLoc:
			enc := p.c.fdeEnc
			if p.sec.debug {
				enc = peUdata8
			}
			v, ok := r.ptr(enc, 0)
			if !ok {
				return cfiError("DW_CFA_set_loc")
			}
			loc = v
		case cfaAdvanceLoc1:
			loc += uint64(r.u8()) * p.c.codeAlign
		case cfaAdvanceLoc2:
			loc += uint64(r.u16()) * p.c.codeAlign
		case cfaAdvanceLoc4:
			loc += uint64(r.u32()) * p.c.codeAlign
		case cfaOffsetExtended:
			reg := r.uleb()
			set(reg, rule{kind: ruleOffset, off: int64(r.uleb()) * p.c.dataAlign})
		case cfaOffsetExtendedSF:
			reg := r.uleb()
			set(reg, rule{kind: ruleOffset, off: r.sleb() * p.c.dataAlign})
		case cfaGNUNegOffsetExt:
			reg := r.uleb()
			set(reg, rule{kind: ruleOffset, off: -int64(r.uleb()) * p.c.dataAlign})
		case cfaValOffset:
			reg := r.uleb()
			set(reg, rule{kind: ruleValOffset, off: int64(r.uleb()) * p.c.dataAlign})
		case cfaValOffsetSF:
			reg := r.uleb()
			set(reg, rule{kind: ruleValOffset, off: r.sleb() * p.c.dataAlign})
		case cfaRestoreExtended:
			restore(r.uleb())
		case cfaUndefined:
			set(r.uleb(), rule{kind: ruleUndef})
		case cfaSameValue:
			set(r.uleb(), rule{kind: ruleSame})
		case cfaRegister:
			reg, from := r.uleb(), r.uleb()
			if from >= nRegs {
				set(reg, rule{kind: ruleUndef})
			} else {
				set(reg, rule{kind: ruleRegister, reg: uint8(from)})
			}
		case cfaRememberState:
			if depth == maxStateStack {
				return cfiError("DW_CFA_remember_state nested over")
			}
			stack[depth] = *cur
			depth++
		case cfaRestoreState:
			if depth == 0 {
				return cfiError("DW_CFA_restore_state without remember_state")
			}
			depth--
			// The CFA comes back too, as in libgcc, LLVM's libunwind and
			// delve: the code after a return in mid-function (libc has
			// many) runs with the CFA offset from before the epilogue.
			*cur = stack[depth]
		case cfaDefCFA:
			reg, off := r.uleb(), r.uleb()
			cur.cfa = cfaReg(reg, int64(off))
		case cfaDefCFASF:
			reg, off := r.uleb(), r.sleb()
			cur.cfa = cfaReg(reg, off*p.c.dataAlign)
		case cfaDefCFARegister:
			reg := r.uleb()
			if cur.cfa.kind != ruleCFAReg {
				return cfiError("DW_CFA_def_cfa_register without a register CFA")
			}
			cur.cfa = cfaReg(reg, cur.cfa.off)
		case cfaDefCFAOffset:
			if cur.cfa.kind != ruleCFAReg {
				return cfiError("DW_CFA_def_cfa_offset without a register CFA")
			}
			cur.cfa.off = int64(r.uleb())
		case cfaDefCFAOffsetSF:
			if cur.cfa.kind != ruleCFAReg {
				return cfiError("DW_CFA_def_cfa_offset_sf without a register CFA")
			}
			cur.cfa.off = r.sleb() * p.c.dataAlign
		case cfaDefCFAExpression:
			off, n, ok := expr()
			if !ok {
				return cfiError("DW_CFA_def_cfa_expression")
			}
			cur.cfa = rule{kind: ruleCFAExpr, off: off, n: n}
		case cfaExpression, cfaValExpression:
			reg := r.uleb()
			off, n, ok := expr()
			if !ok {
				return cfiError("DW_CFA_expression")
			}
			k := ruleExpr
			if op == cfaValExpression {
				k = ruleValExpr
			}
			set(reg, rule{kind: k, off: off, n: n})
		case cfaGNUArgsSize:
			r.uleb()
		default:
			return cfiError("unknown CFA instruction")
		}
		if r.bad {
			return cfiError("truncated CFA instruction")
		}
		if loc > pc {
			return nil
		}
	}
	return nil
}

// cfaReg is the rule CFA = reg + off; a register the unwinder does not
// track makes a CFA it cannot compute, which the step reports.
func cfaReg(reg uint64, off int64) rule {
	if reg >= nRegs {
		reg = 0xff
	}
	return rule{kind: ruleCFAReg, reg: uint8(reg), off: off}
}
