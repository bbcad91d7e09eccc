"""When a trial passes, and pass@k and pass^k over a task's attempts.

pass@k is the unbiased estimator of Chen et al. (2021) as Harbor computes it: per task, with
n scored attempts of which c passed, pass@k = 1 − C(n−c, k) / C(n, k), averaged over the
tasks that have at least k scored attempts. pass^k (τ-bench, Yao et al. 2024) is its
reliability twin, the chance that all k attempts pass: C(c, k) / C(n, k), the unbiased
estimator of p^k from n attempts, averaged over the same tasks. A trial passes when its reward is ≥ 1.0 (the
verifiers' "fully solved"); partial rewards count toward the mean, not toward pass@k
(docs/statistics.md).
"""

from __future__ import annotations

from math import comb

PASS_THRESHOLD = 1.0


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k attempts drawn from n (c of them passing) passes."""
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n (n={n}, c={c})")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n (n={n}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that every one of k attempts drawn from n (c of them passing) passes."""
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n (n={n}, c={c})")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n (n={n}, k={k})")
    return comb(c, k) / comb(n, k)


def k_values(attempts: int) -> list[int]:
    """1, 2, 4, … up to attempts, plus attempts itself: a handful of keys whatever k is."""
    values = []
    k = 1
    while k < attempts:
        values.append(k)
        k *= 2
    values.append(attempts)
    return values
