# mcpbox build. `make` builds build/mcpbox; `make run` serves; `make test` runs
# every test against an ASan+UBSan build. Sources are found, not listed: a new
# file under src/ is built without touching this file.

CC      ?= cc
# ccache, when installed, for every compiler unless CC / FUZZ_CC are given
CCACHE  := $(shell command -v ccache 2>/dev/null)
ifeq ($(origin CC),default)
CC      := $(if $(CCACHE),ccache cc,cc)
endif
PKGS    := libmicrohttpd jansson sqlite3 libpq libarchive libcrypto libseccomp libcap uuid libpcre2-8 libzip libxml-2.0 libcurl zlib harfbuzz-subset libpng libjpeg expat
CSTD    := -std=gnu17
WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-unused-parameter
PKG_CFLAGS = $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   = $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lpthread -lm

SRCS     := $(filter-out src/srvmain.c src/zygmain.c,$(shell find src -name '*.c' | sort))
LIB_SRCS := $(filter-out src/main.c,$(SRCS))
# Server executables: beside each mcpbox (build/, build/asan/, build/tsan/) one
# mcpbox-GROUP per link group of src/servers/servers.c (the groups are read from
# its MB_SERVER lines), linked from src/srvmain.c, servers.c compiled for that
# group and an archive of every other object, with --as-needed: only the
# objects and libraries the group's servers reach end up in it. Sandboxes run
# their native servers from these (docs/ARCHITECTURE.md, "Server executables").
SRV_GROUPS := $(shell sed -n 's/^ *MB_SERVER.\([a-z0-9_]*\),.*/\1/p' src/servers/servers.c | sort -u)
SRV_LDFLAGS := -Wl,--as-needed
# mcpbox-zygote (src/zygmain.c), the same way: the sandbox layer alone, which
# every sandbox's init and every spawn inside it is a fork of.
SRV_BINS := $(patsubst %,mcpbox-%,$(SRV_GROUPS)) mcpbox-zygote
HDRS     := $(shell find src -name '*.h')
UNIT_SRCS := $(wildcard tests/unit/test_*.c)

REL_DIR  := build/rel
ASAN_DIR := build/asan
REL_CFLAGS  := $(CSTD) $(WARN) -O2 -g -D_FORTIFY_SOURCE=2 -fstack-protector-strong -Isrc
ASAN_CFLAGS := $(CSTD) $(WARN) -O1 -g -fno-omit-frame-pointer -DMB_ASSERTS \
               -fsanitize=address,undefined -fno-sanitize-recover=undefined -Isrc
ASAN_LDFLAGS := -fsanitize=address,undefined
# ThreadSanitizer build: the threaded layers' unit tests and the gateway and
# daemon integration tests run against it in `make test` (tests/run --tsan).
TSAN_DIR := build/tsan
TSAN_CFLAGS := $(CSTD) $(WARN) -O1 -g -fno-omit-frame-pointer -DMB_ASSERTS -fsanitize=thread -Isrc
TSAN_LDFLAGS := -fsanitize=thread
TSAN_OBJS := $(patsubst src/%.c,$(TSAN_DIR)/%.o,$(SRCS))
TSAN_LIB_OBJS := $(patsubst src/%.c,$(TSAN_DIR)/%.o,$(LIB_SRCS))
TSAN_UNITS := test_gateway test_store test_util test_sandbox_lifecycle test_mcp test_metrics test_cluster test_core_workers
TSAN_BINS := $(patsubst %,$(TSAN_DIR)/tests/%,$(TSAN_UNITS))

# libFuzzer targets (fuzz/fuzz_*.c), built with clang into build/fuzz with
# ASan+UBSan: `make fuzz` runs each for FUZZ_SECONDS (fuzz/run), `make
# fuzz-replay` replays the committed corpora once (tests/run does it too).
FUZZ_CC  ?= $(if $(CCACHE),ccache clang,clang)
FUZZ_DIR := build/fuzz
FUZZ_CFLAGS := $(CSTD) $(WARN) -O1 -g -fno-omit-frame-pointer -DMB_ASSERTS \
               -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined -Isrc
FUZZ_LIB_OBJS := $(patsubst src/%.c,$(FUZZ_DIR)/%.o,$(LIB_SRCS))
FUZZ_BINS := $(patsubst fuzz/%.c,$(FUZZ_DIR)/%,$(wildcard fuzz/fuzz_*.c))
FUZZ_SECONDS ?= 600

REL_OBJS  := $(patsubst src/%.c,$(REL_DIR)/%.o,$(SRCS))
ASAN_OBJS := $(patsubst src/%.c,$(ASAN_DIR)/%.o,$(SRCS))
ASAN_LIB_OBJS := $(patsubst src/%.c,$(ASAN_DIR)/%.o,$(LIB_SRCS))
UNIT_BINS := $(patsubst tests/unit/%.c,$(ASAN_DIR)/tests/%,$(UNIT_SRCS))

DATA_DIR ?= ./var
LISTEN   ?= 127.0.0.1:8080

.PHONY: all deps test-deps run test test-pg unit integration bench soak clean asan tsan fuzz fuzz-bins fuzz-replay install uninstall

all: build/mcpbox

deps:
	@scripts/install-deps

test-deps:
	@scripts/install-deps --test

build/mcpbox: $(REL_OBJS) | $(addprefix build/,$(SRV_BINS))
	@echo "  LD      $@"
	@$(CC) -o $@ $(REL_OBJS) $(PKG_LIBS)

# The release zygote and mcpbox-light (Atlas's 8 servers) are static and not
# position-independent: no dynamic loader, no library mappings, and no
# relocations to write at each start (a static-pie rewrites ~20 pages of
# pointers, each a copy-on-write fault), so every sandbox's init, shepherds and
# servers start and fork with much less CPU (page faults are what a start
# costs; docs/PERFORMANCE.md, "Where a server's start goes"). The price: their
# code and data are at fixed addresses (no ASLR of the image; stack, heap and
# mappings stay randomized).
STATIC_LIBS_light  := -ljansson -lsqlite3 -lz -lpcre2-8 -lexpat -lm -lpthread
STATIC_LIBS_zygote := -lseccomp -lcap -lpthread
STATIC_LD := -static -no-pie -Wl,--no-warnings
SRV_LIBS = $(if $(and $(filter build,$1),$(STATIC_LIBS_$2)),$(STATIC_LD) $(STATIC_LIBS_$2),$(PKG_LIBS))

# The server executables of one build ($1: objects dir, $2: binaries dir,
# $3: compile flags, $4: link flags).
define SRV_RULES
.PRECIOUS: $1/groups/servers-%.o $1/groups/srvmain-%.o
$1/libmcpbox.a: $$(patsubst src/%.c,$1/%.o,$$(LIB_SRCS))
	@rm -f $$@
	@ar rcs $$@ $$^
$1/groups/servers-%.o: src/servers/servers.c $$(HDRS)
	@mkdir -p $$(dir $$@)
	@$$(CC) $3 $$(PKG_CFLAGS) -DMB_SERVER_GROUP=$$* -DMB_SERVER_GROUP_$$* -c -o $$@ $$<
$1/groups/srvmain-%.o: src/srvmain.c $$(HDRS)
	@mkdir -p $$(dir $$@)
	@$$(CC) $3 $$(PKG_CFLAGS) -DMB_SERVER_GROUP=$$* -c -o $$@ $$<
$2/mcpbox-%: $1/groups/srvmain-%.o $1/groups/servers-%.o $1/libmcpbox.a
	@echo "  LD      $$@"
	@$$(CC) $4 $$(SRV_LDFLAGS) -o $$@ $$^ $$(call SRV_LIBS,$2,$$*)
$2/mcpbox-zygote: $1/zygmain.o $1/libmcpbox.a
	@echo "  LD      $$@"
	@$$(CC) $4 $$(SRV_LDFLAGS) -Wl,-z,now -o $$@ $$^ $$(call SRV_LIBS,$2,zygote)
endef
$(eval $(call SRV_RULES,$(REL_DIR),build,$(REL_CFLAGS),))
$(eval $(call SRV_RULES,$(ASAN_DIR),$(ASAN_DIR),$(ASAN_CFLAGS),$(ASAN_LDFLAGS)))
$(eval $(call SRV_RULES,$(TSAN_DIR),$(TSAN_DIR),$(TSAN_CFLAGS),$(TSAN_LDFLAGS)))

$(REL_DIR)/%.o: src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(REL_CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

asan: $(ASAN_DIR)/mcpbox

$(ASAN_DIR)/mcpbox: $(ASAN_OBJS) | $(addprefix $(ASAN_DIR)/,$(SRV_BINS))
	@echo "  LD asan $@"
	@$(CC) $(ASAN_LDFLAGS) -o $@ $(ASAN_OBJS) $(PKG_LIBS)

$(ASAN_DIR)/%.o: src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC asan $<"
	@$(CC) $(ASAN_CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(TSAN_DIR)/mcpbox: $(TSAN_OBJS) | $(addprefix $(TSAN_DIR)/,$(SRV_BINS))
	@echo "  LD tsan $@"
	@$(CC) $(TSAN_LDFLAGS) -o $@ $(TSAN_OBJS) $(PKG_LIBS)

$(TSAN_DIR)/%.o: src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC tsan $<"
	@$(CC) $(TSAN_CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(TSAN_DIR)/tests/%: tests/unit/%.c $(TSAN_DIR)/libmcpbox.a $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  TEST    $@"
	@$(CC) $(TSAN_CFLAGS) $(PKG_CFLAGS) -o $@ $< $(TSAN_DIR)/libmcpbox.a $(TSAN_LDFLAGS) $(PKG_LIBS) -lcmocka

tsan: $(TSAN_DIR)/mcpbox $(TSAN_BINS)

$(FUZZ_DIR)/%.o: src/%.c $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC fuzz $<"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(FUZZ_DIR)/libmcpbox.a: $(FUZZ_LIB_OBJS)
	@rm -f $@
	@ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz.h $(FUZZ_DIR)/libmcpbox.a $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  FUZZ    $@"
	@$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer $(PKG_CFLAGS) -o $@ $< $(FUZZ_DIR)/libmcpbox.a $(PKG_LIBS)

fuzz-bins: $(FUZZ_BINS)

fuzz:
	@scripts/install-deps --test
	@$(MAKE) --no-print-directory fuzz-bins
	@fuzz/run --seconds $(FUZZ_SECONDS)

fuzz-replay:
	@scripts/install-deps --test
	@$(MAKE) --no-print-directory fuzz-bins
	@tests/run --fuzz-replay

# Unit tests link the archive of every object but main.o: only the objects a
# test reaches are linked (a few MB, not 24 MB a binary; links 2-3x faster).
$(ASAN_DIR)/tests/%: tests/unit/%.c $(ASAN_DIR)/libmcpbox.a $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  TEST    $@"
	@$(CC) $(ASAN_CFLAGS) $(PKG_CFLAGS) -o $@ $< $(ASAN_DIR)/libmcpbox.a $(ASAN_LDFLAGS) $(PKG_LIBS) -lcmocka

# Dependencies are installed before anything is compiled, so that a parallel
# make never races the installer.
run:
	@scripts/install-deps
	@$(MAKE) --no-print-directory build/mcpbox
	./build/mcpbox serve --listen $(LISTEN) --data-dir $(DATA_DIR) --first-run-key

test:
	@scripts/install-deps --test
	@scripts/install-node-tools
	@$(MAKE) --no-print-directory build/mcpbox $(ASAN_DIR)/mcpbox $(UNIT_BINS) \
	    $(TSAN_DIR)/mcpbox $(TSAN_BINS) $(FUZZ_BINS)
	@tests/run

unit: $(UNIT_BINS)
	@tests/run --unit

integration: build/mcpbox $(ASAN_DIR)/mcpbox
	@tests/run --integration

# bench/run installs what it needs and builds build/mcpbox and the load
# generator itself (bench/loadgen.c, not part of build/mcpbox), then writes
# docs/PERFORMANCE.md; `bench/run --quick` is the short version.
bench:
	@bench/run

build/bench/loadgen: bench/loadgen.c
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(CC) $(CSTD) $(WARN) -O2 -o $@ $< $(shell pkg-config --cflags --libs libcurl)

# P1's client in C (bench/p1_acquire.py): acquire, then every server's
# initialize + tools/list concurrently on keep-alive connections.
build/bench/acquire_probe: bench/acquire_probe.c
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(CC) $(CSTD) $(WARN) -O2 -o $@ $< $(shell pkg-config --cflags --libs jansson)

# What observing one MCP call costs in CPU (bench/p2_observe.py), linked
# against the release objects.
build/bench/observe_cost: bench/observe_cost.c $(filter-out $(REL_DIR)/main.o,$(REL_OBJS)) $(HDRS)
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	@$(CC) $(REL_CFLAGS) $(PKG_CFLAGS) -o $@ $< $(filter-out $(REL_DIR)/main.o,$(REL_OBJS)) $(PKG_LIBS)

soak: build/mcpbox $(ASAN_DIR)/mcpbox
	@tests/run --soak

# The daemon suites marked pg again with the PostgreSQL store (docs/TESTING.md).
test-pg: build/mcpbox $(ASAN_DIR)/mcpbox
	@tests/run --pg

# `make install [PREFIX=/usr/local] [DESTDIR=]`: the binary, the profiles and
# runtime/ (found beside bin/ as share/mcpbox), the man page, docs/CLI.md and
# the systemd unit (dist/), and the server and zygote executables in lib/mcpbox (where the
# daemon looks for them beside bin/). Run scripts/install-deps first for what
# sandboxes run.
PREFIX ?= /usr/local
SHARE  := $(DESTDIR)$(PREFIX)/share
install: build/mcpbox
	install -D -m 0755 build/mcpbox $(DESTDIR)$(PREFIX)/bin/mcpbox
	install -d $(DESTDIR)$(PREFIX)/lib/mcpbox
	install -m 0755 $(addprefix build/,$(SRV_BINS)) $(DESTDIR)$(PREFIX)/lib/mcpbox/
	install -d $(SHARE)/mcpbox/profiles $(SHARE)/mcpbox/runtime
	install -m 0644 profiles/*.json $(SHARE)/mcpbox/profiles/
	cp -RL runtime/. $(SHARE)/mcpbox/runtime/
	install -D -m 0644 dist/mcpbox.1 $(SHARE)/man/man1/mcpbox.1
	install -D -m 0644 docs/CLI.md $(SHARE)/doc/mcpbox/CLI.md
	install -d $(DESTDIR)$(PREFIX)/lib/systemd/system
	sed 's|@BINDIR@|$(PREFIX)/bin|g' dist/mcpbox.service > $(DESTDIR)$(PREFIX)/lib/systemd/system/mcpbox.service

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/mcpbox $(SHARE)/man/man1/mcpbox.1 \
	    $(DESTDIR)$(PREFIX)/lib/systemd/system/mcpbox.service
	rm -rf $(SHARE)/mcpbox $(SHARE)/doc/mcpbox $(DESTDIR)$(PREFIX)/lib/mcpbox

clean:
	rm -rf build
