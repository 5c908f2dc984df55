"""--resume: continuing a run from its result.json (testbed/README.md,
"Runs over several sessions").

A run is made of segments (one per session, metadata.segments); each
continues where the last one left off.  What a segment may take from its
own command line and what must stay the run's is decided here, once,
before anything runs:

  settings  the run's (metadata.config: its first command line, parsed
            again, with its repetitions); the command line may repeat them
            but not change one that changes results (config.SETTINGS);
            --reps may grow;
  workload  the run's checked copy, RUN_DIR/workload.cdf (sha256 checked
            against metadata.config);
  policy    the run's (result.json "policy"); never modelled again
            (runner.Run);
  code      the run's: code_state() at the start is kept in
            metadata.config.code; a segment under other code is refused
            unless --allow-code-change, which its segment record keeps.
"""

import dataclasses
import hashlib
import json
import os

from pandaovs import paths
from .. import workload as workloads
from . import config


class ResumeError(RuntimeError):
    pass


# The sources a run's results depend on, by part: the policy, model and
# scheduler (lib/panda), the OVS patch series with the files it adds
# (ovs-ext) and the NX action, the load generator, panda-model, the BPF
# DCTCP and the testbed's own procedure (python/pandaovs).
# Documentation (*.md) is left out: a commit that changes only text does
# not change results.
CODE_PARTS = ("lib/panda", "ovs-patches", "ovs-ext", "openflow",
              "load_generator", "tools", "bpf", "python/pandaovs")


def code_state(top=None):
    """{part: sha256 over its files' names and contents} for CODE_PARTS
    (the files on disk, so uncommitted changes count, and a copy of the
    tree without git is checked the same way)."""
    top = top or paths.TOP
    out = {}
    for part in CODE_PARTS:
        h = hashlib.sha256()
        root = os.path.join(top, part)
        for d, dirs, files in sorted(os.walk(root)):
            dirs[:] = sorted(x for x in dirs if x != "__pycache__")
            for name in sorted(files):
                if name.endswith((".md", ".pyc")):
                    continue
                path = os.path.join(d, name)
                h.update(os.path.relpath(path, top).encode() + b"\0")
                with open(path, "rb") as f:
                    h.update(f.read())
                h.update(b"\0")
        out[part] = h.hexdigest()
    return out


def code_changes(recorded, current):
    """The CODE_PARTS whose sources differ between two code_state()s."""
    return [p for p in sorted(set(recorded) | set(current))
            if recorded.get(p) != current.get(p)]


def read_result(run_dir):
    """RUN_DIR's result.json, checked to be a resumable run's."""
    path = os.path.join(run_dir, "result.json")
    try:
        with open(path) as f:
            result = json.load(f)
    except FileNotFoundError:
        raise ResumeError("--resume %s: no result.json there (not a run "
                          "directory)" % run_dir)
    except (OSError, ValueError) as e:
        raise ResumeError("--resume %s: cannot read result.json: %s"
                          % (run_dir, e))
    md = result.get("metadata") if isinstance(result, dict) else None
    rec = (md or {}).get("config")
    if not isinstance(rec, dict):
        raise ResumeError(
            "--resume %s: result.json has no metadata.config: it was "
            "written before runs could be resumed (or its run stopped "
            "before it began), so its settings cannot be checked; start a "
            "new run" % run_dir)
    if rec.get("format") != config.CONFIG_FORMAT:
        raise ResumeError("--resume %s: metadata.config has format %r, "
                          "this testbed reads %d" % (
                              run_dir, rec.get("format"),
                              config.CONFIG_FORMAT))
    return result


def prepare(run_dir, argv, prog, make_parser=config.parser):
    """The RunConfig of the session that command line 'argv' (with
    --resume 'run_dir') asks for, and the run's result.json to continue:
    (cfg, result).  Raises ResumeError naming what is refused."""
    run_dir = os.path.abspath(run_dir)
    result = read_result(run_dir)
    rec = result["metadata"]["config"]
    if rec.get("prog") != prog:
        raise ResumeError("--resume %s: the run was made by %s, not %s"
                          % (run_dir, rec.get("prog"), prog))
    given = config.explicit_options(make_parser, list(argv))
    for opt in ("out", "run_id"):
        if opt in given:
            raise ResumeError("--%s: not with --resume (the run stays in "
                              "%s)" % (opt.replace("_", "-"), run_dir))
    # The run's command line, parsed again...
    p = make_parser()

    def refuse(msg):
        raise ResumeError("--resume %s: the run's command line %s "
                          "(metadata.config.argv) does not parse any more: "
                          "%s" % (run_dir, " ".join(rec["argv"]), msg))
    p.error = refuse
    a = p.parse_args(rec["argv"])
    # ... without the options of its own session (config.SETTINGS says
    # which those are) ...
    a.resume, a.stop_after, a.allow_code_change = None, None, False
    a.no_plots, a.build_dir = False, None
    a.reps = rec["reps"]
    # ... the run's workload copy, not the file it was read from, which
    # another machine may not have ...
    copy = os.path.join(run_dir, "workload.cdf")
    check_copy(run_dir, copy, rec)
    a.workload = copy
    # ... and this session's options over them.
    for k, v in given.items():
        setattr(a, k, v)
    a.resume = run_dir
    # Errors of the merged options are the command line's.
    new = config.run_config(make_parser(), a, argv)
    wanted = (result["metadata"].get("workload") or {})
    if "workload" not in given and wanted.get("name"):
        new = dataclasses.replace(new, workload=dataclasses.replace(
            new.workload, name=wanted["name"],
            shipped=wanted.get("shipped", False)))
    check_settings(run_dir, rec, new, given)
    if new.reps < rec["reps"]:
        raise ResumeError("--reps %d: the run has %d repetitions; a "
                          "resumed run may add repetitions, not drop them"
                          % (new.reps, rec["reps"]))
    changed = code_changes(rec.get("code") or {}, code_state())
    if changed and not new.allow_code_change:
        first = (result["metadata"].get("git") or {}).get("commit")
        raise ResumeError(
            "--resume %s: the code differs from the run's in %s: its "
            "results would mix two versions.  Check out the run's commit "
            "(%s) or give --allow-code-change to continue all the same (the "
            "session's record, metadata.segments, keeps it)" % (
                run_dir, ", ".join(changed), first or "see metadata.git"))
    out, run_id = os.path.split(run_dir)
    return dataclasses.replace(new, out=out, run_id=run_id), result


def check_copy(run_dir, copy, rec):
    """The run's workload copy is there, unchanged."""
    try:
        copied = workloads.load(copy)
    except workloads.WorkloadError as e:
        raise ResumeError("--resume %s: the run's workload copy: %s"
                          % (run_dir, e))
    want = str(rec["settings"].get("workload_sha256"))
    if copied.sha256 != want:
        raise ResumeError("--resume %s: workload.cdf (sha256 %s) is not "
                          "the run's workload (sha256 %s)" % (
                              run_dir, copied.sha256[:12], want[:12]))


def check_settings(run_dir, rec, cfg, given=()):
    """Refuses 'cfg' if a setting that changes results differs from the
    run's record 'rec' (metadata.config), naming every one; those whose
    option the command line did not give ('given': explicit_options()'s
    dests) are said to follow from the others (--rate-mbit changes the
    buffer, --qos the ECN threshold)."""
    now = config.settings(cfg)
    was = rec.get("settings") or {}
    diffs = []
    was = dict(config.SETTING_DEFAULTS, **was)
    for k in now:
        if was.get(k, config.LEGACY.get(k)) == now[k]:
            continue
        opt = config.option_of(k)
        dests = [o.lstrip("-").replace("-", "_") for o in opt.split("/")]
        how = ("" if k == "mode" or any(d in given for d in dests)
               else " (follows from the options above)")
        diffs.append("%s (%s): the run's %s, this command line's %s%s" % (
            opt, k, json.dumps(was.get(k)), json.dumps(now[k]), how))
    if diffs:
        raise ResumeError(
            "--resume %s: a resumed run keeps the settings its results "
            "depend on; start a new run to change them.  Differs: %s"
            % (run_dir, "; ".join(sorted(diffs, key=lambda d: "follows"
                                         in d))))
