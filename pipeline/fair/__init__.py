"""The fairness search of one rule set (``modiar fair``): starts within a few moved stones, their values, pie rule, komi."""
