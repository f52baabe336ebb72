"""``sblr-rt inspect``: print the summary of a model file."""

from __future__ import annotations

import argparse
import json

from sblr_rt.utils._docs import fill_doc


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Register the ``inspect`` sub-command.

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
        "inspect",
        help="print the summary of a model file",
        description=(
            "Load a model file (refusing truncated, newer-version or non-model files) and "
            "print its channels, window, preprocessing, classes, chosen hyper-parameters and "
            "cross-validation scores."
        ),
    )
    parser.add_argument(
        "model", metavar="MODEL", help="model file, or shipped:NAME for a shipped prior"
    )
    parser.add_argument("--json", action="store_true", help="print the raw JSON header")
    parser.add_argument("--channels", action="store_true", help="list the channels too")
    parser.set_defaults(func=run)
    return parser


@fill_doc
def run(args: argparse.Namespace) -> int:
    """Print the model summary.

    Parameters
    ----------
    %(args)s

    Returns
    -------
    code : int
        0 on success.
    """
    from sblr_rt.calibration.outcome import CalibrationOutcome

    from sblr_rt.io.model_file import load_model, read_header
    from sblr_rt.priors import resolve_model_path

    args.model = resolve_model_path(args.model)
    if args.json:
        print(json.dumps(read_header(args.model), indent=2))
        return 0
    model = load_model(args.model)
    print(model.summary())
    if args.channels:
        print("raw channels: " + ", ".join(model.ch_names))
        for label, member in zip(model.member_labels, model.members, strict=True):
            print(f"{label + ' rows:':<13} " + ", ".join(member.preprocessor.row_names))
        excluded = CalibrationOutcome.from_model(model).excluded_channels
        if excluded:
            print(
                "left out:     " + ", ".join(f"{name} ({why})" for name, why in excluded.items())
            )
    return 0
