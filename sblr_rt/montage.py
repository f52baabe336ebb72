"""Channel labels and positions: the Berlin 118-channel cap and 10-05 names.

The simulator and BCI Competition III data sets IVa/IVb use the 118-channel cap of the
Berlin BCI group, :data:`BERLIN_118` (in the order of ``nfo.clab`` in those files). Its
intermediate rows carry the group's older names: the row between ``FC`` and ``C`` is called
``CFC`` where the 10-05 system (Oostenveld & Praamstra 2001, MNE's ``colin27_1005``
montage) says ``FCC``, and its electrodes sit half-way between two 10-10 columns, which
10-05 marks with an ``h`` suffix: ``CFC3`` is ``FCC3h``. The 26 labels that
``colin27_1005`` does not know are mapped in :data:`BERLIN_TO_1005` (for example
``FAF5 -> AFF5h``, ``FFC7 -> FFT7h``, ``CFC3 -> FCC3h``, ``CCP7 -> TTP7h``,
``PCP1 -> CPP1h``, ``OPO1 -> POO1``).

The cap's ``FFC``, ``CCP`` and ``PPO1/2`` rows use names that *do* exist in 10-05 but
the Berlin electrodes again sit half a column towards the midline (``FFC3`` is at 10-05
``FFC3h``); :data:`BERLIN_HALF_POSITIONS` places them there, so that scalp maps are right
for real Berlin recordings and for the simulator. Any other label is looked up in
``colin27_1005`` case-insensitively (PhysioNet labels standardised by
:func:`mne.datasets.eegbci.standardize` are 10-10 names), with the old 10-20 aliases
``T3/T4/T5/T6`` accepted.

Scalp maps: :func:`layout_2d` and :func:`scalp_layout` project the positions on a plane,
:func:`interpolate_scalp` fills the head disc from one value per channel (no Qt here;
the dashboard only draws the image).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence

import numpy as np

logger = logging.getLogger("sblr_rt")

#: The 118 EEG labels of the Berlin cap, in the ``nfo.clab`` order of BCI Competition III
#: data sets IVa and IVb.
BERLIN_118 = (
    "Fp1", "AFp1", "Fpz", "AFp2", "Fp2", "AF7", "AF3", "AF4", "AF8", "FAF5",
    "FAF1", "FAF2", "FAF6", "F7", "F5", "F3", "F1", "Fz", "F2", "F4",
    "F6", "F8", "FFC7", "FFC5", "FFC3", "FFC1", "FFC2", "FFC4", "FFC6", "FFC8",
    "FT9", "FT7", "FC5", "FC3", "FC1", "FCz", "FC2", "FC4", "FC6", "FT8",
    "FT10", "CFC7", "CFC5", "CFC3", "CFC1", "CFC2", "CFC4", "CFC6", "CFC8", "T7",
    "C5", "C3", "C1", "Cz", "C2", "C4", "C6", "T8", "CCP7", "CCP5",
    "CCP3", "CCP1", "CCP2", "CCP4", "CCP6", "CCP8", "TP9", "TP7", "CP5", "CP3",
    "CP1", "CPz", "CP2", "CP4", "CP6", "TP8", "TP10", "PCP7", "PCP5", "PCP3",
    "PCP1", "PCP2", "PCP4", "PCP6", "PCP8", "P9", "P7", "P5", "P3", "P1",
    "Pz", "P2", "P4", "P6", "P8", "P10", "PPO7", "PPO5", "PPO1", "PPO2",
    "PPO6", "PPO8", "PO7", "PO3", "PO1", "POz", "PO2", "PO4", "PO8", "OPO1",
    "OPO2", "O1", "Oz", "O2", "OI1", "OI2", "I1", "I2",
)  # fmt: skip


def _half_row(old_row: str, new_row: str, lateral: str) -> dict[str, str]:
    """Map one intermediate Berlin row (columns 7..8, no z) to 10-05 half positions."""
    mapping = {f"{old_row}{k}": f"{new_row}{k}h" for k in (5, 3, 1, 2, 4, 6)}
    mapping[f"{old_row}7"] = f"{lateral}7h"
    mapping[f"{old_row}8"] = f"{lateral}8h"
    return mapping


#: The 26 Berlin labels unknown to ``colin27_1005`` -> the 10-05 label at their position.
BERLIN_TO_1005 = {
    "FAF5": "AFF5h",
    "FAF1": "AFF1h",
    "FAF2": "AFF2h",
    "FAF6": "AFF6h",
    "FFC7": "FFT7h",
    "FFC8": "FFT8h",
    **_half_row("CFC", "FCC", "FTT"),
    "CCP7": "TTP7h",
    "CCP8": "TTP8h",
    **_half_row("PCP", "CPP", "TPP"),
    "OPO1": "POO1",
    "OPO2": "POO2",
}

#: Berlin labels that exist in 10-05 under the same name but sit half a column towards
#: the midline on the Berlin cap -> the 10-05 label at their position.
BERLIN_HALF_POSITIONS = {
    **{k: v for k, v in _half_row("FFC", "FFC", "FFT").items() if k not in ("FFC7", "FFC8")},
    **{k: v for k, v in _half_row("CCP", "CCP", "TTP").items() if k not in ("CCP7", "CCP8")},
    "PPO1": "PPO1h",
    "PPO2": "PPO2h",
}

#: Old 10-20 names -> 10-10 names.
_ALIASES = {"T3": "T7", "T4": "T8", "T5": "P7", "T6": "P8"}


@functools.cache
def _colin27() -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Return colin27_1005 positions by lower-case label and the fitted head centre."""
    import mne

    montage = mne.channels.make_standard_montage("colin27_1005")
    ch_pos = montage.get_positions()["ch_pos"]
    xyz = np.array(list(ch_pos.values()))
    # least-squares sphere: |p|^2 = 2 p.c + (r^2 - |c|^2)
    a = np.c_[2 * xyz, np.ones(len(xyz))]
    sol = np.linalg.lstsq(a, (xyz**2).sum(1), rcond=None)[0]
    return {name.lower(): np.asarray(p, dtype=float) for name, p in ch_pos.items()}, sol[:3]


def standard_name(ch_name: str) -> str:
    """Return the ``colin27_1005`` label used to place ``ch_name``.

    Parameters
    ----------
    ch_name : str
        A Berlin, 10-10, 10-05 or 10-20 label (case-insensitive; a trailing ``.`` as in
        raw PhysioNet files is ignored).

    Returns
    -------
    name : str
        The 10-05 label (as spelled on input when no mapping applies).
    """
    name = ch_name.strip().rstrip(".")
    for table in (BERLIN_TO_1005, BERLIN_HALF_POSITIONS, _ALIASES):
        if name in table:
            return table[name]
    return name


def channel_positions(
    ch_names: Sequence[str], *, on_missing: str = "ignore"
) -> dict[str, tuple[float, float, float]]:
    """Return the 3-D position of each known channel.

    Parameters
    ----------
    ch_names : sequence of str
        Channel labels (Berlin, 10-10, 10-05 or PhysioNet standardised).
    on_missing : ``"ignore"`` | ``"warn"`` | ``"raise"``
        What to do with labels that have no position (e.g. EOG, EMG, ``ch1``).

    Returns
    -------
    positions : dict
        ``{label: (x, y, z)}`` in metres, ``colin27_1005`` head coordinates (x right, y
        front, z up), for the labels found, in input order.

    Examples
    --------
    >>> pos = channel_positions(["CFC3", "C3", "EOG"])  # doctest: +SKIP
    >>> sorted(pos)  # doctest: +SKIP
    ['C3', 'CFC3']
    """
    if on_missing not in ("ignore", "warn", "raise"):
        raise ValueError(f"'on_missing' must be 'ignore', 'warn' or 'raise', got {on_missing!r}")
    if isinstance(ch_names, str):
        raise TypeError("'ch_names' must be a sequence of str, got str")
    table, _ = _colin27()
    out, missing = {}, []
    for ch in ch_names:
        pos = table.get(standard_name(ch).lower())
        if pos is None:
            missing.append(ch)
        else:
            out[ch] = tuple(float(v) for v in pos)
    if missing:
        msg = f"no montage position for {len(missing)} channel(s): {missing}"
        if on_missing == "raise":
            raise ValueError(f"'ch_names' must be known EEG labels; {msg}")
        if on_missing == "warn":
            logger.warning(msg)
    return out


def layout_2d(ch_names: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Project channel positions on a plane for scalp maps (nose up).

    An azimuthal equidistant projection around the vertex: the distance from the centre is
    proportional to the angle from the vertex, so the ring through Fpz, T7, Oz and T8
    (90 degrees) lands on the circle of radius 0.5 and lower electrodes slightly outside.

    Parameters
    ----------
    ch_names : sequence of str
        Channel labels.

    Returns
    -------
    names : list of str
        The labels that have a position, in input order.
    xy : ndarray, shape (n_found, 2)
        Their 2-D coordinates (x to the right, y to the nose).

    Examples
    --------
    >>> names, xy = layout_2d(["Cz", "Fpz", "CFC4"])  # doctest: +SKIP
    >>> xy.round(2)  # doctest: +SKIP
    array([[ 0.  ,  0.  ],
           [ 0.  ,  0.5 ],
           [ 0.13,  0.05]])
    """
    positions = channel_positions(ch_names)
    _, centre = _colin27()
    names = list(positions)
    if not names:
        return names, np.zeros((0, 2))
    p = np.array([positions[n] for n in names]) - centre
    r = np.linalg.norm(p, axis=1)
    theta = np.arccos(np.clip(p[:, 2] / r, -1, 1))  # angle from the vertex
    phi = np.arctan2(p[:, 1], p[:, 0])
    rho = 0.5 * theta / (np.pi / 2)
    return names, np.c_[rho * np.cos(phi), rho * np.sin(phi)]


def scalp_layout(ch_names: Sequence[str]) -> np.ndarray:
    """Place channels on a 2-D head (azimuthal equidistant projection).

    Parameters
    ----------
    ch_names : list of str
        Channel names (10-05 names; old Berlin names mapped as :func:`channel_positions` does).

    Returns
    -------
    xy : ndarray, shape (n_channels, 2)
        Positions with the vertex at the origin, nose up (+y) and the ring through Fpz,
        T7, Oz, T8 at radius 1. NaN for channels without a known position.
    """
    ch_names = [str(c) for c in ch_names]
    xy = np.full((len(ch_names), 2), np.nan)
    # several rows may share a channel (band power); place each name once
    names, points = layout_2d(list(dict.fromkeys(ch_names)))
    where = {n: 2.0 * p for n, p in zip(names, points, strict=True)}  # ring at r = 1
    for i, c in enumerate(ch_names):
        if c in where:
            xy[i] = where[c]
    return xy


def make_montage(ch_names: Sequence[str]):
    """Return an :class:`mne.channels.DigMontage` for the known channels, under their names.

    Parameters
    ----------
    ch_names : sequence of str
        Channel labels.

    Returns
    -------
    montage : mne.channels.DigMontage
        Positions of the channels that have one (``raw.set_montage(montage,
        on_missing="ignore")`` places them, Berlin labels included).
    """
    import mne

    fid = mne.channels.make_standard_montage("colin27_1005").get_positions()
    positions = {k: np.asarray(v) for k, v in channel_positions(ch_names).items()}
    return mne.channels.make_dig_montage(
        ch_pos=positions,
        nasion=fid["nasion"],
        lpa=fid["lpa"],
        rpa=fid["rpa"],
        coord_frame=fid["coord_frame"],
    )


def interpolate_scalp(
    xy: np.ndarray, values: np.ndarray, *, resolution: int = 96, extent: float | None = None
) -> tuple[np.ndarray, float]:
    """Interpolate channel values over the head disc.

    Linear interpolation on the Delaunay triangulation of the electrodes, extended to the
    head outline by points that copy their nearest electrode. Linear interpolation never
    overshoots: a region surrounded by channels with zero weight is exactly zero, so the
    sparsity of the spatial factor stays visible on the map.

    Parameters
    ----------
    xy : ndarray, shape (n_channels, 2)
        Positions from :func:`scalp_layout` (rows with NaN are skipped).
    values : ndarray, shape (n_channels,)
        One value per channel.
    resolution : int
        Pixels along each side of the image.
    extent : float | None
        Half-width of the square image in layout units; by default it covers the head
        outline and every electrode.

    Returns
    -------
    image : ndarray, shape (resolution, resolution)
        Row-major image (row 0 at the bottom, y = -extent), NaN outside the head.
    extent : float
        The half-width used.
    """
    from scipy.spatial import Delaunay, cKDTree

    xy = np.asarray(xy, float)
    values = np.asarray(values, float)
    ok = np.isfinite(xy).all(1)
    xy, values = xy[ok], values[ok]
    head = max(1.0, float(np.abs(xy).max()) * 1.02) if len(xy) else 1.0
    if extent is None:
        extent = head * 1.05
    grid = np.linspace(-extent, extent, resolution)
    gx, gy = np.meshgrid(grid, grid)
    image = np.full(gx.shape, np.nan)
    inside = gx**2 + gy**2 <= head**2
    if len(xy) < 3:
        return image, extent
    angles = np.linspace(0, 2 * np.pi, 64, endpoint=False)
    ring = head * 1.01 * np.c_[np.cos(angles), np.sin(angles)]
    _, nearest = cKDTree(xy).query(ring)
    points = np.r_[xy, ring]
    point_values = np.r_[values, values[nearest]]
    # barycentric (linear) interpolation in the Delaunay triangle holding each pixel
    tri = Delaunay(points)
    query = np.c_[gx[inside], gy[inside]]
    simplex = tri.find_simplex(query)
    found = simplex >= 0
    transform = tri.transform[simplex[found]]
    b = np.einsum("nij,nj->ni", transform[:, :2], query[found] - transform[:, 2])
    weights = np.c_[b, 1.0 - b.sum(axis=1)]
    corner_values = point_values[tri.simplices[simplex[found]]]
    result = np.full(len(query), np.nan)
    result[found] = np.einsum("ni,ni->n", weights, corner_values)
    image[inside] = result
    return image, extent


def make_info(ch_names: Sequence[str], sfreq: float):
    """Return an :class:`mne.Info` of EEG channels placed by :func:`make_montage`.

    Parameters
    ----------
    ch_names : sequence of str
        Channel labels, kept as given (Berlin labels are placed at their 10-05 positions).
    sfreq : float
        Sampling rate in Hz.

    Returns
    -------
    info : mne.Info
        Every channel of type ``"eeg"``; those with a position carry it, so that
        ``mne.viz.plot_topomap(values, info)`` draws one value per channel. A channel with
        no known position (EOG, ``ch1``) is logged and left unplaced: drop it with
        ``mne.pick_info`` before plotting.
    """
    import mne

    ch_names = [str(c) for c in ch_names]
    info = mne.create_info(ch_names, float(sfreq), "eeg")
    channel_positions(ch_names, on_missing="warn")
    info.set_montage(make_montage(ch_names), on_missing="ignore", verbose="error")
    return info
