# ctxtop: one static binary. `make run` runs it here, `make test` runs every test.
GO       ?= go
BIN      := bin/ctxtop
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
LDFLAGS  := -s -w -X github.com/ctxtop/ctxtop/internal/cli.version=$(VERSION) -X github.com/ctxtop/ctxtop/internal/cli.commit=$(COMMIT)
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
FUZZTIME ?= 5s

# make install [PREFIX=/usr/local] [DESTDIR=staging]: the binary, its man
# pages and shell completions, generated from the binary just built (the man
# pages by a build-time tool over the same commands, stamped alike).
PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man
SHAREDIR ?= $(PREFIX)/share

.PHONY: build run test bench lint fuzz clean install generate stacks-compare

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/ctxtop

run: build
	./$(BIN)

test: build
	$(GO) vet ./...
	$(GO) test -count=1 -run '^$$' ./... >/dev/null
	# One package at a time: the end-to-end tests run real ping-pongs and
	# compare rates with the kernel's, and a second package's load on the
	# same CPUs would only measure the contention.
	CTXTOP_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -p 1 ./...

# Benchmarks, then the load generator against perf bench sched pipe.
bench: build
	CTXTOP_BIN=$(CURDIR)/$(BIN) $(GO) test -run '^$$' -bench . -benchmem ./...
	@if [ -x scripts/fidelity.sh ]; then scripts/fidelity.sh $(BIN); fi

# The stack tracer's cost beside perf sched record and a bpftrace
# offwaketime-like script, on a pinned ping-pong (root, perf, bpftrace;
# about 5 minutes, so not part of bench).
stacks-compare: build
	scripts/stacks-compare.sh $(BIN)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt: $$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

install: build
	install -d '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(MANDIR)/man1' \
	  '$(DESTDIR)$(SHAREDIR)/bash-completion/completions' \
	  '$(DESTDIR)$(SHAREDIR)/zsh/site-functions' \
	  '$(DESTDIR)$(SHAREDIR)/fish/vendor_completions.d'
	install -m 0755 '$(abspath $(BIN))' '$(DESTDIR)$(BINDIR)/ctxtop'
	CGO_ENABLED=0 $(GO) run -trimpath -ldflags '$(LDFLAGS)' ./internal/cli/genman '$(DESTDIR)$(MANDIR)/man1'
	'$(abspath $(BIN))' completion bash > '$(DESTDIR)$(SHAREDIR)/bash-completion/completions/ctxtop'
	'$(abspath $(BIN))' completion zsh > '$(DESTDIR)$(SHAREDIR)/zsh/site-functions/_ctxtop'
	'$(abspath $(BIN))' completion fish > '$(DESTDIR)$(SHAREDIR)/fish/vendor_completions.d/ctxtop.fish'

# Rebuild the committed BPF objects and their Go bindings (needs clang and
# llvm-strip: apt-get install -y clang llvm libbpf-dev). bpf2go strips DWARF and
# maps the source directory to a relative path, so the same clang gives the
# same bytes on any machine. Every package's go:generate lines run, so a new
# tracer's are picked up without a line here.
generate:
	$(GO) generate ./internal/...

clean:
	rm -rf bin
