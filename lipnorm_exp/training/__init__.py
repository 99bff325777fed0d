"""Training: one orchestrator, its members (runs), two epoch engines, state and checkpoints."""
