"""The Python driver of tools/panda-model: the one place that builds its
command lines, runs it and checks what it writes, and that reads a policy
record back.  The testbed's stage 2, the simulator's modelling and the
controller's auto-tune all make their policies through run_model(), so a
model's output is checked one way (pandaovs.policy.Policy, i.e. lib/panda)
wherever it is used.

A policy record is {"panda": {...}, "pias": {...}, ...}: per name, "action"
(the policy's canonical text) and, from a model run, "model" (panda-model's
JSON) and "command"."""

import json
import os
import subprocess

from .policy import Policy, PolicyError


class ModelToolError(RuntimeError):
    pass


def command(tool, out, **options):
    """panda-model's argv writing its JSON to 'out': each option NAME=VALUE
    becomes --NAME VALUE (underscores as dashes, e.g. flt_filter ->
    --flt-filter), True a bare flag, None or False nothing, a list or
    tuple its items joined by '/' (dscp, queues)."""
    argv = [tool]
    for name, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        if value is True:
            argv.append(flag)
        elif isinstance(value, (list, tuple)):
            argv += [flag, "/".join(str(v) for v in value)]
        else:
            argv += [flag, value if isinstance(value, str) else repr(value)
                     if isinstance(value, float) else str(value)]
    return argv + ["-o", out]


def run_model(tool, runs, out_dir):
    """Runs panda-model ('tool') once per name -> options of 'runs'
    (command()), each writing out_dir/<name>-policy.json, and reads each
    policy through lib/panda.  Returns (record, warnings): record maps name
    -> {"action", "model", "command"}; warnings maps name -> the policy's
    warnings (a list, maybe empty).  Raises ModelToolError naming the run
    that failed or wrote a policy that cannot be used."""
    if not (os.path.isfile(tool) and os.access(tool, os.X_OK)):
        raise ModelToolError("%s is not an executable (build the tree, or "
                             "install panda-ovs-tools)" % tool)
    os.makedirs(out_dir, exist_ok=True)
    record, warnings = {}, {}
    for name, options in runs.items():
        out = os.path.join(out_dir, "%s-policy.json" % name)
        cmd = command(tool, out, **options)
        res = subprocess.run(cmd, capture_output=True, text=True,
                             timeout=600)
        if res.returncode:
            raise ModelToolError("panda-model (%s) failed: %s"
                                 % (name, (res.stderr or res.stdout).strip()))
        try:
            with open(out) as f:
                doc = json.load(f)
            policy, warnings[name] = Policy.from_json(doc, out)
        except (OSError, ValueError) as e:
            raise ModelToolError("panda-model (%s) wrote a policy that "
                                 "cannot be used: %s" % (name, e))
        record[name] = {"action": policy.text(), "model": doc,
                        "command": " ".join(cmd)}
    return record, warnings


def load_policy(path, names=("panda", "pias")):
    """Reads a saved policy record (a testbed or simulator run's
    policy.json, the argument of their --policy).  Returns it, checked:
    'names' are present and every action is a valid policy."""
    where = "--policy %s" % path
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise ModelToolError("%s: %s" % (where, e))
    if not isinstance(doc, dict) or not all(
            isinstance(doc.get(s), dict) and "action" in doc[s]
            for s in names):
        raise ModelToolError("%s: expected a testbed or simulator "
                             "policy.json with %s" % (where, " and ".join(
                                 "%s.action" % s for s in names)))
    for s, entry in doc.items():
        if isinstance(entry, dict) and "action" in entry:
            try:
                Policy.from_text(entry["action"])
            except (PolicyError, AttributeError) as e:
                raise ModelToolError("%s: %s.action: %s" % (where, s, e))
    return doc
