"""Exact outcomes in the products: their cache, the check of sampled games against them, their progress lines and summaries."""
