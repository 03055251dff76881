"""The read path: query parsing, cue pruning, four voices, fusion, diversification."""
