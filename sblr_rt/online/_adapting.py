"""The online loop's side of a session that adapts: model swaps and labelled trials.

:class:`AdaptingLoop` holds the methods :class:`~sblr_rt.online.OnlineLoop` offers to an
adapter (``sblr_rt.calibration.adapt.Adapter``): switch to a new model version between
two decisions, name the version deciding now, and hand out the labelled trials. It is a
base class of the loop, and reads the loop's attributes (``_scheduler``, ``_tap``,
``_telemetry``, ``_version``, ``source``, ``classifier``, ``unit_mismatch``, ``_label``).
"""

from __future__ import annotations

from sblr_rt.online._startup import unit_scale
from sblr_rt.online.classifier import OnlineClassifier, check_stream_info
from sblr_rt.online.swap import model_version_of, prepare_swap

__all__ = ["AdaptingLoop"]


class AdaptingLoop:
    """Model swaps and the trial tap of :class:`~sblr_rt.online.OnlineLoop`."""

    def swap_model(self, model, *, version: int | None = None) -> None:
        """Switch to ``model`` between two decisions, without a gap; call from any thread.

        The new model's streaming state is built here, on the calling thread, from the
        samples the loop already ingested (:func:`~sblr_rt.online.swap.prepare_swap`);
        the decision thread adopts it at the start of its next step, so no window is
        skipped and the decision thread never waits for the preparation.

        Parameters
        ----------
        model : BCIModel | OnlineClassifier
            The new model: the same raw channels and rate as the stream.
        version : int | None
            The version its decisions name; None: the model's own (see ``model_version``).

        Raises
        ------
        RuntimeError
            If the loop is not running.
        ValueError
            If the model does not fit the stream (channels, rate, unit).
        """
        self._raise_if_failed()
        scheduler = self._scheduler
        if scheduler is None or not self._started:
            raise RuntimeError("Start the loop before swapping its model.")
        clf = (
            model
            if isinstance(model, OnlineClassifier)
            else OnlineClassifier(
                model,
                fast=self.classifier.fast,
                recentre=self.classifier.recentre,
                recentre_warmup=self.classifier.recentre_warmup,
            )
        )
        pick = check_stream_info(
            clf, list(self.source.ch_names), float(self.source.sfreq), stream=self._label
        )
        scale = unit_scale(clf, self.source, pick, self.unit_mismatch, self._label)
        version = model_version_of(clf.model) if version is None else int(version)
        scheduler.swaps.put(prepare_swap(clf, scheduler, pick=pick, scale=scale, version=version))

    @property
    def model_version(self) -> int:
        """The model version deciding now."""
        scheduler = self._scheduler
        return self._version if scheduler is None else scheduler.model_version

    @property
    def swap_pending(self) -> bool:
        """Whether a model from :meth:`swap_model` waits to be adopted."""
        return self._scheduler is not None and self._scheduler.swaps.pending

    def pop_trials(self, *, seconds_before: float = 2.0) -> list:
        """Return the trials decided since the last call, labelled, with their samples.

        Parameters
        ----------
        seconds_before : float
            Seconds of samples kept before each trial's raw epoch.

        Returns
        -------
        trials : list of LabelledTrial
            See :class:`~sblr_rt.online.tap.LabelledTrial`; ``label`` is None for a cue
            that names no class of the model.

        Raises
        ------
        RuntimeError
            If the loop was built without ``keep_trials=True``.
        """
        if self._tap is None:
            raise RuntimeError("Build the loop with keep_trials=True to pop its trials.")
        scheduler = self._scheduler
        if scheduler is None:
            return []
        clf = scheduler.state.classifier
        return self._tap.pop(
            scheduler.buffer,
            list(clf.ch_names),
            pick=scheduler.pick,
            scale=scheduler.scale,
            sfreq=clf.sfreq,
            seconds_before=seconds_before,
        )

    def set_adaptation(self, status: dict | None) -> None:
        """Show the adaptation's status in :meth:`snapshot` (``Telemetry.adaptation``)."""
        self._telemetry.set_adaptation(status)
