"""Studies: a round robin of strategies under one or more rule sets (config), played in
resumable chunks to Parquet (run), with their status and summary, and the study report (report)."""
