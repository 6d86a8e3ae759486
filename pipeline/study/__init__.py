"""Studies: a round robin of strategies under rule sets, played in resumable chunks to Parquet, with status and report."""
