"""HQ web console (issue 15)."""
