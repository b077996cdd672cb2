"""Hostile plans and sites end to end (issue 21): values carrying ';', '$( )', backticks,
newlines and '../' create no file outside the campaign and run no injected command.

1. Refused: every value that would land unquoted in a batch script, a path or a job name
   (site, plan and experiment names, partition, account, qos, time limit, environment names) is
   refused before anything runs: exit 2, the message names the key.
2. Quoted: free text (environment values, launcher flags, argument values, the binary's path)
   passes, quoted. The batch scripts that `--dry-run` prints for Slurm, PBS and LSF sites are
   executed with stub launchers (srun, aprun, jsrun) that record their argv and environment:
   each payload arrives as one literal argument or value, and no canary file appears.
3. A real run on this machine (mpirun, and a binary path with spaces that wraps dlscale) with
   the same payloads: the campaign completes, the wrapper saw every payload literally, and no
   file appears outside the campaign folder.
usage: injection_test.py DLSCALE"""

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

DLSCALE = os.path.abspath(sys.argv[1])
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TMP = tempfile.mkdtemp(prefix="dls_injection_")
CANARY = os.path.join(TMP, "canary")
os.makedirs(CANARY)


def payloads(tag):
    """Strings that run `touch CANARY/<tag>-<kind>` if a shell ever evaluates them."""
    c = os.path.join(CANARY, tag)
    return {
        "dollar": f"$(touch {c}-dollar)",
        "tick": f"`touch {c}-tick`",
        "semi": f"x; touch {c}-semi",
        "quote": f"x'; touch {c}-quote; '",
        "nl": f"x\ntouch {c}-nl",
        "dotdot": f"../../../../{CANARY}/{tag}-dotdot",
    }


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def run(args, **kw):
    env = dict(os.environ, DLSCALE_ROOT=ROOT, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    env.update(kw.pop("env", {}))
    return subprocess.run([DLSCALE] + args, capture_output=True, text=True, env=env, cwd=TMP, timeout=300, **kw)


_written = [0]


def write(name, text):
    """TMP/plans/<n>-name: every file written once, so that a list of cases keeps its own."""
    _written[0] += 1
    os.makedirs(os.path.join(TMP, "plans"), exist_ok=True)
    path = os.path.join(TMP, "plans", f"{_written[0]}-{name}")
    with open(path, "w") as f:
        f.write(text)
    return path


def q(s):
    """A YAML double-quoted scalar of s (JSON's escapes are YAML's)."""
    return json.dumps(s)


def read(path):
    with open(path) as f:
        return f.read()


def canaries():
    return sorted(os.listdir(CANARY))


def files_outside(campaign):
    """Every file under TMP that is neither in the campaign nor one of the test's own."""
    own = {"stubs", "canary", "plans", "bin dir"}
    out = []
    for d, _, files in os.walk(TMP):
        rel = os.path.relpath(d, TMP)
        if rel.split(os.sep)[0] in own or os.path.abspath(d).startswith(os.path.abspath(campaign)):
            continue
        out += [os.path.join(rel, f) for f in files if not f.endswith((".yaml", ".txt"))]
    return out


SITE = """name: {name}
node: {{cores: 8}}
launcher: {{kind: {launcher}, ranks_per_node: 2, extra_flags: {flags}}}
scheduler: {{kind: {scheduler}, partition: {partition}, account: {account}, qos: {qos}, time_limit: {time}}}
environment: {env}
dlscale: {binary}
"""
PLAN = """name: {name}
experiments:
  - name: {exp}
    kind: train
    args: {{model: {model}, data: "synthetic:64", steps: "2", image: "16", eval-every: "-1", holdout: "0"}}
    sweep: {{batch: [4]}}
"""


def site_text(**over):
    v = dict(
        name="s",
        launcher="srun",
        scheduler="slurm",
        partition="normal",
        account="acct",
        qos="normal",
        time='"00:10:00"',
        flags="[]",
        env="{}",
        binary="dlscale",
    )
    v.update(over)
    return SITE.format(**v)


def plan_text(**over):
    v = dict(name="p", exp="e", model="cifar10_quick")
    v.update(over)
    return PLAN.format(**v)


def refused():
    cases = []
    for kind, p in payloads("refused").items():
        for key in ("name", "partition", "account", "qos", "time"):
            cases.append(
                (
                    f"site {key} {kind}",
                    write("site.yaml", site_text(**{key: q(p)})),
                    write("plan.yaml", plan_text()),
                    f"site.{'scheduler.' if key != 'name' else ''}{'time_limit' if key == 'time' else key}",
                )
            )
        cases.append(
            (
                f"environment name {kind}",
                write("site.yaml", site_text(env="{" + q("Y" + p) + ": 1}")),
                write("plan.yaml", plan_text()),
                "site.environment",
            )
        )
        for key, where in (("name", "plan.name"), ("exp", "plan.experiments[0].name")):
            cases.append(
                (f"plan {key} {kind}", write("site.yaml", site_text()), write("plan.yaml", plan_text(**{key: q(p)})), where)
            )
        cases.append(
            (
                f"arg flag {kind}",
                write("site.yaml", site_text()),
                write("plan.yaml", plan_text().replace("model:", q("model" + p) + ":")),
                "plan.experiments[0].args",
            )
        )
        if kind == "nl":
            for key, text, where in (
                ("environment value", site_text(env="{X: " + q(p) + "}"), "site.environment: X: control character"),
                ("launcher flag", site_text(flags="[" + q(p) + "]"), "site.launcher.extra_flags: "),
                ("binary", site_text(binary=q(p)), "site.dlscale: control character"),
            ):
                cases.append((f"{key} {kind}", write("site.yaml", text), write("plan.yaml", plan_text()), where))
            cases.append(
                (
                    f"arg value {kind}",
                    write("site.yaml", site_text()),
                    write("plan.yaml", plan_text(model=q(p))),
                    "plan.experiments[0].args",
                )
            )
        for mode in (["--dry-run"], []):
            for name, site, plan, key in cases:
                r = run(
                    ["run", "--site", site, "--plan", plan, "--campaign", os.path.join(TMP, "camp-refused"), "--no-progress"]
                    + mode
                )
                if r.returncode != 2 or key not in r.stderr:
                    fail(f"{name} {mode}: exit {r.returncode}, expected 2 naming {key}:\n{r.stderr}{r.stdout}")
        cases.clear()
    if canaries() or os.path.exists(os.path.join(TMP, "camp-refused")):
        fail(f"a refused plan or site left files: {canaries()}")
    print("refused: every unsafe name, scheduler value, time limit and variable name, with exit 2 naming the key")


def make_stubs():
    """srun, aprun, jsrun, mpirun stand-ins: their argv (JSON) and $X into $STUB_LOG."""
    d = os.path.join(TMP, "stubs")
    os.makedirs(d)
    for name in ("srun", "aprun", "jsrun", "mpirun"):
        path = os.path.join(d, name)
        with open(path, "w") as f:
            f.write(
                "#!/usr/bin/python3\nimport json, os, sys\n"
                "with open(os.environ['STUB_LOG'], 'a') as f:\n"
                "    f.write(json.dumps({'argv': sys.argv, 'X': os.environ.get('X')}) + '\\n')\n"
            )
        os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return d


def scripts_of(dry_run_output):
    """The batch scripts of a --dry-run listing: from '#!/bin/bash' to the line before the next point."""
    scripts, cur = [], None
    for line in dry_run_output.splitlines(keepends=True):
        if line.startswith("#!/bin/bash"):
            cur = [line]
            scripts.append(cur)
        elif cur is not None and (line.startswith("# point ") or line == "\n"):
            cur = None
        elif cur is not None:
            cur.append(line)
    return ["".join(s) for s in scripts]


def quoted():
    stubs = make_stubs()
    p = {k: v for k, v in payloads("quoted").items() if k != "nl"}
    env = "{X: " + q(p["dollar"] + p["tick"] + p["quote"]) + "}"
    flags = "[" + ", ".join(q(p[k]) for k in ("semi", "quote", "dotdot")) + "]"
    binary = q(os.path.join(TMP, "bin dir", p["tick"]))
    model = q(p["dollar"] + p["semi"])
    for launcher, scheduler in (("srun", "slurm"), ("aprun", "pbs"), ("jsrun", "lsf")):
        site = write("site.yaml", site_text(launcher=launcher, scheduler=scheduler, env=env, flags=flags, binary=binary))
        plan = write("plan.yaml", plan_text(model=model))
        camp = os.path.join(TMP, f"camp {p['semi']}")
        r = run(["run", "--site", site, "--plan", plan, "--campaign", camp, "--dry-run"])
        if r.returncode != 0:
            fail(f"{scheduler} dry run: exit {r.returncode}\n{r.stderr}")
        scripts = scripts_of(r.stdout)
        if len(scripts) != 1:
            fail(f"{scheduler}: expected one batch script, found {len(scripts)}:\n{r.stdout}")
        log = os.path.join(TMP, f"stub-{launcher}.txt")
        env_vars = dict(os.environ, PATH=stubs + ":" + os.environ["PATH"], STUB_LOG=log, PBS_O_WORKDIR=TMP)
        s = subprocess.run(["bash", "-c", scripts[0]], env=env_vars, cwd=TMP, capture_output=True, text=True, timeout=60)
        if s.returncode != 0:
            fail(f"{scheduler} script exited {s.returncode}:\n{scripts[0]}\n{s.stderr}")
        with open(log) as f:
            calls = [json.loads(line) for line in f]
        argv = calls[0]["argv"]
        want = [
            p["semi"],
            p["quote"],
            p["dotdot"],
            os.path.join(TMP, "bin dir", p["tick"]),
            p["dollar"] + p["semi"],
            os.path.join(camp, "parts"),
        ]
        for w in want[:5]:
            if w not in argv:
                fail(f"{scheduler}: '{w}' did not reach {launcher} as one argument: {argv}")
        if not any(a.startswith(want[5] + "/") for a in argv):
            fail(f"{scheduler}: the campaign path with its ';' did not reach {launcher} whole: {argv}")
        if calls[0]["X"] != p["dollar"] + p["tick"] + p["quote"]:
            fail(f"{scheduler}: X arrived as {calls[0]['X']!r}")
        if canaries():
            fail(f"{scheduler}: injected commands ran: {canaries()}")
    print("quoted: the Slurm, PBS and LSF scripts pass every payload to the launcher literally; nothing ran")


def real_run():
    p = {k: v for k, v in payloads("real").items() if k != "nl"}
    bindir = os.path.join(TMP, "bin dir")
    os.makedirs(bindir, exist_ok=True)
    # a path with spaces, ';', '$( )' and backticks: a shell evaluating it would leave files in TMP
    wrapper = os.path.join(bindir, "dl scale; $(touch made-by-dollar) `touch made-by-tick`")
    with open(wrapper, "w") as f:
        f.write(f'#!/bin/bash\nprintf \'%s\\n\' "$X" "$@" > "$(dirname "$0")/argv-$$.txt"\nexec {DLSCALE} "$@"\n')
    os.chmod(wrapper, 0o755)
    site = write(
        "site.yaml",
        f"""name: injected
node: {{cores: auto}}
launcher: {{kind: mpirun, ranks_per_node: 1, bind: none, oversubscribe: true, extra_flags: ["-x", "X"]}}
environment: {{X: {q(p["dollar"] + p["tick"] + p["quote"])}}}
dlscale: {q(wrapper)}
""",
    )
    plan = write(
        "plan.yaml",
        f"""name: injected
experiments:
  - name: ok
    kind: train
    args: {{model: cifar10_quick, data: "synthetic:64", steps: "3", image: "16", eval-every: "-1", holdout: "0"}}
    sweep: {{batch: [4]}}
  - name: payload
    kind: train
    args: {{model: {q(p["dollar"] + p["tick"] + p["semi"] + p["dotdot"])}, steps: "1"}}
    sweep: {{batch: [4]}}
""",
    )
    camp = os.path.join(TMP, "camp real " + p["semi"])
    r = run(["run", "--site", site, "--plan", plan, "--campaign", camp, "--no-progress"])
    if r.returncode != 1:
        fail(f"the real run exited {r.returncode}, expected 1 (the payload model is unknown, so that point fails):\n{r.stderr}")
    with open(os.path.join(camp, "points.jsonl")) as f:
        status = {json.loads(line)["experiment"]: json.loads(line)["status"] for line in f}
    if status != {"ok": "ok", "payload": "failed"}:
        fail(f"point outcomes {status}")
    seen = []
    for name in os.listdir(bindir):
        if name.startswith("argv-"):
            with open(os.path.join(bindir, name)) as f:
                seen.append(f.read().split("\n"))
    payload_model = p["dollar"] + p["tick"] + p["semi"] + p["dotdot"]
    if not any(a[0] == p["dollar"] + p["tick"] + p["quote"] and payload_model in a for a in seen):
        fail(f"the wrapped dlscale did not see X and the model literally: {seen}")
    errs = [read(os.path.join(camp, "parts", f)) for f in os.listdir(os.path.join(camp, "parts")) if f.endswith(".err")]
    err = [e for e in errs if "unknown model" in e][0]
    if payload_model not in err:
        fail(f"the point's error does not quote the model literally: {err}")
    left = files_outside(camp)
    if canaries() or left:
        fail(f"the real run ran injected commands {canaries()} or wrote outside its campaign: {left}")
    print("real run: payloads reached the binary literally; no file outside the campaign; nothing ran")


try:
    refused()
    quoted()
    real_run()
    print("injection: ok")
finally:
    shutil.rmtree(TMP)
