"""Labels of another cap mapped onto the model's: one renaming, MNE's rules, clear refusals."""

from __future__ import annotations

import mne
import numpy as np
import pytest

from sblr_rt.io.labels import ChannelRenaming, match_channels
from sblr_rt.io.recording import Recording

CAP = ["EEG C3-REF", "EEG CZ-REF", "EEG C4-REF", "EOG"]


def test_one_renaming_from_a_string_a_file_or_a_table(tmp_path):
    expected = {"EEG C3-REF": "C3", "EEG CZ-REF": "Cz"}
    path = tmp_path / "cap.txt"
    path.write_text("# our cap\nEEG C3-REF = C3\nEEG CZ-REF=Cz  # the vertex\n\n")
    for value in (
        "EEG C3-REF=C3, EEG CZ-REF=Cz",
        str(path),
        path,
        expected,
        [("EEG C3-REF", "C3"), ("EEG CZ-REF", "Cz")],
    ):
        assert ChannelRenaming.parse(value).mapping == expected, value
    assert not ChannelRenaming.parse(None) and not ChannelRenaming.parse("")
    assert str(ChannelRenaming.parse(expected)) == "EEG C3-REF=C3,EEG CZ-REF=Cz"


@pytest.mark.parametrize(
    ("value", "match"),
    [
        ("EEG C3-REF", r"must be OLD=NEW pairs .*got 'EEG C3-REF' \(no '=' and no such file\)"),
        ("A=B=C", r"must be OLD=NEW pairs .*got 'A=B=C'"),
        ("=C3", r"must be OLD=NEW pairs .*got '=C3'"),
        ("A=C3,B=C3", r"must name each new label once, got 'C3' twice"),
        ("A=C3,A=C4", r"must name each old label once, got 'A' twice"),
        ({"A": 3}, r"must be OLD=NEW pairs .*got \('A', 3\)"),
    ],
)
def test_a_bad_renaming_is_refused_naming_the_option(value, match):
    with pytest.raises(ValueError, match=r"^'--rename-channels' " + match):
        ChannelRenaming.parse(value, name="--rename-channels")


def test_the_renamed_labels_are_mnes():
    renaming = ChannelRenaming.parse("EEG C3-REF=C3,EEG CZ-REF=Cz,EEG C4-REF=C4")
    info = mne.create_info(CAP, 100.0)
    mne.rename_channels(info, renaming.mapping)
    assert renaming.apply(CAP) == info.ch_names == ["C3", "Cz", "C4", "EOG"]


def test_mnes_refusals_with_what_was_expected_and_got():
    # An old label the channels lack: MNE refuses it, and so does the renaming, naming the
    # close labels.
    lacking = ChannelRenaming.parse("EEG C3-Ref=C3")
    with pytest.raises(ValueError, match="not present"):
        mne.rename_channels(mne.create_info(CAP, 100.0), lacking.mapping)
    with pytest.raises(ValueError, match=r"^'rename_channels' must name labels the cap has, got "
                       r"1 it lacks: 'EEG C3-Ref' \(its 4 labels: EEG C3-REF, .*\); close "
                       r"labels: EEG C3-Ref -> 'EEG C3-REF'"):  # fmt: skip
        lacking.apply(CAP, what="the cap")
    # Two channels with one label.
    clash = ChannelRenaming.parse("EEG C3-REF=EOG")
    with pytest.raises(ValueError, match="not unique"):
        mne.rename_channels(mne.create_info(CAP, 100.0), clash.mapping)
    with pytest.raises(ValueError, match=r"must leave every channel of the recording its own "
                       r"label, got 'EOG' for 'EEG C3-REF' and 'EOG'"):  # fmt: skip
        clash.apply(CAP)


def test_a_recording_renamed_keeps_its_samples_and_renames_what_was_left_out():
    data = np.arange(12.0).reshape(3, 4)
    rec = Recording(data, 100.0, CAP[:3], excluded={"EOG": "type eog"}, source="x.edf")
    out = rec.rename_channels({"EEG C3-REF": "C3", "EEG C4-REF": "C4", "EOG": "HEOG"})
    assert out.ch_names == ["C3", "EEG CZ-REF", "C4"] and out.excluded == {"HEOG": "type eog"}
    np.testing.assert_array_equal(out.data, data)
    assert rec.ch_names == CAP[:3] and rec.rename_channels(None) is rec
    with pytest.raises(ValueError, match=r"the recording x.edf has, got 1 it lacks: 'C5'"):
        rec.rename_channels("C5=C6")


def test_a_stream_matched_after_the_renaming_keeps_its_own_labels():
    renaming = ChannelRenaming.parse("EEG C3-REF=C3,EEG C4-REF=C4")
    match = match_channels(["C3", "Cz", "C4"], ["EEG C4-REF", "cz", "EEG C3-REF"], rename=renaming)
    assert match.picks == (2, 1, 0) and not match.missing
    assert match.pairs == (
        ("C3", "EEG C3-REF", "renamed"),
        ("Cz", "cz", "case"),
        ("C4", "EEG C4-REF", "renamed"),
    )
    assert match.guessed == [("Cz", "cz", "case")]
    assert "1 by case label, 2 by rename_channels" in match.summary
    assert "EEG C3-REF -> C3" in match.summary
    without = match_channels(["C3", "Cz", "C4"], ["EEG C4-REF", "cz", "EEG C3-REF"])
    assert without.missing == ("C3", "C4")
