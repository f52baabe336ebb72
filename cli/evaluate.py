"""``sblr-rt evaluate``: score a model on labelled recordings, as ``run`` would decide."""

from __future__ import annotations

import argparse

from sblr_rt.cli._markers import parse_classes
from sblr_rt.cli._parser import add_rename_option, renaming_of


def add_parser(subparsers) -> argparse.ArgumentParser:
    """Add ``evaluate`` to the top-level ``subparsers``; return its parser."""
    parser = subparsers.add_parser(
        "evaluate",
        help="score a model on labelled recordings (accuracy against chance, kappa, ITR)",
        description=(
            "Decide every cue of a class in each recording with the model, in time order, "
            "each recording a run centred on its own running mean from the calibration "
            "reference, as 'sblr-rt run' decides its trials (--static: every trial alone), "
            "and print accuracy with its 95%% interval against chance, balanced accuracy, "
            "Cohen's kappa, Wolpaw's information transfer rate and the confusion matrix, "
            "over all recordings and per recording. Epochs that the online loop would "
            "refuse (calibration's rejection settings) are counted and left out."
        ),
    )
    parser.add_argument(
        "recordings", nargs="+", metavar="RECORDING", help="labelled recordings (any format "
        "sblr-rt reads), each a run"
    )  # fmt: skip
    parser.add_argument(
        "--model",
        required=True,
        help="model file, or shipped:NAME for a prior shipped with sblr-rt",
    )
    parser.add_argument(
        "--classes",
        type=parse_classes,
        default=None,
        help="marker values of the classes, T1=left,T2=right (default: the model's map)",
    )
    parser.add_argument(
        "--static",
        action="store_true",
        help="score every trial alone from the calibration reference (no run centring)",
    )
    parser.add_argument(
        "--trials", action="store_true", help="print a line per trial too"
    )  # fmt: skip
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the scores and a row per trial as JSON, nothing else",
    )
    add_rename_option(parser, where="every recording as it is read (as calibrate did)")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Score ``args.model`` on ``args.recordings``; print the scores; return 0."""
    from sblr_rt.calibration.evaluation import evaluate_model, read_labelled

    from sblr_rt.io.jsonable import dumps
    from sblr_rt.io.model_file import load_model
    from sblr_rt.priors import resolve_model_path

    rename = renaming_of(args)
    path = resolve_model_path(args.model)
    if not path.exists():
        raise FileNotFoundError(f"'--model' file not found: {path}")
    model = load_model(path)
    classes = args.classes
    if isinstance(classes, list):  # marker values that are their own class
        classes = {c: c for c in classes}
    result = evaluate_model(
        model, read_labelled(args.recordings, rename=rename), class_map=classes, static=args.static
    )
    if args.json:
        print(dumps({"model": str(path)} | result.to_dict(), indent=2))
        return 0
    how = "each recording a run centred on its own running mean" if result.run_centred else (
        "every trial alone from the calibration reference"
    )  # fmt: skip
    print(f"model: {path} ({', '.join(map(str, model.classes))}); {how}")
    for name, score in result.per_recording.items():
        print(
            f"{name}: {score.n_correct}/{score.n_trials} correct, accuracy "
            f"{score.accuracy:.3f}, kappa {score.kappa:.3f}"
        )
    rejected = {k: v for k, v in result.rejected.items() if v}
    if rejected:
        print(f"left out (as the online loop would refuse them): {rejected}")
    if args.trials:
        for t in result.trials:
            mark = "-" if t.correct is None else ("correct" if t.correct else "wrong")
            p = ", ".join(f"{c} {v:.2f}" for c, v in t.proba.items())
            print(f"{t.recording} trial {t.index} at {t.time:.2f} s: {t.marker!r} ({t.true}) "
                  f"-> {t.label or 'no decision'}, {mark}; p {p}")  # fmt: skip
    print("all recordings:" if len(result.per_recording) > 1 else "scores:")
    for line in result.score.lines():
        print(f"  {line}")
    return 0
