"""NeMo-RL's GRPO, SFT, DPO and reward-model configs read as NeMo-RL reads them, its own layout predicted rank by rank, checked and improved."""
