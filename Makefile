# k8shazgpu: one Makefile for every tool, library, test and install.
#
#   make                      build every tool into $(B)/
#   make test                 unit + integration tests (starts a local cluster)
#   make test-unit            the tests that need no cluster
#   make test SANITIZE=address,undefined   the same under ASan/UBSan
#   make test VALGRIND=1      every tool run under valgrind
#   make demo                 the simulated cluster, shown in plain words
#   make image [PUSH=registry/repo]   OCI images of the components in $(B)/image/
#   make image ARCH=arm64     the same for arm64, cross-compiled, in build-arm64/
#   make image ARCH=amd64,arm64   both, and a multi-arch image index of
#                             each in $(B)/image-index/
#   make install PREFIX=/usr/local
#   make gpu-check-bundle     $(B)/gpu-check.tar.gz: gpu-check(1) and its
#                             tools with their libraries, for a bare GPU machine

VERSION = 0.1.0
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
LIBEXECDIR ?= $(PREFIX)/libexec/k8shazgpu
DATADIR ?= $(PREFIX)/share/k8shazgpu
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions

CC ?= cc
PKG_CONFIG ?= pkg-config
CFLAGS ?= -O2 -g
CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -iquote lib \
	-DHAZ_VERSION=\"$(VERSION)\"

# ARCH: the Debian architecture to build for. Another than this machine's
# (arm64) is cross-compiled with its GNU cross compiler against a sysroot
# of Debian's packages for it (scripts/sysroot-build, cached outside the
# tree), into build-ARCH/: the tools as the images carry them and the
# static diff-pack, nothing to run here. A list (amd64,arm64) is for
# `make image` alone: each architecture in turn, then one index an image.
HOST_ARCH := $(shell dpkg --print-architecture 2>/dev/null || echo amd64)
ARCH ?= $(HOST_ARCH)
comma = ,
ARCHES = $(subst $(comma), ,$(ARCH))
ifneq ($(words $(ARCHES)),1)
MULTI = 1
else ifneq ($(ARCH),$(HOST_ARCH))
CROSS_arm64 = aarch64-linux-gnu
CROSS = $(or $(CROSS_$(ARCH)),$(error ARCH=$(ARCH): no cross compiler known for it (arm64 is)))
ifneq ($(filter-out min,$(CURL)),)
$(error ARCH=$(ARCH): CURL=$(CURL): a cross build links the minimal libcurl only)
endif
ifneq ($(SANITIZE),)
$(error ARCH=$(ARCH): SANITIZE: the sanitizers' runtimes are this machine's only)
endif
B ?= build-$(ARCH)
# the cross compiler, with the sysroot's headers and libraries only
CC := $(shell scripts/sysroot-build -a $(ARCH) cc)
ifeq ($(CC),)
$(error ARCH=$(ARCH): no sysroot (scripts/sysroot-build -a $(ARCH) failed))
endif
AR = $(CROSS)-ar
SYSROOT := $(shell scripts/sysroot-build -a $(ARCH) prefix)
export PKG_CONFIG_SYSROOT_DIR := $(SYSROOT)
export PKG_CONFIG_LIBDIR := $(SYSROOT)/usr/lib/$(CROSS)/pkgconfig:$(SYSROOT)/usr/share/pkgconfig
endif

ifneq ($(SANITIZE),)
B ?= build-san
CFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
else
B ?= build
endif

# Every tools/NAME.c is a tool; each names the pkg-config packages it
# links, and nothing more.
TOOLS = $(sort $(basename $(notdir $(wildcard tools/*.c))))
claim-watch_PKGS = jansson libcurl yaml-0.1 zlib
claim-make_PKGS = jansson libcurl yaml-0.1
cert-make_PKGS = jansson libcurl yaml-0.1 zlib
yaml2json_PKGS = jansson yaml-0.1
stat-serve_PKGS = libmicrohttpd
status-page_PKGS = jansson libmicrohttpd
gpu-probe_PKGS = jansson yaml-0.1 expat
gpu-reserve_PKGS = jansson hiredis
webhook-patch_PKGS = jansson libcurl yaml-0.1 libmicrohttpd zlib
sched-pick_PKGS = jansson
sched-queue_PKGS = jansson libcurl yaml-0.1 zlib
dra-plugin_PKGS = jansson libcurl yaml-0.1 hiredis libnghttp2 libprotobuf-c zlib
cache-sync_PKGS = jansson libcurl libgit2 libnghttp2 libprotobuf-c zlib
diff-pack_PKGS = jansson libcurl libgit2 zlib
sched-bind_PKGS = jansson libcurl yaml-0.1 zlib
gpu-alert_PKGS = jansson libcurl yaml-0.1 zlib
pod-exec_PKGS = jansson libcurl yaml-0.1 zlib
cuda-query_PKGS =

# t/unit/NAME.c are test drivers for lib/ functions; never installed.
UNITS = $(sort $(basename $(notdir $(wildcard t/unit/*.c))))

LIBSRC = $(wildcard lib/*.c)
LIBOBJ = $(LIBSRC:lib/%.c=$(B)/lib/%.o)

# A tool's own engine, when it has one, lives in tools/NAME/: its objects
# make $(B)/priv/NAME.a, linked into NAME alone (and into the unit
# drivers, which test engines of every tool). lib/ holds what two or more
# tools use, and the clients of protocols.
PRIVDIRS = $(patsubst tools/%/,%,$(sort $(dir $(wildcard tools/*/*.c))))
PRIVOBJ = $(patsubst tools/%.c,$(B)/tools/%.o,$(wildcard tools/*/*.c))
PRIVA = $(PRIVDIRS:%=$(B)/priv/%.a)
PRIVHDR = $(wildcard tools/*/*.h)
priv_a = $(if $(filter $(1),$(PRIVDIRS)),$(B)/priv/$(1).a)
priv_objs = $(patsubst tools/%.c,$(B)/tools/%.o,$(wildcard tools/$(1)/*.c))
CFLAGS += $(addprefix -iquote tools/,$(PRIVDIRS))
ALLPKGS = jansson libcurl yaml-0.1 libmicrohttpd zlib hiredis libnghttp2 \
	libprotobuf-c libgit2 expat

# proto/NAME.proto: the kubelet's gRPC messages, compiled by protoc-c into
# $(B)/gen/NAME.pb-c.[ch] (never checked in, never formatted); their
# objects go into libhaz.a. The generated code builds with the same
# -Wall -Wextra -Werror as ours.
PROTOC_C ?= protoc-c
PROTO = $(wildcard proto/*.proto)
GENSRC = $(PROTO:proto/%.proto=$(B)/gen/%.pb-c.c)
GENHDR = $(PROTO:proto/%.proto=$(B)/gen/%.pb-c.h)
GENOBJ = $(PROTO:proto/%.proto=$(B)/gen/%.pb-c.o)
CFLAGS += -I$(B)/gen
# the generated files' paths, in debug information and so in build IDs,
# without the build directory: the same sources give the same stripped
# tools in any B (the images' digests, t/0066-image-arm64.t)
CFLAGS += -ffile-prefix-map=$(B)/=

# libcurl: by default a minimal static build (HTTP and HTTPS only;
# scripts/curl-build, cached outside the tree) with the system's OpenSSL
# linked in statically too, as Go programs carry their TLS: the tools then
# map the code they use, not the ~30 shared libraries of the distribution's
# libcurl (4.5 MiB of RSS in every process) and all of libcrypto.so (1 MiB
# more). The link depends on libcrypto.a, so `make` relinks after an
# OpenSSL update. `make CURL=system` links the system libcurl, shared.
CURL ?= min
ifeq ($(CURL),min)
CURL_PREFIX := $(shell scripts/curl-build $(if $(CROSS),-a $(ARCH)) prefix 2>/dev/null)
CURL_PC = $(CURL_PREFIX)/lib/pkgconfig/libcurl.pc
export PKG_CONFIG_PATH := $(CURL_PREFIX)/lib/pkgconfig$(if $(PKG_CONFIG_PATH),:$(PKG_CONFIG_PATH))
SSL_A := $(wildcard $(addprefix $(shell $(PKG_CONFIG) --variable=libdir libcrypto 2>/dev/null)/,libssl.a libcrypto.a))
CURL_LIBS = -L$(CURL_PREFIX)/lib -lcurl -Wl,-Bstatic -lssl -lcrypto -Wl,-Bdynamic -lz
else
CURL_LIBS = $$($(PKG_CONFIG) --libs libcurl libssl libcrypto)
endif
# libs(PKGS): the link flags of PKGS, libcurl as chosen above.
libs = $(if $(filter-out libcurl,$(1)),$$($(PKG_CONFIG) --libs $(filter-out libcurl,$(1)))) \
	$(if $(filter libcurl,$(1)),$(CURL_LIBS))
LDFLAGS += -Wl,--as-needed
ifeq ($(CROSS),)
PKG_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(ALLPKGS) 2>/dev/null)
else
# cross: pkg-config puts the sysroot before every path, which curl's own
# prefix is outside of; $(shell) runs without make's exports, so the
# sysroot's are given
PKG_CFLAGS := $(shell PKG_CONFIG_SYSROOT_DIR=$(SYSROOT) PKG_CONFIG_LIBDIR=$(PKG_CONFIG_LIBDIR) \
	PKG_CONFIG_PATH= $(PKG_CONFIG) --cflags $(filter-out libcurl,$(ALLPKGS)) 2>/dev/null) \
	-I$(CURL_PREFIX)/include
endif

# The tools as the images carry them (make image, scripts/image-build):
# the same objects, linked with OpenSSL shared, since in an image one
# libcrypto serves every tool, stored once in the base layer, where two
# HTTPS tools of one image would each carry 4 MiB of it linked statically.
IMAGE_BIN = $(TOOLS:%=$(B)/image-bin/%)
ifeq ($(CURL),min)
IMAGE_CURL_LIBS = -L$(CURL_PREFIX)/lib -lcurl -lssl -lcrypto -lz
else
IMAGE_CURL_LIBS = $(CURL_LIBS)
endif
image_libs = $(if $(filter-out libcurl,$(1)),$$($(PKG_CONFIG) --libs $(filter-out libcurl,$(1)))) \
	$(if $(filter libcurl,$(1)),$(IMAGE_CURL_LIBS))

STATIC_BIN = $(if $(wildcard tools/diff-pack.c),$(B)/static/diff-pack)
ifneq ($(CROSS),)
all: $(IMAGE_BIN) $(STATIC_BIN)
else
all: $(TOOLS:%=$(B)/%) $(UNITS:%=$(B)/unit/%) $(IMAGE_BIN) $(STATIC_BIN)
endif

# cross: everything is compiled again against a new sysroot (a package
# updated here names a new one)
ifneq ($(CROSS),)
$(LIBOBJ) $(GENOBJ) $(PRIVOBJ) $(TOOLS:%=$(B)/tools/%.o) $(B)/static/diff-pack.o: $(SYSROOT)/.versions
endif

ifeq ($(CURL),min)
$(CURL_PC):
	scripts/curl-build $(if $(CROSS),-a $(ARCH)) >/dev/null
$(LIBOBJ) $(PRIVOBJ) $(TOOLS:%=$(B)/tools/%.o) $(B)/static/diff-pack.o: | $(CURL_PC)
$(TOOLS:%=$(B)/%) $(UNITS:%=$(B)/unit/%): $(CURL_PC) $(SSL_A)
$(IMAGE_BIN): $(CURL_PC)
endif

$(B)/lib/%.o: lib/%.c lib/*.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

# Both files come from one protoc-c run (a grouped pattern rule).
$(B)/gen/%.pb-c.c $(B)/gen/%.pb-c.h: proto/%.proto
	@mkdir -p $(@D)
	$(PROTOC_C) --proto_path=proto --c_out=$(B)/gen $<

$(B)/gen/%.pb-c.o: $(B)/gen/%.pb-c.c $(B)/gen/%.pb-c.h
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c -o $@ $<
.SECONDARY: $(GENSRC)

# The ledger's Lua scripts, lib/lua/*.lua, become one generated header.
LUAHDR = $(B)/gen/lua_ledger.h
$(LUAHDR): $(sort $(wildcard lib/lua/*.lua)) scripts/lua2c
	@mkdir -p $(@D)
	scripts/lua2c $(sort $(wildcard lib/lua/*.lua)) >$@.tmp && mv $@.tmp $@
$(B)/lib/ledger_lua.o $(B)/unit/ledger-verdict: $(LUAHDR)

# Whatever includes a generated header waits for it; lib/drapb.c is
# rebuilt when a .proto changes.
$(LIBOBJ) $(PRIVOBJ) $(TOOLS:%=$(B)/tools/%.o) $(UNITS:%=$(B)/unit/%): | $(GENHDR) $(LUAHDR)
$(B)/lib/drapb.o $(B)/lib/cri.o: $(GENHDR)

$(B)/tools/%.o: tools/%.c lib/*.h $(PRIVHDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) -c -o $@ $<

$(B)/libhaz.a: $(LIBOBJ) $(GENOBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(B)/unit/%: t/unit/%.c $(PRIVA) $(B)/libhaz.a lib/*.h $(PRIVHDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(PKG_CFLAGS) $(LDFLAGS) -o $@ $< $(PRIVA) $(B)/libhaz.a \
		$(call libs,$(ALLPKGS)) -lm

.SECONDEXPANSION:
$(B)/priv/%.a: $$(call priv_objs,$$*)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(TOOLS:%=$(B)/%): $(B)/%: $(B)/tools/%.o $$(call priv_a,$$*) $(B)/libhaz.a
	$(CC) $(LDFLAGS) -o $@ $< $(call priv_a,$*) $(B)/libhaz.a \
		$(call libs,$($*_PKGS)) -lm

$(IMAGE_BIN): $(B)/image-bin/%: $(B)/tools/%.o $$(call priv_a,$$*) $(B)/libhaz.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(call priv_a,$*) $(B)/libhaz.a \
		$(call image_libs,$($*_PKGS)) -lm

# diff-pack as the pods of `k8shazgpu vllm run` carry it: unpack only
# (no libgit2, no libcurl; SHA-256 is lib/sha256), linked statically with
# jansson, so that one binary, mounted into any image from a ConfigMap
# (k8shazgpu-vllm(1)), runs whatever C library that image has (or none).
# A ConfigMap holds at most 1 MiB: it is built for size (-Os, unused
# sections dropped, stripped) and the link fails above STATIC_MAX bytes.
# Sanitized builds link it dynamically: the sanitizers' runtimes are
# shared objects.
STATIC_MAX = 1000000
$(B)/static/diff-pack.o: tools/diff-pack.c lib/*.h $(PRIVHDR)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(if $(SANITIZE),,-Os -ffunction-sections -fdata-sections) \
		-DDP_UNPACK_ONLY $(PKG_CFLAGS) -c -o $@ $<

$(B)/static/diff-pack: $(B)/static/diff-pack.o $(B)/priv/diff-pack.a $(B)/libhaz.a
	$(CC) $(LDFLAGS) $(if $(SANITIZE),,-static -s -Wl,--gc-sections) -o $@.tmp $< \
		$(B)/priv/diff-pack.a $(B)/libhaz.a $$($(PKG_CONFIG) --libs jansson)
	@test $(if $(SANITIZE),0,$$(wc -c <$@.tmp)) -le $(STATIC_MAX) || \
		{ echo "$@: over $(STATIC_MAX) bytes, too big for its ConfigMap" >&2; rm -f $@.tmp; exit 1; }
	mv $@.tmp $@

deps:
	@scripts/deps

# The components' OCI images (scripts/image-build): $(B)/image/NAME.tar,
# named $(IMAGE_PREFIX)/NAME:$(VERSION); PUSH=registry/repo pushes each
# to registry/repo/NAME:$(VERSION) too.
IMAGE_PREFIX ?= k8shazgpu
# ARCH=amd64,arm64: each architecture's images (in build/image/ and
# build-arm64/image/), then $(B)/image-index/NAME.tar, an OCI layout whose
# one entry is an image index of NAME's manifests, one a platform
# (scripts/oci-index); PUSH pushes the indexes, with all they name.
ifeq ($(MULTI),)
image: $(IMAGE_BIN) $(STATIC_BIN)
	@scripts/image-build -b $(B) $(if $(CROSS),-a $(ARCH)) -v $(VERSION) -p $(IMAGE_PREFIX) \
		$(if $(PUSH),-P $(PUSH))
else
image_dir = $(if $(filter $(HOST_ARCH),$(1)),$(B),$(B)-$(1))
image:
	@$(foreach a,$(ARCHES),$(MAKE) --no-print-directory image ARCH=$(a) B=$(call image_dir,$(a)) PUSH= &&) :
	@mkdir -p $(B)/image-index && for t in $(call image_dir,$(firstword $(ARCHES)))/image/*.tar; do \
		c=$$(basename "$$t" .tar); \
		d=$$(scripts/oci-index -o $(B)/image-index/$$c.tar -n $(IMAGE_PREFIX)/$$c:$(VERSION) \
			$(foreach a,$(ARCHES),$(call image_dir,$(a))/image/$$c.tar)) || exit 1; \
		echo "$(IMAGE_PREFIX)/$$c:$(VERSION) $$d $(ARCHES)"; \
		$(if $(PUSH),scripts/oci-push -q $(B)/image-index/$$c.tar $(PUSH)/$$c:$(VERSION) >/dev/null || exit $$?;) \
	done
endif
.PHONY: image

# These install what is missing first, then build in a new make, which
# sees the packages (and their pkg-config files) deps just installed.
# Both build arm64 too (build-arm64/, for t/0066-image-arm64.t), unless
# sanitized or on another machine than amd64.
ARM_TEST = $(if $(SANITIZE),,$(filter amd64,$(HOST_ARCH)))
test: deps
	@$(MAKE) --no-print-directory all
	@$(if $(ARM_TEST),$(MAKE) --no-print-directory all ARCH=arm64 B=build-arm64)
	@B=$(B) VALGRIND=$(VALGRIND) t/run all

test-unit: deps
	@$(MAKE) --no-print-directory all
	@$(if $(ARM_TEST),$(MAKE) --no-print-directory all ARCH=arm64 B=build-arm64)
	@B=$(B) VALGRIND=$(VALGRIND) t/run unit

# The demo installs and builds what is missing itself, timing each phase.
demo:
	@B=$(B) MAKE="$(MAKE)" scripts/demo

bench: deps
	@$(MAKE) --no-print-directory all
	@for b in bench/*; do [ -x "$$b" ] && B=$(B) "$$b"; done

gpu-check-bundle: all
	scripts/bundle-build -b $(B) -o $(B)/gpu-check.tar.gz -s scripts/gpu-check \
		gpu-probe claim-make dra-plugin cuda-query jq

format:
	clang-format -i lib/*.[ch] tools/*.c tools/*/*.[ch] t/unit/*.c t/fuzz/*.[ch] bench/*.c

install: all install-completion
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 \
		$(DESTDIR)$(MANDIR)/man7 $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(DATADIR)
	install -m 755 $(TOOLS:%=$(B)/%) $(DESTDIR)$(BINDIR)
	install -m 755 $(wildcard scripts/k8shazgpu*) scripts/gpu-check $(DESTDIR)$(BINDIR)
	install -d $(DESTDIR)$(LIBEXECDIR)
	install -m 755 scripts/sim-build scripts/sim-node scripts/sim-install scripts/helm-build \
		scripts/node-build scripts/oci-image scripts/free-port $(DESTDIR)$(LIBEXECDIR)
	install -m 644 scripts/cli-lib.sh scripts/sim-lib.sh $(DESTDIR)$(LIBEXECDIR)
	install -d $(DESTDIR)$(LIBEXECDIR)/static
	install -m 755 $(B)/static/diff-pack $(DESTDIR)$(LIBEXECDIR)/static
	install -d $(DESTDIR)$(LIBEXECDIR)/jq
	install -m 644 scripts/jq/*.jq $(DESTDIR)$(LIBEXECDIR)/jq
	for m in man/*.[178]; do \
		s=$${m##*.}; install -m 644 $$m $(DESTDIR)$(MANDIR)/man$$s; done
	cp -R manifests overlays charts $(DESTDIR)$(DATADIR)/

# the bash and zsh completions, the engine they share (k8shazgpu
# __complete) and the kubectl plugin kubectl-hazgpu with its completion
install-completion:
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) \
		$(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 644 scripts/complete.sh $(DESTDIR)$(LIBEXECDIR)
	install -m 755 scripts/kubectl_complete-hazgpu $(DESTDIR)$(BINDIR)
	ln -sf k8shazgpu $(DESTDIR)$(BINDIR)/kubectl-hazgpu
	install -m 644 scripts/completion/k8shazgpu.bash $(DESTDIR)$(BASHCOMPDIR)/k8shazgpu
	ln -sf k8shazgpu $(DESTDIR)$(BASHCOMPDIR)/kubectl-hazgpu
	install -m 644 scripts/completion/_k8shazgpu $(DESTDIR)$(ZSHCOMPDIR)/_k8shazgpu

clean:
	rm -rf build build-san build-arm64

.PHONY: all deps test test-unit demo bench format install install-completion clean gpu-check-bundle
