"""Shared vocabulary every stage speaks: nothing here imports a stage.

``schema`` (dim names, severity codes, closed vocabularies, fixed role and principle
ids), ``choices`` (the value types of the dims: model specs, conditions, judge specs),
``registry`` (the one ``Registry[T]``), ``transcript`` (events, transcripts and their
store), ``judgment`` (the ``Judge`` protocol and ``Judgment``, which both the rollout
and the judges speak), ``grid`` (the TUNA grid and coverage), ``canonical`` (canonical
JSON), ``process`` (is a process alive), ``lazy`` (lazy public names) and
``xarray_hook`` (the accessor's registration).
"""
