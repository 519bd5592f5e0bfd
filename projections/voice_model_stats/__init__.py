"""``voice_model_stats_v1``: one row per call with its engine and measures, for per-engine statistics."""
