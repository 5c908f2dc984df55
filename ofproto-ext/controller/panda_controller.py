#!/usr/bin/python3
"""Panda policy controller: an os-ken application.

Installs, on every bridge that connects, the flows of a configuration
(panda_config.py): match -> panda(policy), then NORMAL or goto_table.  It
keeps bridges in sync with the configuration and its policy files, and
reconciles them after reconnects.  See README.md in this directory for the
configuration format and the operator recipe.

Usage (the system Python, where Debian's python3-os-ken lives):

    /usr/bin/python3 panda_controller.py run --config panda.json \\
        [--listen 127.0.0.1:6653] [--rest 127.0.0.1:8181] \\
        [--ofctl /usr/bin/ovs-ofctl] [--poll 1.0] [--audit 60] \\
        [--log-file FILE] [--pid-file FILE]
    /usr/bin/python3 panda_controller.py check --config panda.json [--ofctl P]
    /usr/bin/python3 panda_controller.py status|sync --rest 127.0.0.1:8181

How a bridge is synchronised (one at a time per bridge):

 1. flow stats request for the controller's cookie prefix (all tables);
 2. diff against the configuration: unchanged flows are left alone (their
    packet counters keep running), a changed action on the same match is
    OFPFC_MODIFY_STRICT, anything else is a strict delete plus an add;
 3. the changes go in one ONF bundle (OpenFlow 1.3 extension, atomic and
    ordered): open, add each flow-mod, barrier -- any OpenFlow error for an
    added message discards the bundle -- then commit and barrier;
 4. the flows are read back and diffed again; the bridge is "synced" only if
    nothing is left to do.

The panda action carries its policy id; the switch keeps the per-connection
counters per id, so a policy change with the same id keeps them.
"""

import argparse
import json
import logging
import os
import signal
import struct
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

LOG = logging.getLogger("panda_controller")

ENV = {
    "config": "PANDA_CONTROLLER_CONFIG",
    "rest": "PANDA_CONTROLLER_REST",
    "ofctl": "PANDA_CONTROLLER_OFCTL",
    "poll": "PANDA_CONTROLLER_POLL",
    "audit": "PANDA_CONTROLLER_AUDIT",
    "logfmt": "PANDA_CONTROLLER_LOG_FORMAT",
}


def _split_hostport(s, default_port):
    host, _, port = s.rpartition(":")
    if not host:
        host, port = s, default_port
    return host.strip("[]"), int(port)


# ---------------------------------------------------------------------------
# The os-ken application.  Imported only when running (os-ken monkey-patches
# the standard library through eventlet).
# ---------------------------------------------------------------------------
# 'status' and 'sync' only talk HTTP: do not pay for importing os-ken.
_LIGHT = (__name__ == "__main__" and len(sys.argv) > 1
          and sys.argv[1] in ("status", "sync"))
try:
    if _LIGHT:
        raise ImportError("not needed")
    from os_ken.base import app_manager
    from os_ken.controller import ofp_event
    from os_ken.controller.handler import (CONFIG_DISPATCHER, DEAD_DISPATCHER,
                                           HANDSHAKE_DISPATCHER,
                                           MAIN_DISPATCHER, set_ev_cls)
    from os_ken.lib import hub
    from os_ken.ofproto import ofproto_v1_3
    from os_ken.ofproto import ofproto_v1_3_parser as parser
    HAVE_OS_KEN = True
except ImportError:     # 'check' still works, and the error says why.
    HAVE_OS_KEN = False

import panda_config  # noqa: E402

if HAVE_OS_KEN:
    import panda_ofp  # noqa: E402,F401  (registers NXActionPanda)

ALL_DISPATCHERS = [HANDSHAKE_DISPATCHER, CONFIG_DISPATCHER,
                   MAIN_DISPATCHER] if HAVE_OS_KEN else []
REQUEST_TIMEOUT = 10.0


class OpenFlowError(Exception):
    pass


class ConfigRefused(OpenFlowError):
    """The switch refused what the configuration says, in a way every
    switch would: a panda action's policy (OFPBAC_BAD_ARGUMENT) or a match
    (OFPET_BAD_MATCH), as opposed to this switch's own limits (table full,
    no such table, a datapath without the action)."""


def error_text(ofp, msg):
    """'OFPBAC_BAD_ARGUMENT (type 2, code 15)' style name of an error."""
    try:
        t = ofp.ofp_error_type_to_str(msg.type)
        c = ofp.ofp_error_code_to_str(msg.type, msg.code)
        t = t.split("(")[0]
        c = c.split("(")[0]
    except Exception:
        t, c = "type %d" % msg.type, "code %d" % msg.code
    if msg.type == 0xffff:
        # Experimenter error (e.g. a Nicira error from OVS).
        return "experimenter error (exp_type %s, experimenter 0x%x)" % (
            getattr(msg, "exp_type", "?"), getattr(msg, "experimenter", 0))
    return "%s/%s (type %d, code %d)" % (t, c, msg.type, msg.code)


# What an error says about our flow-mod: the part of the rule at fault.
def _error_fields():
    o = ofproto_v1_3
    return {
        (o.OFPET_BAD_ACTION, o.OFPBAC_BAD_ARGUMENT):
            "the panda action's policy: lib/panda's validator on the switch "
            "refused a field (ovs-vswitchd's log names it: 'panda: ...'; "
            "run the controller with --ofctl to get it before pushing)",
        (o.OFPET_BAD_ACTION, o.OFPBAC_BAD_TYPE):
            "the panda action: this bridge's datapath cannot run it (the "
            "action needs datapath_type=netdev; see ovs-appctl "
            "dpif/show-dp-features BRIDGE)",
        (o.OFPET_BAD_ACTION, o.OFPBAC_BAD_EXP_TYPE):
            "the panda action: the switch does not know NXAST_PANDA (not "
            "built with ovs-patches/panda.series?)",
        (o.OFPET_BAD_ACTION, o.OFPBAC_BAD_LEN):
            "the panda action: length mismatch (controller and switch "
            "disagree on the NXAST_PANDA layout)",
        (o.OFPET_BAD_INSTRUCTION, o.OFPBIC_BAD_TABLE_ID):
            "next: goto_table to a table the switch does not have",
        (o.OFPET_BAD_MATCH, o.OFPBMC_BAD_FIELD):
            "match: a field the switch does not support",
        (o.OFPET_BAD_MATCH, o.OFPBMC_BAD_VALUE):
            "match: a field value the switch cannot use",
        (o.OFPET_BAD_MATCH, o.OFPBMC_BAD_MASK):
            "match: a mask the switch cannot use",
        (o.OFPET_BAD_MATCH, o.OFPBMC_BAD_PREREQ):
            "match: a missing prerequisite (ip_proto needs eth_type "
            "0x0800 or 0x86dd, tcp_dst needs ip_proto 6, ...)",
        (o.OFPET_FLOW_MOD_FAILED, o.OFPFMFC_TABLE_FULL):
            "table: the flow table is full",
        (o.OFPET_FLOW_MOD_FAILED, o.OFPFMFC_BAD_TABLE_ID):
            "table: no such table",
    }


if HAVE_OS_KEN:
    OFP = ofproto_v1_3
    ERROR_FIELDS = _error_fields()

    def match_key(match):
        """Canonical form of an OXM match: the TLVs, sorted, with full masks
        dropped, fully wildcarded fields dropped and value bits outside a
        mask cleared, so that the match we build and the match the switch
        reports compare equal."""
        buf = bytearray()
        match.serialize(buf, 0)
        length = struct.unpack_from("!H", buf, 2)[0]
        tlvs = []
        off = 4
        while off + 4 <= length:
            cls_, field, n = struct.unpack_from("!HBB", buf, off)
            payload = bytes(buf[off + 4:off + 4 + n])
            off += 4 + n
            if field & 1:
                half = n // 2
                value, mask = payload[:half], payload[half:]
                value = bytes(v & m for v, m in zip(value, mask))
                if not any(mask):
                    continue
                if all(b == 0xff for b in mask):
                    tlvs.append((cls_, field & ~1, value))
                else:
                    tlvs.append((cls_, field, value + mask))
            else:
                tlvs.append((cls_, field, payload))
        return tuple(sorted(tlvs))

    def instructions_bytes(instructions):
        buf = bytearray()
        for inst in instructions:
            inst.serialize(buf, len(buf))
        return bytes(buf)

    class Desired(object):
        """The flow a rule wants on one bridge."""

        def __init__(self, rule):
            self.rule = rule
            self.table = rule.table
            self.priority = rule.priority
            self.cookie = rule.cookie
            self.match = parser.OFPMatch(**rule.match)
            actions = ([panda_ofp.NXActionPanda(rule.policy)]
                       if rule.policy is not None else [])
            if rule.next[0] == "normal":
                actions.append(parser.OFPActionOutput(OFP.OFPP_NORMAL, 0))
            self.instructions = [parser.OFPInstructionActions(
                OFP.OFPIT_APPLY_ACTIONS, actions)] if actions else []
            if rule.next[0] == "goto_table":
                self.instructions.append(
                    parser.OFPInstructionGotoTable(rule.next[1]))
            self.key = (self.table, self.priority, match_key(self.match))
            self.ibytes = instructions_bytes(self.instructions)

    class Existing(object):
        """A flow with our cookie prefix, as the switch reports it."""

        def __init__(self, stats):
            self.table = stats.table_id
            self.priority = stats.priority
            self.cookie = stats.cookie
            self.match = stats.match
            self.key = (self.table, self.priority, match_key(stats.match))
            try:
                self.ibytes = instructions_bytes(stats.instructions)
            except Exception:       # unparseable: never equal to ours
                self.ibytes = None
            self.n_packets = stats.packet_count

    class Session(object):
        """One connected bridge."""

        def __init__(self, app, dp):
            self.app = app
            self.dp = dp
            self.dpid = dp.id
            self.addr = "%s:%s" % dp.address[:2] if dp.address else "?"
            self.lock = hub.Semaphore(1)
            self.waiters = {}       # xid -> Waiter
            self.errors = {}        # xid -> [(type, code, text)]
            self.labels = {}        # xid -> what that message was
            self.connected = True
            self.state = "connected"
            self.synced_generation = None
            self.last_error = None
            self.last_sync = None
            self.last_changes = None
            self.syncs = 0
            self.bundle_id = 0

        @property
        def name(self):
            return "0x%016x" % self.dpid

        def status(self):
            return {"dpid": self.name, "address": self.addr,
                    "connected": self.connected, "state": self.state,
                    "synced_generation": self.synced_generation,
                    "last_sync": self.last_sync, "syncs": self.syncs,
                    "last_changes": self.last_changes,
                    "last_error": self.last_error}

        # -- request/response -------------------------------------------
        def _send(self, msg, label=None):
            if not self.connected:
                raise OpenFlowError("switch disconnected")
            if msg.xid is None:
                self.dp.set_xid(msg)
            if label:
                self.labels[msg.xid] = label
            if not self.dp.send_msg(msg):
                raise OpenFlowError("switch disconnected")
            return msg.xid

        def request(self, msg, label=None, timeout=REQUEST_TIMEOUT):
            """Sends 'msg' and waits for its reply (all parts of a
            multipart reply).  Raises OpenFlowError on an error reply."""
            self.dp.set_xid(msg)
            w = Waiter()
            self.waiters[msg.xid] = w
            try:
                self._send(msg, label)
                if not w.event.wait(timeout):
                    raise OpenFlowError("no reply to %s within %.0f s"
                                        % (label or type(msg).__name__,
                                           timeout))
            finally:
                self.waiters.pop(msg.xid, None)
            if not self.connected and not w.done:
                raise OpenFlowError("switch disconnected")
            if w.error:
                raise OpenFlowError(w.error)
            return w.replies

        def barrier(self):
            self.request(parser.OFPBarrierRequest(self.dp), "barrier")

        def on_reply(self, msg, more=False):
            w = self.waiters.get(msg.xid)
            if w is None:
                return False
            w.replies.append(msg)
            if not more:
                w.done = True
                w.event.set()
            return True

        def on_error(self, msg):
            text = error_text(self.dp.ofproto, msg)
            label = self.labels.get(msg.xid)
            what = ERROR_FIELDS.get((msg.type, getattr(msg, "code", None)))
            full = "%s%s%s" % (text, " for " + label if label else "",
                               ": " + what if what else "")
            self.errors.setdefault(msg.xid, []).append(
                (msg.type, getattr(msg, "code", None), full))
            w = self.waiters.get(msg.xid)
            if w is not None:
                w.error = full
                w.done = True
                w.event.set()
            LOG.error("switch %s: OpenFlow error %s", self.name, full)

        def disconnected(self):
            self.connected = False
            self.state = "disconnected"
            for w in list(self.waiters.values()):
                w.event.set()

        # -- synchronisation --------------------------------------------
        def dump_ours(self, cookie_prefix):
            req = parser.OFPFlowStatsRequest(
                self.dp, 0, OFP.OFPTT_ALL, OFP.OFPP_ANY, OFP.OFPG_ANY,
                cookie_prefix, panda_config.COOKIE_PREFIX_MASK,
                parser.OFPMatch())
            flows = []
            for rep in self.request(req, "flow stats request"):
                flows.extend(Existing(s) for s in rep.body)
            return flows

        def plan(self, config, existing):
            desired = {}
            for r in config.rules_for(self.dpid):
                d = Desired(r)
                desired[d.key] = d
            keep, modify, delete, add = [], [], [], []
            seen = set()
            for e in existing:
                d = desired.get(e.key)
                if d is not None and d.key not in seen \
                        and e.cookie == d.cookie:
                    seen.add(d.key)
                    if e.ibytes == d.ibytes:
                        keep.append(d)
                    else:
                        modify.append(d)
                else:
                    delete.append(e)
            add = [d for k, d in desired.items() if k not in seen]
            return keep, modify, delete, add

        def flow_mod(self, command, table, priority, match, cookie,
                     instructions=(), cookie_mask=0):
            return parser.OFPFlowMod(
                self.dp, cookie=cookie, cookie_mask=cookie_mask,
                table_id=table, command=command, idle_timeout=0,
                hard_timeout=0, priority=priority,
                buffer_id=OFP.OFP_NO_BUFFER, out_port=OFP.OFPP_ANY,
                out_group=OFP.OFPG_ANY, flags=0, match=match,
                instructions=list(instructions))

        def apply(self, modify, delete, add):
            """Sends the changes in one atomic ONF bundle."""
            msgs = []
            for e in delete:
                msgs.append((self.flow_mod(
                    OFP.OFPFC_DELETE_STRICT, e.table, e.priority, e.match,
                    e.cookie, cookie_mask=panda_config.U64),
                    "delete of stale flow table=%d priority=%d cookie=0x%x"
                    % (e.table, e.priority, e.cookie)))
            for d in modify:
                msgs.append((self.flow_mod(
                    OFP.OFPFC_MODIFY_STRICT, d.table, d.priority, d.match,
                    d.cookie, d.instructions), "modify of " +
                    d.rule.describe()))
            for d in add:
                msgs.append((self.flow_mod(
                    OFP.OFPFC_ADD, d.table, d.priority, d.match, d.cookie,
                    d.instructions), "add of " + d.rule.describe()))
            self.bundle_id = (self.bundle_id + 1) & 0xffffffff
            bid = self.bundle_id
            flags = OFP.ONF_BF_ATOMIC | OFP.ONF_BF_ORDERED
            self.request(parser.ONFBundleCtrlMsg(
                self.dp, bid, OFP.ONF_BCT_OPEN_REQUEST, flags, []),
                "bundle open")
            xids = []
            for m, label in msgs:
                add_msg = parser.ONFBundleAddMsg(self.dp, bid, flags, m, [])
                xids.append(self._send(add_msg, label))
            self.barrier()
            failed = [e for x in xids for e in self.errors.get(x, [])]
            if failed:
                config = any((t, c) == (OFP.OFPET_BAD_ACTION,
                                        OFP.OFPBAC_BAD_ARGUMENT)
                             or t == OFP.OFPET_BAD_MATCH
                             for t, c, _ in failed)
                try:
                    self.request(parser.ONFBundleCtrlMsg(
                        self.dp, bid, OFP.ONF_BCT_DISCARD_REQUEST, flags,
                        []), "bundle discard")
                except OpenFlowError as e:
                    LOG.warning("switch %s: discarding bundle: %s",
                                self.name, e)
                raise (ConfigRefused if config else OpenFlowError)(
                    "switch refused the update, nothing changed: "
                    + "; ".join(text for _, _, text in failed))
            try:
                self.request(parser.ONFBundleCtrlMsg(
                    self.dp, bid, OFP.ONF_BCT_COMMIT_REQUEST, flags, []),
                    "bundle commit")
            except OpenFlowError as e:
                failed = [t for x in xids for _, _, t in self.errors.get(x, [])]
                raise OpenFlowError("commit failed, nothing changed: %s%s"
                                    % (e, "; " + "; ".join(failed)
                                       if failed else ""))
            self.barrier()

        def sync(self, reason):
            with self.lock:
                config, gen = self.app.config, self.app.generation
                if config is None:
                    self.state = "no-config"
                    LOG.warning("switch %s: no valid configuration; leaving "
                                "its flows as they are", self.name)
                    return False
                if not self.connected:
                    return False
                self.state = "syncing"
                self.syncs += 1
                # Labels and errors of earlier syncs are of no further use.
                self.labels.clear()
                self.errors.clear()
                try:
                    existing = self.dump_ours(config.cookie)
                    keep, modify, delete, add = self.plan(config, existing)
                    changes = {"unchanged": len(keep),
                               "modified": len(modify),
                               "deleted": len(delete), "added": len(add)}
                    if modify or delete or add:
                        self.apply(modify, delete, add)
                        # Read back: the switch must now match exactly.
                        left = self.plan(config,
                                         self.dump_ours(config.cookie))[1:]
                        if any(left):
                            raise OpenFlowError(
                                "flows differ after the update (modify %d, "
                                "delete %d, add %d)" % tuple(
                                    len(x) for x in left))
                except OpenFlowError as e:
                    self.state = "error" if self.connected \
                        else "disconnected"
                    self.last_error = "%s (%s)" % (e, reason)
                    LOG.error("switch %s: sync (%s) failed: %s", self.name,
                              reason, e)
                    if isinstance(e, ConfigRefused):
                        self.app.config_refused(gen, self, e)
                    return False
                except Exception as e:     # a bug: report it, stay usable
                    self.state = "error"
                    self.last_error = "internal error: %r (%s)" % (e, reason)
                    LOG.exception("switch %s: sync (%s) failed", self.name,
                                  reason)
                    return False
                self.state = "synced"
                self.synced_generation = gen
                self.last_error = None
                self.last_sync = time.time()
                self.last_changes = changes
                quiet = reason == "audit" and not (modify or delete or add)
                (LOG.debug if quiet else LOG.info)(
                    "switch %s: synced generation %d (%s): %s",
                    self.name, gen, reason,
                    ", ".join("%s %d" % kv for kv in changes.items()))
                return True

    class QuietWSGIServer(hub.WSGIServer):
        """os-ken's WSGI server without a log line per request."""

        def serve_forever(self):
            import eventlet.wsgi
            eventlet.wsgi.server(self.server, self.handle, log_output=False)

    class Waiter(object):
        def __init__(self):
            self.event = hub.Event()
            self.replies = []
            self.error = None
            self.done = False

    class PandaController(app_manager.OSKenApp):
        OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

        def __init__(self, *args, **kwargs):
            super(PandaController, self).__init__(*args, **kwargs)
            self.config_path = os.environ.get(ENV["config"])
            if not self.config_path:
                raise SystemExit("panda_controller: no configuration (set %s "
                                 "or use 'panda_controller.py run --config')"
                                 % ENV["config"])
            if os.environ.get(ENV["logfmt"]):
                # Started by 'panda_controller.py run': time and level on
                # every line of the log.
                fmt = logging.Formatter(
                    "%(asctime)s %(levelname)s %(name)s: %(message)s")
                for h in logging.getLogger().handlers:
                    h.setFormatter(fmt)
            self.ofctl = os.environ.get(ENV["ofctl"]) or None
            self.poll = float(os.environ.get(ENV["poll"]) or 1.0)
            self.audit = float(os.environ.get(ENV["audit"]) or 0)
            self.rest = os.environ.get(ENV["rest"]) or None
            self.sessions = {}
            self.config = None
            self.prev_config = None
            self.generation = 0
            self.config_error = None
            self.config_loaded = None
            self.signature = None
            self.reload_requested = False
            self.reload_config("startup")
            self.threads.append(hub.spawn(self._watch))
            if self.rest:
                host, port = _split_hostport(self.rest, 8181)
                self.wsgi = QuietWSGIServer((host, port), self._rest_app)
                self.threads.append(hub.spawn(self.wsgi.serve_forever))
                LOG.info("REST interface on http://%s:%d/", host, port)
            signal.signal(signal.SIGHUP, self._sighup)

        # -- configuration ----------------------------------------------
        def _sighup(self, signum, frame):
            self.reload_requested = True

        def reload_config(self, reason):
            """Loads the configuration; returns True if it changed and is
            valid.  A refused configuration leaves the previous one (and the
            switches) as they are."""
            path = self.config_path
            try:
                sig_before = panda_config.file_signature(
                    self.config.files if self.config else [path])
                cfg = panda_config.load(path)
                if self.ofctl:
                    panda_config.check_with_ofctl(cfg, self.ofctl)
            except panda_config.ConfigError as e:
                self.config_error = str(e)
                self.signature = sig_before
                LOG.error("refusing configuration (%s): %s; %s", reason, e,
                          "generation %d stays in force" % self.generation
                          if self.config else "no policy installed by this "
                          "controller yet")
                return False
            self.signature = panda_config.file_signature(cfg.files)
            for w in cfg.warnings:
                LOG.warning("%s", w)
            self.config_error = None
            self.prev_config = self.config
            self.config = cfg
            self.generation += 1
            self.config_loaded = time.time()
            LOG.info("configuration generation %d (%s): %d rule(s): %s",
                     self.generation, reason, len(cfg.rules),
                     "; ".join("%s: %s" % (r.name, r.policy.text()
                                           if r.policy else "no policy")
                               for r in cfg.rules))
            return True

        def config_refused(self, gen, session, error):
            """A switch refused generation 'gen' because of what it says (a
            policy lib/panda refuses, a match OpenFlow refuses).  Every
            switch applies the same rules, so the generation is refused as
            a whole: back to the previous one, on every bridge (also those
            that connect later), until the files change again."""
            if gen != self.generation or self.prev_config is None:
                return
            self.config_error = "generation %d refused by switch %s: %s" % (
                gen, session.name, error)
            self.config = self.prev_config
            self.prev_config = None
            self.generation += 1
            LOG.error("%s; reverting to the previous configuration as "
                      "generation %d", self.config_error, self.generation)
            hub.spawn(self.sync_all, "revert after refusal")

        def _watched_files(self):
            return self.config.files if self.config else [self.config_path]

        def _watch(self):
            last_audit = time.monotonic()
            while True:
                hub.sleep(self.poll)
                try:
                    if self.audit and \
                            time.monotonic() - last_audit >= self.audit:
                        # Repair drift (someone edited or deleted our
                        # flows): read back and reconcile every bridge.
                        last_audit = time.monotonic()
                        self.sync_all("audit")
                    sig = panda_config.file_signature(self._watched_files())
                    if self.reload_requested or sig != self.signature:
                        why = "SIGHUP" if self.reload_requested \
                            else "file changed"
                        self.reload_requested = False
                        if self.reload_config(why):
                            self.sync_all(why)
                except Exception:
                    LOG.exception("watcher")

        def sync_all(self, reason, wait=False):
            threads = [hub.spawn(s.sync, reason)
                       for s in list(self.sessions.values()) if s.connected]
            if wait:
                return [t.wait() for t in threads]
            return None

        # -- OpenFlow events --------------------------------------------
        @set_ev_cls(ofp_event.EventOFPStateChange,
                    [MAIN_DISPATCHER, DEAD_DISPATCHER])
        def _state_change(self, ev):
            dp = ev.datapath
            if ev.state == MAIN_DISPATCHER:
                old = self.sessions.get(dp.id)
                if old is not None and old.dp is not dp:
                    old.disconnected()
                s = Session(self, dp)
                self.sessions[dp.id] = s
                LOG.info("switch %s connected from %s", s.name, s.addr)
                hub.spawn(s.sync, "switch connected")
            elif ev.state == DEAD_DISPATCHER and dp.id is not None:
                s = self.sessions.get(dp.id)
                if s is not None and s.dp is dp:
                    s.disconnected()
                    LOG.info("switch %s disconnected", s.name)

        def _session(self, msg):
            s = self.sessions.get(msg.datapath.id)
            return s if s is not None and s.dp is msg.datapath else None

        @set_ev_cls(ofp_event.EventOFPErrorMsg, ALL_DISPATCHERS)
        def _error(self, ev):
            s = self._session(ev.msg)
            if s is not None:
                s.on_error(ev.msg)

        @set_ev_cls(ofp_event.EventOFPBarrierReply, MAIN_DISPATCHER)
        def _barrier_reply(self, ev):
            s = self._session(ev.msg)
            if s is not None:
                s.on_reply(ev.msg)

        @set_ev_cls(ofp_event.EventOFPFlowStatsReply, MAIN_DISPATCHER)
        def _flow_stats_reply(self, ev):
            s = self._session(ev.msg)
            if s is not None:
                s.on_reply(ev.msg,
                           more=bool(ev.msg.flags & OFP.OFPMPF_REPLY_MORE))

        @set_ev_cls(ofp_event.EventONFBundleCtrlMsg, MAIN_DISPATCHER)
        def _bundle_reply(self, ev):
            s = self._session(ev.msg)
            if s is not None:
                s.on_reply(ev.msg)

        # -- REST -------------------------------------------------------
        def status(self):
            cfg = self.config
            return {
                "config": {
                    "path": self.config_path,
                    "generation": self.generation,
                    "loaded": self.config_loaded,
                    "error": self.config_error,
                    "warnings": cfg.warnings if cfg else [],
                    "rules": cfg.summary() if cfg else [],
                },
                "switches": [s.status() for _, s in
                             sorted(self.sessions.items())],
            }

        def _rest_app(self, environ, start_response):
            method = environ.get("REQUEST_METHOD")
            path = environ.get("PATH_INFO", "/").rstrip("/") or "/"
            code = "200 OK"
            if path in ("/", "/status") and method == "GET":
                body = self.status()
            elif path == "/sync" and method == "POST":
                # Reload the files (if changed or not) and push everything.
                ok = self.reload_config("REST /sync")
                results = self.sync_all("REST /sync", wait=True)
                body = self.status()
                # A switch refusing the policy refuses the generation too.
                ok = ok and self.config_error is None
                body["result"] = {
                    "config_accepted": ok,
                    "switches_synced": sum(1 for r in results if r),
                    "switches_failed": sum(1 for r in results if not r)}
                if not ok or not all(results):
                    code = "409 Conflict"
            else:
                code = "404 Not Found"
                body = {"error": "GET /status or POST /sync"}
            data = (json.dumps(body, indent=2, sort_keys=True, default=str)
                    + "\n").encode()
            start_response(code, [("Content-Type", "application/json"),
                                  ("Content-Length", str(len(data)))])
            return [data]


# ---------------------------------------------------------------------------
# Command line.
# ---------------------------------------------------------------------------
def cmd_check(args):
    try:
        cfg = panda_config.load(args.config)
        if args.ofctl:
            panda_config.check_with_ofctl(cfg, args.ofctl)
    except panda_config.ConfigError as e:
        print("panda_controller: %s" % e, file=sys.stderr)
        return 1
    for w in cfg.warnings:
        print("warning: %s" % w, file=sys.stderr)
    for r in cfg.rules:
        print(r.describe())
        if r.policy is None:
            continue
        print("    panda(%s)" % r.policy.text())
        if HAVE_OS_KEN:
            print("    action hex: %s" % r.policy.encode().hex())
    return 0


def cmd_rest(args):
    import urllib.error
    import urllib.request
    host, port = _split_hostport(args.rest, 8181)
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
    if not HAVE_OS_KEN:
        print("panda_controller: os-ken is not importable by %s (install "
              "Debian's python3-os-ken and run /usr/bin/python3)"
              % sys.executable, file=sys.stderr)
        return 2
    # Refuse to start on a configuration that does not load: starting
    # would push nothing, and an operator expects the policy they named.
    try:
        cfg = panda_config.load(args.config)
        if args.ofctl:
            panda_config.check_with_ofctl(cfg, args.ofctl)
    except panda_config.ConfigError as e:
        print("panda_controller: %s" % e, file=sys.stderr)
        return 1
    os.environ[ENV["config"]] = os.path.abspath(args.config)
    if args.rest:
        os.environ[ENV["rest"]] = args.rest
    if args.ofctl:
        os.environ[ENV["ofctl"]] = args.ofctl
    os.environ[ENV["poll"]] = str(args.poll)
    os.environ[ENV["audit"]] = str(args.audit)
    os.environ[ENV["logfmt"]] = "1"
    host, port = _split_hostport(args.listen, 6653)
    osken_args = ["--ofp-listen-host", host, "--ofp-tcp-listen-port",
                  str(port)]
    if args.log_file:
        osken_args += ["--log-file", args.log_file]
    if args.verbose:
        osken_args += ["--verbose"]
    if args.pid_file:
        osken_args += ["--pid-file", args.pid_file]
    from os_ken.cmd import manager
    logging.getLogger("panda_controller").setLevel(logging.INFO)
    manager.main(args=osken_args + ["panda_controller"],
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


if __name__ == "__main__":
    sys.exit(main())
