"""Parameter sweeps (docs/sweeps.md): a base case run over a space of parameter values, each
run its own results file named by what it computes, collected into one summary table."""
