"""Training the network on measured launches and evaluating it (held-out families, the dev set)."""
