"""Playback: recordings played back as LSL streams, and the simulated 118-channel source.

- :mod:`~sblr_rt.playback.stream_player`: a recording (any format :mod:`sblr_rt.io` reads) as an
  EEG stream and a marker stream, at real or accelerated speed.
- :mod:`~sblr_rt.playback.simulator`: a seeded, deterministic simulated EEG source with
  cues, played through the same player.
"""
