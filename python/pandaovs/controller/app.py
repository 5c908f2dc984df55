"""The Panda policy controller: an os-ken application.

Installs, on every bridge that connects, the flows of a configuration
(pandaovs.controller.config): match -> panda(policy), then NORMAL or
goto_table.  It keeps bridges in sync with the configuration and its policy
files, and reconciles them after reconnects.  Started by 'panda_controller.py
run' (pandaovs.controller.cli), which passes its options in the environment
(config.RUN_ENV); openflow/controller/README.md is the operator's guide.

How a bridge is synchronised (one at a time per bridge):

 1. flow stats request for the controller's cookie prefix (all tables);
 2. diff against the configuration (pandaovs.controller.diff): unchanged
    flows are left alone (their packet counters keep running), a changed
    action on the same match is OFPFC_MODIFY_STRICT, anything else is a
    strict delete plus an add;
 3. the changes go in one ONF bundle (OpenFlow 1.3 extension, atomic and
    ordered): open, add each flow-mod, barrier -- any OpenFlow error for an
    added message discards the bundle -- then commit and barrier;
 4. the flows are read back and diffed again; the bridge is "synced" only if
    nothing is left to do.

The panda action carries its policy id; the switch keeps the per-connection
counters per id, so a policy change with the same id keeps them.

Which peers are switches (pandaovs.controller.switches): a connection is
accepted only for a datapath id the configuration allows (and, over TLS,
by default only with the certificate the configuration binds to it);
others are closed and counted in status ("refused_peers").  A switch that
refuses its bundle fails alone: its flows stay as they were (the bundle
is atomic), its status says "refused" with the switch's message, and the
other switches keep the new generation; it is tried again when the
configuration changes, on reconnect or on 'sync'.

With --auto-tune (pandaovs.controller.autotune) the controller also pulls
every bridge's histograms (NXST_PANDA_HISTOGRAM) periodically, runs
panda-model on them and, when T or the thresholds move by more than the
margin (with hysteresis and a minimum interval), pushes the tuned policy
under the same id in place of the configured one, until the configuration
changes again.

This module imports os-ken (which monkey-patches the standard library
through eventlet); only os-ken's manager imports it.
"""

import hmac
import json
import logging
import os
import signal
import time

from os_ken.base import app_manager
from os_ken.controller import ofp_event
from os_ken.controller.handler import (CONFIG_DISPATCHER, DEAD_DISPATCHER,
                                       HANDSHAKE_DISPATCHER, MAIN_DISPATCHER,
                                       set_ev_cls)
from os_ken.lib import hub
from os_ken.ofproto import ofproto_v1_3
from os_ken.ofproto import ofproto_v1_3_parser as parser

from . import autotune
from . import config as config_mod
from . import diff
from .. import sizehist
from .config import RUN_ENV, is_loopback, read_token, split_hostport
from .ofp import ERROR_FIELDS, OFP, Desired, Existing, error_text

LOG = logging.getLogger("panda_controller")
ALL_DISPATCHERS = [HANDSHAKE_DISPATCHER, CONFIG_DISPATCHER, MAIN_DISPATCHER]
REQUEST_TIMEOUT = 10.0
# A second connection for a connected datapath id: the first must answer an
# echo request within this many seconds to keep its place.
ECHO_TIMEOUT = 3.0
# The most a reply (all parts of a multipart reply) may hold: a switch
# cannot make the controller buffer without end.
MAX_REPLY_BYTES = 64 << 20
# Refused peers kept in status (the most recent), and how often the same
# peer's refusal is logged again.
MAX_REFUSED_PEERS = 64
REFUSED_LOG_INTERVAL = 60.0


class OpenFlowError(Exception):
    pass


class ConfigRefused(OpenFlowError):
    """The switch refused what the configuration says: a panda action's
    policy (OFPBAC_BAD_ARGUMENT) or a match (OFPET_BAD_MATCH), or the plan
    would remove its forwarding; as opposed to this switch's own limits
    (table full, no such table, a datapath without the action).  Either
    way only this switch fails: a switch's word never decides for the
    others."""


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
        self.refused = 0            # second connections refused
        self.last_refused = None    # address of the last one
        self.refused_generation = None  # the generation it refused

    @property
    def name(self):
        return "0x%016x" % self.dpid

    def status(self):
        return {"dpid": self.name, "address": self.addr,
                "name": self.app.switch_name(self.dpid),
                "refused_generation": self.refused_generation,
                "connected": self.connected, "state": self.state,
                "synced_generation": self.synced_generation,
                "last_sync": self.last_sync, "syncs": self.syncs,
                "last_changes": self.last_changes,
                "last_error": self.last_error,
                "duplicate_connections_refused": self.refused,
                "last_duplicate_address": self.last_refused}

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
        w.size += getattr(msg, "msg_len", 0) or 0
        if w.size > MAX_REPLY_BYTES:
            w.error = "reply over %d bytes: refused" % MAX_REPLY_BYTES
            w.replies = []
            more = False
        else:
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
            cookie_prefix, config_mod.COOKIE_PREFIX_MASK,
            parser.OFPMatch())
        flows = []
        for rep in self.request(req, "flow stats request"):
            flows.extend(Existing(s) for s in rep.body)
        return flows

    def plan(self, config, existing):
        desired = {}
        for r in config.rules_for(self.dpid):
            d = Desired(r, self.app.policy_for(r))
            desired[d.key] = d
        return diff.plan(desired, existing)

    def histograms(self):
        """{policy id: sizehist.Histogram} of the bridge's datapath, read
        with NXST_PANDA_HISTOGRAM (every id; the text may span several
        replies)."""
        req = parser.OFPExperimenterStatsRequest(
            self.dp, 0, sizehist.NX_VENDOR_ID, sizehist.NXST_PANDA_HISTOGRAM,
            sizehist.request_body())
        data = b"".join(bytes(rep.body.data) for rep in
                        self.request(req, "panda histogram request"))
        try:
            return sizehist.parse(data.decode("ascii"))
        except (UnicodeDecodeError, sizehist.HistogramError) as e:
            raise OpenFlowError("malformed panda histogram reply: %s" % e)

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
                e.cookie, cookie_mask=config_mod.U64),
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
            if self.refused_generation == gen:
                # Refused already (by the audit's or the change's sync,
                # whichever came first): asked again with the next
                # generation (a change, 'sync', SIGHUP) or on a reconnect
                # (a new session), not at every audit.
                return False
            self.state = "syncing"
            self.syncs += 1
            # Labels and errors of earlier syncs are of no further use.
            self.labels.clear()
            self.errors.clear()
            try:
                existing = self.dump_ours(config.cookie)
                keep, modify, delete, add = self.plan(config, existing)
                lost = diff.forwarding_removed(keep, modify, delete, add)
                if lost and not config.confirm_no_forwarding:
                    # Also after a controller restart with a new
                    # configuration (no previous generation to compare).
                    raise ConfigRefused(
                        "would remove forwarding: the update deletes the "
                        "catch-all flow%s %s and leaves no catch-all in "
                        "%s table; nothing changed (keep a catch-all rule, "
                        "or set \"%s\": true to mean it)" % (
                            "s" if len(lost) > 1 else "",
                            ", ".join("table=%d priority=%d cookie=0x%x"
                                      % (e.table, e.priority, e.cookie)
                                      for e in lost),
                            "its" if len(lost) == 1 else "their",
                            config_mod.CONFIRM_KEY))
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
                refused = isinstance(e, ConfigRefused) and self.connected
                self.state = "refused" if refused else "error" \
                    if self.connected else "disconnected"
                self.last_error = "%s%s (%s)" % (
                    "generation %d refused by switch %s: " % (gen, self.name)
                    if refused else "", e, reason)
                if refused:
                    self.refused_generation = gen
                LOG.error("switch %s: sync (%s) failed: %s%s", self.name,
                          reason, e, "; its flows stay as they were, the "
                          "other switches keep generation %d" % gen
                          if refused else "")
                return False
            except Exception as e:     # a bug: report it, stay usable
                self.state = "error"
                self.last_error = "internal error: %r (%s)" % (e, reason)
                LOG.exception("switch %s: sync (%s) failed", self.name,
                              reason)
                return False
            self.state = "synced"
            self.synced_generation = gen
            self.refused_generation = None
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
        self.size = 0
        self.error = None
        self.done = False

class PandaController(app_manager.OSKenApp):
    OFP_VERSIONS = [ofproto_v1_3.OFP_VERSION]

    def __init__(self, *args, **kwargs):
        super(PandaController, self).__init__(*args, **kwargs)
        self.config_path = os.environ.get(RUN_ENV["config"])
        if not self.config_path:
            raise SystemExit("panda_controller: no configuration (set %s "
                             "or use 'panda_controller.py run --config')"
                             % RUN_ENV["config"])
        if os.environ.get(RUN_ENV["logfmt"]):
            # Started by 'panda_controller.py run': time and level on
            # every line of the log.
            fmt = logging.Formatter(
                "%(asctime)s %(levelname)s %(name)s: %(message)s")
            for h in logging.getLogger().handlers:
                h.setFormatter(fmt)
        self.ofctl = os.environ.get(RUN_ENV["ofctl"]) or None
        self.poll = float(os.environ.get(RUN_ENV["poll"]) or 1.0)
        self.audit = float(os.environ.get(RUN_ENV["audit"]) or 0)
        self.rest = os.environ.get(RUN_ENV["rest"]) or None
        self.sessions = {}
        self.tls = os.environ.get(RUN_ENV["tls"]) == "1"
        self.by_certificate = (os.environ.get(RUN_ENV["switch_identity"])
                               or "certificate") == "certificate"
        self.refused_peers = {}     # (dpid, host) -> record (status)
        self.ignored_histograms = {}    # switch -> ids not its own
        self.cw = config_mod.ConfigWatcher(
            self.config_path, self.ofctl, LOG,
            require_certificates=self.tls and self.by_certificate)
        self.tuned = {}         # policy id -> the auto-tuned Policy in force
        self.tuners = {}        # policy id -> autotune.Tuner
        self.decisions = []     # the last auto-tune decisions (REST)
        self.autotune = None
        if os.environ.get(RUN_ENV["autotune"]):
            self.autotune = autotune.Settings.from_json(
                os.environ[RUN_ENV["autotune"]])
        self.reload_requested = False
        self.reload_config("startup", force=True)
        self.threads.append(hub.spawn(self._watch))
        if self.autotune:
            LOG.info("auto-tune: %s", self.autotune.to_json())
            self.threads.append(hub.spawn(self._autotune_loop))
        if self.rest:
            # Authentication always (a bearer token from a file), loopback
            # unless told otherwise: the interface reloads and pushes.
            token_file = os.environ.get(RUN_ENV["rest_token_file"])
            if not token_file:
                raise SystemExit("panda_controller: the REST interface needs "
                                 "a token file (%s, or 'panda_controller.py "
                                 "run --rest-token-file')"
                                 % RUN_ENV["rest_token_file"])
            try:
                self.rest_token = read_token(token_file, create=True)
            except config_mod.ConfigError as e:
                raise SystemExit("panda_controller: %s" % e)
            host, port = split_hostport(self.rest, 8181)
            if not is_loopback(host):
                LOG.warning("REST interface bound to %s, reachable from other "
                            "hosts: its token is all that protects it (plain "
                            "HTTP: the token travels in clear)", host)
            self.wsgi = QuietWSGIServer((host, port), self._rest_app)
            self.threads.append(hub.spawn(self.wsgi.serve_forever))
            LOG.info("REST interface on http://%s:%d/ (token in %s)", host,
                     port, token_file)
        signal.signal(signal.SIGHUP, self._sighup)

    # The configuration in force (pandaovs.controller.config.ConfigWatcher).
    @property
    def config(self):
        return self.cw.config

    @property
    def generation(self):
        return self.cw.generation

    @property
    def config_error(self):
        return self.cw.error

    # -- configuration ----------------------------------------------
    def _sighup(self, signum, frame):
        self.reload_requested = True

    def reload_config(self, reason, force=False):
        """Loads the configuration if its files changed (or 'force');
        returns True if a new generation is in force.  A refused one leaves
        the previous one (and the switches) as they are; it is reported
        once, not at every poll."""
        dpids = [d for d, s in self.sessions.items() if s.connected]
        try:
            new = self.cw.reload(reason, dpids, force)
        except Exception:           # a bug: report it, keep the generation
            LOG.exception("reloading the configuration (%s)", reason)
            return False
        if new and self.tuned:
            # The operator's files win over what auto-tune derived.
            LOG.info("auto-tune: new configuration: the tuned policies of "
                     "ids %s give way to the configured ones",
                     ", ".join(str(i) for i in sorted(self.tuned)))
            self.tuned.clear()
            self.tuners.clear()
        if new:
            # A switch the new configuration no longer allows leaves.
            for sess in list(self.sessions.values()):
                why = self.admission(sess.dp) if sess.connected else None
                if why:
                    LOG.error("switch %s: disconnecting: %s", sess.name, why)
                    sess.disconnected()
                    sess.dp.close()
        return new

    def switch_name(self, dpid):
        cfg = self.config
        s = cfg.switches.switches.get(dpid) if cfg else None
        return s.name if s else None

    def admission(self, dp):
        """None if 'dp' (a connection that presented its datapath id) is
        one of the configuration's switches; else why not."""
        cfg = self.config
        if cfg is None:
            return "no configuration in force names the switches"
        der = None
        if self.tls:
            try:
                der = dp.socket.getpeercert(binary_form=True)
            except (AttributeError, ValueError, OSError):
                der = None
        return cfg.switches.admit(dp.id, der, self.tls, self.by_certificate)

    def refuse_peer(self, dp, why):
        """Closes 'dp', a peer that is not one of the switches; counted
        in status, logged once per REFUSED_LOG_INTERVAL per peer."""
        addr = "%s:%s" % dp.address[:2] if dp.address else "?"
        host = dp.address[0] if dp.address else "?"
        key = (dp.id, host)
        now = time.time()
        rec = self.refused_peers.pop(key, None) or {
            "dpid": "0x%016x" % dp.id if dp.id is not None else None,
            "count": 0, "logged": 0}
        rec.update(count=rec["count"] + 1, address=addr, reason=why,
                   last=now)
        self.refused_peers[key] = rec
        while len(self.refused_peers) > MAX_REFUSED_PEERS:
            self.refused_peers.pop(next(iter(self.refused_peers)))
        if now - rec["logged"] >= REFUSED_LOG_INTERVAL:
            rec["logged"] = now
            LOG.error("refusing the OpenFlow peer %s presenting datapath id "
                      "%s: %s (%d time%s)", addr, rec["dpid"], why,
                      rec["count"], "s" if rec["count"] > 1 else "")
        dp.close()

    def policy_for(self, rule):
        """The policy a rule's flow carries: the auto-tuned one of its id,
        if any, else the configured one."""
        p = rule.policy
        return self.tuned.get(p.id, p) if p is not None else None

    # -- auto-tune ----------------------------------------------------
    def _autotune_loop(self):
        while True:
            hub.sleep(self.autotune.interval)
            try:
                self.autotune_round()
            except Exception:
                LOG.exception("auto-tune")

    def _decision(self, pid, action, reason, **inputs):
        autotune.record_decision(self.decisions, LOG, pid, action, reason,
                                 inputs)

    def autotune_round(self):
        """One pull -> model -> decision round over the connected bridges
        the configuration allows and every panda policy id of it; of each
        bridge, only the histograms of the ids its rules give it."""
        cfg = self.config
        if cfg is None:
            return
        configured = {}
        for r in cfg.rules:
            if r.policy is not None and r.policy.kind == "panda":
                configured.setdefault(r.policy.id, r.policy)
        sessions = [s for s in list(self.sessions.values())
                    if s.connected and s.state == "synced"
                    and cfg.switches.allows(s.dpid)]
        if not configured or not sessions:
            return
        snaps, ignored = {}, {}
        for s in sessions:
            own = {r.policy.id for r in cfg.rules_for(s.dpid)
                   if r.policy is not None and r.policy.kind == "panda"}
            if not own:
                continue
            try:
                hists = s.histograms()
            except OpenFlowError as e:
                LOG.warning("auto-tune: switch %s: %s", s.name, e)
                continue
            for pid, h in hists.items():
                if pid in own and not h.shared:
                    snaps.setdefault(pid, {})[s.name] = h
                elif h.packets() or h.flows():
                    ignored.setdefault(s.name, []).append(
                        "%d%s" % (pid, " (shared)" if h.shared else ""))
        if ignored != self.ignored_histograms:
            for name, ids in sorted(ignored.items()):
                LOG.warning("auto-tune: switch %s: histograms of ids %s not "
                            "used (not ids its rules give it, or shared "
                            "between ids)", name, ", ".join(ids))
            self.ignored_histograms = ignored
        pushed = False
        for pid in sorted(configured):
            pushed |= self._autotune_id(cfg, pid, configured[pid],
                                        snaps.get(pid, {}))
        if pushed:
            self.sync_all("auto-tune", wait=True)

    def _autotune_id(self, cfg, pid, configured, snaps):
        """The decision for policy id 'pid' on this round's histograms
        'snaps' ({switch: Histogram}); True if it pushes."""
        current = self.tuned.get(pid, configured)
        tuner = self.tuners.get(pid)
        if tuner is None:
            tuner = self.tuners[pid] = autotune.Tuner(pid, self.autotune)
        bounds = autotune.effective_bounds(configured, cfg.bounds.get(pid),
                                           self.autotune.bound_factor)
        action, reason, proposed, inputs = tuner.step(current, snaps, bounds)
        self._decision(pid, action, reason, **inputs)
        if proposed is not None:
            self.tuned[pid] = proposed
        return proposed is not None

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
                if self.reload_requested or self.cw.changed():
                    forced = self.reload_requested
                    why = "SIGHUP" if forced else "file changed"
                    self.reload_requested = False
                    if self.reload_config(why, force=forced):
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
            why = self.admission(dp)
            if why:
                self.refuse_peer(dp, why)
                return
            old = self.sessions.get(dp.id)
            if old is not None and old.dp is not dp and old.connected:
                # Never let a second connection take a connected bridge's
                # place on its word (its datapath id): see _duplicate.
                hub.spawn(self._duplicate, old, dp)
                return
            self._new_session(dp)
        elif ev.state == DEAD_DISPATCHER and dp.id is not None:
            s = self.sessions.get(dp.id)
            if s is not None and s.dp is dp:
                s.disconnected()
                LOG.info("switch %s disconnected", s.name)

    def _new_session(self, dp):
        s = Session(self, dp)
        self.sessions[dp.id] = s
        LOG.info("switch %s connected from %s", s.name, s.addr)
        hub.spawn(s.sync, "switch connected")

    def _duplicate(self, old, dp):
        """A connection for the datapath id of the connected session 'old'.
        If the first connection still answers (an echo request), the
        second is refused and closed and the first keeps its session: two
        switches with one datapath id, or a peer claiming a bridge's id,
        must not take over its flows.  If it does not answer, it was a
        dead connection not yet noticed (a switch that restarted): the new
        one replaces it."""
        new_addr = "%s:%s" % dp.address[:2] if dp.address else "?"
        try:
            old.request(parser.OFPEchoRequest(old.dp, data=b"panda"),
                        "echo request", timeout=ECHO_TIMEOUT)
            alive = old.connected
        except OpenFlowError:
            alive = False
        if alive:
            old.refused += 1
            old.last_refused = new_addr
            LOG.error("switch %s: refusing a second connection from %s: the "
                      "datapath id is connected from %s, which answers (two "
                      "switches with one datapath id, or a peer claiming "
                      "it); the first connection stays", old.name, new_addr,
                      old.addr)
            dp.close()
            return
        LOG.warning("switch %s: the connection from %s does not answer; the "
                    "new one from %s replaces it", old.name, old.addr,
                    new_addr)
        old.disconnected()
        old.dp.close()
        if dp.is_active:
            self._new_session(dp)

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

    @set_ev_cls(ofp_event.EventOFPExperimenterStatsReply, MAIN_DISPATCHER)
    def _experimenter_stats_reply(self, ev):
        s = self._session(ev.msg)
        if s is not None:
            s.on_reply(ev.msg,
                       more=bool(ev.msg.flags & OFP.OFPMPF_REPLY_MORE))

    @set_ev_cls(ofp_event.EventOFPEchoReply, MAIN_DISPATCHER)
    def _echo_reply(self, ev):
        s = self._session(ev.msg)
        if s is not None:
            s.on_reply(ev.msg)

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
                "loaded": self.cw.loaded,
                "error": self.config_error,
                "warnings": cfg.warnings if cfg else [],
                "rules": cfg.summary() if cfg else [],
                "allowed_switches": cfg.switches.summary() if cfg else [],
                "tls_switch_identity": (("certificate" if self.by_certificate
                                         else "ca") if self.tls else None),
            },
            "switches": [s.status() for _, s in
                         sorted(self.sessions.items())],
            "refused_peers": [dict((k, v) for k, v in r.items()
                                   if k != "logged")
                              for r in self.refused_peers.values()],
            "auto_tune": None if self.autotune is None else {
                "settings": json.loads(self.autotune.to_json()),
                "tuned": {str(k): v.text() for k, v in
                          sorted(self.tuned.items())},
                "bounds": {str(p.id): autotune.effective_bounds(
                    p, cfg.bounds.get(p.id),
                    self.autotune.bound_factor).summary()
                    for p in {r.policy.id: r.policy for r in cfg.rules
                              if r.policy is not None
                              and r.policy.kind == "panda"}.values()}
                if cfg else {},
                "ignored_histograms": self.ignored_histograms,
                "decisions": self.decisions,
            },
        }

    def _authorized(self, environ):
        got = environ.get("HTTP_AUTHORIZATION", "")
        want = "Bearer " + self.rest_token
        return hmac.compare_digest(got.encode(), want.encode())

    def _rest_app(self, environ, start_response):
        method = environ.get("REQUEST_METHOD")
        path = environ.get("PATH_INFO", "/").rstrip("/") or "/"
        code = "200 OK"
        headers = []
        if not self._authorized(environ):
            code = "401 Unauthorized"
            headers.append(("WWW-Authenticate", 'Bearer realm="panda"'))
            body = {"error": "authentication required: header "
                             "'Authorization: Bearer <token>', the token "
                             "from the controller's --rest-token-file"}
        elif path in ("/", "/status") and method == "GET":
            body = self.status()
        elif path == "/sync" and method == "POST":
            # Reload the files (if changed or not) and push everything.
            ok = self.reload_config("REST /sync", force=True)
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
                              ("Content-Length", str(len(data)))]
                       + headers)
        return [data]
