"""How a trial is scored, below everything that reports a score: when a reward passes, pass@k
(passing.py), and what a failure reason means for the score — infra retried, outcome scored,
broken excluded (failures.py). Pure; sweep/, trial/ and results/ read it."""
