# The programs' manual pages, generated at build time by help2man from
# their --help and --version (the help is the one description of their
# options; the pages cannot drift from it), installed in $(mandir)/man1.
# man/names holds each page's one-line NAME.  The Python programs run
# from the source tree's launchers (tools/panda-qos, the controller's),
# which need nothing built.
PANDA_MAN_C = \
	tools/panda-model \
	tools/panda-bench \
	tools/panda-demo \
	load_generator/panda-fg-server \
	load_generator/panda-fg-client \
	load_generator/panda-mc-client \
	load_generator/panda-adp-server \
	load_generator/panda-adp-client
if HAVE_BPF
PANDA_MAN_C += bpf/panda-cc bpf/panda-bpf
endif
# PAGE:LAUNCHER (relative to the source tree)
PANDA_MAN_PY = \
	panda-qos:tools/panda-qos \
	panda-controller:openflow/controller/panda_controller.py

PANDA_MANS = $(patsubst %,man/%.1,$(notdir $(PANDA_MAN_C))) \
	$(patsubst %,man/%.1,$(foreach p,$(PANDA_MAN_PY),$(firstword $(subst :, ,$(p)))))
EXTRA_DIST += man/names man/help2man.sh
CLEANFILES += $(PANDA_MANS)

if HAVE_HELP2MAN
man1_MANS = $(PANDA_MANS)

# A page depends on its program (C: built here; Python: the launcher and
# the package's sources) and on its NAME line.
$(PANDA_MANS): $(PANDA_MAN_C) man/names man/help2man.sh \
		$(addprefix $(srcdir)/python/,$(PANDAOVS_PY))
	$(AM_V_GEN)prog=; page=$(notdir $(basename $@)); \
	for p in $(PANDA_MAN_C); do \
	    [ "$${p##*/}" = "$$page" ] && prog=./$$p; \
	done; \
	for p in $(PANDA_MAN_PY); do \
	    [ "$${p%%:*}" = "$$page" ] && prog=$(srcdir)/$${p#*:}; \
	done; \
	HELP2MAN=$(HELP2MAN) $(SHELL) $(srcdir)/man/help2man.sh "$$prog" \
	    "$$page" $(srcdir)/man/names $@
endif
