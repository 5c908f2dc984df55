# lib/cli: the layer shared by the command-line programs (tools, load
# generator, benchmarks): JSON writer, option parsing, clocks, error exits.
# One header per module, included as <cli/NAME.h>, one prefix each
# (cli_json_, cli_parse_, cli_clock_, cli_log_).
noinst_LIBRARIES += lib/cli/libcli.a
lib_cli_libcli_a_SOURCES = \
	lib/cli/clock.c \
	lib/cli/clock.h \
	lib/cli/json.c \
	lib/cli/json.h \
	lib/cli/log.c \
	lib/cli/log.h \
	lib/cli/parse.c \
	lib/cli/parse.h

CLI_LIBADD = lib/cli/libcli.a $(PANDA_LIBADD)
