"""The search ladder: mcts by playouts, sampled to a stopping rule and scored by the solution (run), and its report."""
