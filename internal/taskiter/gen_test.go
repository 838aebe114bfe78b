package taskiter

// The benchmarks' own programs (bpf/bench.bpf.c), in an object only the
// tests embed: the binary carries none of them.
//go:generate go tool bpf2go -cc clang -strip llvm-strip -target bpfel -output-suffix _test bench bpf/bench.bpf.c -- -I../bpfutil/include -I./bpf -mcpu=v3 -Wall -Werror
