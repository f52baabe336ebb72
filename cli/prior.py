"""``sblr-rt prior``: recordings of several people -> a prior across people (a model file)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sblr_rt.cli._markers import parse_classes as _classes
from sblr_rt.cli._numbers import bounded
from sblr_rt.cli._parser import add_rename_option, renaming_of

from sblr_rt.utils._docs import fill_doc


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``prior`` sub-command.

    Parameters
    ----------
    subparsers : argparse._SubParsersAction
        The top-level sub-parsers.

    Returns
    -------
    parser : argparse.ArgumentParser
        The sub-command's parser.
    """
    parser = subparsers.add_parser(
        "prior",
        help="build a prior across people from their recordings",
        description=(
            "Train a model on the runs of several people, each run centred on its own mean, "
            "and keep its training features, so that a session can decide from a new "
            "person's first trial (sblr-rt run --model PRIOR) and refine the model with each "
            "of their labelled trials (--adapt, or sblr-rt calibrate --prior PRIOR). Each "
            "recording is one run of one person; the person is read from the file name "
            "(S005R04.edf: S005; sub-07_task-mi_eeg.vhdr: sub-07), never a folder, unless "
            "--person says it. Channels are "
            "matched by name, and the rate and units must agree. Prints the leave-one-"
            "person-out accuracy of every person."
        ),
    )
    parser.add_argument(
        "--recording",
        metavar="FILE",
        action="append",
        required=True,
        help="one run of one person (repeat; at least two people)",
    )
    parser.add_argument(
        "--person",
        metavar="LABEL",
        action="append",
        help="the person of each --recording, in order (default: from the file names)",
    )
    parser.add_argument("--out", required=True, metavar="PRIOR", help="model file to write")
    parser.add_argument(
        "--classes",
        required=True,
        type=_classes,
        help="marker values that are classes, A,B or A=label,B=label",
    )  # fmt: skip
    parser.add_argument(
        "--tmin", type=bounded("epoch", low_open=False), default=0.5, help="window start (s)"
    )
    parser.add_argument(
        "--tmax", type=bounded("epoch", low_open=False), default=3.5, help="window end (s)"
    )
    parser.add_argument(
        "--all-channels",
        action="store_true",
        help="use every common channel, not only the sensorimotor strip (FC, C, CP)",
    )
    parser.add_argument(
        "--no-lopo", action="store_true", help="skip the leave-one-person-out accuracy"
    )
    add_rename_option(
        parser, where="every --recording as it is read (each must hold every old label); "
        "the prior names the new labels"
    )  # fmt: skip
    parser.set_defaults(func=run)
    return parser


@fill_doc
def run(args: argparse.Namespace) -> int:
    """Build and save the prior.

    Parameters
    ----------
    %(args)s

    Returns
    -------
    code : int
        0 on success.
    """
    from sblr_rt.calibration.prior import PriorSettings, build_prior
    from sblr_rt.cli.calibrate import MODEL_BYTES

    from sblr_rt.io.model_file import remove_stale_temporaries, save_model
    from sblr_rt.io.outputs import OutputLock, check_output, write_or_rescue

    rename = renaming_of(args)
    out = Path(args.out)
    if not out.parent.is_dir():
        raise FileNotFoundError(f"--out: folder {out.parent} does not exist")
    remove_stale_temporaries(out.parent)  # of a save killed before
    check_output(out, what="'--out'", need_bytes=MODEL_BYTES)
    for f in args.recording:
        if not Path(f).exists():
            raise FileNotFoundError(f"--recording: file not found: {f}")
    if args.person is not None and len(args.person) != len(args.recording):
        raise ValueError(
            f"--person must be given once per --recording ({len(args.recording)}), got "
            f"{len(args.person)}"
        )
    # A second `prior --out` on the same file is refused now, not overwritten at the end.
    with OutputLock(out, what="the prior"):
        prior = build_prior(
            args.recording,
            classes=args.classes,
            tmin=args.tmin,
            tmax=args.tmax,
            people=args.person,
            settings=PriorSettings(sensorimotor=not args.all_channels),
            lopo=not args.no_lopo,
            rename_channels=rename,
        )
        written = write_or_rescue(lambda path: save_model(prior, path), out, what="the prior")
    if written != out:
        print(f"could not write {out}: the prior is in {written} instead", file=sys.stderr)
    print(prior.summary())
    print(f"prior written to {written}")
    return 0
