"""One trial's corridor (docs/corridor.md): its state machine (state.py), deadlines, backoff,
adoption of a pod a previous operator left, and secret findings — pure. Its driver is drive/,
its steps steps/; the pods it makes come from pod/ and its failure classes from scoring/."""
