# load_generator: the flow generator (panda-fg-server, panda-fg-client) and
# the memcached latency client (panda-mc-client).  See load_generator/README.md.
noinst_LIBRARIES += load_generator/liblg.a
load_generator_liblg_a_SOURCES = \
	load_generator/lg-common.c \
	load_generator/lg-common.h \
	load_generator/lg-evloop.c \
	load_generator/lg-evloop.h
LG_LIBADD = load_generator/liblg.a $(CLI_LIBADD)

bin_PROGRAMS += \
	load_generator/panda-fg-server \
	load_generator/panda-fg-client \
	load_generator/panda-mc-client \
	load_generator/panda-adp-server \
	load_generator/panda-adp-client
load_generator_panda_fg_server_SOURCES = load_generator/fg-server.c
load_generator_panda_fg_server_LDADD = $(LG_LIBADD)
load_generator_panda_fg_client_SOURCES = load_generator/fg-client.c
load_generator_panda_fg_client_LDADD = $(LG_LIBADD)
# The memcached client speaks memcached's text protocol itself rather than
# using libmemcached (README.md says why), so it needs no extra libraries.
load_generator_panda_mc_client_SOURCES = load_generator/mc-client.c
load_generator_panda_mc_client_LDADD = $(LG_LIBADD)
# ADPS's experiments: a server on the priority event loop
# (lg-evloop.h) and its open-loop client.
load_generator_panda_adp_server_SOURCES = load_generator/adp-server.c
load_generator_panda_adp_server_LDADD = $(LG_LIBADD)
load_generator_panda_adp_client_SOURCES = load_generator/adp-client.c
load_generator_panda_adp_client_LDADD = $(LG_LIBADD)

EXTRA_DIST += \
	load_generator/README.md \
	load_generator/cdf/web-search.cdf \
	load_generator/cdf/data-mining.cdf \
	load_generator/cdf/fb-hadoop.cdf \
	load_generator/cdf/fb-web.cdf \
	load_generator/cdf/ali-storage.cdf \
	load_generator/cdf/memcached-values.cdf
