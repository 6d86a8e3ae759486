"""Exact outcomes in the products: their cache of computed pairings (cache), the check of
sampled games against them (check) and their progress lines (progress)."""
