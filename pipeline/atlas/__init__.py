"""The atlas of rule sets: a grid of rule sets (config, run, plan), each analysed exactly (analyse, rows), and its report."""
