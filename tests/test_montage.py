"""Berlin 118 labels, their 10-05 mapping and positions for scalp maps."""

from __future__ import annotations

import mne
import numpy as np
import pytest

from sblr_rt.io import read_recording
from sblr_rt.montage import (
    BERLIN_118,
    BERLIN_HALF_POSITIONS,
    BERLIN_TO_1005,
    channel_positions,
    interpolate_scalp,
    layout_2d,
    make_montage,
    scalp_layout,
    standard_name,
)


def test_berlin_labels():
    assert len(BERLIN_118) == len(set(BERLIN_118)) == 118
    assert BERLIN_118[:5] == ("Fp1", "AFp1", "Fpz", "AFp2", "Fp2")
    assert BERLIN_118[-4:] == ("OI1", "OI2", "I1", "I2")


def test_mapping_covers_exactly_the_unknown_labels():
    known = {n.lower() for n in mne.channels.make_standard_montage("colin27_1005").ch_names}
    unknown = [ch for ch in BERLIN_118 if ch.lower() not in known]
    assert len(unknown) == 26
    assert sorted(unknown) == sorted(BERLIN_TO_1005)
    for target in (*BERLIN_TO_1005.values(), *BERLIN_HALF_POSITIONS.values()):
        assert target.lower() in known, target
    assert BERLIN_TO_1005["FAF5"] == "AFF5h"
    assert BERLIN_TO_1005["CFC3"] == "FCC3h"
    assert BERLIN_TO_1005["PCP1"] == "CPP1h"
    assert standard_name("FFC3") == "FFC3h" and standard_name("Fc5.") == "Fc5"


def test_every_berlin_label_has_a_position():
    pos = channel_positions(BERLIN_118, on_missing="raise")
    assert list(pos) == list(BERLIN_118)
    xyz = np.array(list(pos.values()))
    # distinct, plausible scalp positions (metres)
    assert np.all(
        np.linalg.norm(xyz[:, None] - xyz[None], axis=-1)[~np.eye(118, dtype=bool)] > 5e-3
    )
    # left hemisphere labels (odd numbers) are on the left
    for ch, (x, _, _) in pos.items():
        digit = ch[-1]
        if digit.isdigit() and ch not in ("I1", "I2"):
            assert (x < 0) == (int(digit) % 2 == 1), ch
    # intermediate rows lie between their neighbours: CFC3 between FC3/FC1 and C3/C1
    assert pos["FC3"][1] > pos["CFC3"][1] > pos["C3"][1]
    assert pos["C3"][0] < pos["CFC3"][0] < pos["C1"][0]
    assert pos["C3"][0] < pos["CCP3"][0] < pos["C1"][0]


def test_layout_2d_for_berlin_1010_and_physionet(physionet_dir):
    names, xy = layout_2d(BERLIN_118)
    assert len(names) == 118 and xy.shape == (118, 2)
    assert np.abs(xy).max() < 0.75
    cz = xy[names.index("Cz")]
    assert np.linalg.norm(cz) < 0.05
    fpz, oz = xy[names.index("Fpz")], xy[names.index("Oz")]
    assert fpz[1] > 0.4 and oz[1] < -0.4  # nose up
    c3, c4 = xy[names.index("C3")], xy[names.index("C4")]
    assert c3[0] < -0.15 and c4[0] > 0.15
    rec = read_recording(physionet_dir / "S001R05.edf")
    names, xy = layout_2d(rec.ch_names)
    assert names == rec.ch_names  # all 64 standardised PhysioNet labels placed
    names, _ = layout_2d(["C3", "EOG1", "ch7"])
    assert names == ["C3"]


def test_missing_channels_and_montage():
    with pytest.raises(ValueError, match="EOG"):
        channel_positions(["C3", "EOG"], on_missing="raise")
    assert list(channel_positions(["T3", "EOG"])) == ["T3"]
    info = mne.create_info([*BERLIN_118[:20], "EOG"], 100.0, "eeg")
    raw = mne.io.RawArray(np.zeros((21, 10)), info, verbose="error")
    raw.set_montage(make_montage(raw.ch_names), on_missing="ignore")
    locs = np.array([ch["loc"][:3] for ch in raw.info["chs"][:20]])
    assert np.all(np.isfinite(locs)) and np.all(np.linalg.norm(locs, axis=1) > 0.05)


def test_scalp_map_is_exactly_zero_where_all_weights_are_zero():
    names = ["Fp1", "Fp2", "F3", "F4", "C3", "Cz", "C4", "P3", "P4", "O1", "O2", "Pz"]
    xy = scalp_layout(names)
    assert np.isfinite(xy).all()
    # the vertex at the centre, nose up, ring through the temporal sites at radius ~1
    assert np.abs(xy[names.index("Cz")]).max() < 0.15
    assert xy[names.index("Fp1"), 1] > 0.6 > -0.6 > xy[names.index("O1"), 1]
    values = np.zeros(len(names))
    values[names.index("C3")] = 1.0
    image, extent = interpolate_scalp(xy, values, resolution=64)
    inside = np.isfinite(image)
    assert inside.sum() > 0.5 * inside.size
    assert image[inside].min() == 0.0
    assert image[inside].max() <= 1.0
    # over the right hemisphere, surrounded by zero weights, the map is exactly zero
    grid = np.linspace(-extent, extent, 64)
    right = inside & (grid[None, :] > 0.3)
    assert np.all(image[right] == 0.0)
