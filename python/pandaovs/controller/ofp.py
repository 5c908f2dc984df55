"""The controller's OpenFlow 1.3 objects, on os-ken (the one module of the
controller besides app.py that imports it).

NXActionPanda is the panda action (NXAST_PANDA: Nicira vendor action,
subtype 240, 160 bytes, more for a policy with rules; pandaovs.policy holds
the layout).  It is
registered with os-ken's NX action table, so flows read back from a switch
(flow stats) decode into NXActionPanda too and two encodings compare byte
for byte.  Desired and Existing are a rule's flow and a switch's flow in
the form pandaovs.controller.diff compares.
"""

from os_ken.ofproto import ofproto_v1_3 as OFP
from os_ken.ofproto import ofproto_v1_3_parser as parser

from ..policy import (NX_ACTION_LEN, NX_HEADER_LEN, NX_VENDOR_ID,
                      NXAST_PANDA, OFPAT_VENDOR, Policy, PolicyError)
from .diff import oxm_key


class NXActionPanda(parser.NXAction):
    """NXAST_PANDA for os-ken's OpenFlow 1.3 parser: NXActionPanda(policy),
    policy a pandaovs.policy.Policy."""

    _subtype = NXAST_PANDA

    def __init__(self, policy=None, type_=None, len_=None, experimenter=None,
                 subtype=None):
        super(NXActionPanda, self).__init__()
        self.policy = policy

    @classmethod
    def parser(cls, buf):
        # os-ken hands over what follows the subtype: the wire body.
        try:
            return cls(Policy.from_wire_body(bytes(buf)))
        except PolicyError:
            # A layout this controller does not know (another version of
            # the patch): keep the bytes, so that the flow stats reply still
            # parses and the flow simply compares unequal to ours.
            return parser.NXActionUnknown(NXAST_PANDA, bytes(buf))

    def serialize_body(self):
        return bytearray(self.policy.wire_body())

    def __str__(self):
        return "panda(%s)" % self.policy.text()


parser.NXAction.register(NXActionPanda)
# NXAction.parse() builds the class by name lookup in the parser module for
# to/from_jsondict; make it known there too.
setattr(parser, "NXActionPanda", NXActionPanda)
# The layout os-ken puts around serialize_body() is the one Policy knows.
assert (OFPAT_VENDOR, NX_VENDOR_ID, NX_ACTION_LEN - NX_HEADER_LEN) == (
    OFP.OFPAT_EXPERIMENTER, 0x00002320, 150)


class ExperimenterMultipart(parser.OFPExperimenterMultipart):
    """The body of an experimenter multipart reply, all of it.  os-ken's
    own parser (OFPExperimenterMultipart) says every body is 16 bytes long
    and parses the rest again as more bodies, so a reply whose length is
    not a multiple of 16 plus 8 to 15 (an NXST_PANDA_HISTOGRAM text of
    any other length) failed to parse: an exception in os-ken, the reply
    dropped, the request timing out.  The body is one struct, what
    follows the experimenter header is its data."""

    @classmethod
    def parser(cls, buf, offset):
        stats = super(ExperimenterMultipart, cls).parser(buf, offset)
        stats.length = len(buf) - offset
        return stats


parser.OFPExperimenterStatsReply.cls_stats_body_cls = ExperimenterMultipart


def encode_action(policy):
    """The action's bytes as os-ken puts them in a flow-mod."""
    buf = bytearray()
    NXActionPanda(policy).serialize(buf, 0)
    return bytes(buf)


def match_key(match):
    buf = bytearray()
    match.serialize(buf, 0)
    return oxm_key(bytes(buf))


def instructions_bytes(instructions):
    buf = bytearray()
    for inst in instructions:
        inst.serialize(buf, len(buf))
    return bytes(buf)


class Desired(object):
    """The flow a rule (pandaovs.controller.config.Rule) wants on one
    bridge."""

    def __init__(self, rule, policy=None):
        """'policy': the policy in force for the rule's id (auto-tune),
        default the rule's own."""
        self.rule = rule
        policy = rule.policy if policy is None else policy
        self.table = rule.table
        self.priority = rule.priority
        self.cookie = rule.cookie
        self.match = parser.OFPMatch(**rule.match)
        actions = ([NXActionPanda(policy)]
                   if policy is not None else [])
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
ERROR_FIELDS = {
    (OFP.OFPET_BAD_ACTION, OFP.OFPBAC_BAD_ARGUMENT):
        "the panda action's policy: lib/panda's validator on the switch "
        "refused a field (ovs-vswitchd's log names it: 'panda: ...'; the "
        "controller checks the same rules, so the switch runs another "
        "version: run the controller with --ofctl set to its ovs-ofctl)",
    (OFP.OFPET_BAD_ACTION, OFP.OFPBAC_BAD_TYPE):
        "the panda action: this bridge's datapath cannot run it (the "
        "action needs datapath_type=netdev; see ovs-appctl "
        "dpif/show-dp-features BRIDGE)",
    (OFP.OFPET_BAD_ACTION, OFP.OFPBAC_BAD_EXP_TYPE):
        "the panda action: the switch does not know NXAST_PANDA (not "
        "built with ovs-patches/panda.series?)",
    (OFP.OFPET_BAD_ACTION, OFP.OFPBAC_BAD_LEN):
        "the panda action: length mismatch (controller and switch "
        "disagree on the NXAST_PANDA layout)",
    (OFP.OFPET_BAD_INSTRUCTION, OFP.OFPBIC_BAD_TABLE_ID):
        "next: goto_table to a table the switch does not have",
    (OFP.OFPET_BAD_MATCH, OFP.OFPBMC_BAD_FIELD):
        "match: a field the switch does not support",
    (OFP.OFPET_BAD_MATCH, OFP.OFPBMC_BAD_VALUE):
        "match: a field value the switch cannot use",
    (OFP.OFPET_BAD_MATCH, OFP.OFPBMC_BAD_MASK):
        "match: a mask the switch cannot use",
    (OFP.OFPET_BAD_MATCH, OFP.OFPBMC_BAD_PREREQ):
        "match: a missing prerequisite (ip_proto needs eth_type "
        "0x0800 or 0x86dd, tcp_dst needs ip_proto 6, ...)",
    (OFP.OFPET_FLOW_MOD_FAILED, OFP.OFPFMFC_TABLE_FULL):
        "table: the flow table is full",
    (OFP.OFPET_FLOW_MOD_FAILED, OFP.OFPFMFC_BAD_TABLE_ID):
        "table: no such table",
}
