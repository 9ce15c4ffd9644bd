# checkmate: `make deps`, `make` (all), `make test`, `make demo`, `make bench`,
# `make install`, `make uninstall`, `make fuzz`, `make torch2`,
# `make test-long`, `make clean`.
# Quiet build lines unless V=1; -Werror when CI=true.

PKGS     = libglpk-dev coinor-libcbc-dev coinor-libclp-dev libjansson-dev pkg-config \
           gnuplot-nox python3-torch python3-torchvision man-db zsh \
           python3-pip python3-setuptools python3-venv g++
# What `make fuzz` needs besides: Debian's clang 14 and its libFuzzer runtime.
FUZZ_PKGS = clang-14 libclang-rt-14-dev
FUZZ_CC  ?= clang-14
FUZZ_TIME ?= 180
BUILD   ?= build
CC      ?= cc
WARN     = -Wall -Wextra -Wpedantic -Wstrict-prototypes -Wmissing-prototypes \
           -Wshadow -Wwrite-strings -Wvla -Wformat=2
OPT      = -O2
CPPFLAGS = -D_POSIX_C_SOURCE=200809L
CFLAGS   = -std=c11 $(OPT) -g $(WARN) -MMD -MP $(SAN_FLAGS) $(EXTRA_CFLAGS) \
           $(shell pkg-config --cflags jansson cbc 2>/dev/null)
LDLIBS   = $(shell pkg-config --libs jansson cbc 2>/dev/null) -lglpk -lm
ifeq ($(CI),true)
CFLAGS  += -Werror
endif
ifeq ($(SAN),1)
SAN_FLAGS = -fsanitize=address,undefined -fno-omit-frame-pointer \
            -fno-sanitize-recover=undefined
OPT       = -O1
endif
LDFLAGS += $(SAN_FLAGS)

ifeq ($(V),1)
Q =
else
Q = @
endif

LIB_SRC  = $(wildcard common/*.c graph/*.c plan/*.c baselines/*.c solvers/*.c \
           solvers/search/*.c solvers/milp/*.c solvers/milp/backend/*.c) \
           $(filter-out cli/main.c,$(wildcard cli/*.c))
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/%.o)
TEST_SRC = $(wildcard tests/t_*.c)
TESTS    = $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)
# The fuzz targets: libFuzzer binaries in the clang build (make fuzz), and
# the same targets with fuzz/replay.c for the test suite.
FUZZ_NAMES = $(patsubst fuzz/%.c,%,$(wildcard fuzz/fuzz_*.c))
FUZZERS  = $(FUZZ_NAMES:%=$(BUILD)/fuzzers/%)
REPLAYS  = $(FUZZ_NAMES:%=$(BUILD)/replay/%)
BIN      = $(BUILD)/checkmate
MAN      = $(BUILD)/checkmate.1

# make install PREFIX=~/.local (DESTDIR for staging): the binary, its
# manual page, its bash and zsh completions, and the Python package
# checkmate_torch for Debian's python3 (PYSITE, share/pysite.py) with its
# command checkmate-torch.
PREFIX  ?= /usr/local
# A shell that left the ~ of PREFIX=~/.local alone (zsh does) gets it here.
override PREFIX := $(patsubst ~/%,$(HOME)/%,$(patsubst ~,$(HOME),$(PREFIX)))
BINDIR   = $(DESTDIR)$(PREFIX)/bin
MAN1DIR  = $(DESTDIR)$(PREFIX)/share/man/man1
BASHDIR  = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHDIR   = $(DESTDIR)$(PREFIX)/share/zsh/site-functions
PYTHON   = /usr/bin/python3
PYSITE   = $(shell $(PYTHON) share/pysite.py "$(PREFIX)")
PYPKG    = $(DESTDIR)$(PYSITE)/checkmate_torch

.PHONY: all deps fuzz-deps test tests check deps-check demo bench fuzz fuzzers clean install uninstall \
        torch2 torch-newest test-long
.PHONY: fuzz-torch
.SECONDARY:
all: $(BIN) checkmate $(MAN)

# The binary at the top, for the README's examples.
checkmate: $(BIN)
	$(Q)cp $(BIN) $@.tmp && mv -f $@.tmp $@

$(BIN): $(BUILD)/cli/main.o $(BUILD)/libcheckmate.a
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The manual page, made from the binary's own --help texts.
$(MAN): $(BIN) share/man.sh cli/cli.h
	@echo "  MAN     $@"
	$(Q)share/man.sh $(BIN) cli/cli.h >$@.tmp && mv -f $@.tmp $@

# checkmate-torch finds the package whether or not PYSITE is on the path.
install: $(BIN) $(MAN)
	install -d "$(BINDIR)" "$(MAN1DIR)" "$(BASHDIR)" "$(ZSHDIR)" "$(PYPKG)/examples"
	install -m 755 $(BIN) "$(BINDIR)/checkmate"
	install -m 644 $(MAN) "$(MAN1DIR)/checkmate.1"
	install -m 644 share/checkmate.bash "$(BASHDIR)/checkmate"
	install -m 644 share/_checkmate "$(ZSHDIR)/_checkmate"
	install -m 644 checkmate_torch/*.py "$(PYPKG)"
	install -m 644 checkmate_torch/examples/*.py "$(PYPKG)/examples"
	printf '#!%s\nimport sys\nsys.path.insert(0, "%s")\nfrom checkmate_torch.__main__ import main\nsys.exit(main())\n' \
	  "$(PYTHON)" "$(PYSITE)" >"$(BINDIR)/checkmate-torch"
	chmod 755 "$(BINDIR)/checkmate-torch"

uninstall:
	rm -f "$(BINDIR)/checkmate" "$(MAN1DIR)/checkmate.1" "$(BASHDIR)/checkmate" \
	      "$(ZSHDIR)/_checkmate" "$(BINDIR)/checkmate-torch"
	rm -rf "$(PYPKG)"

$(BUILD)/libcheckmate.a: $(LIB_OBJ)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@echo "  CC      $@"
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/%: $(BUILD)/tests/%.o $(BUILD)/libcheckmate.a
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

tests: $(BIN) $(TESTS) $(REPLAYS)

$(BUILD)/replay/%: $(BUILD)/fuzz/%.o $(BUILD)/fuzz/common.o $(BUILD)/fuzz/replay.o \
		   $(BUILD)/libcheckmate.a
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(BUILD)/fuzzers/%: $(BUILD)/fuzz/%.o $(BUILD)/fuzz/common.o $(BUILD)/libcheckmate.a
	@mkdir -p $(dir $@)
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

fuzzers: $(FUZZERS)

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(BUILD)/libcheckmate.a
	@echo "  LD      $@"
	$(Q)$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Installs the Debian packages that are missing (apt-get update first, once).
deps fuzz-deps:
	@missing=""; for p in $(if $(filter fuzz-deps,$@),$(FUZZ_PKGS),$(PKGS)); do \
	  dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi; \
	  $$sudo apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq $$missing \
	    >/dev/null || exit 1; \
	fi

# Every test, then the whole suite again under ASan and UBSan.
test: deps
	$(Q)$(MAKE) --no-print-directory tests
	$(Q)$(MAKE) --no-print-directory BUILD=build/san SAN=1 tests
	$(Q)tests/run.sh build build/san

# Runs the suite of one build (BUILD=...), without the sanitizer pass.
check: tests
	$(Q)tests/run.sh $(BUILD)

# The shape of the code: no circle of modules (by #include or by symbol),
# no folder over 35% of the lines, no function over 80 lines
# (docs/architecture.md, Rules of the layout). Also part of `make test`.
deps-check: $(BUILD)/libcheckmate.a
	$(Q)tests/structure.sh $(BUILD)

# Builds the fuzz targets with clang, libFuzzer, ASan and UBSan, and runs
# each for FUZZ_TIME seconds from fuzz/corpus (docs/fuzzing.md); then the
# PyTorch fuzzer.
fuzz: fuzz-deps
	$(Q)$(MAKE) --no-print-directory BUILD=build/libfuzzer CC=$(FUZZ_CC) SAN=1 \
	  EXTRA_CFLAGS=-fsanitize=fuzzer-no-link fuzzers
	$(Q)fuzz/run.sh build/libfuzzer $(FUZZ_TIME)
	$(Q)$(MAKE) --no-print-directory fuzz-torch

# The PyTorch fuzzer (tests/torch/fuzz_run.py, docs/fuzzing.md): FUZZ_SEEDS
# under Debian's python3 and, where `make torch2` made it, torch 2.13,
# FUZZ_JOBS seeds at a time; a record per seed in
# build/fuzz-torch-<torch version>.json. Fails when a seed trained wrong or
# crashed, under either torch.
FUZZ_SEEDS ?= 0:5000
FUZZ_JOBS  ?= 2
fuzz-torch: $(BIN)
	$(Q)st=0; for py in $(PYTHON) $(TORCH2_VENV)/bin/python; do \
	  v=$$($$py -c 'import torch; print(torch.__version__)' 2>/dev/null) || continue; \
	  $$py tests/torch/fuzz_run.py --seeds $(FUZZ_SEEDS) --jobs $(FUZZ_JOBS) --features \
	    --json build/fuzz-torch-$$v.json $(BIN) || st=1; \
	done; exit $$st

demo: deps
	$(Q)$(MAKE) --no-print-directory all
	./checkmate info linear:8
	./checkmate solve linear:8 --budget 60% --plan-format text --plan -

# Timings for docs/benchmarks.md; bench/ilp.sh, bench/lp.sh and bench/reductions take
# tens of minutes and are run by hand (docs/benchmarks.md says how).
bench: deps
	$(Q)$(MAKE) --no-print-directory all $(BUILD)/bench/reductions $(BUILD)/bench/lp
	$(Q)bench/run.sh

# The second torch line the tests run checkmate_torch under when it is there
# (tests/run.sh): torch 2.13, the CPU wheel, in a venv of the PATH's python3
# that does not see Debian's torch 1.13, with Hugging Face transformers for
# tests/torch/t_hf.py (models nobody here wrote). Pinned: an unpinned torch
# is a several-GB CUDA build. torch and transformers are installed once;
# checkmate_torch (with the binary built in, setup.py) again each time, for
# build/venv-torch2/bin's checkmate-torch and checkmate (the tests import
# the checkout's package).
TORCH2_VENV = build/venv-torch2
TORCH2_PIN  = torch==2.13.0
HF_PIN      = transformers==5.24.0
torch2: deps
	$(call torch_venv,$(TORCH2_VENV),$(TORCH2_PIN))

# The newest torch checkmate_torch is tested on (checkmate_torch/private.py,
# TESTED): torch 2.14.1, a CUDA build run on the CPU (pip takes it from this
# machine's disk; elsewhere it is a download of several GB), in a venv of its
# own; `make test-long` runs the PyTorch programs under it.
TORCH_NEWEST_VENV = build/venv-torch-newest
TORCH_NEWEST_PIN  = torch==2.14.1
torch-newest: deps
	$(call torch_venv,$(TORCH_NEWEST_VENV),$(TORCH_NEWEST_PIN))

# The long checks (docs/testing.md, "Two suites"): the C programs with every
# case (CHECKMATE_FULL=1), and every PyTorch program, its long checks
# included (CHECKMATE_LONG=1), under torch 2.13 and under the newest torch
# tested.
test-long: torch2 torch-newest
	$(Q)$(MAKE) --no-print-directory all tests
	$(Q)CHECKMATE_FULL=1 CHECKMATE_C_ONLY=1 tests/run.sh build
	$(Q)CHECKMATE_LONG=1 TORCH_PY=$(TORCH2_VENV)/bin/python tests/run.sh build
	$(Q)CHECKMATE_LONG=1 TORCH_PY=$(TORCH_NEWEST_VENV)/bin/python tests/run.sh build

# A venv $(1) with torch $(2), numpy and $(HF_PIN), installed once, and
# checkmate_torch installed again each time.
define torch_venv
	$(Q)if ! $(1)/bin/python -c 'import torch' 2>/dev/null; then \
	  echo "$(1): installing $(2)"; \
	  rm -rf $(1) && python3 -m venv $(1) && \
	  $(1)/bin/python -m pip install -q $(2) numpy setuptools && \
	  $(1)/bin/python -c 'import torch' || \
	  { rm -rf $(1); exit 1; }; \
	fi; \
	if ! $(1)/bin/python -c 'import transformers' 2>/dev/null; then \
	  echo "$(1): installing $(HF_PIN)"; \
	  $(1)/bin/python -m pip install -q $(HF_PIN) || exit 1; \
	fi
	@echo "$(1): installing checkmate_torch"
	$(Q)$(1)/bin/python -m pip install -q --no-build-isolation --no-deps .
endef

clean:
	rm -rf build checkmate

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
