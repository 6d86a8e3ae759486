"""The statistics the products share: tests, intervals, metrics, ratings, per-ply turns, agreement, coverage, Ludii, fairness."""
