"""The Panda policy controller: an os-ken application.

Installs, on every bridge that connects, the flows of a configuration
(pandaovs.controller.config): match -> panda(policy), then NORMAL or
goto_table.  It keeps bridges in sync with the configuration and its policy
files, and reconciles them after reconnects.  Started by 'panda_controller.py
run' (pandaovs.controller.cli), which passes its options in the environment
(config.RUN_ENV); ofproto-ext/controller/README.md is the operator's guide.

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

This module imports os-ken (which monkey-patches the standard library
through eventlet); only os-ken's manager imports it.
"""

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

from . import config as config_mod
from . import diff
from .config import RUN_ENV, split_hostport
from .ofp import ERROR_FIELDS, OFP, Desired, Existing, error_text

LOG = logging.getLogger("panda_controller")
ALL_DISPATCHERS = [HANDSHAKE_DISPATCHER, CONFIG_DISPATCHER, MAIN_DISPATCHER]
REQUEST_TIMEOUT = 10.0


class OpenFlowError(Exception):
    pass


class ConfigRefused(OpenFlowError):
    """The switch refused what the configuration says, in a way every
    switch would: a panda action's policy (OFPBAC_BAD_ARGUMENT) or a match
    (OFPET_BAD_MATCH), as opposed to this switch's own limits (table full,
    no such table, a datapath without the action)."""


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
            cookie_prefix, config_mod.COOKIE_PREFIX_MASK,
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
        return diff.plan(desired, existing)

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
            host, port = split_hostport(self.rest, 8181)
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
            sig_before = config_mod.file_signature(
                self.config.files if self.config else [path])
            cfg = config_mod.load_checked(path, self.ofctl)
        except config_mod.ConfigError as e:
            self.config_error = str(e)
            self.signature = sig_before
            LOG.error("refusing configuration (%s): %s; %s", reason, e,
                      "generation %d stays in force" % self.generation
                      if self.config else "no policy installed by this "
                      "controller yet")
            return False
        self.signature = config_mod.file_signature(cfg.files)
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
                sig = config_mod.file_signature(self._watched_files())
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
