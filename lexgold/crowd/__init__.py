"""Replaying real rating logs: what allocation and stopping policies save (issue 33)."""
