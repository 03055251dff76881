"""`index.pages.release`: after a bulk read of the records index, this process's mapped pages
of its files are handed back, and reading on gives the same records (a real Tantivy index)."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest

from memstore.index import pages
from memstore.index.records import RecordIndex
from memstore.model import Memory

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise and /proc: Linux only")


def _mapped_kb(directory: Path) -> int:
    """This process's resident KB of mappings of files under ``directory`` (/proc/self/smaps)."""
    prefix, total, inside = str(directory.resolve()) + "/", 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split(maxsplit=5)
        if head and "-" in head[0] and len(head) >= 5 and ":" in head[3]:
            inside = len(head) == 6 and head[5].startswith(prefix)
        elif inside and head and head[0] == "Rss:":
            total += int(head[1])
    return total


def _records(n: int) -> list[Memory]:
    return [Memory(id=f"m{i:015x}", seq=i + 1, text=f"record {i} " + "padding words " * 40,
                   recorded_at="2026-01-01T00:00:00Z", occurred_at="2026-01-01", precision="day", kind="fact")
            for i in range(n)]


def _written(path: Path, records: list[Memory]) -> None:
    """Write ``records`` and drop the writing index: its reader's watcher would reload after the
    commit, on a thread of its own, and map the new files again after a release."""
    RecordIndex(path).put(records)
    gc.collect()


def test_pages_read_are_handed_back_and_reads_go_on(tmp_path):
    path = tmp_path / "records"
    written = _records(3000)
    _written(path, written)
    reader = RecordIndex(path)
    ids = [m.id for m in written]
    first = reader.get(ids[:400])  # (a read of 512 or more hands back as it goes: read under that)
    assert len(first) == 400
    assert _mapped_kb(path) > 0
    assert pages.release(path) > 0
    assert _mapped_kb(path) == 0
    again = reader.get(ids)
    assert again == {m.id: m for m in written}
    assert _mapped_kb(path) < 1024  # (handed back every 512 records, and after the read)


def test_nothing_outside_the_directory_is_released(tmp_path):
    other = tmp_path / "other"
    _written(other, _records(200))
    reader = RecordIndex(other)
    reader.get([f"m{i:015x}" for i in range(100)])
    before = _mapped_kb(other)
    assert before > 0
    assert pages.release(tmp_path / "records") == 0  # (no such directory mapped)
    assert _mapped_kb(other) == before
