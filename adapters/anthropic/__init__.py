"""The Anthropic agent brain and outcome extractor (Messages API through the ``anthropic`` SDK)."""
