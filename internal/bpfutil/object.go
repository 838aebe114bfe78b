package bpfutil

import (
	"bytes"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/klauspost/compress/zstd"
)

// zstdMagic opens every zstd frame.
var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// maxObject bounds what an embedded object may inflate to: the largest is
// some 40 KB.
const maxObject = 4 << 20

// Spec reads a BPF object embedded in the binary. `make generate` stores
// the objects zstd-compressed (internal/bpfutil/squash), a third of their
// size, since they took some 90 KB of a binary that has a budget; an
// object as the compiler wrote it is read as it is.
func Spec(obj []byte) (*ebpf.CollectionSpec, error) {
	if bytes.HasPrefix(obj, zstdMagic) {
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxObject), zstd.WithDecodeAllCapLimit(true))
		if err != nil {
			return nil, err
		}
		raw, err := d.DecodeAll(obj, make([]byte, 0, 64<<10))
		d.Close()
		if err != nil {
			return nil, fmt.Errorf("inflating the BPF object: %w", err)
		}
		obj = raw
	}
	return ebpf.LoadCollectionSpecFromReader(bytes.NewReader(obj))
}

// Object is one tracer's BPF object as the binary embeds it, and how its
// failures read: every error of its methods wraps Unavailable, the
// tracer's sentinel, and fits on one line.
type Object struct {
	Unavailable error
	Bytes       []byte
	// Kernel is what the programs need of the kernel, said when it
	// refuses them: "BTF tracepoint programs need Linux 5.5 or later".
	Kernel string
	// Host is the host whose BTF and capabilities the programs need, or
	// the host a test pretends to be.
	Host Needs
}

// Wrap is err as this tracer's reason for not running.
func (o *Object) Wrap(err error) error { return fmt.Errorf("%w: %v", o.Unavailable, err) }

// Check reports, without loading anything, why the programs cannot run
// here (Needs.Check).
func (o *Object) Check() error {
	if err := o.Host.Check(); err != nil {
		return o.Wrap(err)
	}
	return nil
}

// Spec is the open prelude every tracer runs before it loads: Check, the
// locked-memory limit lifted (Needs.Prepare), the embedded object read.
// The caller sizes maps and sets variables in what it returns, then Loads.
func (o *Object) Spec() (*ebpf.CollectionSpec, error) {
	if err := o.Host.Prepare(); err != nil {
		return nil, o.Wrap(err)
	}
	spec, err := Spec(o.Bytes)
	if err != nil {
		return nil, o.Wrap(err)
	}
	return spec, nil
}

// Load loads spec's programs and maps into objs, a struct of fields tagged
// `ebpf:"name"`. A refusal says the kernel's release, what the programs
// need and the verifier's first line (its log would fill pages).
func (o *Object) Load(spec *ebpf.CollectionSpec, objs any, opts *ebpf.CollectionOptions) error {
	if err := spec.LoadAndAssign(objs, opts); err != nil {
		return fmt.Errorf("%w: kernel %s cannot load the programs (%s): %s", o.Unavailable, KernelRelease(), o.Kernel, FirstLine(err))
	}
	return nil
}

// Attach attaches a tp_btf program to its tracepoint (AttachRaw says why
// with a raw system call).
func (o *Object) Attach(p *ebpf.Program) (*RawLink, error) {
	l, err := AttachRaw(p)
	if err != nil {
		return nil, fmt.Errorf("%w: kernel %s cannot attach %s: %v", o.Unavailable, KernelRelease(), p, err)
	}
	return l, nil
}

// SetLink attaches p (on) or detaches it, given its link l while
// attached, nil while not; it returns the link as it now is.
func (o *Object) SetLink(l *RawLink, p *ebpf.Program, on bool) (*RawLink, error) {
	switch {
	case on && l == nil:
		return o.Attach(p)
	case !on && l != nil:
		return nil, l.Close()
	}
	return l, nil
}
