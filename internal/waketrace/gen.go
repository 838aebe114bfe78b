package waketrace

// The compiled object and its Go bindings are committed, so a build needs no
// clang; `make generate` rebuilds them and CI checks they are up to date.
// The object keeps its BTF, which the loader needs, but not the relocations
// of that BTF, which only a linker reads.
//go:generate go tool bpf2go -cc clang -strip llvm-strip -target bpfel -type pair_key -type pair -type cpu_stats waketrace bpf/waketrace.bpf.c -- -I../bpfutil/include -I./bpf -Wall -Werror
//go:generate llvm-objcopy --remove-section=.rel.BTF --remove-section=.rel.BTF.ext waketrace_bpfel.o
//go:generate go run ../bpfutil/squash waketrace_bpfel.o
