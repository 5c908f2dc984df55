# lib/cli: the layer shared by the command-line programs (tools, load
# generator, benchmarks): the command-line convention, JSON writer, option
# values, clocks, error exits.  One header per module, included as
# <cli/NAME.h>, one prefix each (cli_opt_, cli_json_, cli_parse_,
# cli_clock_, cli_log_).
noinst_LIBRARIES += lib/cli/libcli.a
lib_cli_libcli_a_SOURCES = \
	lib/cli/clock.c \
	lib/cli/clock.h \
	lib/cli/json.c \
	lib/cli/json.h \
	lib/cli/log.c \
	lib/cli/log.h \
	lib/cli/opt.c \
	lib/cli/opt.h \
	lib/cli/parse.c \
	lib/cli/parse.h

CLI_LIBADD = lib/cli/libcli.a $(PANDA_LIBADD)

# The commit every program's --version names: re-read on every make (the
# script rewrites the header only when the commit changes; the target with
# no recipe and no file forces it).
nodist_lib_cli_libcli_a_SOURCES = lib/cli/git-commit.h
BUILT_SOURCES += lib/cli/git-commit.h
CLEANFILES += lib/cli/git-commit.h
EXTRA_DIST += build-aux/git-commit.sh
lib/cli/git-commit.h: cli-git-commit-force
	@$(top_srcdir)/build-aux/git-commit.sh $(top_srcdir) $@
cli-git-commit-force:
