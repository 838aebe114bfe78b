package bpfutil

import (
	"errors"
	"testing"
)

func TestFirstLine(t *testing.T) {
	if got := FirstLine(errors.New("load: permission denied\n0: R1=ctx\n1: ...")); got != "load: permission denied" {
		t.Errorf("FirstLine = %q", got)
	}
	if got := FirstLine(errors.New("one line")); got != "one line" {
		t.Errorf("FirstLine = %q", got)
	}
}

func TestComm(t *testing.T) {
	var c [16]int8
	for i, b := range []byte("pp\x1b[2Jx") {
		c[i] = int8(b)
	}
	if got := Comm(&c); got != "pp?[2Jx" {
		t.Errorf("Comm = %q, want the escape replaced", got)
	}
	full := [16]int8{}
	for i := range full {
		full[i] = 'a'
	}
	if got := Comm(&full); len(got) != 16 {
		t.Errorf("Comm of a name with no NUL = %q, want all 16 bytes", got)
	}
}
