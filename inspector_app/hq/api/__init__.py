"""HTTP layer: routes under ``/api/v1`` (and the public ``/verify`` page), dependencies."""
