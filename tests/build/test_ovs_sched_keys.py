"""vswitch.xml documents panda-sched's keys with the text generated from
lib/panda's key table (tools/panda-sched-keys --vswitch-xml=qos|queue):
the patched Open vSwitch tree that the build makes has exactly that text
in the panda-sched groups of the QoS and Queue tables.  (The OVS autotest
"panda-sched keys: the library's table, status:config and vswitch.xml
agree" checks the running side: the keys the library refuses and lists,
status:config and the documented keys are the same.)

When the table changes, regenerate the text in the patch series:
build-aux/ovs-patch-tree.sh init DIR; in DIR/vswitchd/vswitch.xml replace
the <column> elements of the two groups below with the tool's output;
amend the panda-sched commit; build-aux/ovs-patch-tree.sh export DIR.
"""
import os
import re
import subprocess

import pytest

from pandaovs import paths

BUILD = paths.BuildTree()
TOOL = BUILD.path("tools/panda-sched-keys")
XML = BUILD.path("ovs/src/vswitchd/vswitch.xml")

pytestmark = pytest.mark.skipif(
    not (os.path.exists(TOOL) and os.path.exists(XML)),
    reason="no %s or %s (./build.sh)" % (TOOL, XML))


def group_columns(xml, table, title):
    """The <column> elements of group 'title' of table 'table', as text."""
    t = xml.index('<table name="%s"' % table)
    t_end = xml.index("</table>", t)
    g = xml.index('<group title="%s">' % title, t, t_end)
    g_end = xml.index("    </group>", g)
    body = xml[g:g_end]
    first = body.index("      <column ")
    return body[first:]


def generated(what):
    res = subprocess.run([TOOL, "--vswitch-xml=" + what],
                         capture_output=True, text=True, timeout=30)
    assert res.returncode == 0, res.stderr
    return res.stdout


@pytest.mark.parametrize("table,title,what", [
    ("QoS", "Configuration for panda-sched", "qos"),
    ("Queue", "Configuration for panda-sched QoS", "queue"),
])
def test_vswitch_xml_has_the_generated_keys(table, title, what):
    with open(XML) as f:
        xml = f.read()
    have = group_columns(xml, table, title)
    want = generated(what)
    assert have.rstrip("\n") == want.rstrip("\n"), \
        "vswitch.xml's panda-sched keys differ from the key table: " \
        "regenerate them (this file's docstring says how)"
    # Every key of the table is there (the tool's names).
    names = subprocess.run([TOOL, "--names"], capture_output=True,
                           text=True).stdout.strip().split(", ")
    keys = re.findall(r'<column name="other_config" key="([^"]+)"', have)
    if what == "qos":
        assert keys == [n for n in names if not n.startswith("LEVEL.")]
    else:
        assert ["LEVEL." + k for k in keys] == \
            [n for n in names if n.startswith("LEVEL.")]
