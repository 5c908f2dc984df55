# 'make install' of the Python side: the product's package, pandaovs, under
# $(pkglibdir)/python (a private directory, not Python's site-packages: the
# package belongs to this prefix, like the patched OVS beside it) and one
# launcher per installed command in $(bindir), from python/launcher.in.
# Debian's /usr/bin/python3 runs them (it has os-ken for the controller).
# The Debian packages (packaging/) and the Ansible build path both install
# through these rules.  The lab's package (pandalab, the experiments) is not
# installed: it runs from a checkout (docs/design.md, "Product and lab").
pandaovs_pythondir = $(pkglibdir)/python
# Every module of the package, found when make runs (GNU make).
PANDAOVS_PY = $(shell cd $(srcdir)/python && find pandaovs -name '*.py' | LC_ALL=C sort)
# COMMAND:MODULE
PANDAOVS_COMMANDS = panda-qos:qos panda-controller:controller
EXTRA_DIST += python/launcher.in python/install_paths.py.in \
	$(addprefix python/,$(PANDAOVS_PY))
# The lab's package goes into the source tarball, not into the install.
PANDALAB_PY = $(shell cd $(srcdir)/python && find pandalab -name '*.py' | LC_ALL=C sort)
EXTRA_DIST += python/launch.py $(addprefix python/,$(PANDALAB_PY))

# pandaovs/install_paths.py: the directories of this installation, so that
# the installed package finds its programs, the policy library and the
# CDFs without a checkout (pandaovs.paths); pandaovs/git-commit.txt: the
# commit the programs were built from, for --version (pandaovs.cli).
install-data-local: install-pandaovs-python
install-pandaovs-python:
	@set -e; for f in $(PANDAOVS_PY); do \
	    $(MKDIR_P) "$(DESTDIR)$(pandaovs_pythondir)/$$(dirname $$f)"; \
	    $(INSTALL_DATA) "$(srcdir)/python/$$f" "$(DESTDIR)$(pandaovs_pythondir)/$$f"; \
	done; \
	$(SED) -e "s|@PYTHONDIR@|$(pandaovs_pythondir)|g" \
	    -e "s|@BINDIR@|$(bindir)|g" -e "s|@PKGLIBDIR@|$(pkglibdir)|g" \
	    -e "s|@CDFDIR@|$(cdfdir)|g" $(srcdir)/python/install_paths.py.in \
	    > "$(DESTDIR)$(pandaovs_pythondir)/pandaovs/install_paths.py"; \
	$(SED) -n 's/^#define CLI_GIT_COMMIT "\(.*\)"$$/\1/p' \
	    lib/cli/git-commit.h \
	    > "$(DESTDIR)$(pandaovs_pythondir)/pandaovs/git-commit.txt"

install-exec-local: install-pandaovs-commands
install-pandaovs-commands:
	@set -e; $(MKDIR_P) "$(DESTDIR)$(bindir)"; \
	rel=$$(realpath -m --relative-to="$(bindir)" "$(pandaovs_pythondir)"); \
	for c in $(PANDAOVS_COMMANDS); do \
	    cmd=$${c%%:*}; mod=$${c#*:}; \
	    $(SED) -e "s|@COMMAND@|$$cmd|g" -e "s|@MODULE@|$$mod|g" \
	        -e "s|@PYTHONDIR@|$(pandaovs_pythondir)|g" \
	        -e "s|@PYTHONDIR_FROM_BIN@|$$rel|g" -e "s|@BINDIR@|$(bindir)|g" \
	        $(srcdir)/python/launcher.in > "$(DESTDIR)$(bindir)/$$cmd.tmp"; \
	    chmod 755 "$(DESTDIR)$(bindir)/$$cmd.tmp"; \
	    mv -f "$(DESTDIR)$(bindir)/$$cmd.tmp" "$(DESTDIR)$(bindir)/$$cmd"; \
	done

uninstall-local:
	for c in $(PANDAOVS_COMMANDS); do rm -f "$(DESTDIR)$(bindir)/$${c%%:*}"; done
	rm -rf "$(DESTDIR)$(pandaovs_pythondir)/pandaovs"

# The workload CDFs the load generator and the experiments read.
cdfdir = $(pkgdatadir)/cdf
dist_cdf_DATA = \
	load_generator/cdf/web-search.cdf \
	load_generator/cdf/data-mining.cdf \
	load_generator/cdf/fb-hadoop.cdf \
	load_generator/cdf/fb-web.cdf \
	load_generator/cdf/ali-storage.cdf \
	load_generator/cdf/memcached-values.cdf
