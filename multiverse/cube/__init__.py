"""The judgment cube: the one data model every stage after judging shares.

``build`` (:func:`new_cube`, :func:`check_cube`, :func:`to_long`,
:func:`with_truth_judge`), ``io`` (:func:`save_cube`, :func:`open_cube`: netCDF4 and
zarr that plain xarray reads; the output-folder rule), ``summary`` (what a cube
holds, valid and missing) and ``reasons`` (the judges' stated reasons from a run's
transcript store).  Names resolve on first use, so importing the package stays light.
"""

from __future__ import annotations

from multiverse.core.lazy import lazy_exports

__all__ = ["check_cube", "decode_attrs", "encode_attrs", "judge_reasons", "new_cube", "open_cube", "save_cube", "to_long", "with_truth_judge"]

_EXPORTS = {
    "new_cube": "multiverse.cube.build",
    "check_cube": "multiverse.cube.build",
    "encode_attrs": "multiverse.cube.build",
    "decode_attrs": "multiverse.cube.build",
    "to_long": "multiverse.cube.build",
    "with_truth_judge": "multiverse.cube.build",
    "open_cube": "multiverse.cube.io",
    "save_cube": "multiverse.cube.io",
    "judge_reasons": "multiverse.cube.reasons",
}

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
