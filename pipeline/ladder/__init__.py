"""The skill ladders: the exact ladder of table strategies (run, report) and the sampled ladder
of mcts by playouts (search, search_report)."""
