"""The README's tour is executed: every ```console block's commands must print what the README shows.

    python tests/test_readme.py --update    # rewrite the outputs after an intended change

Commands run in a fresh temporary store (MEMSTORE_DIR), in the repository root,
with stdout and stderr together as a terminal would show them.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
BLOCK = re.compile(r"```console\n(.*?)```", re.S)


def _sessions(text: str):
    """[(block match, [(command, expected output)])]"""
    for m in BLOCK.finditer(text):
        steps, cmd, out = [], None, []
        for line in m.group(1).splitlines():
            if line.startswith("$ "):
                if cmd is not None:
                    steps.append((cmd, "\n".join(out)))
                cmd, out = line[2:], []
            else:
                out.append(line)
        if cmd is not None:
            steps.append((cmd, "\n".join(out)))
        yield m, steps


def _run_all(text: str):
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "MEMSTORE_DIR": f"{tmp}/store", "MEMSTORE_CACHE_DIR": f"{tmp}/cache",
               "COLUMNS": "100", "NO_COLOR": "1"}
        env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
        env.pop("MEMSTORE_NOW", None)
        for m, steps in _sessions(text):
            got = []
            for cmd, expected in steps:
                proc = subprocess.run(["bash", "-c", cmd], cwd=ROOT, env=env, capture_output=True, text=True,
                                      timeout=300)
                out = (proc.stdout + proc.stderr).rstrip("\n")
                got.append((cmd, expected, out))
            yield m, got


def test_readme_examples_match():
    text = README.read_text()
    n = 0
    for _m, got in _run_all(text):
        for cmd, expected, out in got:
            assert out == expected, f"README example `{cmd}` printed:\n{out}"
            n += 1
    assert n >= 8


def update() -> None:
    text = README.read_text()
    pieces, last = [], 0
    for m, got in _run_all(text):
        body = "".join(f"$ {cmd}\n" + (out + "\n" if out else "") for cmd, _e, out in got)
        pieces.append(text[last : m.start(1)] + body)
        last = m.end(1)
    pieces.append(text[last:])
    README.write_text("".join(pieces))


if __name__ == "__main__" and "--update" in sys.argv:
    update()


def test_readme_library_snippet(tmp_path, monkeypatch):
    """The "use as a library" block runs as written (its store path pointed at a temp dir)."""
    text = README.read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert len(code.strip().splitlines()) <= 5
    monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(tmp_path / "cache"))
    printed = []
    exec(code.replace("/tmp/memstore-lib", str(tmp_path / "lib")), {"print": printed.append})
    assert printed == ["We decided to move billing to Postgres"]


# --------------------------------------------------------------------------- the first command

DEMO = ROOT / "fixtures" / "demo.ms"
SUMMARY = re.compile(r"^replayed 14 lines in \d+\.\d s: 2 consolidate, 1 distill, 1 index, 1 judge, 2 recall, "
                     r"6 remember, 1 stats; 4 checkpoints; state [0-9a-f]{16} \(6 memories\)$")


def _demo_in_process(store: Path, capsys) -> tuple[str, str]:
    from memstore_cli.main import main

    capsys.readouterr()
    assert main(["--store", str(store), "replay", str(DEMO)]) == 0
    got = capsys.readouterr()
    return got.out, got.err


def test_first_command_shows_each_checkpoint(tmp_path, monkeypatch, capsys):
    """The demo's replay prints its recall, judge and stats lines as those commands print
    them (their --json value through the command's own text renderer), then one summary."""
    monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(tmp_path / "cache"))
    out, err = _demo_in_process(tmp_path / "demo", capsys)
    pages = out.split("\n\n")
    assert [p.splitlines()[0] for p in pages if p] == [
        "2026-03-09T09:00:00Z  recall 'what database are we using for billing?' --k 3 --json",
        "2026-03-09T09:01:00Z  recall '砂糖' --k 3 --json",
        "2026-03-09T09:02:00Z  judge 'Can we ship the checkout fix on Friday afternoon?' --json",
        "2026-03-09T09:03:00Z  stats --json",
    ]
    assert re.search(r"^ 1 +[0-9.]+  m[0-9a-f]{15}  decision   2026-03-02  We decided to move billing to Postgres$",
                     pages[0], re.M)
    assert re.search(r"^ 1 +[0-9.]+  m[0-9a-f]{15}  preference 2026-03-02  コーヒーに砂糖は入れない$", pages[1], re.M)
    judged = pages[2].splitlines()
    assert judged[1] == "1. [mitigate] [eng] Avoid: friday-deploys: Deploy on Friday broke checkout (2 negative outcomes)"
    assert re.fullmatch(r"   confidence 0\.79, match [0-9.]+, score [0-9.]+", judged[2])
    assert judged[3] == "   evidence: 2 for, 0 against"  # judge shows both sides' counts
    assert re.fullmatch(r"   \+ m[0-9a-f]{15} 2026-02-27 negative: Deploy on Friday broke checkout", judged[4])
    assert pages[3].splitlines()[1:] == [
        "memories   6", "tier       short 3  long 3",
        "level      raw 5  summary 0  pattern 0  principle 0  policy 1",
        # (the two Friday incidents stay two: outcomes are evidence, never merged)
        "status     active 6  expired 0  archived 0  superseded 0  invalidated 0",
        "conflicts  0 open", "policies   1 active",
    ]
    notes = err.splitlines()
    assert notes[:2] == ["3 result(s); intent conceptual; examined 0 of 6"] * 2  # recall's own summary lines
    assert SUMMARY.match(notes[-1]), notes[-1]


VENV_LINE = re.compile(r"^python3 -m venv .*$", re.M)
COPY_IGNORE = shutil.ignore_patterns(".git", ".venv", "__pycache__", "*.egg-info", "build", "dist",
                                     ".pytest_cache", ".hypothesis", ".ruff_cache")
# offline (default): pip may not reach an index, so the dependencies come from this test's own
# environment (PYTHONPATH) and memstore is built with its build backend (no build isolation);
# online: the line runs as a user runs it, fetching everything (about 15 s here; needs network).
INSTALL = os.environ.get("MEMSTORE_TEST_INSTALL", "offline")


def _cannot_build_offline() -> str | None:
    from importlib import metadata, util

    if util.find_spec("ensurepip") is None:
        return "python3 -m venv needs ensurepip (Debian: apt install python3-venv)"
    try:
        version = tuple(int(x) for x in metadata.version("setuptools").split(".")[:2])
    except metadata.PackageNotFoundError:
        return "no setuptools in this environment to build memstore without an index"
    if version < (70, 1) and util.find_spec("wheel") is None:
        return (f"setuptools {'.'.join(map(str, version))} builds wheels only with the wheel package, which "
                "this environment lacks; install 'setuptools>=70.1' or wheel, or run with "
                "MEMSTORE_TEST_INSTALL=online (needs network)")
    return None


def test_readme_venv_line_installs_and_replays(tmp_path, capsys, monkeypatch):
    """The README's one-line install into an environment of its own, exactly as written (only
    the demo store moved into tmp), in a copy of the repository."""
    line = VENV_LINE.findall(README.read_text())
    assert len(line) == 1 and ".venv/bin/memstore --store /tmp/memstore-demo replay fixtures/demo.ms" in line[0]
    if INSTALL not in ("offline", "online"):
        pytest.fail(f"MEMSTORE_TEST_INSTALL={INSTALL!r}: use offline or online")
    reason = _cannot_build_offline() if INSTALL == "offline" else None
    if reason:
        pytest.skip(reason)
    repo = tmp_path / "repo"
    shutil.copytree(ROOT, repo, ignore=COPY_IGNORE)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMSTORE_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(MEMSTORE_CACHE_DIR=str(tmp_path / "cache"), PIP_DISABLE_PIP_VERSION_CHECK="1",
               PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}")
    if INSTALL == "offline":
        import sysconfig

        paths = sysconfig.get_paths()
        pythonpath = [*filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep)), paths["purelib"],
                      paths["platlib"]]
        env.update(PYTHONPATH=os.pathsep.join(dict.fromkeys(pythonpath)),
                   PIP_NO_INDEX="1", PIP_NO_BUILD_ISOLATION="0")  # "0": pip's spelling of --no-build-isolation
    command = line[0].replace("/tmp/memstore-demo", str(tmp_path / "demo"))
    proc = subprocess.run(["bash", "-c", command], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (repo / ".venv" / "bin" / "memstore").exists()
    monkeypatch.setenv("MEMSTORE_CACHE_DIR", str(tmp_path / "cache"))
    out, err = _demo_in_process(tmp_path / "in-process", capsys)
    installed = proc.stdout[proc.stdout.index("2026-03-09T09:00:00Z  recall "):]  # after pip's own output
    assert installed == out  # the installed command prints what this checkout prints
    assert SUMMARY.match(proc.stderr.splitlines()[-1]), proc.stderr[-2000:]
    assert proc.stderr.splitlines()[-1].rsplit(";", 1)[1] == err.splitlines()[-1].rsplit(";", 1)[1]


# --------------------------------------------------------------------------- agents: the MCP server

MCP_CONFIG = re.compile(r"<!-- mcp-config[^>]*-->\n```json\n(.*?)```", re.S)
AGENTS = re.compile(r"^## Agents: the MCP server\n(.*?)(?=^## )", re.S | re.M)


def _agents_section() -> str:
    m = AGENTS.search(README.read_text())
    assert m, "README has no section 'Agents: the MCP server'"
    return m.group(1)


def test_readme_lists_every_tool():
    from memstore.tools import TOOLS

    listed = []
    for line in _agents_section().splitlines():
        if line.startswith("- `"):
            listed += re.findall(r"`(\w+)`(?=[,:])", line.split(":", 1)[0] + ":")
    assert listed == list(TOOLS)


def test_readme_mcp_config_starts_a_server_that_answers(tmp_path):
    """The client configuration, as an MCP client reads it: the JSON block parsed, its server
    started (the store path pointed at a temp dir) with the SDK's stdio client; the tools
    listed, then calls under the README's grants example."""
    pytest.importorskip("mcp")
    import json

    import anyio
    from mcp import StdioServerParameters
    from mcp.client import Client

    section = _agents_section()
    blocks = MCP_CONFIG.findall(section)
    assert len(blocks) == 1
    server = json.loads(blocks[0])["mcpServers"]["memstore"]
    assert "/path/to/store" in server["args"] and server["args"][-2:] == ["--agent", "coder"]
    store = tmp_path / "store"
    store.mkdir()
    grants = re.search(r"```toml\n(.*?)```", section, re.S).group(1)
    (store / "memstore.toml").write_text('[embedder]\nname = "hashing"\n\n' + grants)
    installed = Path(sys.executable).with_name(server["command"])  # this environment's console script
    command = str(installed) if installed.exists() else shutil.which(server["command"])
    assert command, f"{server['command']} is not installed"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMSTORE_")}
    env.update(MEMSTORE_CACHE_DIR=str(tmp_path / "cache"), PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '')}")
    # the owner (no agent) writes one memory in a domain the README's grants hide from coder
    owner = subprocess.run([command, "--store", str(store), "remember", "Salary bands are reviewed in March",
                            "--domain", "hr", "--now", "2026-06-01T08:00:00Z"], env=env, capture_output=True,
                           text=True, timeout=120)
    assert owner.returncode == 0, owner.stderr
    args = [str(store) if a == "/path/to/store" else a for a in server["args"]]
    now = "2026-06-01T09:00:00Z"

    async def session() -> dict:
        async with Client(StdioServerParameters(command=command, args=args, env=env)) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            wrote = await client.call_tool("remember", {"text": "The billing service uses Postgres 16", "now": now})
            found = await client.call_tool("search_memory", {"query": "billing Postgres salary bands",
                                                             "touch": False, "now": now})
            denied = await client.call_tool("propose_policy", {"rule": "Rotate keys monthly", "direction": "repeat",
                                                               "domain": "security", "now": now})
            return {"tools": tools, "wrote": wrote, "found": found, "denied": denied}

    got = anyio.run(session)
    from memstore.tools import TOOLS

    assert got["tools"] == list(TOOLS)
    wrote = got["wrote"]
    assert not wrote.is_error and wrote.structured_content["action"] == "add"
    assert json.loads(wrote.content[0].text) == wrote.structured_content
    found = got["found"]
    assert not found.is_error
    assert [r["text"] for r in found.structured_content["results"]] == ["The billing service uses Postgres 16"]
    denied = got["denied"]  # security = "read": the README's "may not propose policies there"
    assert denied.is_error and denied.structured_content["exit"] == 4
    assert "no write grant on domain 'security'" in denied.content[0].text
    log = subprocess.run([command, "--store", str(store), "log", "--json", "--now", now], env=env,
                         capture_output=True, text=True, timeout=120)
    events = [json.loads(line) for line in log.stdout.splitlines()]
    assert [(e["op"], e.get("agent")) for e in events] == [("remember", None), ("remember", "coder")]
    seen = subprocess.run([command, "--store", str(store), "recall", "billing Postgres salary bands", "--json",
                           "--no-touch", "--now", now], env=env, capture_output=True, text=True, timeout=120)
    assert len(json.loads(seen.stdout)["results"]) == 2  # the owner sees what coder's grants hid


# --------------------------------------------------------------------------- the documents themselves

DOCS = [README, ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|^\[[^\]\n]+\]:\s*(\S+)", re.M)


def test_readme_is_short_enough_to_read():
    """The README is the user's document: the history and the measurements' detail live in
    docs/ and CHANGELOG.md, so the README stays small and no line runs on."""
    data = README.read_bytes()
    assert len(data) < 40_000, f"README.md is {len(data):,} bytes; move detail to docs/"
    longest = max(README.read_text().splitlines(), key=len)
    assert len(longest) <= 1000, f"README.md has a line of {len(longest)} characters: {longest[:80]}…"


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_documents_have_no_line_over_1000_characters(doc):
    """Long lines are split into lists or paragraphs, so a diff of a document names what changed."""
    over = [(n, len(line)) for n, line in enumerate(doc.read_text().splitlines(), 1) if len(line) > 1000]
    assert over == [], f"{doc.name}: lines over 1,000 characters (line, length): {over}"


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub writes it: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text())
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6} (.+)$", text, re.M)}


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_point_to_files_that_exist(doc):
    """Every relative link (outside code blocks) names a file of the repository, and a
    #fragment on a Markdown file names one of its headings."""
    text = re.sub(r"`[^`\n]*`", "", FENCE.sub("", doc.read_text()))
    broken = []
    for m in LINK.finditer(text):
        target = m.group(1) or m.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I):  # http:, https:, mailto:
            continue
        path, _, fragment = target.partition("#")
        where = (doc.parent / path).resolve() if path else doc
        if not where.exists():
            broken.append(target)
        elif fragment and where.suffix == ".md" and fragment not in _anchors(where):
            broken.append(target)
    assert broken == [], f"{doc.relative_to(ROOT)}: links to nothing: {broken}"
