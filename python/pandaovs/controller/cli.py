"""The controller's command line: panda_controller.py run|check|status|sync
(ofproto-ext/controller/panda_controller.py launches it with Debian's
/usr/bin/python3, where python3-os-ken lives).

    panda_controller.py run --config panda.json \\
        [--listen 127.0.0.1:6653] [--rest 127.0.0.1:8181] \\
        [--ofctl /usr/bin/ovs-ofctl] [--poll 1.0] [--audit 60] \\
        [--log-file FILE] [--pid-file FILE]
    panda_controller.py check --config panda.json [--ofctl P]
    panda_controller.py status|sync --rest 127.0.0.1:8181

'check', 'status' and 'sync' do not import os-ken; 'run' hands its options
to the os-ken application (pandaovs.controller.app) in the environment and
starts os-ken's manager.
"""

import argparse
import logging
import os
import sys

from . import config
from .config import RUN_ENV, split_hostport


def _load(args):
    """The configuration of --config (and --ofctl), or None after saying
    why it cannot be used."""
    try:
        return config.load_checked(args.config, args.ofctl)
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
    req = urllib.request.Request(
        url, method="POST" if args.command == "sync" else "GET")
    try:
        with urllib.request.urlopen(req, timeout=args.timeout) as r:
            body, ok = r.read().decode(), True
    except urllib.error.HTTPError as e:
        body, ok = e.read().decode(), False
    except OSError as e:
        print("panda_controller: %s: %s" % (url, e), file=sys.stderr)
        return 2
    sys.stdout.write(body)
    return 0 if ok else 1


def cmd_run(args):
    try:
        from os_ken.cmd import manager
    except ImportError as e:
        print("panda_controller: os-ken is not importable by %s (%s; "
              "install Debian's python3-os-ken and run /usr/bin/python3)"
              % (sys.executable, e), file=sys.stderr)
        return 2
    # Refuse to start on a configuration that does not load: starting
    # would push nothing, and an operator expects the policy they named.
    if _load(args) is None:
        return 1
    os.environ[RUN_ENV["config"]] = os.path.abspath(args.config)
    if args.rest:
        os.environ[RUN_ENV["rest"]] = args.rest
    if args.ofctl:
        os.environ[RUN_ENV["ofctl"]] = args.ofctl
    os.environ[RUN_ENV["poll"]] = str(args.poll)
    os.environ[RUN_ENV["audit"]] = str(args.audit)
    os.environ[RUN_ENV["logfmt"]] = "1"
    host, port = split_hostport(args.listen, 6653)
    osken_args = ["--ofp-listen-host", host, "--ofp-tcp-listen-port",
                  str(port)]
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


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="panda_controller.py",
        description="Push Panda policies to Open vSwitch bridges over "
                    "OpenFlow 1.3 (os-ken).")
    sub = ap.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run the controller")
    run.add_argument("--config", required=True,
                     help="controller configuration or policy JSON")
    run.add_argument("--listen", default="0.0.0.0:6653",
                     help="OpenFlow listen address (default 0.0.0.0:6653)")
    run.add_argument("--rest", default=None,
                     help="HOST:PORT for the REST interface (off by "
                          "default)")
    run.add_argument("--ofctl", default=None,
                     help="patched ovs-ofctl: check policies with lib/panda "
                          "before pushing them")
    run.add_argument("--poll", type=float, default=1.0,
                     help="seconds between checks of the files (default 1)")
    run.add_argument("--audit", type=float, default=60.0,
                     help="seconds between read-backs of every bridge that "
                          "repair changes made behind the controller's back "
                          "(default 60, 0 = off)")
    run.add_argument("--log-file", default=None)
    run.add_argument("--pid-file", default=None)
    run.add_argument("--verbose", action="store_true")
    chk = sub.add_parser("check", help="check a configuration and print the "
                         "flows it installs")
    chk.add_argument("--config", required=True)
    chk.add_argument("--ofctl", default=None)
    for name in ("status", "sync"):
        p = sub.add_parser(name, help="%s through the REST interface" % (
            "show the state" if name == "status"
            else "reload the files and push them now"))
        p.add_argument("--rest", default="127.0.0.1:8181")
        p.add_argument("--timeout", type=float, default=60)
    args = ap.parse_args(argv)
    if args.command == "run":
        return cmd_run(args)
    if args.command == "check":
        return cmd_check(args)
    return cmd_rest(args)

