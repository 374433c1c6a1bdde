"""Settings, database engine and secrets handling for HQ."""
