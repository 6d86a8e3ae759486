"""What every run shares: configs, paths, run folders, locks, records, seeds, sanity checks, workers, clusters, progress."""
