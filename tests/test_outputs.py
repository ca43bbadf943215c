"""Issue 18: where the command line writes. Bad output paths and names are refused in one
line before anything is built, outputs are all-or-nothing, and sizes that cannot be built
in memory are refused with their limit (named regression tests of the issue's cases)."""

import os
import stat

import pytest

from fatnet.cli.main import main
from fatnet.api.outputs import staged_dir


def _refused(capsys, needle):
    cap = capsys.readouterr()
    assert needle in cap.err, cap.err
    assert len(cap.err.strip().splitlines()) == 1, cap.err
    assert "Traceback" not in cap.err + cap.out


def _entries(path):
    """Every name in a directory, hidden ones (a staged .partial) included."""
    return sorted(os.listdir(path))


GEN = ["gen", "butterfly", "--inputs", "8"]


@pytest.mark.parametrize("top, needle", [
    ("bad name", "top must be a Verilog identifier"),
    ("a/b", "top must be a Verilog identifier"),
    ("../escaped", "top must be a Verilog identifier"),
    ("x" * 300, "at most 100 characters"),
    ("a\nb", "top must be a Verilog identifier"),
    ("", "top must be a Verilog identifier"),
])
def test_gen_refuses_a_top_name_that_is_no_module_or_file_name(top, needle, tmp_path, capsys):
    assert main([*GEN, "--top", top, "-o", str(tmp_path / "out")]) == 2
    _refused(capsys, needle)
    assert _entries(tmp_path) == []


def test_gen_refuses_an_output_that_is_a_file_or_below_one(tmp_path, capsys):
    f = tmp_path / "afile"
    f.write_text("keep")
    assert main([*GEN, "-o", str(f)]) == 2
    _refused(capsys, "output must be a directory, or a path where one can be made")
    assert main([*GEN, "-o", str(f / "sub")]) == 2
    _refused(capsys, "is not a directory")
    assert main([*GEN, "-o", ""]) == 2
    _refused(capsys, "output must be a directory, or a path where one can be made")
    assert f.read_text() == "keep" and _entries(tmp_path) == ["afile"]


def test_a_refused_network_leaves_no_directory(tmp_path, capsys):
    assert main([*GEN, "--modified", "-o", str(tmp_path / "out")]) == 2
    _refused(capsys, "modified must be off")
    assert _entries(tmp_path) == []


def test_a_failure_while_writing_leaves_nothing(tmp_path, capsys, monkeypatch):
    """Generation that fails after writing some files: no output, no staged leftovers."""
    from fatnet.hdl import gen

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(gen, "manifest", fail)     # after the Verilog files are written
    assert main([*GEN, "-o", str(tmp_path / "a" / "out")]) == 1
    _refused(capsys, "fatnet gen: error: cannot read or write: No space left on device")
    assert _entries(tmp_path) == []


def test_stdout_on_a_full_disk_is_one_line(tmp_path):
    """`fatnet info ... > /dev/full`: one line on stderr, status 1, no traceback."""
    import subprocess
    import sys
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system: a full disk cannot be simulated")
    with open("/dev/full", "w") as full:
        p = subprocess.run([sys.executable, "-m", "fatnet.cli", "info", "butterfly",
                            "--inputs", "8"], stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    assert p.stderr.strip() == ("fatnet info: error: cannot read or write: No space left "
                                "on device"), p.stderr


def test_gen_into_an_existing_directory_replaces_its_files_and_keeps_the_rest(tmp_path,
                                                                               capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / "butterfly.v").write_text("old")
    assert main([*GEN, "-o", str(out)]) == 0
    names = _entries(out)
    assert "notes.txt" in names and "butterfly.json" in names
    assert (out / "butterfly.v").read_text() != "old"
    assert not [n for n in _entries(tmp_path) if n.endswith(".partial")]
    # the umask's permissions, not the temporary directory's 0700
    mode = stat.S_IMODE((tmp_path / "out").stat().st_mode)
    mask = os.umask(0)
    os.umask(mask)
    assert mode == 0o777 & ~mask


def test_staged_dir_creates_missing_parents_only_on_success(tmp_path):
    with pytest.raises(RuntimeError):
        with staged_dir(tmp_path / "a" / "b" / "c") as tmp:
            (tmp / "x").write_text("1")
            raise RuntimeError("interrupted")
    assert _entries(tmp_path) == []
    with staged_dir(tmp_path / "a" / "b" / "c") as tmp:
        (tmp / "x").write_text("1")
    assert (tmp_path / "a" / "b" / "c" / "x").read_text() == "1"


def test_unwritable_directory_is_refused(tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        if os.access(ro, os.W_OK):
            pytest.skip("running as a user who may write into a read-only directory "
                        "(root): the refusal cannot be seen")
        assert main([*GEN, "-o", str(ro / "out")]) == 2
        _refused(capsys, "is not writable")
    finally:
        ro.chmod(0o755)


@pytest.mark.parametrize("plot, needle", [
    ("sweep.txt", "plot must be a file ending in .png, .pdf, .svg"),
    ("missing/sweep.png", "plot must be a file in a writable directory that exists"),
    (".", "plot must be a file ending in"),
])
def test_plot_paths_are_refused_before_the_experiment_runs(plot, needle, tmp_path, capsys,
                                                           monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["experiment", "load-sweep", "--inputs", "4", "--trials", "1",
                 "--plot", plot]) == 2
    _refused(capsys, needle)
    assert _entries(tmp_path) == []


def test_a_plot_is_written_whole_with_its_suffix(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["experiment", "load-sweep", "--inputs", "4", "--trials", "1",
                 "--plot", "sweep.svg"]) == 0
    assert _entries(tmp_path) == ["sweep.svg"]
    assert (tmp_path / "sweep.svg").read_text().lstrip().startswith("<?xml")


def test_sim_refuses_a_build_dir_that_is_a_file(tmp_path, capsys):
    f = tmp_path / "afile"
    f.write_text("")
    assert main(["sim", "butterfly", "--inputs", "8", "--build-dir", str(f)]) == 2
    _refused(capsys, "build-dir must be a directory")


@pytest.mark.parametrize("argv, needle", [
    (["info", "fat-tree", "--leaves", "4", "--capacity", "1099511627776"],
     "capacity must be an integer in [1, 2048], got 1099511627776"),
    (["info", "fat-tree", "--leaves", "4", "--capacities", "1000000000,2,1"],
     "capacities[0] must be an integer in [1, 2048]"),
    (["gen", "fat-tree", "--leaves", "2", "--capacity", "1000000", "-o", "OUT"],
     "capacity must be an integer in [1, 2048]"),
    (["info", "fat-tree", "--leaves", "65536", "--root-capacity", "65536"],
     "root-capacity must be in [n^(2/3), 2048] = [1626, 2048] for 65536 leaves"),
    (["route", "butterfly", "--inputs", "8", "--problems", "1000000000"],
     "problems must be in [1, 524288] (8 inputs, at most 2^22 messages in all)"),
])
def test_sizes_that_cannot_be_built_are_refused_with_their_limit(argv, needle, tmp_path,
                                                                 capsys):
    argv = [str(tmp_path / "out") if a == "OUT" else a for a in argv]
    assert main(argv) == 2
    _refused(capsys, needle)
    assert _entries(tmp_path) == []
