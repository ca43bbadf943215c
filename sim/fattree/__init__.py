"""Fat-tree testbench pieces: what the family-agnostic planner and waves need to know."""
