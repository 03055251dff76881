"""verify's files check (modes, owner, leftover temporary files) and the chmod repair."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from ..store.fs import DIR_MODE, FILE_MODE, temp_writer
from ..store.layout import OWN_NAMES, Layout
from .report import Finding, Report


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True
    return True


# --- files: modes, owner, leftovers -------------------------------------------------------

def check_files(layout: Layout, alive: Callable[[int], bool] = pid_alive) -> list[Finding]:
    uid = os.geteuid()
    found = list(_check_mode(layout.root, uid))
    for name in OWN_NAMES:  # only memstore's own paths: anything else there is left alone
        top = layout.root / name
        if top.is_symlink() or not top.exists():
            continue
        if not top.is_dir():
            found.extend(_check_mode(top, uid))
            continue
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames.sort()
            base = Path(dirpath)
            found.extend(_check_mode(base, uid))
            for fname in sorted(filenames):
                found.extend(_check_mode(base / fname, uid))
                found.extend(_check_temp(layout, base / fname, alive))
    return found


def _check_mode(path: Path, uid: int) -> list[Finding]:
    try:
        st = path.lstat()
    except OSError:
        return []  # removed while we looked (a temp file renamed into place)
    if stat.S_ISLNK(st.st_mode):
        return []
    want = DIR_MODE if stat.S_ISDIR(st.st_mode) else FILE_MODE
    have = stat.S_IMODE(st.st_mode)
    out = []
    if have != want:
        what = "directory" if want == DIR_MODE else "file"
        loose = " (readable by others)" if have & 0o077 else ""
        out.append(Finding(path, 0, f"{what} mode {have:04o}{loose}, expected {want:04o}; "
                           "--repair sets it", "files", "chmod", (want,)))
    if st.st_uid != uid:
        out.append(Finding(path, 0, f"owned by uid {st.st_uid}, not by you (uid {uid}); "
                           "chown it back (--repair cannot)", "files"))
    return out


def _check_temp(layout: Layout, path: Path, alive: Callable[[int], bool]) -> list[Finding]:
    name = path.name
    pid = temp_writer(name)
    if pid is not None:
        if alive(pid):
            return []  # a write in progress
    elif not (name.endswith(".usearch.tmp") and path.parent == layout.index_dir):
        return []
    return [Finding(path, 0, "temporary file left by an interrupted write; --repair deletes it",
                    "files", "delete")]



def fix_modes(layout: Layout, report: Report) -> dict[Finding, str]:
    """chmod what the report found too loose (or too tight); run after any rebuild."""
    done = {}
    for f in report.findings:
        if f.fix == "chmod":
            try:
                os.chmod(f.path, f.detail[0])
                done[f] = f"mode set to {f.detail[0]:04o}"
            except FileNotFoundError:
                done[f] = "already gone"
    return done

