"""Training data and recipes: the inductor teacher (torch.compile's Triton code as standalone
candidates) and the SFT and GRPO recipes (docs/training.md)."""
