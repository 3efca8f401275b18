"""DALI's ``nvidia.dali._utils`` path: helpers that DALI programs and tests import from it."""
