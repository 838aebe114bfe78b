package taskiter

// The compiled object and its Go bindings are committed, so a build needs no
// clang; `make generate` rebuilds them and CI checks they are up to date.
// The object keeps its BTF, which the loader needs, but not the relocations
// of that BTF, which only a linker reads: they were a fifth of the object
// the binary embeds.
//go:generate go tool bpf2go -cc clang -strip llvm-strip -target bpfel taskiter bpf/taskiter.bpf.c -- -I../bpfutil/include -I./bpf -mcpu=v3 -Wall -Werror
//go:generate llvm-objcopy --remove-section=.rel.BTF --remove-section=.rel.BTF.ext taskiter_bpfel.o
//go:generate go run ../bpfutil/squash taskiter_bpfel.o
