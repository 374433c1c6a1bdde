"""One module per resource, as in the FastAPI full-stack template."""
