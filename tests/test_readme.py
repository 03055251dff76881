"""The README's tour is executed: every ```console block's commands must print what the README shows.

    python tests/test_readme.py --update    # rewrite the outputs after an intended change

Commands run in a fresh temporary store (MEMSTORE_DIR), in the repository root,
with stdout and stderr together as a terminal would show them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

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
