"""The one label rule (PhysioNet -> 10-10) and matching a stream's labels to a model's."""

from __future__ import annotations

import mne
import pytest

from sblr_rt.io.labels import match_channels, standard_label, standard_labels


def test_standard_label_is_mnes_eegbci_rule_on_the_physionet_file(physionet_dir):
    raw = mne.io.read_raw_edf(physionet_dir / "S001R05.edf", verbose="error")
    file_labels = list(raw.ch_names)
    mne.datasets.eegbci.standardize(raw)
    assert [standard_label(c) for c in file_labels] == raw.ch_names
    assert standard_labels(file_labels) == raw.ch_names
    assert standard_label("Fc5.") == "FC5" and standard_label("Fpz.") == "Fpz"
    assert standard_label(" Afz. ") == "AFz"


def test_standard_labels_leave_a_labs_own_names_alone():
    names = ["EEG001", "fc5", "Cz"]
    assert standard_labels(names) == names  # not PhysioNet-style: kept as the file says


def test_exact_match_first_then_case_then_normalised():
    model = ["FC5", "Cz", "C3", "Fpz"]
    stream = ["Fpz.", "X1", "c3", "Cz", "Fc5."]
    match = match_channels(model, stream)
    assert match.picks == (4, 3, 2, 0) and not match.missing
    assert [p[2] for p in match.pairs] == ["normalised", "exact", "case", "normalised"]
    assert match.renamed == [
        ("FC5", "Fc5.", "normalised"),
        ("C3", "c3", "case"),
        ("Fpz", "Fpz.", "normalised"),
    ]
    assert not match.identity
    summary = match.summary
    assert "4 of 4 model channels found in 5" in summary
    assert "1 exactly" in summary and "1 by case label" in summary
    assert "2 by normalised label" in summary and "Fc5. -> FC5" in summary


def test_exact_labels_win_over_looser_ones():
    # "Cz" is taken exactly; "CZ" is then left over and no ambiguity arises
    match = match_channels(["Cz"], ["CZ", "Cz"])
    assert match.picks == (1,) and match.pairs[0][2] == "exact"
    assert match_channels(["A", "B"], ["A", "B"]).identity


def test_missing_channels_are_reported_not_raised():
    match = match_channels(["FC5", "Cz"], ["Fc5.", "Pz"])
    assert match.missing == ("Cz",) and match.picks == (0,)
    assert "missing: Cz" in match.summary


def test_two_stream_channels_for_one_model_channel_is_an_error():
    with pytest.raises(ValueError, match=r"'Cz' fits 2 stream channels by case label: CZ, cz"):
        match_channels(["Cz"], ["CZ", "cz"])
    with pytest.raises(ValueError, match=r"fits 2 stream channels by exact label"):
        match_channels(["Cz"], ["Cz", "Cz"])


def test_one_stream_channel_for_two_model_channels_is_an_error():
    with pytest.raises(ValueError, match=r"stream channel 'fc5\.' fits model channels 'FC5'"):
        match_channels(["FC5", "Fc5"], ["fc5."])
