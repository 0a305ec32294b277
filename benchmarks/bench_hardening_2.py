"""Benchmark: the second hardening round's findings, each one's tests run on the reviewed code and on this one.

``python -m benchmarks.bench_hardening_2 --base BASE`` where ``BASE`` is a
checkout of the reviewed commit (``git worktree add BASE b2bacd8``).  As in
:mod:`benchmarks.bench_hardening` (whose helpers it uses), the test files named
in :data:`FINDINGS` are copied into ``BASE/tests`` with the support files they
need and run there with ``BASE`` first on ``PYTHONPATH``, one pytest per file,
then run here; the script prints one markdown row per finding and test.  The
tests go through the command line and the top-level API where they can, so
they load on the reviewed code's flat layout; a name the old code lacks is bound
to ``None`` (a case using it fails with a ``TypeError``, counted as "API
absent").  Finding 8 (mapping keys compared as text) and the label characters
of finding 13 were fixed by the config field reader; their tests go through
``multiverse validate`` (``tests/cli/test_keys_and_labels.py``).
Exits 1 if a finding has no case that failed before or any case that fails now.
"""

from __future__ import annotations

from benchmarks import bench_hardening as first

__all__ = ["FINDINGS", "main"]

_OUT = "tests/cli/test_output_rule.py"
_DISK = "tests/cli/test_missing_data_on_disk.py"
_SECRETS = "tests/cli/test_secret_spellings.py"
_BAD = "tests/cli/test_bad_input_exit_codes.py"
_KEYS = "tests/cli/test_keys_and_labels.py"
FINDINGS: dict[str, list[str]] = {
    "1 a rerun deletes what it did not write": [
        f"{_OUT}::test_the_tour_keeps_every_other_commands_output_byte_identical_when_run_writes_again",
        f"{_OUT}::test_staging_clean_up_never_touches_folders_that_only_look_like_staging",
    ],
    "2 export-cases has no output rule": [
        f"{_OUT}::test_export_cases_refuses_an_out_it_must_not_replace_and_changes_nothing",
        f"{_OUT}::test_export_cases_replaces_its_own_earlier_output_and_keeps_a_file_the_user_added",
    ],
    "3 annotate export replaces any folder with an export.json": [
        f"{_OUT}::test_annotate_export_refuses_a_folder_of_the_users_with_an_export_json",
        f"{_OUT}::test_annotate_export_writes_through_a_symbolic_link_and_keeps_the_link",
    ],
    "4 a missing zarr chunk reads as adherence": [
        f"{_DISK}::test_a_deleted_severity_chunk_is_refused_or_read_as_missing_never_as_adherence",
        f"{_DISK}::test_commands_refuse_a_store_with_a_deleted_chunk_in_one_line",
        f"{_DISK}::test_a_changed_byte_in_a_run_s_netcdf_cube_is_refused",
    ],
    "5 secrets under other spellings, echoed secrets": [
        f"{_SECRETS}::test_secret_params_of_every_spelling_are_masked_in_the_cube_and_run_record",
        f"{_SECRETS}::test_canaries_a_provider_echoes_back_reach_no_file_and_no_printed_line",
        f"{_SECRETS}::test_a_field_name_is_secret_when_a_whole_segment_of_it_is",
    ],
    "6 bad input ends as an internal error": [
        f"{_BAD}::test_a_broken_transcript_store_is_one_line_and_exit_2",
        f"{_BAD}::test_view_of_a_netcdf_file_without_severity_is_exit_2",
        f"{_BAD}::test_export_cases_of_a_truncated_cube_is_exit_2",
        f"{_BAD}::test_a_cache_path_with_a_nul_character_is_exit_2",
        f"{_BAD}::test_a_run_option_that_cannot_work_is_refused_before_any_call",
        f"{_BAD}::test_a_cache_row_with_damaged_json_is_exit_2",
        f"{_BAD}::test_a_full_disk_under_the_output_is_exit_2",
        f"{_BAD}::test_sigterm_ends_a_run_like_ctrl_c_with_exit_143_and_no_staging_left",
    ],
    "7 labels inserted into the viewer's HTML unescaped": [
        "tests/view/test_hostile_labels.py::test_hostile_labels_build_no_element_and_no_event_handler",
        "tests/view/test_hostile_labels.py::test_figure_captions_show_hostile_labels_as_text",
        "tests/view/test_hostile_labels.py::test_a_label_with_a_path_separator_names_a_figure_file_inside_the_site",
        "tests/view/test_hostile_labels.py::test_one_helper_escapes_every_label_for_text_and_attributes",
    ],
    "8 keys 1 and \"1\" both kept, one dropped silently": [
        f"{_KEYS}::test_keys_that_read_the_same_as_text_are_refused",
    ],
    "9 multi-line errors and warnings": [
        f"{_BAD}::test_yaml_with_a_control_character_is_one_located_line",
        f"{_BAD}::test_reading_a_runs_zarr_store_prints_no_warning",
    ],
    "10 unbounded reads of devices and FIFOs": [
        f"{_BAD}::test_a_device_or_fifo_is_refused_at_once",
    ],
    "11 data fetch exits 1 for bad input": [
        f"{_BAD}::test_data_fetch_with_a_bad_mirror_or_destination_is_bad_input_not_a_violation",
    ],
    "12 annotate import and summary on odd input": [
        f"{_BAD}::test_annotate_import_of_a_line_that_is_not_utf8_names_the_file_and_line",
        f"{_BAD}::test_annotate_import_accepts_a_bom_like_yaml_and_case_files",
        f"{_BAD}::test_import_labels_takes_one_path_as_a_string",
        f"{_BAD}::test_summary_of_a_dataset_that_is_not_a_cube_is_a_value_error",
    ],
    "13 nan share, repeated JSON keys, lookalike labels": [
        f"{_BAD}::test_a_run_option_that_cannot_work_is_refused_before_any_call[max-failed-share-nan]",
        f"{_BAD}::test_case_json_with_a_repeated_key_is_refused_naming_it",
        f"{_KEYS}::test_lookalike_and_invisible_labels_are_refused_naming_the_label",
    ],
}
_SUPPORT = ["tests/cli/cli_helpers.py", "tests/cli/conftest.py"]


def main(argv: list[str] | None = None) -> int:
    """The first round's comparison (:func:`benchmarks.bench_hardening.main`) over this round's findings."""
    return first.main(argv, findings=FINDINGS, support=_SUPPORT, description=__doc__.splitlines()[0])


if __name__ == "__main__":
    raise SystemExit(main())
