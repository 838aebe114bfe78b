package waketrace

// The compiled object and its Go bindings are committed, so a build needs no
// clang; `make generate` rebuilds them and CI checks they are up to date.
//go:generate go tool bpf2go -cc clang -strip llvm-strip -target bpfel -type pair_key -type pair -type cpu_stats waketrace bpf/waketrace.bpf.c -- -I./bpf -Wall -Werror
