# The project's command-line tools.
bin_PROGRAMS += tools/panda-bench tools/panda-demo
tools_panda_bench_SOURCES = tools/panda-bench.c
tools_panda_bench_LDADD = $(CLI_LIBADD)
tools_panda_demo_SOURCES = tools/panda-demo.c
tools_panda_demo_LDADD = $(CLI_LIBADD)
include tools/model.mk
