"""The suite's own home (tests/conftest.py): each test process has a HOME and XDG directories
of its own, inherited by its subprocesses, and the real home's memstore directories are
guarded: touching them fails the test that did."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import conftest
import pytest
from memstore_cli.common import default_store_dir
from memstore_cli.indexing import cache_dir


def test_the_process_has_a_home_of_its_own():
    real = os.environ[conftest.REAL_HOME_VAR]
    home = os.environ["HOME"]
    assert home != real and Path(home).is_dir()
    for var in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME"):
        assert os.environ[var].startswith(home + os.sep), var
    assert not any(k.startswith("MEMSTORE_") for k in os.environ)


def test_the_default_cache_and_store_are_under_it(monkeypatch):
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.delenv("XDG_DATA_HOME")
    home = os.environ["HOME"]
    assert str(cache_dir()) == os.path.join(home, ".cache", "memstore", "embeddings")
    assert str(default_store_dir()).startswith(home + os.sep)


def test_subprocesses_inherit_it():
    got = subprocess.run([sys.executable, "-c", "import os; print(os.path.expanduser('~'))"],
                         capture_output=True, text=True, check=True).stdout.strip()
    assert got == os.environ["HOME"]


@pytest.mark.parametrize("event", ["open", "os.mkdir", "os.listdir"])
def test_touching_the_real_homes_memstore_directories_is_refused_and_noted(event):
    root = conftest.real_home_dirs()[0]
    seen = len(conftest._TOUCHED)
    with pytest.raises(PermissionError, match="a test touched the real home"):
        conftest._guard(event, (os.path.join(root, "embeddings", "x.bin"), "w", 0))
    assert conftest._TOUCHED[seen:] == [f"{event} {os.path.join(root, 'embeddings', 'x.bin')}"]
    del conftest._TOUCHED[seen:]  # (noted as it should be: this test is not the one to fail)


def test_other_paths_pass(tmp_path):
    real = os.environ[conftest.REAL_HOME_VAR]
    for path in (str(tmp_path / "x"), os.path.join(real, ".cache", "memstore-other"), os.path.join(real, "work")):
        conftest._guard("open", (path, "r", 0))
