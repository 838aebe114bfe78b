package stacks

// The compiled object and its Go bindings are committed, so a build needs no
// clang; `make generate` rebuilds them and CI checks they are up to date.
// The object keeps its BTF, which the loader needs, but not the relocations
// of that BTF, which only a linker reads.
//go:generate go tool bpf2go -cc clang -strip llvm-strip -target bpfel -type block_key -type wake_key -type wake_val -type counters -type target -type go_runtime -type capture stacks bpf/stacks.bpf.c -- -I../bpfutil/include -I./bpf -Wall -Werror
//go:generate llvm-objcopy --remove-section=.rel.BTF --remove-section=.rel.BTF.ext stacks_bpfel.o
//go:generate go run ../bpfutil/squash stacks_bpfel.o
