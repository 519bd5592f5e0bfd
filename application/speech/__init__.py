"""Streaming speech for the stream transport: recognition and synthesis ports, sentence splitting,
turn-taking and barge-in. Pure application code: no vendor packages, no framework."""
