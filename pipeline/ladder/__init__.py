"""The skill ladder: table strategies played exactly against one another (run), and its report."""
