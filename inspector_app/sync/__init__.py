"""Sync between the device and HQ (DESIGN.md §5).

``protocol`` holds the payloads both sides exchange (pydantic models, no app imports);
``client`` is the device's push/pull engine over HTTP.
"""
