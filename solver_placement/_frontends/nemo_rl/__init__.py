"""NeMo-RL's GRPO config read as NeMo-RL reads it, its own layout predicted rank by rank, checked and improved."""
