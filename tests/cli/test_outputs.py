"""Output paths checked before the work; a write that fails afterwards is rescued."""

from __future__ import annotations

import errno

import pytest
from sblr_rt.cli import main

from sblr_rt.io.outputs import OutputLock, check_output, write_or_rescue


def test_calibrate_refuses_a_directory_out_before_the_search(tmp_path, capsys, one_line_error):
    target = tmp_path / "models.sblr.npz"
    target.mkdir()
    argv = ["calibrate", "--recording", "missing.edf", "--out", str(target)]
    assert main(argv) == 1  # refused before the (missing) recording is even looked at
    line = one_line_error(capsys.readouterr().err, "calibrate")
    assert "'--out' is a directory" in line


def test_calibrate_refuses_a_report_into_a_directory(tmp_path, capsys, one_line_error):
    (tmp_path / "m.report.txt").mkdir()
    argv = ["calibrate", "--recording", "missing.edf", "--out", str(tmp_path / "m.sblr.npz")]
    assert main(argv) == 1
    assert "'--report' is a directory" in one_line_error(capsys.readouterr().err, "calibrate")


def test_a_model_that_cannot_be_written_after_the_search_is_rescued(
    bcicomp2003_path, tmp_path, capsys, monkeypatch
):
    import sblr_rt.io.model_file as model_file

    out = tmp_path / "m.sblr.npz"
    real_save = model_file.save_model

    def disk_full_at(path_that_fails):
        def save(model, path):
            if str(path) == str(path_that_fails):
                raise OSError(errno.ENOSPC, "No space left on device", str(path))
            return real_save(model, path)

        return save

    monkeypatch.setattr(model_file, "save_model", disk_full_at(out))
    argv = ["calibrate", "--recording", str(bcicomp2003_path), "--out", str(out), "--cv", "3"]
    assert main([*argv, "--search", "none", "--n-jobs", "1", "--no-progress", "--no-report"]) == 0
    captured = capsys.readouterr()
    (rescued,) = tmp_path.glob("m.sblr.rescued-*.npz")
    assert not out.exists()
    assert f"the model is in {rescued}" in captured.err
    assert f"model written to {rescued}" in captured.out
    from sblr_rt.io.model_file import load_model

    assert load_model(rescued).classes


def test_write_or_rescue_tries_beside_then_elsewhere(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "far").mkdir()
    wanted = tmp_path / "far" / "r.txt"

    def write(path):
        if path.parent == wanted.parent:  # the whole folder went read-only
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        path.write_text("result")

    written = write_or_rescue(write, wanted)
    assert written.parent == tmp_path and written.name.startswith("r.rescued-")
    assert written.read_text() == "result"

    def never(path):
        raise OSError(errno.EROFS, "Read-only file system", str(path))

    with pytest.raises(OSError, match="could not write the result anywhere"):
        write_or_rescue(never, wanted)


def test_check_output_refuses_what_cannot_be_written(tmp_path):
    with pytest.raises(ValueError, match="is a directory"):
        check_output(tmp_path, what="'x'")
    with pytest.raises(ValueError, match="does not exist"):
        check_output(tmp_path / "no" / "f.fif", what="'x'")
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match="is not a folder"):
        check_output(tmp_path / "file" / "f.fif", what="'x'")
    with pytest.raises(ValueError, match="MiB free"):
        check_output(tmp_path / "f.fif", what="'x'", need_bytes=2**62)
    with pytest.raises(FileExistsError):
        check_output(tmp_path / "file", what="'x'", overwrite=False)


def test_record_refuses_a_directory_out_before_recording(tmp_path, capsys, one_line_error):
    (tmp_path / "session.fif").mkdir()
    argv = ["record", "--out", str(tmp_path / "session.fif"), "--overwrite", "--timeout", "0.1"]
    assert main(argv) == 1
    assert "'out' is a directory" in one_line_error(capsys.readouterr().err, "record")


def test_a_second_recorder_on_the_same_file_is_refused(tmp_path, capsys, one_line_error):
    out = tmp_path / "s_raw.fif"
    with OutputLock(out, what="recording"):  # the first recorder, writing
        assert main(["record", "--out", str(out), "--timeout", "0.1"]) == 1
        line = one_line_error(capsys.readouterr().err, "record")
    assert "another writer" in line and str(out) in line


def test_a_second_recover_names_the_file_it_would_replace(
    tmp_path, capsys, one_line_error, write_sidecar
):
    out = tmp_path / "k_raw.fif"
    side, _ = write_sidecar(out)
    assert main(["record", "--recover", str(side)]) == 0
    capsys.readouterr()
    assert main(["record", "--recover", str(side)]) == 1
    line = one_line_error(capsys.readouterr().err, "record")
    assert f"'{out}' exists" in line and "None" not in line


def test_recovering_onto_a_full_disk_is_one_line(
    tmp_path, capsys, one_line_error, write_sidecar, monkeypatch
):
    import sblr_rt.recorder.recovery as recovery

    def full(contents, out, overwrite):
        raise OSError(errno.ENOSPC, "No space left on device", str(out))

    monkeypatch.setattr(recovery, "write_fif", full)
    side, _ = write_sidecar(tmp_path / "d_raw.fif")
    assert main(["record", "--recover", str(side)]) == 1
    assert "No space left on device" in one_line_error(capsys.readouterr().err, "record")
    assert side.is_dir()  # the recording is still there
