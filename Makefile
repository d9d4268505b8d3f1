# gpuwise - GNU Make build.  `make` builds ./gpuwise; `make check` builds an
# ASan+UBSan tree in build/check and runs every test; `make bench` prints figures.
VERSION   := 0.1.0
PREFIX    ?= /usr/local
SYSCONFDIR ?= /etc
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system
CC        ?= cc
BUILD     ?= build/release
CHECKDIR  ?= build/check
PKG_CFLAGS := $(shell pkg-config --cflags jansson 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson)
# Libraries linked statically into the release binary, so that it runs on a
# GPU box with nothing but glibc (libc, libm, libdl, libpthread: checked by
# tests/e2e/static.t with ldd).  Each name is a Debian -dev package's .a
# (libjansson-dev ships libjansson.a, libsqlite3-dev libsqlite3.a); add yours here, and its own static
# dependencies (`pkg-config --static --libs NAME`) to STATIC_DEPS.
STATIC_LIBS ?= jansson sqlite3
STATIC_DEPS ?=
STATIC_LDLIBS := -Wl,-Bstatic $(addprefix -l,$(STATIC_LIBS)) $(STATIC_DEPS) -Wl,-Bdynamic

WARN      := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -Wformat=2 -Wno-format-truncation
BASEFLAGS := -std=c17 -D_GNU_SOURCE -DGPUWISE_VERSION='"$(VERSION)"' -Isrc $(PKG_CFLAGS) $(WARN)
OPT       ?= -O2 -g
SAN       := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# the queue daemon's state (Debian libsqlite3-dev)
SQLITE_CFLAGS := $(shell pkg-config --cflags sqlite3 2>/dev/null)
SQLITE_LIBS   := $(shell pkg-config --libs sqlite3 2>/dev/null || echo -lsqlite3)
BASEFLAGS += $(SQLITE_CFLAGS)
# the Hub and Ollama's registry (issue 32): libcurl's header only (Debian
# libcurl4-openssl-dev); the library is loaded at run time (src/model/fetch.c)
CURL_CFLAGS := $(shell pkg-config --cflags libcurl 2>/dev/null)
BASEFLAGS += $(CURL_CFLAGS)
LDLIBS    := $(PKG_LIBS) $(SQLITE_LIBS) -ldl -lm -lpthread
# quiet by default; `make V=1` shows the commands
ifeq ($(V),1)
Q :=
msg = @true
else
Q := @
msg = @printf '  %-6s %s\n' $(1) $(2)
endif

SRCS      := $(sort $(wildcard src/*.c src/*/*.c))
LIBSRCS   := $(filter-out src/main.c src/cap/preload.c,$(SRCS))
DATA      := $(sort $(wildcard data/*.tsv))
UNIT_SRCS := $(sort $(wildcard tests/unit/test_*.c))
FAKE_SRCS := $(sort $(wildcard tests/fake/*.c))

# objects for a given build dir: $(call objs,DIR)
objs = $(patsubst src/%.c,$(1)/obj/%.o,$(LIBSRCS)) $(1)/obj/embedded.o $(1)/obj/catalog.o

# ---- messages (issue 24): GNU gettext ------------------------------------
# po/zh_CN.po -> build/locale/zh_CN/LC_MESSAGES/gpuwise.mo (found by glibc next
# to the binary, installed under $(PREFIX)/share/locale) and embedded as
# obj/catalog.c so a lone copy of the binary speaks Chinese too.
LOCALEDIR := build/locale
LINGUAS   := zh_CN
MOS       := $(patsubst %,$(LOCALEDIR)/%/LC_MESSAGES/gpuwise.mo,$(LINGUAS))
MSGFMT    ?= msgfmt
XGETTEXT_FLAGS := --language=C --from-code=UTF-8 --keyword=_ --keyword=N_ --keyword=P_:1,2 \
	--keyword=plan_note:2 --flag=plan_note:2:c-format --keyword=add_advice:4 --flag=add_advice:4:c-format \
	--keyword=caveat:2 --flag=caveat:2:c-format --keyword=qd_set_reason:2 --flag=qd_set_reason:2:c-format \
	--keyword=emit:6 --flag=emit:6:c-format --keyword=usage_error:2 --flag=usage_error:2:c-format \
	--keyword=qd_log:2 --flag=qd_log:2:c-format --keyword=gw_fail:3 --flag=gw_fail:3:c-format --keyword=rd_fail:3 --flag=rd_fail:3:c-format --keyword=shape_fail:3 --flag=shape_fail:3:c-format --keyword=bad:3 --flag=bad:3:c-format --keyword=qd_reply_error:2 --flag=qd_reply_error:2:c-format \
	--add-comments=TRANSLATORS: --no-wrap --package-name=gpuwise --package-version=$(VERSION) \
	--msgid-bugs-address=https://github.com/gpuwise/gpuwise/issues --sort-by-file

.SECONDARY:
.PHONY: all check unit e2e bench install uninstall clean run fuzz lint ptx cap-tests pot po-update po-check man-fixes
all: gpuwise

gpuwise: $(BUILD)/gpuwise libgpuwise-cap.so $(MOS)
	$(Q)cp $< $@

$(LOCALEDIR)/%/LC_MESSAGES/gpuwise.mo: po/%.po
	@mkdir -p $(dir $@)
	$(call msg,MSGFMT,$@)
	$(Q)$(MSGFMT) --check -o $@ $<
# `make pot`: extract every _() / N_() / P_() string into po/gpuwise.pot;
# `make po-update` merges it into the translations (then translate the new
# and fuzzy entries: tests/e2e/po.t fails while any is left)
# (POT= and POTDIR= put them elsewhere: tests/e2e/po.t extracts into its own directory)
POT    ?= po/gpuwise.pot
POTDIR ?= build/po
pot:
	@mkdir -p $(POTDIR)
	$(Q)xgettext $(XGETTEXT_FLAGS) -o $(POTDIR)/c.pot $(SRCS) $(POT_EXTRA)
	$(Q)python3 tools/tsv-pot.py data/errors.tsv po/errors-ids.txt > $(POTDIR)/errors.pot
	$(Q)python3 tools/tsv-pot.py --table name meaning data/error-catalog.tsv > $(POTDIR)/error-catalog.pot
	$(Q)python3 tools/tsv-pot.py --table xid meaning,action data/xid.tsv > $(POTDIR)/xid.pot
	$(Q)python3 tools/tsv-pot.py --table arch torch_wheel,cuda_build,prebuilt,hardware data/lifecycle.tsv > $(POTDIR)/lifecycle.pot
	$(Q)python3 tools/tsv-pot.py --table gpu power_connector data/install.tsv > $(POTDIR)/install.pot
	$(Q)python3 tools/tsv-pot.py --table gpu note data/markets.tsv > $(POTDIR)/markets.pot
	$(Q)python3 tools/tsv-pot.py --table id fix data/explain-fixes.tsv > $(POTDIR)/explain-fixes.pot
	$(Q)msgcat --no-wrap --use-first -o $(POT) $(POTDIR)/c.pot $(POTDIR)/errors.pot $(POTDIR)/error-catalog.pot $(POTDIR)/xid.pot \
		$(POTDIR)/lifecycle.pot $(POTDIR)/install.pot $(POTDIR)/markets.pot $(POTDIR)/explain-fixes.pot
	@echo "  POT    $(POT) ($$(grep -c '^msgid ' $(POT)) entries with the header)"
po-update: pot
	$(Q)for l in $(LINGUAS); do msgmerge --quiet --no-wrap --update --backup=none --no-fuzzy-matching po/$$l.po po/gpuwise.pot || exit 1; done
po-check:
	$(Q)for l in $(LINGUAS); do printf '  PO     po/%s.po: ' $$l; $(MSGFMT) --check --statistics -o /dev/null po/$$l.po || exit 1; done

# ---- release tree --------------------------------------------------------
$(BUILD)/gpuwise: $(call objs,$(BUILD)) $(BUILD)/obj/main.o Makefile
	$(call msg,LINK,$@)
	$(Q)$(CC) $(OPT) -o $@ $(filter %.o,$^) $(STATIC_LDLIBS) $(filter-out $(addprefix -l,$(STATIC_LIBS)),$(LDLIBS))
$(BUILD)/obj/%.o: src/%.c $(wildcard src/*/*.h src/*.h)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(BASEFLAGS) $(OPT) -c -o $@ $<

# ---- check tree (sanitizers) --------------------------------------------
CHK_FLAGS := $(BASEFLAGS) -O1 -g $(SAN)
$(CHECKDIR)/gpuwise: $(call objs,$(CHECKDIR)) $(CHECKDIR)/obj/main.o | $(CHECKDIR)/libgpuwise-cap.so
	$(call msg,LINK,$@)
	$(Q)$(CC) $(SAN) -o $@ $^ $(LDLIBS)
$(CHECKDIR)/obj/%.o: src/%.c $(wildcard src/*/*.h src/*.h)
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CHK_FLAGS) -c -o $@ $<
$(CHECKDIR)/tests/%: tests/unit/%.c $(call objs,$(CHECKDIR)) $(wildcard tests/unit/*.h)
	@mkdir -p $(dir $@)
	$(call msg,TEST,$@)
	$(Q)$(CC) $(CHK_FLAGS) -Itests/unit -o $@ $< $(call objs,$(CHECKDIR)) $(LDLIBS) -lcmocka

# ---- libgpuwise-cap.so: the VRAM cap preloaded into jobs (issue 14) ------
# Never sanitized: it is loaded into other programs.  gpuwise run finds it
# next to its own binary (so ./gpuwise gets a copy) or in ../lib/gpuwise.
CAP_SRCS  := src/cap/preload.c src/cap/region.c
CAP_FLAGS := -std=c17 -D_GNU_SOURCE -Isrc $(WARN) $(OPT) -fPIC -shared -fvisibility=hidden
%/libgpuwise-cap.so: $(CAP_SRCS) src/cap/region.h
	@mkdir -p $(dir $@)
	$(call msg,LIB,$@)
	$(Q)$(CC) $(CAP_FLAGS) -o $@ $(CAP_SRCS) -ldl -lpthread
libgpuwise-cap.so: $(BUILD)/libgpuwise-cap.so
	$(Q)cp $< $@

# ---- embedded knowledge tables ------------------------------------------
%/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(Q)$(CC) -std=c17 -O1 -o $@ tools/embed.c
%/obj/embedded.c: $(DATA) %/embed
	@mkdir -p $(dir $@)
	$(call msg,EMBED,$@)
	$(Q)$*/embed $(DATA) > $@
%/obj/catalog.c: $(firstword $(MOS)) %/embed
	@mkdir -p $(dir $@)
	$(call msg,EMBED,$@)
	$(Q)$*/embed -b gw_catalog_mo $< > $@
%/obj/catalog.o: %/obj/catalog.c
	$(Q)$(CC) -std=c17 -c -o $@ $<
%/obj/embedded.o: %/obj/embedded.c
	$(Q)$(CC) -std=c17 -c -o $@ $<

# ---- test doubles: fake libnvidia-ml.so.1 and libcuda.so.1 --------------
FAKEDIR ?= $(CHECKDIR)/fake
FAKE_LIBS := $(patsubst tests/fake/%.c,$(FAKEDIR)/%.so,$(filter-out tests/fake/scenario.c,$(FAKE_SRCS)))
$(FAKEDIR)/%.so: tests/fake/%.c $(wildcard tests/fake/*.h) tests/fake/scenario.c
	@mkdir -p $(dir $@)
	$(call msg,FAKE,$@)
	$(Q)$(CC) -std=c17 -D_GNU_SOURCE -O1 -g -fPIC -shared -Wall -Wextra -Werror -Wno-unused-parameter $(PKG_CFLAGS) \
	    -o $@ $< tests/fake/scenario.c $(PKG_LIBS) -lpthread
fakes: $(FAKE_LIBS)
# test programs that allocate through the fake libcuda (tests/cap/)
CAP_TESTS := $(patsubst tests/cap/%.c,$(CHECKDIR)/cap/%,$(wildcard tests/cap/*.c))
$(CHECKDIR)/cap/%: tests/cap/%.c $(FAKEDIR)/libcuda.so
	@mkdir -p $(dir $@)
	$(call msg,TEST,$@)
	$(Q)$(CC) -std=c17 -D_GNU_SOURCE $(WARN) -O2 -g -o $@ $< $(abspath $(FAKEDIR)/libcuda.so) -ldl -lpthread
cap-tests: $(CAP_TESTS) $(CHECKDIR)/libgpuwise-cap.so

# ---- gpuwise bench: kernels embedded with .incbin (src/bench/embed.c) ----
# The PTX is generated from the .cu beside it by `make ptx` where nvcc is
# present (and checked against it by tests/e2e/bench.t); its .version is
# lowered to 7.0 (CUDA 11.0 drivers) since nothing newer is used.
BENCH_KERNELS := src/bench/kernels.ptx src/bench/mma.ptx src/bench/kernels.cl
$(BUILD)/obj/bench/embed.o $(CHECKDIR)/obj/bench/embed.o: $(BENCH_KERNELS)
NVCC ?= $(firstword $(shell command -v nvcc 2>/dev/null) $(wildcard /usr/local/cuda/bin/nvcc))
ptx:
	@test -n "$(NVCC)" || { echo "make ptx: nvcc not found (set NVCC=)"; exit 1; }
	@for k in kernels mma; do \
		$(NVCC) -ptx -arch=$$(case $$k in mma) echo compute_80;; *) echo compute_75;; esac) -o src/bench/$$k.ptx.tmp src/bench/$$k.cu && \
		sed 's/^\.version [0-9.]*$$/.version 7.0/' src/bench/$$k.ptx.tmp > src/bench/$$k.ptx && rm -f src/bench/$$k.ptx.tmp || exit 1; \
		echo "  PTX    src/bench/$$k.ptx"; \
	done

UNIT_BINS := $(patsubst tests/unit/%.c,$(CHECKDIR)/tests/%,$(UNIT_SRCS))

check: gpuwise $(CHECKDIR)/gpuwise $(UNIT_BINS) $(FAKE_LIBS) cap-tests po-check
	@GW_BUILD=$(CHECKDIR) sh tests/run.sh $(UNIT_BINS)

unit: $(UNIT_BINS) $(FAKE_LIBS)
	@GW_BUILD=$(CHECKDIR) GW_ONLY=unit sh tests/run.sh $(UNIT_BINS)
e2e: $(CHECKDIR)/gpuwise $(FAKE_LIBS) cap-tests
	@GW_BUILD=$(CHECKDIR) GW_ONLY=e2e sh tests/run.sh

# `make e2e T='plan speed'` (or check, unit): only the test files whose name
# contains one of the words
# ---- benchmarks (release build) -----------------------------------------
bench: gpuwise
	@$(MAKE) --no-print-directory FAKEDIR=$(BUILD)/fake fakes >/dev/null
	@for b in $(sort $(wildcard bench/*.sh)); do GW=./gpuwise GW_BUILD=$(BUILD) sh $$b || exit 1; done

# the main job: check this machine's stack, show its GPUs, plan a common model;
# each command's exit status is explained, and `make run` itself succeeds
# (a machine without a GPU is an answer, not a build failure)
run: gpuwise
	@sh tools/make-run.sh ./gpuwise

fuzz:
	sh tests/fuzz/run.sh

install: gpuwise
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 755 gpuwise $(DESTDIR)$(PREFIX)/bin/gpuwise
	install -m 644 man/gpuwise.1 $(DESTDIR)$(PREFIX)/share/man/man1/gpuwise.1
	# messages and the Chinese man page (LANG=zh_CN.UTF-8 man gpuwise)
	for l in $(LINGUAS); do \
		install -d $(DESTDIR)$(PREFIX)/share/locale/$$l/LC_MESSAGES $(DESTDIR)$(PREFIX)/share/man/$$l/man1 && \
		install -m 644 $(LOCALEDIR)/$$l/LC_MESSAGES/gpuwise.mo $(DESTDIR)$(PREFIX)/share/locale/$$l/LC_MESSAGES/gpuwise.mo && \
		install -m 644 man/$$l/man1/gpuwise.1 $(DESTDIR)$(PREFIX)/share/man/$$l/man1/gpuwise.1 || exit 1; \
	done
	install -d $(DESTDIR)$(PREFIX)/lib/gpuwise
	install -m 755 libgpuwise-cap.so $(DESTDIR)$(PREFIX)/lib/gpuwise/libgpuwise-cap.so
	# the queue daemon: systemd unit and a commented sample config (kept if present)
	install -d $(DESTDIR)$(SYSTEMDUNITDIR) $(DESTDIR)$(SYSCONFDIR)/gpuwise
	sed 's|@BINDIR@|$(PREFIX)/bin|' dist/gpuwise.service > $(DESTDIR)$(SYSTEMDUNITDIR)/gpuwise.service
	chmod 644 $(DESTDIR)$(SYSTEMDUNITDIR)/gpuwise.service
	[ -e $(DESTDIR)$(SYSCONFDIR)/gpuwise/daemon.conf ] || install -m 644 dist/daemon.conf $(DESTDIR)$(SYSCONFDIR)/gpuwise/daemon.conf
uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/gpuwise $(DESTDIR)$(PREFIX)/share/man/man1/gpuwise.1
	rm -f $(DESTDIR)$(PREFIX)/lib/gpuwise/libgpuwise-cap.so
	for l in $(LINGUAS); do rm -f $(DESTDIR)$(PREFIX)/share/locale/$$l/LC_MESSAGES/gpuwise.mo $(DESTDIR)$(PREFIX)/share/man/$$l/man1/gpuwise.1; done
	rm -f $(DESTDIR)$(SYSTEMDUNITDIR)/gpuwise.service

clean:
	rm -rf build gpuwise libgpuwise-cap.so

# the man page's printed fixes (.\" fix-example lines) rewritten from the binary's own output
# (tests/e2e/man-fixes.t fails while they differ)
man-fixes: gpuwise
	$(Q)python3 tools/man-fixes.py ./gpuwise man/gpuwise.1
