"""Performance suite: ``make bench`` (``python -m benchmarks``) prints one table."""
