# panda-model: the offline model tool (included from tools/automake.mk).
bin_PROGRAMS += tools/panda-model
EXTRA_DIST += tools/README-panda-model.md

MODEL_COMMON_SOURCES = \
	tools/model-input.c \
	tools/model-input.h
if HAVE_PCAP
MODEL_PCAP_CFLAGS = -DHAVE_PCAP $(PCAP_CFLAGS)
endif

tools_panda_model_SOURCES = tools/panda-model.c $(MODEL_COMMON_SOURCES)
tools_panda_model_CFLAGS = $(AM_CFLAGS) $(MODEL_PCAP_CFLAGS) $(JANSSON_CFLAGS)
tools_panda_model_LDADD = lib/panda/libpanda-json.a $(CLI_LIBADD) $(PCAP_LIBS) \
	$(JANSSON_LIBS)
