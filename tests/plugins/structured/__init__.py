"""Tests of the structured-sample plugin."""
