package taskiter

// The compiled object and its Go bindings are committed, so a build needs no
// clang; `make generate` rebuilds them and CI checks they are up to date.
//go:generate go tool bpf2go -cc clang -strip llvm-strip -target bpfel taskiter bpf/taskiter.bpf.c -- -I./bpf -mcpu=v3 -Wall -Werror
