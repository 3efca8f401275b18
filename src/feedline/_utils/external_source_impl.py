"""DALI's ``nvidia.dali._utils.external_source_impl``: the CPU checks and conversions of
callback results, and ``accepted_arg_count``."""

from feedline._utils.callback_data import (
    accepted_arg_count,
    assert_cpu_batch_data_type,
    assert_cpu_sample_data_type,
    batch_to_numpy,
    sample_to_numpy,
)

__all__ = [
    "accepted_arg_count",
    "assert_cpu_batch_data_type",
    "assert_cpu_sample_data_type",
    "batch_to_numpy",
    "sample_to_numpy",
]
