"""Runs tools/panda-model and checks what it writes.  The testbed's stage 2
and the simulator both turn model runs into a policy record
{"panda": {...}, "pias": {...}} through run(), so a model's output is
checked one way (pandaovs.policy.Policy) wherever it is used."""

import json
import subprocess

from .policy import Policy, PolicyError


class ModelToolError(RuntimeError):
    pass


def run(cmds, out_json):
    """Runs each panda-model command of 'cmds' (name -> argv) that writes
    its JSON to out_json[name].  Returns (record, warnings): record maps
    name -> {"action": the policy's text, "model": panda-model's JSON,
    "command": the command line}; warnings maps name -> the policy's
    warnings (a list, maybe empty)."""
    record, warnings = {}, {}
    for name, cmd in cmds.items():
        res = subprocess.run(cmd, capture_output=True, text=True,
                             timeout=600)
        if res.returncode:
            raise ModelToolError("panda-model (%s) failed: %s"
                                 % (name, (res.stderr or res.stdout).strip()))
        with open(out_json[name]) as f:
            doc = json.load(f)
        try:
            policy, warnings[name] = Policy.from_json(doc, out_json[name])
        except PolicyError as e:
            raise ModelToolError("panda-model (%s) wrote a policy that "
                                 "cannot be used: %s" % (name, e))
        record[name] = {"action": policy.text(), "model": doc,
                        "command": " ".join(cmd)}
    return record, warnings
