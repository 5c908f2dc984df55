#!/bin/sh
# Installs everything Panda-OVS needs to build, test and run its testbed on
# Debian 12 (bookworm).  Safe to run again; needs root.
# libbpf-dev and libxdp-dev: Open vSwitch's configure finds them and builds
# AF_XDP ports (type=afxdp), which the panda-sched system test uses.
# libbpf-dev, bpftool and clang-14 also build the BPF programs in bpf/ (the
# BPF DCTCP and its loader panda-cc; bpftool makes vmlinux.h from the
# kernel's BTF).
# dpdk-dev: DPDK 22.11 for the second OVS build with DPDK ports
# (DPDK=1 ./build.sh, ./configure --with-dpdk; the default build does not
# use it).
# mininet: the Mininet front end (mininet/README.md); installed without its
# recommended openvswitch-switch (--no-install-recommends below): the front
# end runs the build tree's OVS in a namespace, never the distro's.
# libtcmalloc-minimal4: sim/run.py preloads tcmalloc into the ns-3
# simulator (sim/README.md, "Speed": about 18% less CPU than glibc's
# malloc, same results); optional, glibc's malloc without it.
# python3-numpy, python3-scipy: the testbed's confidence intervals (Student's
# t quantiles; python/pandalab/testbed/stats.py).
# python3-argcomplete: tab completion of the Python programs' options
# (docs/reference.md, "Command-line convention"); optional at run time.
# valgrind: the benchmarks' --instructions modes (exact instruction counts,
# independent of the machine's load).
# debhelper, lintian: the Debian packages (packaging/build-debs.sh) and
# their check.  openssh-server: sshd for the two-host Ansible test, which
# runs its own sshd in each host namespace; installed without starting or
# enabling the machine's ssh service (below).
# ovn-central, ovn-host: the OVN recipe's system test (docs/ovn.md) runs
# their ovn-northd and ovn-controller against the build tree's OVS in
# namespaces.  ovn-host pulls in Debian's openvswitch-switch, whose service
# nothing here uses (on a host with an init system it starts the distro's
# OVS in the root namespace, which the tests never talk to).
set -e

APT_PACKAGES="
  build-essential autoconf automake libtool pkg-config rsync patch
  openvswitch-source libssl-dev libcap-ng-dev libunbound-dev libnuma-dev
  python3 python3-six python3-pytest python3-matplotlib python3-os-ken
  python3-numpy python3-scipy python3-argcomplete
  libcmocka-dev libjansson-dev libpcap-dev libmemcached-dev memcached
  libbpf-dev libxdp-dev dpdk-dev bpftool
  libns3-dev libgsl-dev libtcmalloc-minimal4
  iproute2 ethtool tcpdump tshark iputils-ping netcat-openbsd procps iperf3
  ansible ansible-lint
  mininet
  clang-14 libclang-rt-14-dev llvm-14 python3-pip openssl
  valgrind
  debhelper lintian
  ovn-central ovn-host
"

if [ "$(id -u)" != 0 ]; then
    echo "install-deps.sh: run as root (apt-get needs it)" >&2
    exit 1
fi

missing=
for p in $APT_PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" \
        || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "install-deps.sh: installing$missing"
    export DEBIAN_FRONTEND=noninteractive
    # tshark asks whether non-root users may capture; the answer is no.
    echo "wireshark-common wireshark-common/install-setuid boolean false" \
        | debconf-set-selections
    # iperf3 offers to run a system-wide server; the testbed starts its own
    # inside its namespaces, by pid, so no daemon.
    echo "iperf3 iperf3/start_daemon boolean false" | debconf-set-selections
    apt-get update -q
    apt-get install -y -q --no-install-recommends $missing
fi
# atheris (coverage-guided fuzzing of the controller's policy loader,
# tests/fuzz/fuzz_controller_config.py) is on PyPI only; Debian's Python
# gets it in /usr/local.  Without it the target runs its seeded random
# driver instead, so a failure here is a warning.
if ! /usr/bin/python3 -c "import atheris" 2>/dev/null; then
    /usr/bin/python3 -m pip install -q --break-system-packages atheris \
        || echo "install-deps.sh: warning: atheris not installed (the" \
                "controller's fuzz target will use its plain driver)" >&2
fi
# openssh-server: the package's postinst starts and enables ssh.service;
# a policy-rc.d that refuses every start keeps this machine without a
# system-wide sshd (the tests start their own, by pid).  An existing
# policy-rc.d is left as it is.
if ! dpkg-query -W -f='${Status}' openssh-server 2>/dev/null | grep -q "ok installed"; then
    echo "install-deps.sh: installing openssh-server (service not started)"
    policy=
    if [ ! -e /usr/sbin/policy-rc.d ]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\n# install-deps.sh: no service starts during this install\nexit 101\n' > $policy
        chmod 755 $policy
        trap 'rm -f "$policy"' EXIT
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends openssh-server
    if [ -n "$policy" ] && [ -d /run/systemd/system ]; then
        systemctl disable --now ssh.service ssh.socket >/dev/null 2>&1 || true
    fi
    if [ -n "$policy" ]; then rm -f "$policy"; trap - EXIT; fi
fi
echo "install-deps.sh: all dependencies present"
