"""The atlas of rule sets: a grid of rule sets (run), each analysed exactly (analyse), and its
report (report)."""
