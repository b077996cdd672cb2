"""A command's files are written as one set: a failure in the middle leaves none of the new set
(each command wrote its files one by one, so a failed plot left the tables of a new run beside
the plot of an old one)."""

import os
import shutil

import pytest

from dlsanalysis import tables
from dlsanalysis.__main__ import main
from dlsanalysis.outputs import FileSet

HERE = os.path.dirname(os.path.abspath(__file__))
CALIBRATION = os.path.join(HERE, "..", "..", "results", "calibration", "localhost")


def test_a_set_is_renamed_into_place_whole(tmp_path):
    with FileSet(str(tmp_path / "out")) as files:
        files.text("a.md", "new a\n")
        with open(files.path("sub/b.csv"), "w") as f:
            f.write("x\n1\n")
        assert not (tmp_path / "out" / "a.md").exists()  # staged, not yet in place
        with open(files.current(files.final("a.md"))) as f:
            assert f.read() == "new a\n"
    assert files.written == [str(tmp_path / "out" / "a.md"), str(tmp_path / "out" / "sub" / "b.csv")]
    assert (tmp_path / "out" / "a.md").read_text() == "new a\n"
    assert sorted(os.listdir(tmp_path / "out")) == ["a.md", "sub"]
    assert os.listdir(tmp_path / "out" / "sub") == ["b.csv"]


def test_a_failure_in_the_middle_leaves_the_old_set_and_no_staged_file(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.md").write_text("old a\n")
    with pytest.raises(RuntimeError, match="the plot failed"), FileSet(str(out)) as files:
        files.text("a.md", "new a\n")
        files.text("b.md", "new b\n")
        raise RuntimeError("the plot failed")
    assert os.listdir(out) == ["a.md"] and (out / "a.md").read_text() == "old a\n"
    assert files.written == []


def test_a_failed_set_removes_the_folders_it_made_and_no_other(tmp_path):
    (tmp_path / "kept").mkdir()
    with pytest.raises(RuntimeError), FileSet(str(tmp_path / "new" / "deeper")) as files:
        files.text("a.md", "a\n")
        files.text("sub/b.md", "b\n")
        files.text("../../kept/c.md", "c\n")
        raise RuntimeError("the plot failed")
    assert sorted(os.listdir(tmp_path)) == ["kept"] and os.listdir(tmp_path / "kept") == []
    with FileSet(str(tmp_path / "new")) as files:  # a set that succeeds keeps its folders,
        files.text("sub/a.md", "a\n")
    assert os.listdir(tmp_path / "new" / "sub") == ["a.md"]
    with FileSet(str(tmp_path / "empty")):  # even with nothing in them
        pass
    assert os.listdir(tmp_path / "empty") == []


def test_a_rename_that_fails_leaves_no_staged_file(tmp_path):
    (tmp_path / "b.md").mkdir()  # a folder where a file goes: its rename fails
    with pytest.raises(OSError), FileSet(str(tmp_path)) as files:
        files.text("a.md", "a\n")
        files.text("b.md", "b\n")
    assert sorted(os.listdir(tmp_path)) == ["a.md", "b.md"] and (tmp_path / "b.md").is_dir()


def test_a_name_staged_twice_is_a_bug_said_at_once(tmp_path):
    with pytest.raises(ValueError, match="staged twice"), FileSet(str(tmp_path)) as files:
        files.text("a.md", "1")
        files.text("a.md", "2")
    assert os.listdir(tmp_path) == []


def test_tables_whose_plot_fails_write_no_table(tmp_path, monkeypatch, capsys):
    camp = shutil.copytree(CALIBRATION, str(tmp_path / "c"))
    analysis = os.path.join(camp, "analysis")
    shutil.rmtree(analysis, ignore_errors=True)

    def fails(*_):
        raise RuntimeError("no room for the plot")

    monkeypatch.setattr(tables, "busbw_plot", fails)
    with pytest.raises(RuntimeError, match="no room for the plot"):
        main(["tables", camp])
    assert not os.path.exists(analysis) or os.listdir(analysis) == []
    monkeypatch.undo()
    assert main(["tables", camp]) == 0
    names = os.listdir(analysis)
    assert "busbw.png" in names and "alpha_beta.csv" in names and not [n for n in names if ".tmp" in n]
