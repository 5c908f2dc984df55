"""The controller's command line: panda_controller.py
run|tune-bpf|check|status|sync
(openflow/controller/panda_controller.py launches it with Debian's
/usr/bin/python3, where python3-os-ken lives).

    panda_controller.py run --config panda.json \\
        [--listen tcp:127.0.0.1:6653 | --listen ssl:HOST:6653 \\
         --private-key K --certificate C --ca-cert CA \\
         [--ssl-switch-identity certificate|ca]] \\
        [--rest 127.0.0.1:8181 --rest-token-file FILE] \\
        [--ofctl /usr/bin/ovs-ofctl] [--poll 1.0] [--audit 60] \\
        [--log-file FILE] [--pid-file FILE] \
        [--auto-tune --auto-tune-load RHO [--auto-tune-cdf CDF] \
         [--auto-tune-interval 10] [--auto-tune-min-interval 60] \
         [--auto-tune-margin 0.1] [--auto-tune-confirm 2] \
         [--auto-tune-min-packets 1000] [--auto-tune-min-flows 100] \
         [--auto-tune-flt-levels 0] [--auto-tune-trim 0.01] \
         [--auto-tune-source-cap 0.5] [--auto-tune-max-step 0.5] \
         [--auto-tune-bound-factor 4] \
         [--auto-tune-model PANDA_MODEL]]
    panda_controller.py tune-bpf --host NAME=COMMAND [--host ...] \
        --auto-tune-load RHO [--policy FILE] [--policy-out FILE] \
        [--rounds N] [--host-timeout S] [the --auto-tune-* options]
    panda_controller.py check --config panda.json [--ofctl P]
    panda_controller.py status|sync --rest 127.0.0.1:8181 \\
        --rest-token-file FILE

'tune-bpf', 'check', 'status' and 'sync' do not import os-ken; 'run' hands its options
to the os-ken application (pandaovs.controller.app) in the environment and
starts os-ken's manager.
"""

import logging
import os
import ssl
import sys

from .. import cli
from . import config
from .config import (RUN_ENV, is_loopback, parse_listen, read_token,
                     split_hostport)


def _load(args, require_certificates=False):
    """The configuration of --config (and --ofctl), or None after saying
    why it cannot be used."""
    try:
        return config.load_checked(args.config, args.ofctl,
                                   require_certificates)
    except config.ConfigError as e:
        print("panda_controller: %s" % e, file=sys.stderr)
        return None


def cmd_check(args):
    cfg = _load(args)
    if cfg is None:
        return 1
    for w in cfg.warnings:
        print("warning: %s" % w, file=sys.stderr)
    for r in cfg.rules:
        print(r.describe())
        if r.policy is None:
            continue
        print("    panda(%s)" % r.policy.text())
        print("    action hex: %s" % r.policy.nx_action().hex())
    return 0


def cmd_rest(args):
    import urllib.error
    import urllib.request
    host, port = split_hostport(args.rest, 8181)
    url = "http://%s:%d/%s" % (host, port, args.command)
    try:
        token = read_token(args.rest_token_file)
    except config.ConfigError as e:
        print("panda_controller: %s" % e, file=sys.stderr)
        return cli.EXIT_FAILURE
    req = urllib.request.Request(
        url, method="POST" if args.command == "sync" else "GET",
        headers={"Authorization": "Bearer " + token})
    try:
        with urllib.request.urlopen(req, timeout=args.timeout) as r:
            body, ok = r.read().decode(), True
    except urllib.error.HTTPError as e:
        body, ok = e.read().decode(), False
    except OSError as e:
        # Unreachable: nothing on stdout (an HTTP error writes its body).
        print("panda_controller: %s: %s" % (url, e), file=sys.stderr)
        return cli.EXIT_FAILURE
    sys.stdout.write(body)
    return cli.EXIT_OK if ok else cli.EXIT_FAILURE


def cmd_run(args):
    try:
        from os_ken.cmd import manager
    except ImportError as e:
        print("panda_controller: os-ken is not importable by %s (%s; "
              "install Debian's python3-os-ken and run /usr/bin/python3)"
              % (sys.executable, e), file=sys.stderr)
        return cli.EXIT_FAILURE
    osken_args = _listen_args(args)
    if osken_args is None:
        return 1
    tls = "--ofp-ssl-listen-port" in osken_args
    # Refuse to start on a configuration that does not load: starting
    # would push nothing, and an operator expects the policy they named.
    if _load(args, tls and args.ssl_switch_identity == "certificate") \
            is None:
        return 1
    os.environ[RUN_ENV["tls"]] = "1" if tls else "0"
    os.environ[RUN_ENV["switch_identity"]] = args.ssl_switch_identity
    os.environ[RUN_ENV["config"]] = os.path.abspath(args.config)
    if args.rest:
        if not args.rest_token_file:
            print("panda_controller: --rest needs --rest-token-file FILE "
                  "(created with a random token if it does not exist; "
                  "'status' and 'sync' read it)", file=sys.stderr)
            return cli.EXIT_USAGE
        try:
            split_hostport(args.rest, 8181)
        except ValueError:
            print("panda_controller: --rest %s: expected [HOST:]PORT"
                  % args.rest, file=sys.stderr)
            return cli.EXIT_USAGE
        os.environ[RUN_ENV["rest"]] = args.rest
        os.environ[RUN_ENV["rest_token_file"]] = os.path.abspath(
            args.rest_token_file)
    if args.ofctl:
        os.environ[RUN_ENV["ofctl"]] = args.ofctl
    if args.auto_tune:
        settings = _autotune_settings(args)
        if settings is None:
            return cli.EXIT_USAGE
        os.environ[RUN_ENV["autotune"]] = settings.to_json()
    os.environ[RUN_ENV["poll"]] = str(args.poll)
    os.environ[RUN_ENV["audit"]] = str(args.audit)
    os.environ[RUN_ENV["logfmt"]] = "1"
    if args.log_file:
        osken_args += ["--log-file", args.log_file]
    if args.verbose:
        osken_args += ["--verbose"]
    if args.pid_file:
        osken_args += ["--pid-file", args.pid_file]
    logging.getLogger("panda_controller").setLevel(logging.INFO)
    manager.main(args=osken_args + ["pandaovs.controller.app"],
                 prog="panda_controller")
    return 0


def cmd_tune_bpf(args):
    from . import bpfhosts
    settings = _autotune_settings(args)
    if settings is None:
        return cli.EXIT_USAGE
    if settings.cdf is None:
        # The classifier's entry has no room for a flow's bytes: its
        # histograms have no flow lines, and a window would wait forever.
        print("panda_controller: tune-bpf needs --auto-tune-cdf: "
              "panda-bpf's histograms carry no flow sizes",
              file=sys.stderr)
        return cli.EXIT_USAGE
    if args.rounds < 0 or args.host_timeout <= 0:
        print("panda_controller: --rounds must be >= 0 and --host-timeout "
              "> 0", file=sys.stderr)
        return cli.EXIT_USAGE
    configured = None
    if args.policy:
        try:
            configured, _ = config.read_policy_file(args.policy)
        except config.ConfigError as e:
            print("panda_controller: --policy %s" % e, file=sys.stderr)
            return cli.EXIT_FAILURE
    try:
        hosts = [bpfhosts.Host.parse(h, args.host_timeout)
                 for h in args.host]
        tuner = bpfhosts.BpfTuner(hosts, settings, args.policy_out,
                                  configured)
    except ValueError as e:
        print("panda_controller: %s" % e, file=sys.stderr)
        return cli.EXIT_USAGE
    logging.basicConfig(level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(message)s")
    try:
        tuner.run(args.rounds)
    except KeyboardInterrupt:
        pass
    return 0


def _autotune_settings(args):
    """autotune.Settings from the --auto-tune-* options, checked here,
    once; None after saying what is wrong."""
    from . import autotune
    from .. import paths
    if args.auto_tune_load is None:
        print("panda_controller: --auto-tune needs --auto-tune-load RHO",
              file=sys.stderr)
        return None
    model = args.auto_tune_model or paths.tool("panda-model")
    try:
        levels = tuple(int(x) for x in args.auto_tune_flt_levels.split(","))
    except ValueError:
        print("panda_controller: --auto-tune-flt-levels %s: expected levels "
              "separated by commas, e.g. 0 or 0,1" % args.auto_tune_flt_levels,
              file=sys.stderr)
        return None
    try:
        return autotune.Settings(
            model=os.path.abspath(model),
            cdf=(os.path.abspath(args.auto_tune_cdf)
                 if args.auto_tune_cdf else None),
            load=args.auto_tune_load, interval=args.auto_tune_interval,
            min_interval=args.auto_tune_min_interval,
            margin=args.auto_tune_margin, confirm=args.auto_tune_confirm,
            min_packets=args.auto_tune_min_packets,
            min_flows=args.auto_tune_min_flows, flt_levels=levels,
            cdf_unit=args.auto_tune_cdf_unit, trim=args.auto_tune_trim,
            source_cap=args.auto_tune_source_cap,
            max_step=args.auto_tune_max_step,
            bound_factor=args.auto_tune_bound_factor)
    except autotune.AutoTuneError as e:
        print("panda_controller: --auto-tune-%s" % str(e).replace("_", "-"),
              file=sys.stderr)
        return None


def _autotune_options(parser):
    """The --auto-tune-* options, one set for 'run' and 'tune-bpf'."""
    at = parser.add_argument_group(
        "auto-tune", "the window, model and decision "
        "(pandaovs.controller.autotune)")
    at.add_argument("--auto-tune-cdf", default=None,
                    help="flow-size CDF for the thresholds while a window "
                         "has fewer than --auto-tune-min-flows finished "
                         "flows (default: none, the window waits)")
    at.add_argument("--auto-tune-cdf-unit", default="bytes",
                    choices=("bytes", "packets"))
    at.add_argument("--auto-tune-load", type=float, default=None,
                    help="load rho for the thresholds, 0 < rho < 1")
    at.add_argument("--auto-tune-interval", type=float, default=10.0,
                    help="seconds between pulls (default 10)")
    at.add_argument("--auto-tune-min-interval", type=float, default=60.0,
                    help="seconds between pushes of one id (default 60)")
    at.add_argument("--auto-tune-margin", type=float, default=0.10,
                    help="relative move of T or a threshold that counts as "
                         "a change (default 0.10)")
    at.add_argument("--auto-tune-confirm", type=int, default=2,
                    help="consecutive windows over the margin before a "
                         "push (default 2)")
    at.add_argument("--auto-tune-min-packets", type=int, default=1000,
                    help="packets per class in a window (default 1000)")
    at.add_argument("--auto-tune-min-flows", type=int, default=100,
                    help="finished flows in a window for the thresholds to "
                         "come from their sizes (default 100; 0: always "
                         "--auto-tune-cdf)")
    at.add_argument("--auto-tune-flt-levels", default="0",
                    help="levels whose packets are the FLT sample, e.g. 0 "
                         "or 0,1 (default 0)")
    at.add_argument("--auto-tune-trim", type=float, default=0.01,
                    help="share of each payload class's packets left out "
                         "at each end of its sizes (default 0.01)")
    at.add_argument("--auto-tune-source-cap", type=float, default=0.5,
                    help="largest share of a class (FLT packets, FHT "
                         "packets, flows) one bridge gives a window, with "
                         "two bridges or more (default 0.5)")
    at.add_argument("--auto-tune-max-step", type=float, default=0.5,
                    help="a push moves T and each threshold at most this "
                         "factor of its value (x 1.5 or / 1.5 by default)")
    at.add_argument("--auto-tune-bound-factor", type=float, default=4.0,
                    help="bounds of T and each threshold of a policy id "
                         "that \"auto_tune_bounds\" does not give: its "
                         "configured value / and x this (default 4)")
    at.add_argument("--auto-tune-model", default=None,
                    help="panda-model (default: the installed one; in "
                         "a checkout, the build tree's)")


def _listen_args(args):
    """os-ken's options for --listen (and the TLS files), or None after
    saying what is wrong.  Plain TCP: any host that reaches the port can
    claim any datapath id, so it listens on loopback unless told
    otherwise, with a warning; ssl: uses OVS's PKI (ovs-pki): the
    controller's key and certificate, and the CA that signed the
    switches' certificates (a switch without one is refused)."""
    try:
        proto, host, port = parse_listen(args.listen)
    except ValueError as e:
        print("panda_controller: --listen %s" % e, file=sys.stderr)
        return None
    tls = (args.private_key, args.certificate, args.ca_cert)
    if proto == "tcp":
        if any(tls) or args.ssl_switch_identity != "certificate":
            print("panda_controller: --private-key, --certificate, "
                  "--ca-cert and --ssl-switch-identity need --listen "
                  "ssl:HOST:PORT", file=sys.stderr)
            return None
        if not is_loopback(host):
            logging.getLogger("panda_controller").warning(
                "OpenFlow in plain TCP on %s: any host that reaches it can "
                "present a bridge's datapath id; use --listen ssl:... with "
                "OVS's PKI (ovs-pki)", host)
        return ["--ofp-listen-host", host, "--ofp-tcp-listen-port",
                str(port)]
    if not all(tls):
        print("panda_controller: --listen ssl: needs --private-key, "
              "--certificate and --ca-cert (ovs-pki: the controller's "
              "ctl-privkey.pem and ctl-cert.pem, and switchca/cacert.pem)",
              file=sys.stderr)
        return None
    # Load them here, so that a wrong file is a message, not a traceback
    # in os-ken's server loop.
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        ctx.load_cert_chain(args.certificate, args.private_key)
    except (OSError, ssl.SSLError) as e:
        print("panda_controller: --certificate %s / --private-key %s: %s"
              % (args.certificate, args.private_key, e), file=sys.stderr)
        return None
    try:
        ctx.load_verify_locations(args.ca_cert)
    except (OSError, ssl.SSLError) as e:
        print("panda_controller: --ca-cert %s: %s" % (args.ca_cert, e),
              file=sys.stderr)
        return None
    return ["--ofp-listen-host", host, "--ofp-ssl-listen-port", str(port),
            "--ctl-privkey", os.path.abspath(args.private_key),
            "--ctl-cert", os.path.abspath(args.certificate),
            "--ca-certs", os.path.abspath(args.ca_cert)]


def main(argv=None):
    ap = cli.ArgumentParser(
        prog="panda-controller",
        description="Push Panda policies to Open vSwitch bridges over "
                    "OpenFlow 1.3 (os-ken).")
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the controller")
    run.add_argument("--config", required=True,
                     help="controller configuration or policy JSON")
    run.add_argument("--listen", default="tcp:127.0.0.1:6653",
                     help="OpenFlow listen address: tcp:HOST:PORT or "
                          "ssl:HOST:PORT (default tcp:127.0.0.1:6653, "
                          "loopback only)")
    run.add_argument("--private-key", default=None,
                     help="ssl: the controller's private key (ovs-pki: "
                          "ctl-privkey.pem)")
    run.add_argument("--certificate", default=None,
                     help="ssl: the controller's certificate (ovs-pki: "
                          "ctl-cert.pem)")
    run.add_argument("--ca-cert", default=None,
                     help="ssl: CA certificate that signed the switches' "
                          "certificates (ovs-pki: switchca/cacert.pem)")
    run.add_argument("--ssl-switch-identity", default="certificate",
                     choices=("certificate", "ca"),
                     help="ssl: what identifies a switch: 'certificate' "
                          "(default): the certificate its entry in the "
                          "configuration's \"switches\" names; 'ca': any "
                          "certificate of the switch CA, for any allowed "
                          "datapath id")
    run.add_argument("--rest", default=None,
                     help="[HOST:]PORT of the REST interface (off by "
                          "default; HOST defaults to 127.0.0.1)")
    run.add_argument("--rest-token-file", default=None,
                     help="bearer token of the REST interface (created "
                          "with a random token, mode 600, if missing)")
    run.add_argument("--ofctl", default=None,
                     help="patched ovs-ofctl: check policies with lib/panda "
                          "before pushing them")
    run.add_argument("--poll", type=float, default=1.0,
                     help="seconds between checks of the files (default 1)")
    run.add_argument("--audit", type=float, default=60.0,
                     help="seconds between read-backs of every bridge that "
                          "repair changes made behind the controller's back "
                          "(default 60, 0 = off)")
    run.add_argument("--auto-tune", action="store_true",
                     help="pull the bridges' histograms, run panda-model "
                          "on them and push new T/thresholds "
                          "(pandaovs.controller.autotune)")
    _autotune_options(run)
    run.add_argument("--log-file", default=None)
    run.add_argument("--pid-file", default=None)
    run.add_argument("--verbose", action="store_true")
    tb = sub.add_parser("tune-bpf", help="auto-tune the policy of hosts "
                        "that mark with panda-bpf (pandaovs.controller."
                        "bpfhosts)")
    tb.add_argument("--host", action="append", required=True,
                    metavar="NAME=COMMAND",
                    help="a host and the command that runs its panda-bpf, "
                         "e.g. hv1='ssh hv1 panda-bpf' (repeat per host)")
    tb.add_argument("--policy", default=None,
                    help="the operator's policy (panda-model JSON, as a "
                         "configuration names): the bounds are around its "
                         "T and "
                         "thresholds (default: the first host's policy "
                         "when tune-bpf starts)")
    tb.add_argument("--policy-out", default=None,
                    help="write each pushed policy here (text), the file "
                         "to push to new hosts")
    tb.add_argument("--rounds", type=int, default=0,
                    help="stop after this many rounds (default 0: never)")
    tb.add_argument("--host-timeout", type=float, default=30,
                    help="seconds a host's command may take (default 30)")
    _autotune_options(tb)
    chk = sub.add_parser("check", help="check a configuration and print the "
                         "flows it installs")
    chk.add_argument("--config", required=True)
    chk.add_argument("--ofctl", default=None)
    for name in ("status", "sync"):
        p = sub.add_parser(name, help="%s through the REST interface" % (
            "show the state" if name == "status"
            else "reload the files and push them now"))
        p.add_argument("--rest", default="127.0.0.1:8181")
        p.add_argument("--rest-token-file", required=True,
                       help="the controller's --rest-token-file")
        p.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args(argv)
    if args.command == "run":
        return cmd_run(args)
    if args.command == "check":
        return cmd_check(args)
    if args.command == "tune-bpf":
        return cmd_tune_bpf(args)
    return cmd_rest(args)

