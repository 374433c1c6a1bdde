"""Field-inspection app for Brazilian public-transport regulators."""

__version__ = "0.1.0"
